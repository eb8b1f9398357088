"""Mockoon environment exports -> HTTP mocks (and tables for CRUD routes).

Rules (behavior notes §13):

* a route is skipped when disabled: ``enabled: false`` on the route, or its uuid in a
  ``disabledRoutes`` list (a list, or ``{environment uuid: [route uuids]}``); routes without
  such a field are enabled; ``ws`` routes are skipped (warning);
* ``crud`` routes become a table (seed data from the route's data bucket, ``crudKey`` as the
  id field) plus six bound mocks (list, create, get, update, patch, delete) on
  ``/<prefix>/<endpoint>`` and ``/<prefix>/<endpoint>/{id}``;
* each response of an ``http`` route is its own mock with priority ``responses - index``
  (earlier responses rank higher); a route in ``SEQUENTIAL`` or ``RANDOM`` response mode
  becomes ONE mock whose ``http.responses`` are the route's responses, taken in turn (cycling)
  or at random (``responseMode``), rules ignored as Mockoon ignores them in those modes;
* rules become conditions: ``query`` -> ``queryParams``, ``header`` -> ``headers``, ``body``
  -> ``bodyJsonPath`` (with a path), ``bodyEquals`` / ``bodyPattern`` (without),
  ``cookie`` -> a ``Cookie`` header contains-condition; inverted rules and other targets
  are skipped (warning); several rules are ANDed (a warning notes an ``OR`` that cannot be
  kept);
* ``:param`` path segments become ``{param}``;
* latency = the response's ``latency`` + the environment's ``latency`` (capped at 30000);
* Handlebars helpers become mockd templates (``{{urlParam 'id'}}`` ->
  ``{{request.pathParam.id}}``, ``{{faker 'person.firstName'}}`` -> ``{{faker.firstName}}``;
  an unknown faker method -> ``{{faker.word}}``); any other helper stays literal text
  (warning); ``disableTemplating`` keeps the whole body literal;
* a ``FILE`` body is read from ``filePath``, relative to the environment file's folder and
  confined to it (a path leading elsewhere, a templated path, a missing file, a file over
  :data:`MAX_FILE_BODY_BYTES`, or an environment given as text: a warning and no body):
  UTF-8 text is templated like an inline body, other bytes become ``bodyBase64`` with a
  ``Content-Type`` from the file extension when the response gives none.

Source: behavior notes §13 ("mockoon"); SPEC "Import and export", "Templating".
"""
from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

from mocks.portability.importers.common import (IdAllocator, clamp_delay, file_body, header_pairs, http_mock,
                                                literal_text, new_http_id, safe_id)
from mocks.portability.importers.result import DocumentProbe, ImportDocumentError, ImportOptions, ImportResult

FORMAT = "mockoon"
#: Largest ``FILE`` body read into the imported mock, in bytes.
MAX_FILE_BODY_BYTES = 10 * 1024 * 1024

#: Mockoon / faker.js method (``namespace.method``; old and new namespaces) -> mockd type.
FAKER_METHODS: dict[str, str] = {
    "person.firstName": "firstName", "name.firstName": "firstName",
    "person.lastName": "lastName", "name.lastName": "lastName",
    "person.fullName": "name", "name.findName": "name", "name.fullName": "name",
    "person.jobTitle": "jobTitle", "name.jobTitle": "jobTitle",
    "internet.email": "email", "internet.exampleEmail": "email",
    "internet.userName": "word", "internet.username": "word",
    "internet.url": "url", "internet.domainName": "url",
    "internet.ip": "ipv4", "internet.ipv4": "ipv4", "internet.ipv6": "ipv6",
    "internet.mac": "macAddress", "internet.userAgent": "userAgent",
    "internet.color": "hexColor", "color.rgb": "hexColor", "color.human": "color",
    "commerce.color": "color",
    "phone.number": "phone", "phone.phoneNumber": "phone",
    "company.name": "company", "company.companyName": "company",
    "location.streetAddress": "address", "address.streetAddress": "address",
    "location.latitude": "latitude", "address.latitude": "latitude",
    "location.longitude": "longitude", "address.longitude": "longitude",
    "lorem.word": "word", "lorem.words": "words", "lorem.sentence": "sentence",
    "lorem.slug": "slug", "helpers.slugify": "slug",
    "datatype.boolean": "boolean", "datatype.uuid": "uuid", "string.uuid": "uuid",
    "finance.creditCardNumber": "creditCard", "finance.creditCardCVV": "cvv",
    "finance.currencyCode": "currencyCode", "finance.currencyName": "currency",
    "finance.iban": "iban", "finance.amount": "price", "commerce.price": "price",
    "commerce.productName": "productName", "commerce.product": "productName",
    "system.mimeType": "mimeType", "system.fileExt": "fileExtension",
    "system.commonFileExt": "fileExtension",
}

_EXPRESSION = re.compile(r"\{\{(\{?)(.*?)\}?\}\}", re.DOTALL)


class MockoonImporter:
    """Mockoon environment files (``routes`` with ``endpointPrefix`` or ``port``)."""

    format = FORMAT
    #: The format's name and its detection rule in words, for ``GET /formats``.
    title = "Mockoon environment"
    detection = "an object with 'routes' and either 'endpointPrefix' or 'port'"

    def detects(self, probe: DocumentProbe) -> bool:
        """``routes`` together with ``endpointPrefix`` or ``port`` (behavior notes §13)."""
        data = probe.structured()
        return isinstance(data, dict) and "routes" in data and (
            "endpointPrefix" in data or "port" in data)

    def convert(self, probe: DocumentProbe, options: ImportOptions) -> ImportResult:
        """See the module docstring. Raises :class:`ImportDocumentError`."""
        document = probe.data(FORMAT)
        if not isinstance(document, dict) or not isinstance(document.get("routes"), list):
            raise ImportDocumentError(FORMAT, "routes", "expected a list of routes")
        return MockoonConversion(document, probe.base_dir).run()


class MockoonConversion:
    """One environment being converted."""

    def __init__(self, document: dict[str, Any], base_dir: Path | None = None):
        self.document = document
        #: the folder of the environment file (``FILE`` bodies are read there), or None.
        self.base_dir = base_dir
        self.result = ImportResult(format=FORMAT, name=document.get("name"))
        self.warnings = self.result.warnings
        self.ids = IdAllocator()
        self.prefix = str(document.get("endpointPrefix") or "").strip("/")
        self.global_latency = document.get("latency") or 0
        self.global_headers = header_pairs(document.get("headers"))
        self.buckets = {str(bucket.get("id")): bucket for bucket in document.get("data") or ()
                        if isinstance(bucket, dict)}
        self.buckets.update({str(bucket.get("uuid")): bucket
                             for bucket in document.get("data") or ()
                             if isinstance(bucket, dict) and bucket.get("uuid")})
        self.disabled = _disabled_routes(document.get("disabledRoutes"), document.get("uuid"))
        self._unknown_helpers: set[str] = set()

    def run(self) -> ImportResult:
        """Convert every enabled route."""
        for index, route in enumerate(self.document["routes"]):
            location = f"routes[{index}]"
            if not isinstance(route, dict):
                raise ImportDocumentError(FORMAT, location, "expected a mapping")
            if route.get("enabled") is False or route.get("uuid") in self.disabled:
                continue
            kind = route.get("type") or "http"
            label = f"{location} ({str(route.get('method') or 'get').upper()} " \
                    f"{self.path_of(route.get('endpoint'))})"
            if kind == "crud":
                with self.result.item(label):
                    self._crud(route, location)
            elif kind == "http":
                with self.result.item(label):
                    self._http(route, location)
            else:
                self.warnings.append(f"{location}: {kind} routes are not imported")
        return self.result

    # ------------------------------------------------------------------ paths

    def path_of(self, endpoint: Any) -> str:
        """``/<prefix>/<endpoint>`` with ``:param`` -> ``{param}``."""
        parts = [part for part in (self.prefix, str(endpoint or "").strip("/")) if part]
        path = "/" + "/".join(parts)
        return re.sub(r":([A-Za-z_][A-Za-z0-9_]*)", r"{\1}", path)

    # ------------------------------------------------------------------ http routes

    def _http(self, route: dict[str, Any], location: str) -> None:
        method = str(route.get("method") or "get").upper()
        if method == "ALL":
            method = ""
        path = self.path_of(route.get("endpoint"))
        responses = route.get("responses")
        if not isinstance(responses, list) or not responses:
            raise ImportDocumentError(FORMAT, f"{location}.responses",
                                      "expected a non-empty list")
        mode = route.get("responseMode") or None
        if mode not in (None, "DISABLE_RULES", "FALLBACK", "SEQUENTIAL", "RANDOM"):
            self.warnings.append(f"{location}: responseMode {mode!r} is not kept; responses "
                                 "are chosen by their rules")
        count = len(responses)
        mocks = []
        for index, response in enumerate(responses):
            here = f"{location}.responses[{index}]"
            if not isinstance(response, dict):
                raise ImportDocumentError(FORMAT, here, "expected a mapping")
            query, match_headers, extra = ({}, {}, {}) if mode in ("SEQUENTIAL", "RANDOM") \
                else self._rules(response, here)
            status = response.get("statusCode", 200)
            if not isinstance(status, int):
                raise ImportDocumentError(FORMAT, f"{here}.statusCode",
                                          "expected an HTTP status number")
            headers = dict(self.global_headers)
            headers.update(header_pairs(response.get("headers")))
            literal = bool(response.get("disableTemplating"))
            headers = {name: (literal_text(value) if literal else self.template(value, here))
                       for name, value in headers.items()}
            body, body_base64 = self._body(response, here, literal, headers)
            delay = clamp_delay((response.get("latency") or 0) + (self.global_latency or 0),
                                self.warnings, f"{here}.latency")
            label = response.get("label") or route.get("documentation")
            name = f"{method or 'ANY'} {path}" + (f" ({label})" if label else "")
            wanted = response.get("uuid")
            mock_id = self.ids.claim(safe_id(str(wanted)), self.warnings) if wanted \
                else new_http_id()
            mocks.append(http_mock(
                mock_id, name=name, method=method or None, path=path, status=status,
                headers=headers or None, body=body, query_params=query or None,
                match_headers=match_headers or None, delay_ms=delay,
                priority=count - index, matcher_extra=extra or None, literal=False))
            if body_base64 is not None:
                mocks[-1]["http"]["response"]["bodyBase64"] = body_base64
        if mode in ("SEQUENTIAL", "RANDOM"):
            # One mock answering every response in turn (or at random); rules do not apply
            # in these modes.
            first = mocks[0]
            http = first["http"]
            http.pop("priority", None)
            http["responses"] = [mock["http"]["response"] for mock in mocks]
            http["responseMode"] = mode.lower()
            del http["response"]
            first["name"] = f"{method or 'ANY'} {path}"
            mocks = [first]
        self.result.mocks.extend(mocks)

    def _body(self, response: dict[str, Any], location: str, literal: bool,
              headers: dict[str, str]) -> tuple[Any, str | None]:
        """``(body, bodyBase64)`` of a response (at most one is set)."""
        kind = response.get("bodyType") or "INLINE"
        if kind == "DATABUCKET":
            bucket = self.buckets.get(str(response.get("databucketID")))
            if bucket is None:
                self.warnings.append(f"{location}: data bucket "
                                     f"{response.get('databucketID')!r} not found")
                return None, None
            text = str(bucket.get("value") or "")
        elif kind == "FILE":
            raw = self._file(str(response.get("filePath") or ""), f"{location}.filePath")
            if raw is None:
                return None, None
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                return None, file_body(raw, str(response.get("filePath")), headers)[1]
        else:
            text = response.get("body")
            if text is None:
                return None, None
            text = str(text)
        return (literal_text(text) if literal else self.template(text, location)), None

    def _file(self, file_path: str, location: str) -> bytes | None:
        """The bytes of a ``FILE`` body (see the module docstring), or None with a
        warning."""
        problem = None
        if not file_path:
            problem = "no filePath"
        elif "{{" in file_path:
            problem = f"{file_path!r} is templated; only a fixed path is read"
        elif self.base_dir is None:
            problem = (f"{file_path!r} is read beside the environment file; import the file "
                       "itself, not its text")
        else:
            folder = self.base_dir.resolve()
            candidate = (folder / file_path).resolve()
            if not candidate.is_relative_to(folder):
                problem = f"{file_path!r} leads outside the environment file's folder"
            elif not candidate.is_file():
                problem = f"{file_path!r} not found beside the environment file"
            elif candidate.stat().st_size > MAX_FILE_BODY_BYTES:
                problem = f"{file_path!r} is over {MAX_FILE_BODY_BYTES} bytes"
            else:
                return candidate.read_bytes()
        self.warnings.append(f"{location}: {problem}; the mock answers without a body")
        return None

    def _rules(self, response: dict[str, Any],
               location: str) -> tuple[dict[str, str], dict[str, str], dict[str, Any]]:
        rules = response.get("rules") or []
        if not isinstance(rules, list):
            raise ImportDocumentError(FORMAT, f"{location}.rules", "expected a list")
        query: dict[str, str] = {}
        headers: dict[str, str] = {}
        extra: dict[str, Any] = {}
        kept = 0
        for index, rule in enumerate(rules):
            here = f"{location}.rules[{index}]"
            if not isinstance(rule, dict):
                raise ImportDocumentError(FORMAT, here, "expected a mapping")
            if rule.get("invert"):
                self.warnings.append(f"{here}: inverted rules are not imported")
                continue
            target, modifier = rule.get("target"), str(rule.get("modifier") or "")
            value = "" if rule.get("value") is None else str(rule.get("value"))
            regex = str(rule.get("operator") or "equals").startswith("regex")
            if target == "query" and modifier:
                query[modifier] = value
            elif target == "header" and modifier:
                headers[modifier] = value
            elif target == "cookie" and modifier:
                if "Cookie" in headers:
                    self.warnings.append(f"{here}: only the first cookie rule is kept")
                    continue
                headers["Cookie"] = f"*{modifier}={value}*"
            elif target == "body" and modifier and not regex:
                path = modifier if modifier.startswith("$") else "$." + modifier
                extra.setdefault("bodyJsonPath", {})[path] = value
            elif target == "body":
                extra["bodyPattern" if regex else "bodyEquals"] = value
            else:
                self.warnings.append(f"{here}: rule target {target!r} is not imported")
                continue
            kept += 1
        if kept > 1 and str(response.get("rulesOperator") or "OR").upper() == "OR":
            self.warnings.append(f"{location}: rules joined with OR are imported as AND "
                                 "(all must hold)")
        return query, headers, extra

    # ------------------------------------------------------------------ crud routes

    def _crud(self, route: dict[str, Any], location: str) -> None:
        responses = route.get("responses") or [{}]
        first = responses[0] if isinstance(responses[0], dict) else {}
        endpoint = str(route.get("endpoint") or "").strip("/")
        table = re.sub(r"[^A-Za-z0-9_-]+", "_", endpoint.rsplit("/", 1)[-1]) or "items"
        id_field = str(first.get("crudKey") or "id")
        seed: list[Any] = []
        bucket = self.buckets.get(str(first.get("databucketID")))
        if bucket is not None:
            try:
                seed = json.loads(str(bucket.get("value") or "[]"))
            except ValueError:
                self.warnings.append(f"{location}: data bucket {bucket.get('name')!r} is not "
                                     "JSON; the table starts empty")
                seed = []
            if not isinstance(seed, list):
                seed = [seed]
            seed = [item for item in seed if isinstance(item, dict)]
        self.result.tables.append({"name": table, "idField": id_field, "seedData": seed})
        base = self.path_of(endpoint)
        for action, method, path in (("list", "GET", base), ("create", "POST", base),
                                     ("get", "GET", base + "/{id}"),
                                     ("update", "PUT", base + "/{id}"),
                                     ("patch", "PATCH", base + "/{id}"),
                                     ("delete", "DELETE", base + "/{id}")):
            mock_id = self.ids.claim(safe_id(f"{table}-{action}"), self.warnings)
            self.result.mocks.append({"id": mock_id, "type": "http",
                                      "name": f"{method} {path} ({table} {action})",
                                      "http": {"matcher": {"method": method, "path": path}}})
            self.result.extend.append({"mock": mock_id, "table": table, "action": action})

    # ------------------------------------------------------------------ templates

    def template(self, text: str, location: str) -> str:
        """Mockoon Handlebars text -> mockd template text: known helpers translated, the
        rest (and all plain text) kept literal."""
        if "{{" not in text:
            return text
        out: list[str] = []
        position = 0
        for match in _EXPRESSION.finditer(text):
            out.append(literal_text(text[position:match.start()]))
            translated = self._helper(match.group(2).strip(), location)
            out.append(translated if translated is not None else literal_text(match.group(0)))
            position = match.end()
        out.append(literal_text(text[position:]))
        return "".join(out)

    def _helper(self, expression: str, location: str) -> str | None:
        try:
            words = shlex.split(expression)
        except ValueError:
            words = expression.split()
        if not words:
            return None
        helper, arguments = words[0], words[1:]
        first = arguments[0] if arguments else ""
        if helper == "faker" and first:
            return "{{faker." + FAKER_METHODS.get(first, "word") + "}}"
        if helper == "urlParam" and first:
            return "{{request.pathParam." + first + "}}"
        if helper in ("queryParam", "queryParamRaw") and first:
            if len(arguments) > 1:
                return "{{default request.query." + first + " '" + arguments[1] + "'}}"
            return "{{request.query." + first + "}}"
        if helper == "header" and first:
            return "{{request.header." + first + "}}"
        if helper in ("body", "bodyRaw") and first:
            return "{{request.body." + first.removeprefix("$.") + "}}"
        if helper in ("body", "bodyRaw"):
            return "{{request.rawBody}}"
        if helper == "method":
            return "{{request.method}}"
        if helper in ("uuid", "guid"):
            return "{{uuid}}"
        if helper == "now":
            return "{{now}}"
        if helper in ("int", "float") and len(arguments) >= 2 and all(
                _is_number(argument) for argument in arguments[:2]):
            return "{{random." + helper + "(" + arguments[0] + ", " + arguments[1] + ")}}"
        if helper in ("int", "float"):
            return "{{random." + helper + "(0, 100)}}"
        if helper == "boolean":
            return "{{faker.boolean}}"
        if helper not in self._unknown_helpers:
            self._unknown_helpers.add(helper)
            self.warnings.append(f"{location}: Handlebars helper {helper!r} has no mockd "
                                 "equivalent; kept as literal text")
        return None


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _disabled_routes(value: Any, environment: Any) -> set[str]:
    """Route uuids listed as disabled (a list, or a map of environment uuid -> list)."""
    if isinstance(value, list):
        return {str(item) for item in value}
    if isinstance(value, dict):
        chosen = value.get(environment) if environment in value else [
            item for items in value.values() if isinstance(items, list) for item in items]
        return {str(item) for item in chosen or ()}
    return set()
