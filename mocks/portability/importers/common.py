"""Helpers the importers share: literal text, URLs, headers, ids and mock documents.

No Django.

Source: behavior notes §13 (per-format rules), §14 (validator limits: ``delayMs`` ≤ 30000,
``priority`` ≥ 0, paths start with ``/``).
"""
from __future__ import annotations

import base64
import mimetypes
import re
import secrets
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

#: Largest ``delayMs`` the schema accepts (behavior notes §14).
MAX_DELAY_MS = 30000

#: Hop-by-hop and transport headers never replayed by a mock: the engine computes its own
#: framing (Content-Length), bodies are stored decoded (Content-Encoding), and the rest
#: describe one connection, not the resource.
TRANSPORT_HEADERS = frozenset((
    "connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "proxy-connection",
    "te", "trailer", "trailers", "transfer-encoding", "upgrade", "content-length",
    "content-encoding", "date", "alt-svc", "strict-transport-security"))

_ID_CHARACTERS = re.compile(r"[^A-Za-z0-9._:@+-]+")


def literal_text(text: str) -> str:
    """``text`` as a template that renders to itself: every ``{{`` becomes ``\\{{``.

    Imported examples and recorded bodies are data, not templates; without this a body
    containing ``{{ baseUrl }}`` would not compile (unknown expression) or would render.
    """
    return text.replace("{{", "\\{{") if "{{" in text else text


def literal_value(value: Any) -> Any:
    """:func:`literal_text` applied to every string inside a JSON value (keys are literal
    already). Returns ``value`` itself when nothing needed escaping."""
    if isinstance(value, str):
        return literal_text(value)
    if isinstance(value, dict):
        changed = {key: literal_value(item) for key, item in value.items()}
        return changed if any(changed[key] is not value[key] for key in value) else value
    if isinstance(value, list):
        items = [literal_value(item) for item in value]
        return items if any(new is not old for new, old in zip(items, value)) else value
    return value


def new_http_id() -> str:
    """``http_<16 hex>``: the id of an imported mock without a stable name (notes §13)."""
    return f"http_{secrets.token_hex(8)}"


def safe_id(text: str) -> str:
    """``text`` usable as a mock id in admin URLs: runs of other characters become ``_``."""
    cleaned = _ID_CHARACTERS.sub("_", text).strip("_")
    if not cleaned or not cleaned[0].isalnum():
        cleaned = "m" + cleaned
    return cleaned[:200]


class IdAllocator:
    """Hands out unique ids within one import: a taken id gets ``-2``, ``-3``, ..."""

    def __init__(self) -> None:
        self.taken: set[str] = set()

    def claim(self, wanted: str, warnings: list[str] | None = None) -> str:
        """``wanted`` or the first free ``wanted-N``; notes the rename in ``warnings``."""
        if wanted not in self.taken:
            self.taken.add(wanted)
            return wanted
        number = 2
        while f"{wanted}-{number}" in self.taken:
            number += 1
        chosen = f"{wanted}-{number}"
        self.taken.add(chosen)
        if warnings is not None:
            warnings.append(f"duplicate id {wanted!r}: the later mock is {chosen!r}")
        return chosen


def split_url(url: str) -> tuple[str, dict[str, str]]:
    """``(path, {query name: first value})`` of an absolute or relative URL.

    The path is percent-decoded and always starts with ``/``; an empty path is ``/``.
    """
    url = url.strip()
    if "://" in url:
        parts = urlsplit(url)
        path, query = parts.path, parts.query
    else:
        path, _, query = url.partition("?")
        path = path.split("#", 1)[0]
    path = unquote(path) or "/"
    if not path.startswith("/"):
        path = "/" + path
    params: dict[str, str] = {}
    for name, value in parse_qsl(query, keep_blank_values=True):
        params.setdefault(name, value)
    return path, params


def clamp_delay(milliseconds: Any, warnings: list[str], where: str) -> int:
    """A delay in whole milliseconds within ``0..30000``; out-of-range values are clamped
    with a warning naming ``where``."""
    try:
        delay = int(float(milliseconds or 0))
    except (TypeError, ValueError):
        warnings.append(f"{where}: delay {milliseconds!r} is not a number; ignored")
        return 0
    if delay > MAX_DELAY_MS:
        warnings.append(f"{where}: delay {delay} ms capped at {MAX_DELAY_MS} ms")
        return MAX_DELAY_MS
    return max(delay, 0)


def scalar_text(value: Any) -> str:
    """A query or header value as the matcher compares it (text; booleans lower-case)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
    if isinstance(value, (dict, list)):
        import json

        return json.dumps(value, separators=(",", ":"))
    return str(value)


def http_mock(mock_id: str, *, name: str | None, method: str | None, path: str | None,
              status: int = 200, headers: dict[str, str] | None = None, body: Any = None,
              query_params: dict[str, str] | None = None,
              match_headers: dict[str, str] | None = None, delay_ms: int = 0,
              priority: int = 0, path_pattern: str | None = None,
              matcher_extra: dict[str, Any] | None = None,
              literal: bool = True) -> dict[str, Any]:
    """One ``type: http`` mock document (config-file shape) with only the keys that carry
    information, so golden files stay readable.

    ``literal`` escapes ``{{`` in the body and header values (imported data is not a
    template); Mockoon passes False for helpers it translated into templates.
    """
    matcher: dict[str, Any] = {}
    if method:
        matcher["method"] = method.upper()
    if path is not None:
        matcher["path"] = path
    if path_pattern is not None:
        matcher["pathPattern"] = path_pattern
    if query_params:
        matcher["queryParams"] = query_params
    if match_headers:
        matcher["headers"] = match_headers
    if matcher_extra:
        matcher.update(matcher_extra)
    response: dict[str, Any] = {"statusCode": status}
    if headers:
        response["headers"] = ({key: literal_text(value) for key, value in headers.items()}
                               if literal else headers)
    if body is not None and body != "":
        response["body"] = literal_value(body) if literal else body
    if delay_ms:
        response["delayMs"] = delay_ms
    http: dict[str, Any] = {"matcher": matcher, "response": response}
    if priority:
        http = {"priority": priority, **http}
    document: dict[str, Any] = {"id": mock_id, "type": "http"}
    if name:
        document["name"] = name
    document["http"] = http
    return document


def header_pairs(items: Any) -> list[tuple[str, str]]:
    """``[(name, value)]`` from a list of ``{name|key, value, disabled?}`` objects or a map."""
    pairs: list[tuple[str, str]] = []
    if isinstance(items, dict):
        return [(str(name), scalar_text(value)) for name, value in items.items()]
    for item in items or ():
        if not isinstance(item, dict) or item.get("disabled") is True:
            continue
        name = item.get("name", item.get("key"))
        if name:
            pairs.append((str(name), scalar_text(item.get("value"))))
    return pairs


def response_headers(pairs: list[tuple[str, str]]) -> dict[str, str]:
    """Headers a mock should answer with: transport headers and HTTP/2 pseudo-headers
    dropped, the first value of a repeated name kept (``Set-Cookie`` values joined would
    change their meaning)."""
    headers: dict[str, str] = {}
    seen: set[str] = set()
    for name, value in pairs:
        lower = name.lower()
        if lower in TRANSPORT_HEADERS or name.startswith(":") or lower in seen:
            continue
        seen.add(lower)
        headers[name] = value
    return headers


def content_type_of(headers: dict[str, str]) -> str:
    """The Content-Type value of ``headers`` (any case), or ""."""
    for name, value in headers.items():
        if name.lower() == "content-type":
            return value
    return ""


def body_value(text: str, content_type: str) -> Any:
    """A recorded body: parsed JSON for a JSON content type (so the golden files and
    exports show structure), the text otherwise."""
    if "json" in content_type.lower() and text.strip()[:1] in ("{", "["):
        import json

        try:
            return json.loads(text)
        except ValueError:
            return text
    return text


def file_body(raw: bytes, file_name: str | None,
              headers: dict[str, str]) -> tuple[Any, str | None]:
    """``(body, bodyBase64)`` of a body file's bytes: UTF-8 text -> ``body`` (JSON text
    with a JSON content type as its value); other bytes -> ``bodyBase64``, and a
    ``Content-Type`` from the file extension (else ``application/octet-stream``) added to
    ``headers`` when they give none."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        if not content_type_of(headers):
            guessed = mimetypes.guess_type(file_name)[0] if file_name else None
            headers["Content-Type"] = guessed or "application/octet-stream"
        return None, base64.b64encode(raw).decode("ascii")
    if file_name and not content_type_of(headers):
        guessed = mimetypes.guess_type(file_name)[0]
        return body_value(text, guessed), None
    return body_value(text, content_type_of(headers)), None
