"""WireMock stub mappings -> HTTP mocks.

Inputs: a single mapping ``{request, response}``, ``{mappings: [...]}``, an array of
mappings, or a directory of ``*.json`` files holding any of those (a ``mappings/`` folder
inside the directory is used when present). Mapping files may hold ``//`` and ``/* */``
comments. Bodies named by ``bodyFileName`` are read from the nearest ``__files/`` folder
beside or above the mapping file (``mappings/x.json`` -> ``__files/``), and must stay inside
it.

Each mapping is one item of the import, named ``<file>[<index>]`` (``mappings[<index>]`` for
a single document): a mapping that cannot be converted exactly enough is skipped with a
reason (:meth:`ImportResult.skip`), never imported so that it matches more than it did.

Rules (behavior notes §13, extended):

* URL: ``urlPath`` > ``url`` (its query string becomes ``queryParams``) >
  ``urlPathTemplate`` (-> ``path`` with ``{name}`` segments) > ``urlPattern`` /
  ``urlPathPattern`` (-> ``pathPattern``, anchored);
* ``headers`` / ``queryParameters`` operators ``equalTo``, ``contains``, ``matches``,
  ``doesNotMatch``, ``absent`` and ``caseInsensitive`` become value matcher objects (a plain
  ``equalTo`` of a query parameter, or of a header without ``*`` at either end, stays text);
  ``basicAuthCredentials`` -> an exact ``Authorization`` header;
* ``cookies`` (``equalTo``) -> approximated by a ``Cookie`` header that contains
  ``name=value`` (:data:`COOKIE_WARNING`);
* ``bodyPatterns`` -> ``bodyMatchers`` entries (``equalTo``, ``contains``, ``matches``,
  ``doesNotMatch``, ``equalToJson`` with ``ignoreArrayOrder`` / ``ignoreExtraElements``,
  ``equalToXml``, ``matchesJsonPath`` given as text);
* anything else that constrains the request (``matchesXPath``, ``and``/``or``, dates,
  ``binaryEqualTo``, ``matchesJsonPath`` with a sub-matcher, ``host``, multipart, ...) ->
  the mapping is skipped, naming the key;
* ``priority``: WireMock's 1 is the highest; ours wins when higher, so a mapping gets
  ``P - priority`` where P is the largest WireMock priority of the import, at least 5
  (WireMock's default for a mapping without one); a priority that is not a whole number
  ≥ 0 skips the mapping;
* ``scenarioName`` / ``requiredScenarioState`` / ``newScenarioState`` -> ``http.scenario``;
* response body: ``body`` > ``jsonBody`` > ``base64Body`` > ``bodyFileName``; bytes that
  are not UTF-8 become ``bodyBase64`` plus a ``Content-Type`` from the file extension when
  the mapping gives none;
* ``fixedDelayMilliseconds`` -> ``delayMs`` (capped at 30000);
* id: the mapping's ``id`` (or ``uuid``), else ``http_<16 hex>``; name: its ``name``.

Source: behavior notes §13 ("wiremock"); SPEC "Import and export", "Matcher".
"""
from __future__ import annotations

import base64
import binascii
from pathlib import Path
from typing import Any, Callable, Iterator

import orjson

from mocks.portability.importers.common import (IdAllocator, body_value, clamp_delay,
                                                content_type_of, file_body, http_mock,
                                                new_http_id,
                                                response_headers, safe_id, scalar_text,
                                                split_url)
from mocks.portability.importers.result import (DocumentProbe, ImportDocumentError,
                                                ImportOptions, ImportResult, parse_yaml)

FORMAT = "wiremock"

#: String operators that convert exactly onto a value matcher object.
VALUE_OPERATORS = ("equalTo", "contains", "matches", "doesNotMatch")
#: Body pattern operators that convert exactly onto a ``bodyMatchers`` entry.
BODY_OPERATORS = ("equalTo", "contains", "matches", "doesNotMatch", "equalToJson",
                  "equalToXml", "matchesJsonPath")
#: Options a body pattern may carry, by operator (anything else skips the mapping).
BODY_OPTIONS = {"equalTo": {"caseInsensitive"}, "contains": {"caseInsensitive"},
                "matches": {"caseInsensitive"}, "doesNotMatch": {"caseInsensitive"},
                "equalToJson": {"ignoreArrayOrder", "ignoreExtraElements"},
                "equalToXml": set(), "matchesJsonPath": set()}
#: Request keys that only describe the mapping or are converted; any other key constrains
#: the request in a way we cannot express, and skips the mapping.
REQUEST_KEYS = frozenset({"method", "url", "urlPath", "urlPattern", "urlPathPattern",
                          "urlPathTemplate", "headers", "queryParameters", "cookies",
                          "bodyPatterns", "basicAuthCredentials"})
#: WireMock's priority of a mapping that gives none.
DEFAULT_PRIORITY = 5
#: Warning of an approximated ``cookies`` block (``{where}``: item and key; ``{pairs}``:
#: the ``name=value`` texts).
COOKIE_WARNING = ("{where}: approximated as a Cookie header that contains {pairs}; "
                  "WireMock compares each parsed cookie exactly")


def is_mapping(value: Any) -> bool:
    """A WireMock mapping: a mapping with ``request`` and ``response``."""
    return isinstance(value, dict) and "request" in value and "response" in value


def strip_json_comments(text: str) -> str:
    """``text`` with ``// ...`` and ``/* ... */`` comments outside JSON strings replaced by
    blanks (line breaks kept, so parse errors still name the right line). Text without
    ``/`` is returned as is; an unterminated block comment runs to the end.

    Source: WireMock import (mapping files with comments).
    """
    if "/" not in text:
        return text
    out: list[str] = []
    index, length = 0, len(text)
    in_string = False
    start = 0
    while index < length:
        char = text[index]
        if in_string:
            if char == "\\":
                index += 2
                continue
            if char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char == "/" and index + 1 < length and text[index + 1] in "/*":
            out.append(text[start:index])
            if text[index + 1] == "/":
                end = text.find("\n", index)
                end = length if end < 0 else end
                out.append(" " * (end - index))
            else:
                end = text.find("*/", index + 2)
                end = length if end < 0 else end + 2
                out.append("".join(c if c == "\n" else " " for c in text[index:end]))
            index = start = end
            continue
        index += 1
    out.append(text[start:])
    return "".join(out)


def parse_mapping_text(text: str) -> tuple[Any, str | None]:
    """``(value, None)`` or ``(None, error)`` for one mapping file's text: JSON (comments
    allowed), else YAML. The error says where the text stops parsing."""
    stripped = strip_json_comments(text.lstrip("\ufeff"))
    if stripped.lstrip()[:1] in ("{", "["):
        try:
            return orjson.loads(stripped), None
        except orjson.JSONDecodeError:
            pass  # let the YAML parser name the place
    return parse_yaml(stripped)


class _Mapping:
    """One mapping to convert: its item name, data and the folder its file is in."""

    __slots__ = ("item", "data", "folder")

    def __init__(self, item: str, data: Any, folder: Path | None):
        self.item = item
        self.data = data
        self.folder = folder


class WireMockImporter:
    """WireMock mapping files and directories (see the module docstring)."""

    format = FORMAT
    #: The format's name and its detection rule in words, for ``GET /formats``.
    title = "WireMock mappings"
    detection = ("a directory of mapping files, an object with 'request' and 'response', an object"
                 " with a 'mappings' list, or a list of mappings")

    def detects(self, probe: DocumentProbe) -> bool:
        """A directory with mapping files, ``{request, response}``, ``{mappings: [...]}`` or
        an array whose first item is a mapping (behavior notes §13); JSON with comments
        counts."""
        if probe.directory is not None:
            return any(True for _ in self._files(probe.directory))
        return self._looks_like_mappings(self._document(probe))

    @staticmethod
    def _looks_like_mappings(data: Any) -> bool:
        if is_mapping(data):
            return True
        if isinstance(data, dict) and isinstance(data.get("mappings"), list):
            return True
        return isinstance(data, list) and bool(data) and is_mapping(data[0])

    @staticmethod
    def _document(probe: DocumentProbe) -> Any:
        data = probe.structured()
        if data is None and probe.text and "/" in probe.text \
                and probe.stripped[:1] in ("{", "[", "/"):
            data, _ = parse_mapping_text(probe.text)
        return data

    def convert(self, probe: DocumentProbe, options: ImportOptions) -> ImportResult:
        """See the module docstring. Raises :class:`ImportDocumentError` for a file that
        does not parse or a document that holds no mappings; a mapping that cannot be
        converted is skipped (``result.skipped``)."""
        result = ImportResult(format=FORMAT)
        mappings: list[_Mapping] = []
        if probe.directory is not None:
            files = list(self._files(probe.directory))
            if not files:
                raise ImportDocumentError(FORMAT, str(probe.directory),
                                          "no .json mapping files in this directory")
            root = self._mappings_folder(probe.directory)
            for number, file_path in enumerate(files):
                options.report(number, len(files))
                name = file_path.relative_to(root).as_posix()
                data, error = parse_mapping_text(file_path.read_text(encoding="utf-8-sig"))
                if error is not None:
                    raise ImportDocumentError(FORMAT, name, error)
                mappings.extend(_Mapping(f"{name}[{index}]", mapping, file_path.parent)
                                for index, mapping in enumerate(self._mappings_of(data, name)))
            options.report(len(files), len(files))
        else:
            data = self._document(probe)
            if data is None:
                data = probe.data(FORMAT)  # raises with the parse error's place
            # A single mapping file finds __files beside or above it (probe.base_dir is its
            # folder; None for text or stdin).
            mappings = [_Mapping(f"mappings[{index}]", mapping, probe.base_dir)
                        for index, mapping in enumerate(self._mappings_of(data, ""))]
        # Ours = lowest - WireMock's: WireMock's 1 wins there, our higher number wins here.
        lowest = max([DEFAULT_PRIORITY, *(priority for priority in map(
            _priority_of, (mapping.data for mapping in mappings))
            if isinstance(priority, int) and not isinstance(priority, bool))])
        ids = IdAllocator()
        report: Callable[[int, int], None] = options.report if probe.directory is None \
            else (lambda done, total: None)
        for number, mapping in enumerate(mappings):
            report(number, len(mappings))
            with result.item(mapping.item):
                result.mocks.append(_convert_mapping(mapping, lowest, result.warnings, ids,
                                                     probe.directory))
        report(len(mappings), len(mappings))
        return result

    @staticmethod
    def _mappings_folder(directory: Path) -> Path:
        mappings = directory / "mappings"
        return mappings if mappings.is_dir() else directory

    @classmethod
    def _files(cls, directory: Path) -> Iterator[Path]:
        folder = cls._mappings_folder(directory)
        return iter(sorted(path for path in folder.rglob("*.json") if path.is_file()
                           and "__files" not in path.relative_to(folder).parts))

    @staticmethod
    def _mappings_of(data: Any, where: str) -> list[Any]:
        if is_mapping(data):
            return [data]
        if isinstance(data, dict) and isinstance(data.get("mappings"), list):
            return data["mappings"]
        if isinstance(data, list):
            return data
        raise ImportDocumentError(FORMAT, where, "expected a mapping with request and "
                                  "response, {\"mappings\": [...]} or a list of mappings")


def _priority_of(mapping: Any) -> Any:
    """The mapping's WireMock priority (``DEFAULT_PRIORITY`` when it gives none)."""
    if not isinstance(mapping, dict) or mapping.get("priority") is None:
        return DEFAULT_PRIORITY
    return mapping["priority"]


def _convert_mapping(mapping: _Mapping, lowest: int, warnings: list[str], ids: IdAllocator,
                     root: Path | None) -> dict[str, Any]:
    """One mock document; raises :class:`ImportDocumentError` (location inside the
    mapping) to skip the mapping."""
    data, item = mapping.data, mapping.item
    if not is_mapping(data):
        raise ImportDocumentError(FORMAT, item, "expected a mapping with request and response")
    request, response = data["request"], data["response"]
    if not isinstance(request, dict):
        raise ImportDocumentError(FORMAT, "request", "expected a mapping")
    if not isinstance(response, dict):
        raise ImportDocumentError(FORMAT, "response", "expected a mapping")
    unknown = sorted(set(request) - REQUEST_KEYS)
    if unknown:
        raise ImportDocumentError(FORMAT, f"request.{unknown[0]}",
                                  "this request condition has no mockd equivalent; the mapping "
                                  "would match more requests than in WireMock")
    method = str(request.get("method") or "ANY").upper()
    path, pattern, query = _url(request)
    query.update(_value_matchers(request.get("queryParameters"), "request.queryParameters",
                                 header=False))
    headers = _value_matchers(request.get("headers"), "request.headers", header=True)
    credentials = request.get("basicAuthCredentials")
    if credentials is not None:
        headers = _with_basic_auth(headers, credentials)
    cookie = _cookie_condition(request.get("cookies"), f"{item}.request.cookies", warnings)
    if cookie is not None:
        if any(name.lower() == "cookie" for name in headers):
            raise ImportDocumentError(FORMAT, "request.cookies", "cookies together with a "
                                      "Cookie header condition cannot be expressed")
        headers["Cookie"] = cookie
    body_matchers = _body_matchers(request.get("bodyPatterns"), "request.bodyPatterns")
    status = response.get("status", 200)
    if not isinstance(status, int) or isinstance(status, bool):
        raise ImportDocumentError(FORMAT, "response.status",
                                  f"expected an HTTP status number, got {status!r}")
    answer_headers = response_headers([(str(name), scalar_text(value)) for name, value in
                                       (response.get("headers") or {}).items()])
    body, body_base64 = _body(response, item, mapping.folder, root, answer_headers, warnings)
    delay = clamp_delay(response.get("fixedDelayMilliseconds"), warnings,
                        f"{item}.response.fixedDelayMilliseconds")
    priority = _priority_of(data)
    if not isinstance(priority, int) or isinstance(priority, bool) or priority < 0:
        raise ImportDocumentError(FORMAT, "priority",
                                  f"expected a whole number ≥ 0, got {priority!r}")
    stub_id = data.get("id") or data.get("uuid")
    mock_id = ids.claim(safe_id(str(stub_id)), warnings) if stub_id else new_http_id()
    name = data.get("name") or f"{method} {path or pattern or '*'}"
    document = http_mock(mock_id, name=str(name), method=None if method == "ANY" else method,
                         path=path, path_pattern=pattern, status=status,
                         headers=answer_headers or None, body=body, query_params=query or None,
                         match_headers=headers or None, delay_ms=delay,
                         priority=lowest - priority,
                         matcher_extra={"bodyMatchers": body_matchers} if body_matchers
                         else None)
    http = document["http"]
    if body_base64 is not None:
        http["response"]["bodyBase64"] = body_base64
    scenario = _scenario(data)
    if scenario is not None:
        http["scenario"] = scenario
    return document


def _url(request: dict[str, Any]) -> tuple[str | None, str | None, dict[str, Any]]:
    """``(path, pathPattern, query)`` of the request's URL keys."""
    if request.get("urlPath"):
        return str(request["urlPath"]), None, {}
    if request.get("url"):
        path, query = split_url(str(request["url"]))
        return path, None, dict(query)
    if request.get("urlPathTemplate"):
        return str(request["urlPathTemplate"]), None, {}
    raw = request.get("urlPathPattern") or request.get("urlPattern")
    if raw:
        raw = str(raw)
        # WireMock patterns match the whole URL: anchor them the same way.
        return None, ("" if raw.startswith("^") else "^") + raw + ("" if raw.endswith("$")
                                                                  else "$"), {}
    return None, None, {}


def _value_matchers(items: Any, location: str, header: bool) -> dict[str, Any]:
    """``{name: text | value matcher object}`` of ``headers`` / ``queryParameters``.

    Raises :class:`ImportDocumentError` at ``<location>.<name>`` for an operator that has no
    exact equivalent."""
    if items is None:
        return {}
    if not isinstance(items, dict):
        raise ImportDocumentError(FORMAT, location, "expected a mapping")
    found: dict[str, Any] = {}
    for name, spec in items.items():
        where = f"{location}.{name}"
        if not isinstance(spec, dict):
            found[str(name)] = _exact_text(scalar_text(spec), header)
            continue
        found[str(name)] = _value_matcher(spec, where, header)
    return found


def _value_matcher(spec: dict[str, Any], where: str, header: bool) -> Any:
    """One WireMock string-value pattern as our text or value matcher object."""
    spec = dict(spec)
    if "equalToIgnoreCase" in spec:  # WireMock 1.x spelling
        spec["equalTo"] = spec.pop("equalToIgnoreCase")
        spec["caseInsensitive"] = True
    if spec.get("absent") is True and set(spec) == {"absent"}:
        return {"absent": True}
    operators = [key for key in VALUE_OPERATORS if key in spec]
    extra = sorted(set(spec) - set(VALUE_OPERATORS) - {"caseInsensitive"})
    if len(operators) != 1 or extra:
        unsupported = extra[0] if extra else (", ".join(operators) or "(none)")
        raise ImportDocumentError(FORMAT, where, f"matcher {unsupported} is not supported")
    operator = operators[0]
    value = scalar_text(spec[operator])
    insensitive = spec.get("caseInsensitive") is True
    if operator == "equalTo" and not insensitive:
        return _exact_text(value, header)
    result: dict[str, Any] = {operator: value}
    if insensitive:
        result["caseInsensitive"] = True
    return result


def _exact_text(value: str, header: bool) -> Any:
    """An exact value: text, unless a header value would read as a ``*`` wildcard."""
    if header and (value.startswith("*") or value.endswith("*")):
        return {"equalTo": value}
    return value


def _with_basic_auth(headers: dict[str, Any], credentials: Any) -> dict[str, Any]:
    if not isinstance(credentials, dict) or "username" not in credentials \
            or "password" not in credentials:
        raise ImportDocumentError(FORMAT, "request.basicAuthCredentials",
                                  "expected {username, password}")
    if any(name.lower() == "authorization" for name in headers):
        raise ImportDocumentError(FORMAT, "request.basicAuthCredentials",
                                  "basicAuthCredentials together with an Authorization header "
                                  "condition cannot be expressed")
    token = base64.b64encode(f"{credentials['username']}:{credentials['password']}"
                             .encode("utf-8")).decode("ascii")
    return {**headers, "Authorization": f"Basic {token}"}


def _cookie_condition(cookies: Any, where: str, warnings: list[str]) -> Any:
    """The approximate ``Cookie`` header condition of ``cookies`` (``equalTo`` only), or
    None; adds :data:`COOKIE_WARNING`."""
    if not cookies:
        return None
    if not isinstance(cookies, dict):
        raise ImportDocumentError(FORMAT, "request.cookies", "expected a mapping")
    pairs = []
    for name, spec in cookies.items():
        if isinstance(spec, dict):
            if set(spec) != {"equalTo"}:
                operator = ", ".join(sorted(spec)) or "(none)"
                raise ImportDocumentError(FORMAT, f"request.cookies.{name}",
                                          f"cookie matcher {operator} is not supported")
            spec = spec["equalTo"]
        pairs.append(f"{name}={scalar_text(spec)}")
    warnings.append(COOKIE_WARNING.format(where=where, pairs=" and ".join(pairs)))
    if len(pairs) == 1:
        return {"contains": pairs[0]}
    import re

    # Several "contains" on one header: one expression with a look-ahead for each.
    return {"matches": "(?s)" + "".join(f"(?=.*{re.escape(pair)})" for pair in pairs) + ".*"}


def _body_matchers(patterns: Any, location: str) -> list[dict[str, Any]]:
    """``bodyMatchers`` entries of ``bodyPatterns``; raises :class:`ImportDocumentError` at
    ``<location>[i]`` for a pattern without an exact equivalent."""
    if patterns is None:
        return []
    if not isinstance(patterns, list):
        raise ImportDocumentError(FORMAT, location, "expected a list")
    entries: list[dict[str, Any]] = []
    for index, pattern in enumerate(patterns):
        where = f"{location}[{index}]"
        if not isinstance(pattern, dict):
            raise ImportDocumentError(FORMAT, where, "expected a mapping")
        pattern = dict(pattern)
        if "equalToIgnoreCase" in pattern:
            pattern["equalTo"] = pattern.pop("equalToIgnoreCase")
            pattern["caseInsensitive"] = True
        operators = [key for key in BODY_OPERATORS if key in pattern]
        if len(operators) != 1:
            keys = ", ".join(sorted(pattern)) or "(none)"
            raise ImportDocumentError(FORMAT, where, f"body pattern {keys} is not supported")
        operator = operators[0]
        options = set(pattern) - {operator}
        unsupported = sorted(options - BODY_OPTIONS[operator])
        if unsupported:
            raise ImportDocumentError(FORMAT, f"{where}.{unsupported[0]}",
                                      f"option {unsupported[0]} of {operator} is not supported")
        value = pattern[operator]
        if operator == "matchesJsonPath" and not isinstance(value, str):
            raise ImportDocumentError(FORMAT, f"{where}.matchesJsonPath",
                                      "matchesJsonPath with a sub-matcher is not supported")
        if operator == "equalToJson" and isinstance(value, str):
            try:
                orjson.loads(value)
            except orjson.JSONDecodeError:
                raise ImportDocumentError(FORMAT, f"{where}.equalToJson",
                                          "not valid JSON text") from None
        elif operator != "equalToJson":
            value = scalar_text(value)
        entry: dict[str, Any] = {operator: value}
        for option in sorted(options):
            if pattern[option] is True:
                entry[option] = True
        entries.append(entry)
    return entries


def _scenario(mapping: dict[str, Any]) -> dict[str, Any] | None:
    name = mapping.get("scenarioName")
    if not name:
        for key in ("requiredScenarioState", "newScenarioState"):
            if mapping.get(key):
                raise ImportDocumentError(FORMAT, key, "needs a scenarioName")
        return None
    scenario: dict[str, Any] = {"name": str(name)}
    if mapping.get("requiredScenarioState"):
        scenario["requiredState"] = str(mapping["requiredScenarioState"])
    if mapping.get("newScenarioState"):
        scenario["newState"] = str(mapping["newScenarioState"])
    return scenario


def _body(response: dict[str, Any], item: str, folder: Path | None, root: Path | None,
          headers: dict[str, str], warnings: list[str]) -> tuple[Any, str | None]:
    """``(body, bodyBase64)`` of a WireMock response (at most one is set)."""
    if response.get("body") is not None:
        text = response["body"]
        return (body_value(text, content_type_of(headers)) if isinstance(text, str)
                else text), None
    if response.get("jsonBody") is not None:
        if not content_type_of(headers):
            headers["Content-Type"] = "application/json"
        return response["jsonBody"], None
    if response.get("base64Body"):
        try:
            raw = base64.b64decode("".join(str(response["base64Body"]).split()),
                                   validate=True)
        except (binascii.Error, ValueError):
            raise ImportDocumentError(FORMAT, "response.base64Body",
                                      "not valid base64") from None
        return file_body(raw, None, headers)
    if response.get("bodyFileName"):
        name = str(response["bodyFileName"])
        files = _files_folder(folder, root)
        if files is not None:
            candidate = (files / name).resolve()
            if not candidate.is_relative_to(files.resolve()):
                raise ImportDocumentError(FORMAT, "response.bodyFileName",
                                          f"{name!r} leads outside the __files folder")
            if candidate.is_file():
                return file_body(candidate.read_bytes(), name, headers)
        warnings.append(f"{item}.response.bodyFileName: {name!r} not found in __files/ beside "
                        "or above the mappings; the mock answers without a body")
    return None, None


def _files_folder(folder: Path | None, root: Path | None) -> Path | None:
    """The nearest ``__files`` folder in ``folder`` or above it, no higher than the parent
    of the imported directory ``root``."""
    if folder is None:
        return None
    limit = (root.resolve().parent if root is not None else folder.resolve().parent)
    current = folder.resolve()
    for _ in range(64):  # bounded walk up
        candidate = current / "__files"
        if candidate.is_dir():
            return candidate
        if current == limit or current.parent == current:
            return None
        current = current.parent
    return None
