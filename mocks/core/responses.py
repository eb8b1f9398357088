"""Compiled HTTP responses: status, headers, body (inline, JSON, base64 bytes or file), delay.

Bodies are bytes end to end: ``bodyBase64`` is decoded once and served as it is
(``application/octet-stream`` unless the mock sets a Content-Type); a ``bodyFile`` is read as
bytes, served byte-exact unless it is UTF-8 text holding templates, with a Content-Type from
its file extension when the mock sets none.

Source: SPEC "Response"; behavior notes §4 (default Content-Type, ``body_file_error``) and
§14 (one body key, ``delayMs`` ≤ 30000); HAR import (binary bodies). ``bodyFile`` reads are
confined to the folders the caller allows (:func:`outside_roots`; the runner passes the config
file's folder and the data directory unless ``--allow-body-files-anywhere`` is given).
"""
from __future__ import annotations

import asyncio
import base64
import mimetypes
from pathlib import Path
from typing import Any, Awaitable, Callable

import orjson

from mocks.core.environment import expand_environment, scrub
from mocks.core.errors import ConfigError
from mocks.core.request import MockRequest
from mocks.core.templating import (RenderContext, TemplateError, TemplateState, compile_template,
                         compile_value, resolve_seed)

Send = Callable[[dict[str, Any]], Awaitable[None]]

JSON_TYPE = b"application/json"
XML_TYPE = b"application/xml"
TEXT_TYPE = b"text/plain"
#: Content-Type of raw bytes (``bodyBase64``, a non-UTF-8 ``bodyFile`` of unknown extension).
BINARY_TYPE = b"application/octet-stream"


def default_content_type(body: bytes) -> bytes:
    """Content-Type for a mock that sets none (behavior notes §4).

    JSON when the trimmed body is ``{…}`` or ``[…]``, ``application/xml`` when it starts with
    ``<``, else ``text/plain``.
    """
    trimmed = body.strip()
    if trimmed[:1] == b"{" and trimmed[-1:] == b"}" or trimmed[:1] == b"[" and trimmed[-1:] == b"]":
        return JSON_TYPE
    if trimmed[:1] == b"<":
        return XML_TYPE
    return TEXT_TYPE


def file_content_type(path: Path) -> bytes | None:
    """The Content-Type a ``bodyFile`` is served with when the mock sets none: the media type
    of its file extension (:mod:`mimetypes`: ``.png`` -> ``image/png``, ``.json`` ->
    ``application/json``), or None for an unknown extension (then the body decides)."""
    media_type, _ = mimetypes.guess_type(path.name, strict=False)
    return media_type.encode("latin-1") if media_type else None


def header_value(text: str) -> bytes:
    """A rendered header value as bytes: CR and LF (from request data) become spaces, so a
    template can never split or inject headers; characters outside latin-1 become ``?``."""
    if "\r" in text or "\n" in text:
        text = text.replace("\r", " ").replace("\n", " ")
    return text.encode("latin-1", "replace")


class BodyFileError(Exception):
    """A ``bodyFile`` that cannot be read at request time (answered 502 ``body_file_error``).
    The message never shows the value of an environment variable the config expanded."""

    def __init__(self, message: str):
        super().__init__(scrub(message))


#: The command-line flag that lifts the ``bodyFile`` confinement (named in errors).
ALLOW_ANYWHERE_FLAG = "--allow-body-files-anywhere"

#: Names of mockd's own secret and state files: never read as a body, schema or proto,
#: wherever they lie and whatever the folders allowed (docs/security.md).
SECRET_FILE_NAMES = frozenset({"admin-api-key", "django-admin-password", "secret-key",
                               "engine-token", "mockd.sqlite3", "mockd.sqlite3-wal",
                               "mockd.sqlite3-shm", "mockd.sqlite3-journal"})


class FileRoots(tuple):
    """The folders a config may read files from (a tuple of resolved :class:`Path`; empty:
    anywhere), carrying the places it may never read from.

    Attributes:
        denied: resolved folders (the data directory, the engine token folder) and files
            whose content is never read for a config, even with
            ``--allow-body-files-anywhere``.
        readable: resolved folders strictly inside a denied folder that stay readable
            (``<data dir>/files``); a root that lies strictly inside a denied folder is
            readable too.

    Equality and hashing are the tuple's (the allowed folders only).
    """

    denied: tuple[Path, ...]
    readable: tuple[Path, ...]

    def __new__(cls, roots: Any = (), denied: Any = (), readable: Any = ()) -> "FileRoots":
        instance = super().__new__(cls, roots)
        instance.denied = tuple(denied)
        instance.readable = tuple(readable)
        return instance


def denied_reason(resolved: Path, roots: tuple[Path, ...]) -> str | None:
    """Why the resolved path ``resolved`` may never be read for a config, or None.

    Refused: a file named like one of mockd's own secrets (:data:`SECRET_FILE_NAMES`,
    ``engine-*.token``), and anything inside a folder of ``roots.denied`` (when ``roots`` is a
    :class:`FileRoots`) unless it also lies inside a root or a ``readable`` folder strictly
    below that folder.
    """
    name = resolved.name
    if name in SECRET_FILE_NAMES or (name.startswith("engine-") and name.endswith(".token")):
        return "it is one of mockd's own secret or state files, which are never served"
    exempt = (*roots, *getattr(roots, "readable", ()))
    for folder in getattr(roots, "denied", ()):
        if resolved != folder and not resolved.is_relative_to(folder):
            continue
        if any(root != folder and root.is_relative_to(folder) and resolved.is_relative_to(root)
               for root in exempt):
            continue
        return (f"it lies in {folder}, which holds mockd's secrets and state and is never "
                f"served (bodies uploaded there go to its files/ folder)")
    return None


def outside_roots(path: Path, roots: tuple[Path, ...]) -> Path | None:
    """Where ``path`` really points when that lies outside every folder of ``roots`` or in a
    place no config may read (:func:`denied_reason`), else None.

    ``path`` is resolved with :meth:`Path.resolve` (``..`` folded, every symlink followed; the
    file need not exist). ``roots`` are absolute, already resolved folders; an empty tuple
    allows anything but the denied places. A path whose symlinks loop counts as outside
    (returned unresolved).
    """
    try:
        resolved = path.resolve()
    except (OSError, RuntimeError):
        return path
    if denied_reason(resolved, roots) is not None:
        return resolved
    if not roots:
        return None
    for root in roots:
        if resolved == root or resolved.is_relative_to(root):
            return None
    return resolved


def body_file_path(text: str, base_dir: Path, roots: tuple[Path, ...], key: str) -> Path:
    """The file a ``bodyFile`` value names: allowed ``$VARS`` (see
    :mod:`mocks.core.environment`) and ``~`` expanded, relative paths taken from ``base_dir``.

    Raises :class:`ConfigError` at ``key`` (e.g. ``mocks[0].http.response.bodyFile``) when the
    file resolves outside ``roots`` (``..`` escapes, absolute paths elsewhere, symlinks leading
    out) or into a place no config may read (mockd's data directory and secret files, see
    :func:`denied_reason`); empty ``roots`` allow any other file. Whether the file exists is
    checked when it is served. The message shows the value as written, never an expanded
    environment variable.
    """
    file_path = Path(expand_environment(text)).expanduser()
    if not file_path.is_absolute():
        file_path = base_dir / file_path
    escaped = outside_roots(file_path, roots)
    if escaped is None:
        return file_path
    reason = denied_reason(escaped, roots) if escaped.is_absolute() else None
    if reason is not None:
        raise ConfigError(key, f"{text!r} is refused: {reason}")
    allowed = ", ".join(str(root) for root in roots)
    raise ConfigError(key, f"{text!r} resolves to {escaped}, outside the folders files may "
                           f"be read from ({allowed}); move the file into one of them, or "
                           f"use {ALLOW_ANYWHERE_FLAG} to read files from anywhere")


_CONTENT_LENGTH_HEADERS = [(b"content-length", b"%d" % size) for size in range(4096)]


def content_length_header(size: int) -> tuple[bytes, bytes]:
    """The ``(b"content-length", b"<size>")`` pair; prebuilt for bodies under 4 KiB."""
    if size < 4096:
        return _CONTENT_LENGTH_HEADERS[size]
    return (b"content-length", b"%d" % size)


async def send_simple(send: Send, status: int, headers: list[tuple[bytes, bytes]],
                      body: bytes, head: bool = False) -> None:
    """Send one complete response; ``head`` keeps Content-Length but sends no body bytes."""
    headers.append(content_length_header(len(body)))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": b"" if head else body})


def json_body(value: Any) -> bytes:
    """Compact JSON bytes (orjson)."""
    return orjson.dumps(value)


class CompiledResponse:
    """One mock's ``response``, compiled once when the config loads.

    When the status, every header and the body are static (no templates, no file), the
    ASGI header list and body bytes are built here and every request reuses them; a
    ``bodyBase64`` body is such a static body (decoded once, never a template).

    Args:
        response: the validated ``response`` block (None: an empty 200).
        key_path: its config path (``mocks[0].http.response``); errors name keys below it.
        base_dir: folder relative ``bodyFile`` paths start from.
        body_file_roots: absolute, resolved folders a ``bodyFile`` must resolve into, checked
            here and again whenever the file changes (behavior notes §15); empty: anywhere.

    Raises :class:`ConfigError` naming ``key_path`` for a template syntax error, or its
    ``.bodyFile`` for a file outside ``body_file_roots``.
    """

    __slots__ = ("status", "delay_seconds", "seed", "_headers", "_has_content_type", "_body",
                 "_body_is_json", "_body_bytes", "_body_file", "_body_file_roots",
                 "_static_headers", "_static_body", "_file_cache",
                 "_static_start", "_static_message", "_empty_message", "_known_content_type",
                 "_rendered_headers", "_fixed_headers", "_render_inline", "_encode_inline",
                 "_starts_by_length")

    def __init__(self, response: Any, key_path: str, base_dir: Path,
                 body_file_roots: tuple[Path, ...] = ()):
        self.status: int = response.status_code if response else 200
        self.delay_seconds = (response.delay_ms / 1000.0) if response else 0.0
        self.seed = response.seed if response else None
        self._headers: list[tuple[bytes, Any]] = []
        self._has_content_type = False
        self._body: Any = None
        self._body_is_json = False
        self._body_bytes: bytes | None = None
        self._body_file: Path | None = None
        self._body_file_roots = body_file_roots
        self._file_cache: tuple[tuple[int, int, int, int], Any] | None = None
        self._static_headers: list[tuple[bytes, bytes]] | None = None
        self._static_body: bytes | None = None
        self._static_start: dict[str, Any] | None = None
        self._static_message: dict[str, Any] | None = None
        self._empty_message = {"type": "http.response.body", "body": b""}
        self._known_content_type: bytes | None = None
        self._rendered_headers: list[tuple[bytes, bytes | None, Any]] = []
        if response is None:
            self._freeze(b"", [])
            return
        for name, value in (response.headers or {}).items():
            try:
                template = compile_template(value)
            except TemplateError as error:
                raise ConfigError(f"{key_path}.headers.{name}", error.detail) from None
            self._headers.append((name.lower().encode("latin-1"), template))
            if name.lower() == "content-type":
                self._has_content_type = True
        if response.body_file is not None:
            self._body_file = body_file_path(response.body_file, base_dir, body_file_roots,
                                             f"{key_path}.bodyFile")
            self._known_content_type = file_content_type(self._body_file)
        elif getattr(response, "body_base64", None) is not None:
            # Validated by the schema: standard base64, white space ignored.
            self._body_bytes = base64.b64decode("".join(response.body_base64.split()))
            self._known_content_type = BINARY_TYPE
        elif isinstance(response.body, str):
            try:
                self._body = compile_template(response.body)
            except TemplateError as error:
                raise ConfigError(f"{key_path}.body", error.detail) from None
        elif response.body is not None:
            try:
                self._body = compile_value(response.body)
            except TemplateError as error:
                raise ConfigError(f"{key_path}.body{error.location}", error.detail) from None
            self._body_is_json = True
            if isinstance(response.body, (dict, list)):
                # An object or array always renders as one: no need to sniff every answer.
                self._known_content_type = JSON_TYPE
        # Static header values are encoded once; templated ones per request.
        self._rendered_headers = [
            (name, template.render(None).encode("latin-1", "replace") if template.is_static
             else None, template) for name, template in self._headers]
        self._fixed_headers: list[tuple[bytes, bytes]] | None = None
        self._render_inline: Any = None
        self._starts_by_length: dict[int, dict[str, Any]] = {}
        if self._body_file is None and all(t.is_static for _, t in self._headers):
            static_headers = [(name, value) for name, value, _ in self._rendered_headers]
            if self._body is None or self._body.is_static:
                body = self._render_body_value(None)
                self._freeze(body, self._finish_headers(static_headers, body))
                return
            # Only the body varies: the header list (with its Content-Type when that is known
            # without seeing the body) is built once, the body renders straight to bytes.
            self._render_inline = self._body.renderer()
            # An object or array renders as one (orjson); a string template as text.
            self._encode_inline = (orjson.dumps if self._known_content_type is not None
                                   else _encode_text_or_json)
            if self._has_content_type or self._known_content_type:
                if not self._has_content_type:
                    static_headers.append((b"content-type", self._known_content_type))
                self._fixed_headers = static_headers

    def _start_message(self, size: int) -> dict[str, Any]:
        """The start message of a templated answer of ``size`` bytes, kept for the next one
        of that size (at most 256 sizes)."""
        start = {"type": "http.response.start", "status": self.status,
                 "headers": [*self._fixed_headers, content_length_header(size)]}
        if len(self._starts_by_length) < 256:
            self._starts_by_length[size] = start
        return start

    def _freeze(self, body: bytes, headers: list[tuple[bytes, bytes]]) -> None:
        """Pre-build the ASGI messages of a static response (sent as they are, every time)."""
        self._static_body = body
        self._static_headers = headers
        self._static_start = {"type": "http.response.start", "status": self.status,
                              "headers": [*headers,
                                          (b"content-length", str(len(body)).encode())]}
        self._static_message = {"type": "http.response.body", "body": body}

    @property
    def is_static(self) -> bool:
        """True when every request gets the same bytes."""
        return self._static_body is not None

    def _render_body_value(self, context: RenderContext | None) -> bytes:
        if self._body is None:
            return self._body_bytes or b""
        if self._body_is_json:
            value = self._body.render(context)
            return value.encode() if isinstance(value, str) else orjson.dumps(value)
        return self._body.render(context).encode()

    def _finish_headers(self, headers: list[tuple[bytes, bytes]], body: bytes,
                        fallback: bytes | None = None) -> list[tuple[bytes, bytes]]:
        """Add the default Content-Type (the known one, else ``fallback``, else sniffed)."""
        if not self._has_content_type and body:
            headers.append((b"content-type", self._known_content_type or fallback
                            or default_content_type(body)))
        return headers

    def _file_template(self) -> "_FileBody":
        """The body of the ``bodyFile`` as it is now (cached while its stat stays the same).

        UTF-8 text with templates renders per request; any other file (no templates, a
        template that does not compile, bytes that are not UTF-8) is served byte-exact.
        Raises :class:`BodyFileError` when it cannot be read or now lies outside the roots.
        """
        assert self._body_file is not None
        try:
            stat = self._body_file.stat()
            key = (stat.st_dev, stat.st_ino, stat.st_mtime_ns, stat.st_size)
            if self._file_cache is not None and self._file_cache[0] == key:
                return self._file_cache[1]
            # Another file than the one read last time (or the first read): a symlink swapped
            # in since the config loaded must not lead out of the allowed folders.
            if outside_roots(self._body_file, self._body_file_roots) is not None:
                raise BodyFileError(f"bodyFile {str(self._body_file)!r} now resolves outside "
                                    f"the folders files may be read from")
            raw = self._body_file.read_bytes()
        except OSError as error:
            raise BodyFileError(f"cannot read bodyFile {str(self._body_file)!r}: "
                                f"{error.strerror or error}") from None
        body = _FileBody(raw)
        if b"{{" in raw:
            try:
                template = compile_template(raw.decode("utf-8"))
            except (UnicodeDecodeError, TemplateError):
                pass  # not UTF-8 text, or not a valid template: served as it is
            else:
                body = _FileBody(raw, template)
        self._file_cache = (key, body)
        return body

    def render(self, request: MockRequest, path_params: dict[str, str],
               state: TemplateState) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
        """``(status, headers, body)`` for one request. Raises :class:`BodyFileError`."""
        if self._static_body is not None:
            return self.status, list(self._static_headers), self._static_body
        context = RenderContext(request, path_params, resolve_seed(request, self.seed), state)
        if self._fixed_headers is not None:
            body = self._encode_inline(self._render_inline(context))
            return self.status, self._fixed_headers.copy(), body
        fallback = None
        if self._body_file is not None:
            file_body = self._file_template()
            body = file_body.render(context)
            fallback = file_body.content_type
        else:
            body = self._render_body_value(context)
        headers = [(name, value if value is not None else header_value(template.render(context)))
                   for name, value, template in self._rendered_headers]
        return self.status, self._finish_headers(headers, body, fallback), body

    async def respond(self, request: MockRequest, path_params: dict[str, str],
                      state: TemplateState, send: Send) -> int:
        """Render and send; sleeps ``delayMs`` first. Returns the status sent."""
        if self.delay_seconds:
            await asyncio.sleep(self.delay_seconds)
        if self._static_start is not None:
            await send(self._static_start)
            await send(self._empty_message if request.method == "HEAD" else self._static_message)
            return self.status
        if self._fixed_headers is not None:
            # The common templated answer: fixed headers, a rendered body. Never raises.
            seed = self.seed
            if request.seed_header is not None or "seed" in request.query_string:
                seed = resolve_seed(request, seed)
            body = self._encode_inline(self._render_inline(
                RenderContext(request, path_params, seed, state)))
            # Start messages differ only in Content-Length: reuse one per length (servers and
            # the CORS wrapper copy, never change, a message).
            start = self._starts_by_length.get(len(body))
            if start is None:
                start = self._start_message(len(body))
            await send(start)
            await send({"type": "http.response.body",
                        "body": b"" if request.method == "HEAD" else body})
            return self.status
        try:
            status, headers, body = self.render(request, path_params, state)
        except BodyFileError as error:
            status = 502
            body = json_body({"error": "body_file_error", "message": str(error)})
            headers = [(b"content-type", JSON_TYPE)]
        await send_simple(send, status, headers, body, head=request.method == "HEAD")
        return status


def _encode_text_or_json(value: Any) -> bytes:
    return value.encode() if type(value) is str else orjson.dumps(value)


class _FileBody:
    """One read of a ``bodyFile``: its bytes, and the template they hold (if any).

    ``render`` answers the bytes as read, or the rendered template encoded as UTF-8;
    ``content_type`` is the default for a file whose extension says none (None: sniff the
    body; ``application/octet-stream`` for bytes that are not UTF-8 text).
    """

    __slots__ = ("raw", "template", "content_type")

    def __init__(self, raw: bytes, template: Any = None):
        self.raw = raw
        self.template = template
        self.content_type: bytes | None = None
        if template is None:
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError:
                self.content_type = BINARY_TYPE

    def render(self, context: Any) -> bytes:
        if self.template is None:
            return self.raw
        return self.template.render(context).encode()
