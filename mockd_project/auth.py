"""The admin API key: where it comes from, how it is stored, how requests are checked.

Source: SPEC "Authentication"; behavior notes §2 (sources ``X-API-Key`` / ``Authorization:
Bearer`` / ``?api_key=``, the two 401 bodies, exempt paths, ``mk_`` + 64 hex keys stored 0600
in a 0700 directory, ``Admin API key: <key>`` on stderr, ``MOCKD_API_KEY`` overrides).
"""
from __future__ import annotations

import hmac
import os
import secrets
import sys
from pathlib import Path
from urllib.parse import parse_qsl

#: File name of the key inside the data directory.
API_KEY_FILE_NAME = "admin-api-key"

#: 401 bodies (behavior notes §2).
MISSING_API_KEY = {"error": "missing_api_key",
                   "message": "API key required. Provide via X-API-Key header or "
                              "Authorization: Bearer <key>."}
INVALID_API_KEY = {"error": "invalid_api_key", "message": "Invalid API key"}

#: Paths that never need the key: health, metrics, readiness, the dashboard shell, the API
#: docs (Swagger UI and its OpenAPI document), static files and the Django admin (which has
#: its own login).
EXEMPT_PATHS = frozenset({"/health", "/metrics", "/ready", "/", "/index.html", "/manifest.json",
                          "/docs", "/openapi-admin.json"})
EXEMPT_PREFIXES = ("/static/", "/admin/")
EXEMPT_SUFFIXES = (".js", ".css", ".html", ".svg", ".png", ".ico", ".woff", ".woff2")


def generate_api_key() -> str:
    """A new key: ``mk_`` followed by 64 hex characters."""
    return "mk_" + secrets.token_hex(32)


def api_key_path(data_dir: Path | str) -> Path:
    """``<data dir>/admin-api-key``."""
    return Path(data_dir) / API_KEY_FILE_NAME


def load_or_create_api_key(data_dir: Path | str, *, announce: bool = True) -> str:
    """The admin API key: ``$MOCKD_API_KEY``, else the key file, else a new key written to the
    key file (0600; directory 0700) and printed as ``Admin API key: <key>`` on stderr."""
    from_environment = os.environ.get("MOCKD_API_KEY", "").strip()
    if from_environment:
        return from_environment
    path = api_key_path(data_dir)
    try:
        existing = path.read_text(encoding="utf-8").strip()
    except OSError:
        existing = ""
    if existing:
        return existing
    key = generate_api_key()
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.chmod(path.parent, 0o700)
    except OSError:
        pass  # a directory we do not own keeps its mode; the file itself is still 0600
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        handle.write(key + "\n")
    os.chmod(path, 0o600)
    if announce:
        print(f"Admin API key: {key}", file=sys.stderr, flush=True)
    return key


def is_exempt(path: str, method: str) -> bool:
    """Whether a request may skip the key (behavior notes §2 "Exempt"; CORS preflight too)."""
    if method == "OPTIONS":
        return True
    if path.startswith("/admin/api-key"):
        return False  # an admin API route under the Django admin prefix: always protected
    if path in EXEMPT_PATHS or path.startswith(EXEMPT_PREFIXES):
        return True
    return path.endswith(EXEMPT_SUFFIXES)


def presented_key(headers: dict[bytes, bytes], query_string: bytes) -> str | None:
    """The key a request carries: ``X-API-Key``, else ``Authorization: Bearer``, else
    ``?api_key=``; None when it carries none."""
    value = headers.get(b"x-api-key")
    if value:
        return value.decode("latin-1").strip()
    authorization = headers.get(b"authorization", b"").decode("latin-1").strip()
    if authorization[:7].lower() == "bearer " and authorization[7:].strip():
        return authorization[7:].strip()
    if b"api_key=" in query_string:
        for name, item in parse_qsl(query_string.decode("latin-1")):
            if name == "api_key" and item:
                return item
    return None


def key_matches(presented: str, expected: str) -> bool:
    """Constant-time comparison of two keys."""
    return hmac.compare_digest(presented.encode("utf-8"), expected.encode("utf-8"))
