"""Playback: answering a proxied request from HTTP recordings.

A request is looked up in the proxy's session first, then in the other HTTP sessions with the
same name (newest first), so a proxy restarted in ``playback`` with the name it recorded under
finds what it recorded. In each session the newest recording wins:

1. exact: same method, same URL (query included; compared after redaction, as recorded) and
   the same body;
2. else same method and path.

The answer carries the recording's status, headers (hop-by-hop ones and the framing headers
dropped; ``Content-Length`` set) and body, plus ``X-Mockd-Recording: <id>``.

Source: SPEC "Proxy" (records or replays HTTP traffic); behavior notes §1 (modes).

Django-free.
"""
from __future__ import annotations

import base64
from typing import Any

#: Recordings of one method and path compared per session.
MAX_CANDIDATES = 500
#: Sessions of the same name searched after the proxy's own.
MAX_SESSIONS = 20

_DROPPED = frozenset({"connection", "keep-alive", "proxy-connection", "transfer-encoding",
                      "content-length", "te", "trailer", "upgrade"})


def _sessions(store: Any, session_id: str | None, session_name: str) -> list[str]:
    ids = [session_id] if session_id else []
    try:
        others = [s for s in store.list_sessions("http")
                  if s.get("name") == session_name and s.get("id") != session_id]
    except Exception:  # noqa: BLE001 - the proxy's own session is enough
        others = []
    others.sort(key=lambda s: s.get("startTime") or "", reverse=True)
    return ids + [s["id"] for s in others[:MAX_SESSIONS]]


def find_recording(store: Any, session_id: str | None, session_name: str, method: str,
                   url: str, path: str, body: bytes) -> dict[str, Any] | None:
    """The recording that answers ``method url`` with ``body`` (see the module docstring),
    or None. ``url`` is compared as recorded (the caller redacts it the same way)."""
    encoded = base64.b64encode(body).decode("ascii")
    for sid in _sessions(store, session_id, session_name):
        page, _ = store.query("http", session_id=sid,
                              filters={"method": method, "path": path},
                              sort_by="timestamp", descending=True, limit=MAX_CANDIDATES)
        page = [r for r in page
                if (r.get("request") or {}).get("method") == method
                and (r.get("request") or {}).get("path") == path]
        for record in page:
            request = record["request"]
            if request.get("url") == url and (request.get("body") or "") == encoded:
                return record
        if page:
            return page[0]
    return None


def playback_response(record: dict[str, Any]) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
    """``(status, headers, body)`` answering with ``record``'s response."""
    response = record.get("response") or {}
    try:
        body = base64.b64decode(response.get("body") or "")
    except (ValueError, TypeError):
        body = b""
    headers: list[tuple[bytes, bytes]] = []
    for name, values in (response.get("headers") or {}).items():
        if name.lower() in _DROPPED:
            continue
        for value in values if isinstance(values, list) else [values]:
            headers.append((name.encode("latin-1", "replace"),
                            str(value).encode("latin-1", "replace")))
    headers.append((b"Content-Length", str(len(body)).encode()))
    headers.append((b"X-Mockd-Recording", str(record.get("id", "")).encode("latin-1")))
    status = int(response.get("statusCode") or 200)
    return status, headers, body
