"""The admin API key: where it comes from, how it is stored, how requests are checked.

Source: SPEC "Authentication"; behavior notes §2 (sources ``X-API-Key`` / ``Authorization:
Bearer`` / ``?api_key=``, the two 401 bodies, exempt paths, ``mk_`` + 64 hex keys stored 0600
in a 0700 directory, ``Admin API key: <key>`` on stderr, ``MOCKD_API_KEY`` overrides). A new
key is shown only on a terminal; when stderr is a file or a pipe (``~/.mockd/daemon.log``, CI
logs) only the key file's path is printed.
"""
from __future__ import annotations

import hmac
import os
import secrets
import sys
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

from mockd_project.paths import write_private_file

#: File name of the key inside the data directory.
API_KEY_FILE_NAME = "admin-api-key"

#: 401 bodies (behavior notes §2).
MISSING_API_KEY = {"error": "missing_api_key",
                   "message": "API key required. Provide via X-API-Key header or "
                              "Authorization: Bearer <key>."}
INVALID_API_KEY = {"error": "invalid_api_key", "message": "Invalid API key"}

#: Exact paths a GET or HEAD may read without the key: health, metrics, readiness, the
#: dashboard shell and the API docs (Swagger UI and its OpenAPI document).
EXEMPT_PATHS = frozenset({"/health", "/metrics", "/ready", "/", "/index.html", "/manifest.json",
                          "/docs", "/openapi-admin.json"})
#: The one prefix of static assets (dashboard, Swagger UI, Django admin styles): GET/HEAD only.
STATIC_PREFIX = "/static/"
#: The Django admin, which has its own login (and CSRF checks) for every method.
DJANGO_ADMIN_PREFIX = "/admin/"
#: Admin API routes under the Django admin's prefix: they always need the key.
API_ROUTES_UNDER_ADMIN = "/admin/api-key"
#: Methods that only read.
READ_METHODS = frozenset({"GET", "HEAD"})


def generate_api_key() -> str:
    """A new key: ``mk_`` followed by 64 hex characters."""
    return "mk_" + secrets.token_hex(32)


def api_key_path(data_dir: Path | str) -> Path:
    """``<data dir>/admin-api-key``."""
    return Path(data_dir) / API_KEY_FILE_NAME


def shows_secrets(stream: Any = None) -> bool:
    """Whether a secret may be printed to ``stream`` (default ``sys.stderr``): only when it is
    an interactive terminal, never when it goes to a file or a pipe that may end in a log."""
    stream = sys.stderr if stream is None else stream
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


def api_key_announcement(key: str, path: Path, *, show: bool) -> str:
    """The start-up line for a new key: ``Admin API key: <key>`` when ``show``, else
    ``Admin API key: stored in <path>`` (the value never reaches a log file)."""
    return f"Admin API key: {key}" if show else f"Admin API key: stored in {path}"


def load_or_create_api_key(data_dir: Path | str, *, announce: bool = True) -> str:
    """The admin API key: ``$MOCKD_API_KEY``, else the key file, else a new key written to the
    key file (0600; directory 0700) and announced on stderr (:func:`api_key_announcement`:
    the key itself only on a terminal)."""
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
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    try:
        os.chmod(path.parent, 0o700)
    except OSError:
        pass  # a directory we do not own keeps its mode; the file itself is still 0600
    write_private_file(path, key + "\n")
    if announce:
        print(api_key_announcement(key, path, show=shows_secrets()), file=sys.stderr,
              flush=True)
    return key


def is_exempt(path: str, method: str) -> bool:
    """Whether a request may skip the key, by exact route only (behavior notes §2 "Exempt"):

    * OPTIONS (CORS preflight, answered before the key is checked);
    * GET/HEAD of :data:`EXEMPT_PATHS` or of anything under :data:`STATIC_PREFIX`;
    * any method under ``/admin/`` (the Django admin's own login guards it), except the admin
      API's ``/admin/api-key…`` routes.

    Never by file suffix: ``DELETE /mocks/app.js`` and ``GET /mocks/x.css`` need the key.
    ``path`` is the request path without query; ``method`` is upper case.
    """
    if method == "OPTIONS":
        return True
    if path.startswith(API_ROUTES_UNDER_ADMIN):
        return False
    if path.startswith(DJANGO_ADMIN_PREFIX):
        return True
    if method not in READ_METHODS:
        return False
    return path in EXEMPT_PATHS or path.startswith(STATIC_PREFIX)


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
