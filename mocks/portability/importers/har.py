"""HAR (HTTP Archive) -> one HTTP mock per distinct method and path.

Rules (behavior notes §13):

* the document needs ``log.version`` (a browser's or proxy's HAR 1.1/1.2 export);
* static assets (scripts, styles, images, fonts, source maps) are skipped unless
  ``include_static`` (``--include-static``);
* one mock per distinct method + path: the FIRST entry wins, later ones are counted in a
  warning;
* the request's query becomes ``queryParams``;
* response headers: hop-by-hop and transport headers dropped (the engine frames its own
  answer), HTTP/2 pseudo-headers dropped;
* ``content.encoding: base64`` bodies are decoded (non-UTF-8 bytes are replaced, with a
  warning: mock bodies are text);
* ids ``imported-1``, ``imported-2``, ... in entry order;
* recorded timings are not replayed (a mock answers at once; add ``delayMs`` by hand).

Source: behavior notes §13 ("har"); SPEC "Import and export".
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
        """See the module docstring. Raises :class:`ImportDocumentError`."""
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
            location = f"log.entries[{index}]"
            if not isinstance(entry, dict):
                raise ImportDocumentError(FORMAT, location, "expected a mapping")
            request = entry.get("request")
            response = entry.get("response")
            if not isinstance(request, dict) or not request.get("url"):
                raise ImportDocumentError(FORMAT, f"{location}.request",
                                          "expected a mapping with a url")
            if not isinstance(response, dict):
                raise ImportDocumentError(FORMAT, f"{location}.response", "expected a mapping")
            method = str(request.get("method") or "GET").upper()
            path, query = split_url(str(request["url"]))
            headers = response_headers(header_pairs(response.get("headers")))
            content = response.get("content") if isinstance(response.get("content"), dict) else {}
            content_type = content_type_of(headers) or str(content.get("mimeType") or "")
            if not options.include_static and is_static(path, content_type):
                static += 1
                continue
            key = (method, path)
            if key in seen:
                seen[key] += 1
                continue
            seen[key] = 1
            for name, value in header_pairs(request.get("queryString")):
                query.setdefault(name, value)
            status = response.get("status")
            if not isinstance(status, int) or not 100 <= status <= 599:
                raise ImportDocumentError(FORMAT, f"{location}.response.status",
                                          f"expected an HTTP status, got {status!r}")
            text = self._body_text(content, f"{location}.response.content", result.warnings)
            if text and not content_type_of(headers) and content.get("mimeType"):
                headers["Content-Type"] = str(content["mimeType"])
            result.mocks.append(http_mock(
                f"imported-{len(result.mocks) + 1}", name=f"{method} {path}", method=method,
                path=path, status=status, headers=headers or None,
                body=body_value(text, content_type) if text else None,
                query_params=query or None))
        options.report(len(entries), len(entries))
        repeated = sum(count - 1 for count in seen.values())
        if repeated:
            result.warnings.append(f"{repeated} repeated request(s) to the same method and "
                                   "path skipped (the first answer is kept)")
        if static:
            result.warnings.append(f"{static} static asset request(s) skipped (use "
                                   "--include-static to keep them)")
        return result

    @staticmethod
    def _body_text(content: dict[str, Any], location: str, warnings: list[str]) -> str:
        text = content.get("text")
        if not isinstance(text, str) or not text:
            return ""
        if str(content.get("encoding") or "").lower() != "base64":
            return text
        try:
            raw = base64.b64decode("".join(text.split()), validate=True)
        except (binascii.Error, ValueError):
            raise ImportDocumentError(FORMAT, f"{location}.text",
                                      "encoding is base64 but the text does not decode") \
                from None
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            warnings.append(f"{location}: binary body stored as text with replacement "
                            "characters")
            return raw.decode("utf-8", "replace")
