"""WireMock stub mappings -> HTTP mocks.

Inputs: a single mapping ``{request, response}``, ``{mappings: [...]}``, an array of
mappings, or a directory of ``*.json`` files holding any of those (a ``mappings/`` folder
inside the directory is used when present; bodies named by ``bodyFileName`` are read from
its sibling ``__files/``).

Rules (behavior notes §13):

* URL: ``urlPath`` > ``url`` (its query string becomes ``queryParams``) > ``urlPattern`` /
  ``urlPathPattern`` (-> ``pathPattern``, anchored);
* ``queryParameters`` / ``headers`` / ``cookies`` operators ``equalTo``, ``contains`` and
  ``matches`` are kept as literal values (cookies as a ``Cookie`` header contains-condition);
* ``bodyPatterns``: ``equalTo``/``equalToJson`` -> ``bodyEquals``, ``contains`` ->
  ``bodyContains``, ``matches`` -> ``bodyPattern``, ``matchesJsonPath`` -> a
  ``bodyJsonPath`` existence condition;
* ``priority`` copied as given;
* response body: ``body`` > ``jsonBody`` > ``base64Body`` > ``bodyFileName``;
* ``fixedDelayMilliseconds`` -> ``delayMs`` (capped at 30000);
* id: the mapping's ``id`` (or ``uuid``), else ``http_<16 hex>``; name: its ``name``.

Source: behavior notes §13 ("wiremock"); SPEC "Import and export".
"""
from __future__ import annotations

import base64
import binascii
import json
from pathlib import Path
from typing import Any, Callable

from mocks.portability.importers.common import (IdAllocator, body_value, clamp_delay, content_type_of, http_mock,
                     new_http_id, response_headers, safe_id, scalar_text, split_url)
from mocks.portability.importers.result import DocumentProbe, ImportDocumentError, ImportOptions, ImportResult, parse_yaml

FORMAT = "wiremock"
#: Value operators kept as literal values (behavior notes §13).
VALUE_OPERATORS = ("equalTo", "contains", "matches", "equalToIgnoreCase", "doesNotMatch")


def is_mapping(value: Any) -> bool:
    """A WireMock mapping: a mapping with ``request`` and ``response``."""
    return isinstance(value, dict) and "request" in value and "response" in value


class WireMockImporter:
    """WireMock mapping files and directories."""

    format = FORMAT
    #: The format's name and its detection rule in words, for ``GET /formats``.
    title = "WireMock mappings"
    detection = ("a directory of mapping files, an object with 'request' and 'response', an object"
                 " with a 'mappings' list, or a list of mappings")

    def detects(self, probe: DocumentProbe) -> bool:
        """A directory with mapping files, ``{request, response}``, ``{mappings: [...]}`` or
        an array whose first item is a mapping (behavior notes §13)."""
        if probe.directory is not None:
            return any(self._files(probe.directory))
        data = probe.structured()
        if is_mapping(data):
            return True
        if isinstance(data, dict) and isinstance(data.get("mappings"), list):
            return True
        return isinstance(data, list) and bool(data) and is_mapping(data[0])

    def convert(self, probe: DocumentProbe, options: ImportOptions) -> ImportResult:
        """See the module docstring. Raises :class:`ImportDocumentError`."""
        result = ImportResult(format=FORMAT)
        ids = IdAllocator()
        if probe.directory is not None:
            files = list(self._files(probe.directory))
            if not files:
                raise ImportDocumentError(FORMAT, str(probe.directory),
                                          "no .json mapping files in this directory")
            for number, file_path in enumerate(files):
                options.report(number, len(files))
                text = file_path.read_text(encoding="utf-8-sig")
                data, error = parse_yaml(text)
                if error is not None:
                    raise ImportDocumentError(FORMAT, file_path.name, error)
                self._convert_document(data, file_path.name, file_path.parent, result, ids)
            options.report(len(files), len(files))
        else:
            self._convert_document(probe.data(FORMAT), "", None, result, ids, options.report)
        return result

    @staticmethod
    def _files(directory: Path):
        mappings = directory / "mappings"
        folder = mappings if mappings.is_dir() else directory
        return sorted(path for path in folder.rglob("*.json") if path.is_file()
                      and "__files" not in path.parts)

    def _convert_document(self, data: Any, prefix: str, folder: Path | None,
                          result: ImportResult, ids: IdAllocator,
                          report: Callable[[int, int], None] | None = None) -> None:
        where = f"{prefix}:" if prefix else ""
        if is_mapping(data):
            mappings, locations = [data], [where]
        elif isinstance(data, dict) and isinstance(data.get("mappings"), list):
            mappings = data["mappings"]
            locations = [f"{where}mappings[{index}]" for index in range(len(mappings))]
        elif isinstance(data, list):
            mappings = data
            locations = [f"{where}[{index}]" for index in range(len(mappings))]
        else:
            raise ImportDocumentError(FORMAT, prefix, "expected a mapping with request and "
                                      "response, {\"mappings\": [...]} or a list of mappings")
        for number, (mapping, location) in enumerate(zip(mappings, locations)):
            if report is not None:
                report(number, len(mappings))
            if not is_mapping(mapping):
                raise ImportDocumentError(FORMAT, location.rstrip(":") or "mapping",
                                          "expected a mapping with request and response")
            result.mocks.append(self._mock(mapping, location, folder, result.warnings, ids))
        if report is not None:
            report(len(mappings), len(mappings))

    def _mock(self, mapping: dict[str, Any], location: str, folder: Path | None,
              warnings: list[str], ids: IdAllocator) -> dict[str, Any]:
        prefix = f"{location}." if location and not location.endswith(":") else location
        request, response = mapping["request"], mapping["response"]
        if not isinstance(request, dict):
            raise ImportDocumentError(FORMAT, f"{prefix}request", "expected a mapping")
        if not isinstance(response, dict):
            raise ImportDocumentError(FORMAT, f"{prefix}response", "expected a mapping")
        method = str(request.get("method") or "ANY").upper()
        path: str | None = None
        pattern: str | None = None
        query: dict[str, str] = {}
        if request.get("urlPath"):
            path = str(request["urlPath"])
        elif request.get("url"):
            path, query = split_url(str(request["url"]))
        elif request.get("urlPathPattern") or request.get("urlPattern"):
            raw = str(request.get("urlPathPattern") or request.get("urlPattern"))
            # WireMock patterns match the whole URL: anchor them the same way.
            pattern = ("" if raw.startswith("^") else "^") + raw + ("" if raw.endswith("$")
                                                                    else "$")
        for name, spec in _operator_map(request.get("queryParameters"),
                                        f"{prefix}request.queryParameters").items():
            query[name] = spec
        match_headers = _operator_map(request.get("headers"), f"{prefix}request.headers")
        cookies = _operator_map(request.get("cookies"), f"{prefix}request.cookies")
        if cookies:
            match_headers["Cookie"] = "*" + "*".join(f"{name}={value}"
                                                     for name, value in cookies.items()) + "*"
        matcher_extra = _body_conditions(request.get("bodyPatterns"),
                                         f"{prefix}request.bodyPatterns", warnings)
        status = response.get("status", 200)
        if not isinstance(status, int):
            raise ImportDocumentError(FORMAT, f"{prefix}response.status",
                                      f"expected an HTTP status number, got {status!r}")
        headers = response_headers([(str(name), scalar_text(value)) for name, value in
                                    (response.get("headers") or {}).items()])
        body = self._body(response, f"{prefix}response", folder, headers, warnings)
        delay = clamp_delay(response.get("fixedDelayMilliseconds"), warnings,
                            f"{prefix}response.fixedDelayMilliseconds")
        priority = mapping.get("priority")
        if priority is not None and (not isinstance(priority, int) or priority < 0):
            raise ImportDocumentError(FORMAT, f"{prefix}priority", "expected a whole number ≥ 0")
        stub_id = mapping.get("id") or mapping.get("uuid")
        mock_id = ids.claim(safe_id(str(stub_id)), warnings) if stub_id else new_http_id()
        name = mapping.get("name") or f"{method} {path or pattern or '*'}"
        return http_mock(mock_id, name=str(name), method=None if method == "ANY" else method,
                         path=path, path_pattern=pattern, status=status,
                         headers=headers or None, body=body, query_params=query or None,
                         match_headers=match_headers or None, delay_ms=delay,
                         priority=priority or 0, matcher_extra=matcher_extra or None)

    @staticmethod
    def _body(response: dict[str, Any], location: str, folder: Path | None,
              headers: dict[str, str], warnings: list[str]) -> Any:
        if response.get("body") is not None:
            text = response["body"]
            return body_value(text, content_type_of(headers)) if isinstance(text, str) else text
        if response.get("jsonBody") is not None:
            if not content_type_of(headers):
                headers["Content-Type"] = "application/json"
            return response["jsonBody"]
        if response.get("base64Body"):
            try:
                raw = base64.b64decode("".join(str(response["base64Body"]).split()),
                                       validate=True)
            except (binascii.Error, ValueError):
                raise ImportDocumentError(FORMAT, f"{location}.base64Body",
                                          "not valid base64") from None
            return raw.decode("utf-8", "replace")
        if response.get("bodyFileName"):
            name = str(response["bodyFileName"])
            candidates = ([folder.parent / "__files" / name, folder / "__files" / name]
                          if folder is not None else [])
            for candidate in candidates:
                if candidate.is_file():
                    return body_value(candidate.read_text(encoding="utf-8", errors="replace"),
                                      content_type_of(headers))
            warnings.append(f"{location}.bodyFileName: {name!r} not found next to the "
                            "mappings (__files/); the mock answers without a body")
        return None


def _operator_map(items: Any, location: str) -> dict[str, str]:
    """``{name: {equalTo|contains|matches: value}}`` -> ``{name: value}`` (literal)."""
    if items is None:
        return {}
    if not isinstance(items, dict):
        raise ImportDocumentError(FORMAT, location, "expected a mapping")
    found: dict[str, str] = {}
    for name, spec in items.items():
        if isinstance(spec, dict):
            operator = next((key for key in VALUE_OPERATORS if key in spec), None)
            if operator is None:
                continue  # absent / hasExactly / ...: no literal value to keep
            found[str(name)] = scalar_text(spec[operator])
        else:
            found[str(name)] = scalar_text(spec)
    return found


def _body_conditions(patterns: Any, location: str, warnings: list[str]) -> dict[str, Any]:
    if patterns is None:
        return {}
    if not isinstance(patterns, list):
        raise ImportDocumentError(FORMAT, location, "expected a list")
    conditions: dict[str, Any] = {}
    for index, pattern in enumerate(patterns):
        if not isinstance(pattern, dict):
            raise ImportDocumentError(FORMAT, f"{location}[{index}]", "expected a mapping")
        if "equalTo" in pattern:
            conditions.setdefault("bodyEquals", scalar_text(pattern["equalTo"]))
        elif "equalToJson" in pattern:
            value = pattern["equalToJson"]
            conditions.setdefault("bodyEquals", value if isinstance(value, str)
                                  else json.dumps(value, separators=(",", ":")))
        elif "contains" in pattern:
            conditions.setdefault("bodyContains", scalar_text(pattern["contains"]))
        elif "matches" in pattern:
            conditions.setdefault("bodyPattern", scalar_text(pattern["matches"]))
        elif "matchesJsonPath" in pattern and isinstance(pattern["matchesJsonPath"], str):
            conditions.setdefault("bodyJsonPath", {})[pattern["matchesJsonPath"]] = {
                "exists": True}
        else:
            warnings.append(f"{location}[{index}]: body pattern {sorted(pattern)} not "
                            "supported; left out")
    return conditions
