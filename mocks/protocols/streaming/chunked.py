"""Chunked and NDJSON mocks: ``http.chunked`` compiled once into a :class:`ChunkedAction`.

* raw (default): ``data`` (or ``dataFile``) in pieces of ``chunkSize`` bytes (1024), each sent
  as one HTTP chunk, ``chunkDelay`` ms between pieces; ``Content-Type:
  application/octet-stream``.
* ``format: ndjson`` (implied by ``ndjsonItems``): one compact JSON value per line, one line
  per chunk (``ndjsonItems``, or the lines of ``data``/``dataFile``), ``chunkDelay`` ms
  between lines; ``Content-Type: application/x-ndjson``.

Both: 200, ``Cache-Control: no-cache``, ``X-Accel-Buffering: no``, no ``Content-Length``
(so HTTP/1.1 sends ``Transfer-Encoding: chunked``). The stream stops at once when the client
disconnects or the mock changes. An unreadable ``dataFile`` answers 502
``body_file_error``; like ``bodyFile`` it must resolve into the allowed folders (a config
error otherwise, and 502 if a symlink later leads out).

Source: SPEC "Chunked config"; behavior notes §9 ("Chunked").
"""
from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from mocks.core.responses import JSON_TYPE, body_file_path, outside_roots, send_simple

from mocks.protocols.streaming.framing import ChunkedFraming, NdjsonFraming
from mocks.protocols.streaming.runtime import CHUNKED, StreamRuntime
from mocks.protocols.streaming.sender import StreamAction, StreamClock, serve_stream

if TYPE_CHECKING:  # annotations only: an HTTP-only engine builds no stream config model
    from mocks.protocols.streaming.config import ChunkedConfig

CHUNKED_HEADERS = ((b"cache-control", b"no-cache"), (b"x-accel-buffering", b"no"))


class ChunkedAction(StreamAction):
    """The compiled answer of one chunked or NDJSON mock."""

    kind = CHUNKED

    def __init__(self, config: ChunkedConfig, key_path: str, base_dir: Path,
                 body_file_roots: tuple[Path, ...] = ()):
        self.config = config
        self.body_file_roots = body_file_roots
        self.ndjson = config.is_ndjson
        self.chunk_size = config.chunk_size
        self.delay_seconds = config.chunk_delay / 1000.0
        self.items: tuple[Any, ...] | None = None
        self.data: bytes | None = None
        self.data_file: Path | None = None
        if config.ndjson_items is not None:
            self.items = tuple(config.ndjson_items)
        elif config.data_file is not None:
            self.data_file = body_file_path(config.data_file, base_dir, body_file_roots,
                                            f"{key_path}.dataFile")
        else:
            data = config.data
            self.data = (data if isinstance(data, str) else orjson.dumps(data).decode()).encode()

    def _pieces(self, data: bytes) -> tuple[Any, ...]:
        if self.ndjson:
            return tuple(line for line in data.splitlines() if line.strip())
        size = self.chunk_size
        return tuple(data[start:start + size] for start in range(0, len(data), size))

    async def stream(self, request: Any, path_params: dict[str, str], mock_id: str,
                     engine: Any, receive: Any, send: Any) -> int:
        """Serve one request to the end of its body; returns the status sent."""
        if self.items is not None:
            pieces: tuple[Any, ...] = self.items
        else:
            data = self.data
            if self.data_file is not None:
                try:
                    if outside_roots(self.data_file, self.body_file_roots) is not None:
                        raise OSError("it now resolves outside the folders files may be "
                                      "read from")
                    data = self.data_file.read_bytes()
                except OSError as error:
                    body = orjson.dumps({"error": "body_file_error",
                                         "message": f"cannot read dataFile "
                                                    f"{str(self.data_file)!r}: "
                                                    f"{error.strerror or error}"})
                    await send_simple(send, 502, [(b"content-type", JSON_TYPE)], body)
                    return 502
            pieces = self._pieces(data or b"")
        framing = NdjsonFraming() if self.ndjson else ChunkedFraming()
        if request.method == "HEAD":
            await send({"type": "http.response.start", "status": 200,
                        "headers": [(b"content-type", framing.content_type),
                                    *CHUNKED_HEADERS]})
            await send({"type": "http.response.body", "body": b""})
            return 200
        runtime: StreamRuntime = engine.streams
        connection = runtime.open(CHUNKED, mock_id, path=request.path, client=request.client,
                                  user_agent=request.headers.get("user-agent", ""))
        assert connection is not None  # chunked streams are not limited
        delay = self.delay_seconds

        async def source(clock: StreamClock) -> AsyncIterator[Any]:
            for index, piece in enumerate(pieces):
                if index and delay:
                    await clock.sleep(delay)
                yield piece

        return await serve_stream(send, receive, runtime=runtime, connection=connection,
                                  framing=framing, source=source, headers=list(CHUNKED_HEADERS))


def compile_chunked_action(config: ChunkedConfig, key_path: str, base_dir: Path,
                           body_file_roots: tuple[Path, ...] = ()) -> ChunkedAction:
    """Compile ``http.chunked`` (``key_path`` points at it; ``base_dir`` resolves a relative
    ``dataFile``, which must resolve into ``body_file_roots`` unless that is empty).

    Raises :class:`~mocks.core.errors.ConfigError` at ``<key_path>.dataFile`` for a file
    outside them."""
    return ChunkedAction(config, key_path, base_dir, body_file_roots)
