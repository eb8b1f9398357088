"""Postman collections v2.0 / v2.1 -> one HTTP mock per request.

Rules (behavior notes §13):

* folders are flattened (depth-first, document order);
* collection variables (``variable[]``) are substituted, and ``--var name=value``
  (``imports[].variables``) values win over them; an unknown ``{{var}}`` stays literal in the
  path and is matched literally (never a template or a parameter);
* ``:id`` path segments become ``{id}`` parameters;
* enabled request headers become header conditions, except ``Content-Type``,
  ``Content-Length`` and ``Accept`` (a client computes those) and headers whose value still
  holds an unknown ``{{var}}`` (no client sends that text; a warning names them); query
  parameters and request bodies are not conditions;
* each request is one item, named ``item[0].item[2] (<request name>)``: a request that
  cannot be converted (an unknown method, a malformed URL or saved response) is skipped with
  a warning and the others are imported;
* the first saved response (``response[0]``) is the answer: its ``code``, headers (transport
  headers dropped) and body; without one, 200 ``{"status": "ok"}``.

The URL's host part is dropped: ``{{baseUrl}}/users`` and ``https://api.example.com/users``
both give ``/users`` (a collection variable holding a URL with a path, such as
``https://api.example.com/v1``, contributes ``/v1``).

Source: behavior notes §13 ("postman"); SPEC "Import and export".
"""
from __future__ import annotations

import re
from typing import Any

from mocks.portability.importers.common import (body_value, content_type_of, header_pairs,
                                                http_mock, new_http_id, response_headers,
                                                split_url)
from mocks.protocols.http.config import HTTP_METHODS
from mocks.portability.importers.result import DocumentProbe, ImportDocumentError, ImportOptions, ImportResult

FORMAT = "postman"
#: Request headers never turned into conditions.
SKIPPED_MATCH_HEADERS = frozenset(("content-type", "content-length", "accept"))

_VARIABLE = re.compile(r"\{\{\s*([^{}\s]+)\s*\}\}")
#: A ``/:name`` path segment (Postman's path variable).
_COLON_PARAMETER = re.compile(r"/:([A-Za-z_][A-Za-z0-9_]*)(?=/|$)")


class PostmanImporter:
    """Postman collection exports (``info`` + ``item``)."""

    format = FORMAT
    #: The format's name and its detection rule in words, for ``GET /formats``.
    title = "Postman collection"
    detection = "an object with 'info' and 'item'"

    def detects(self, probe: DocumentProbe) -> bool:
        """A mapping with ``info`` and ``item`` (behavior notes §13)."""
        data = probe.structured()
        return isinstance(data, dict) and "info" in data and "item" in data

    def convert(self, probe: DocumentProbe, options: ImportOptions) -> ImportResult:
        """See the module docstring. Raises :class:`ImportDocumentError`."""
        document = probe.data(FORMAT)
        if not isinstance(document, dict) or not isinstance(document.get("item"), list):
            raise ImportDocumentError(FORMAT, "item", "expected a list of requests and folders")
        info = document.get("info") if isinstance(document.get("info"), dict) else {}
        result = ImportResult(format=FORMAT, name=info.get("name"))
        variables = {**_variables(document.get("variable")), **options.variables}
        for location, item in _requests(document["item"], "item", result):
            label = f"{location} ({item.get('name')})" if item.get("name") else location
            with result.item(label):
                result.mocks.append(self._mock(item, location, variables, result.warnings))
        if not result.mocks and not result.skipped:
            result.warnings.append("the collection holds no requests")
        return result

    def _mock(self, item: dict[str, Any], location: str, variables: dict[str, str],
              warnings: list[str]) -> dict[str, Any]:
        request = item.get("request")
        if isinstance(request, str):
            request = {"url": request, "method": "GET"}
        if not isinstance(request, dict):
            raise ImportDocumentError(FORMAT, f"{location}.request", "expected a mapping or a URL")
        method = str(request.get("method") or "GET").upper()
        if method not in HTTP_METHODS:
            raise ImportDocumentError(FORMAT, f"{location}.request.method",
                                      f"method {method!r} cannot be mocked; use one of "
                                      f"{', '.join(HTTP_METHODS)}")
        path, query = _path_and_query(request.get("url"), variables,
                                      f"{location}.request.url")
        path = _COLON_PARAMETER.sub(r"/{\1}", path)
        match_headers = {}
        for name, value in header_pairs(request.get("header")):
            if name.lower() in SKIPPED_MATCH_HEADERS:
                continue
            value = substitute(value, variables)
            if _VARIABLE.search(value):
                warnings.append(f"{location}: header {name} is not a condition: its value "
                                f"{value!r} holds a variable with no value (pass --var)")
                continue
            match_headers[name] = value
        responses = item.get("response")
        status, headers, body = 200, {}, {"status": "ok"}
        if isinstance(responses, list) and responses and isinstance(responses[0], dict):
            saved = responses[0]
            try:
                status = int(saved.get("code") or 200)
            except (TypeError, ValueError):
                raise ImportDocumentError(FORMAT, f"{location}.response[0].code",
                                          "expected an HTTP status number") from None
            headers = response_headers(header_pairs(saved.get("header")))
            text = saved.get("body")
            body = body_value(str(text), content_type_of(headers)) if text else None
        name = item.get("name") or f"{method} {path}"
        return http_mock(new_http_id(), name=str(name), method=method, path=path,
                         status=status, headers=headers or None, body=body,
                         query_params=None, match_headers=match_headers or None)


def _requests(items: list[Any], location: str, result: ImportResult):
    """``(location, item)`` of every request, folders flattened depth-first; an entry that
    is not a mapping is skipped (recorded in ``result``)."""
    for index, item in enumerate(items):
        here = f"{location}[{index}]"
        if not isinstance(item, dict):
            result.skip(here, "expected a mapping (a request or a folder)")
            continue
        if isinstance(item.get("item"), list):
            yield from _requests(item["item"], f"{here}.item", result)
        elif "request" in item:
            yield here, item


def _variables(items: Any) -> dict[str, str]:
    """Collection variables ``{key: value}`` (disabled ones left out)."""
    found: dict[str, str] = {}
    for item in items or ():
        if isinstance(item, dict) and item.get("key") and item.get("disabled") is not True:
            value = item.get("value")
            found[str(item["key"])] = "" if value is None else str(value)
    return found


def substitute(text: str, variables: dict[str, str]) -> str:
    """``{{name}}`` replaced by collection variables; unknown names stay as written."""
    if "{{" not in text:
        return text
    return _VARIABLE.sub(lambda match: variables.get(match.group(1), match.group(0)), text)


def _path_and_query(url: Any, variables: dict[str, str],
                    location: str) -> tuple[str, dict[str, str]]:
    """``(path, query)`` of a request URL (string or URL object)."""
    if isinstance(url, dict):
        raw = url.get("raw")
        if isinstance(raw, str) and raw:
            return _raw_path(raw, variables)
        segments = url.get("path") or []
        if isinstance(segments, str):
            segments = [segments]
        path = "/" + "/".join(substitute(str(segment), variables) for segment in segments)
        return path, {}
    if isinstance(url, str):
        return _raw_path(url, variables)
    if url is None:
        return "/", {}
    raise ImportDocumentError(FORMAT, location, "expected a URL string or a URL object")


def _raw_path(raw: str, variables: dict[str, str]) -> tuple[str, dict[str, str]]:
    text = substitute(raw.strip(), variables)
    if "://" not in text:
        # An unresolved host variable ({{baseUrl}}/users) or a bare host (example.com/users):
        # the host part is everything before the first "/".
        if text.startswith("{{") or not text.startswith("/"):
            slash = text.find("/", text.find("}}") + 2 if text.startswith("{{") else 0)
            text = text[slash:] if slash >= 0 else "/"
    path, query = split_url(text)
    return path, query
