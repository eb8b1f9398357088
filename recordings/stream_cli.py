"""``mockd stream-recordings``: WebSocket and SSE stream recordings from the command line."""
from __future__ import annotations

import click


@click.group("stream-recordings")
def stream_recordings_group() -> None:
    """List, show, export, convert and delete stream recordings."""
