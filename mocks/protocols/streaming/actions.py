"""The entry point the snapshot compiler uses for streaming mocks.

Source: behavior notes §9 ("Placement: beside ``matcher``, instead of ``response``").
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from mocks.protocols.streaming.chunked import compile_chunked_action
from mocks.protocols.streaming.sender import StreamAction
from mocks.protocols.streaming.sse import compile_sse_action


def compile_stream_action(http: Any, key_path: str, base_dir: Path,
                          body_file_roots: tuple[Path, ...] = ()) -> StreamAction:
    """The action of an ``http`` block that has ``sse`` or ``chunked`` (``key_path`` points at
    the ``http`` block; ``base_dir`` resolves a relative ``chunked.dataFile``, which must
    resolve into ``body_file_roots`` unless that is empty).

    Raises :class:`~mocks.core.errors.ConfigError` naming the key of a bad template,
    placeholder or template parameter.
    """
    if http.sse is not None:
        return compile_sse_action(http.sse, f"{key_path}.sse")
    return compile_chunked_action(http.chunked, f"{key_path}.chunked", base_dir,
                                  body_file_roots)
