"""HAR (HTTP Archive) -> one HTTP mock per distinct method and path.

Rules (behavior notes §13):

* the document needs ``log.version`` (a browser's or proxy's HAR 1.1/1.2 export);
* static assets (scripts, styles, images, fonts, source maps) are skipped unless
  ``include_static`` (``--include-static``);
* one mock per distinct method + path: the FIRST entry wins, later ones are counted in a
  warning;
* the request's query becomes ``queryParams``;
* response headers: hop-by-hop and transport headers dropped (the engine frames its own
  answer), HTTP/2 pseudo-headers dropped; ``content.mimeType`` becomes the Content-Type when
  the headers have none;
* bodies: text (or ``content.encoding: base64`` that decodes to UTF-8 text) becomes ``body``
  (parsed JSON for a JSON type); base64 whose bytes are not UTF-8 text (images, fonts, ...)
  becomes ``bodyBase64`` and is served byte for byte;
* each entry converts on its own: one that is malformed (no url, a status that is not a
  number, base64 that does not decode) is skipped with the warning
  ``skipped log.entries[N] (METHOD /path): <where>: <why>`` and the rest is imported;
* ids ``imported-1``, ``imported-2``, ... in order of the mocks made;
* recorded timings are not replayed (a mock answers at once; add ``delayMs`` by hand).

Source: behavior notes §13 ("har"); SPEC "Import and export", "Response" (``bodyBase64``).
"""
from __future__ import annotations

import base64
import binascii
from typing import Any

from mocks.portability.importers.common import (body_value, content_type_of, header_pairs, http_mock,
                     response_headers, split_url)
from mocks.portability.importers.result import DocumentProbe, ImportDocumentError, ImportOptions, ImportResult

FORMAT = "har"
#: Path extensions of static assets.
STATIC_EXTENSIONS = frozenset((
    ".js", ".mjs", ".css", ".map", ".png", ".jpg", ".jpeg", ".gif", ".svg", ".ico", ".webp",
    ".avif", ".bmp", ".woff", ".woff2", ".ttf", ".otf", ".eot", ".mp4", ".webm", ".mp3"))
#: Response media types of static assets.
STATIC_TYPES = ("image/", "font/", "text/css", "text/javascript", "application/javascript",
                "application/x-javascript", "video/", "audio/")


def is_static(path: str, content_type: str) -> bool:
    """Whether an entry is a static asset (by path extension or response media type)."""
    last = path.rsplit("/", 1)[-1].lower()
    if "." in last and last[last.rfind("."):] in STATIC_EXTENSIONS:
        return True
    return content_type.lower().startswith(STATIC_TYPES)


class HarImporter:
    """HAR 1.x files."""

    format = FORMAT
    #: The format's name and its detection rule in words, for ``GET /formats``.
    title = "HAR (HTTP Archive)"
    detection = "a .har file, or an object with a 'log' key"

    def detects(self, probe: DocumentProbe) -> bool:
        """A ``.har`` file, or a mapping with a ``log`` key (behavior notes §13)."""
        if probe.extension == ".har":
            return True
        data = probe.structured()
        return isinstance(data, dict) and "log" in data

    def convert(self, probe: DocumentProbe, options: ImportOptions) -> ImportResult:
        """See the module docstring. Raises :class:`ImportDocumentError` for a document
        that is not a HAR at all; a bad entry is skipped (``result.skipped``)."""
        document = probe.data(FORMAT)
        log = document.get("log") if isinstance(document, dict) else None
        if not isinstance(log, dict):
            raise ImportDocumentError(FORMAT, "log", "expected a mapping (HAR files hold "
                                      "{\"log\": {\"version\", \"entries\"}})")
        if not log.get("version"):
            raise ImportDocumentError(FORMAT, "log.version", "required (HAR 1.1 or 1.2)")
        entries = log.get("entries")
        if entries is None:
            entries = []
        if not isinstance(entries, list):
            raise ImportDocumentError(FORMAT, "log.entries", "expected a list")
        result = ImportResult(format=FORMAT)
        seen: dict[tuple[str, str], int] = {}
        static = 0
        for index, entry in enumerate(entries):
            options.report(index, len(entries))
            with result.item(_item_name(index, entry)):
                outcome = self._convert_entry(entry, options, seen, result)
                static += outcome == "static"
        options.report(len(entries), len(entries))
        repeated = sum(count - 1 for count in seen.values())
        if repeated:
            result.warnings.append(f"{repeated} repeated request(s) to the same method and "
                                   "path skipped (the first answer is kept)")
        if static:
            result.warnings.append(f"{static} static asset request(s) skipped (use "
                                   "--include-static to keep them)")
        return result

    def _convert_entry(self, entry: Any, options: ImportOptions,
                       seen: dict[tuple[str, str], int], result: ImportResult) -> str:
        """Append the mock of one entry to ``result``; ``"static"``, ``"repeat"`` or
        ``"mock"``. Raises :class:`ImportDocumentError` (location inside the entry)."""
        if not isinstance(entry, dict):
            raise ImportDocumentError(FORMAT, "", "expected a mapping")
        request = entry.get("request")
        response = entry.get("response")
        if not isinstance(request, dict) or not request.get("url"):
            raise ImportDocumentError(FORMAT, "request", "expected a mapping with a url")
        if not isinstance(response, dict):
            raise ImportDocumentError(FORMAT, "response", "expected a mapping")
        method = str(request.get("method") or "GET").upper()
        path, query = split_url(str(request["url"]))
        headers = response_headers(header_pairs(response.get("headers")))
        content = response.get("content") if isinstance(response.get("content"), dict) else {}
        content_type = content_type_of(headers) or str(content.get("mimeType") or "")
        if not options.include_static and is_static(path, content_type):
            return "static"
        key = (method, path)
        if key in seen:
            seen[key] += 1
            return "repeat"
        for name, value in header_pairs(request.get("queryString")):
            query.setdefault(name, value)
        status = response.get("status")
        if not isinstance(status, int) or not 100 <= status <= 599:
            raise ImportDocumentError(FORMAT, "response.status",
                                      f"expected an HTTP status, got {status!r}")
        text, raw = self._body(content, "response.content")
        if (text or raw) and not content_type_of(headers) and content.get("mimeType"):
            headers["Content-Type"] = str(content["mimeType"])
        mock = http_mock(
            f"imported-{len(result.mocks) + 1}", name=f"{method} {path}", method=method,
            path=path, status=status, headers=headers or None,
            body=body_value(text, content_type) if text else None,
            query_params=query or None)
        if raw:
            mock["http"]["response"]["bodyBase64"] = base64.b64encode(raw).decode("ascii")
        seen[key] = 1
        result.mocks.append(mock)
        return "mock"

    @staticmethod
    def _body(content: dict[str, Any], location: str) -> tuple[str, bytes]:
        """``(text, b"")`` of a text body, ``("", bytes)`` of a base64 body whose bytes are
        not UTF-8 text, ``("", b"")`` without a body."""
        text = content.get("text")
        if not isinstance(text, str) or not text:
            return "", b""
        if str(content.get("encoding") or "").lower() != "base64":
            return text, b""
        try:
            raw = base64.b64decode("".join(text.split()), validate=True)
        except (binascii.Error, ValueError):
            raise ImportDocumentError(FORMAT, f"{location}.text",
                                      "encoding is base64 but the text does not decode") \
                from None
        try:
            return raw.decode("utf-8"), b""
        except UnicodeDecodeError:
            return "", raw


def _item_name(index: int, entry: Any) -> str:
    """``log.entries[3] (GET /users)``: how warnings name one entry (``log.entries[3]``
    alone for an entry without a request url)."""
    request = entry.get("request") if isinstance(entry, dict) else None
    if not isinstance(request, dict) or not request.get("url"):
        return f"log.entries[{index}]"
    method = str(request.get("method") or "GET").upper()
    return f"log.entries[{index}] ({method} {split_url(str(request['url']))[0]})"
