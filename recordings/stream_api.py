"""Admin API routes of WebSocket and SSE stream recordings and their replays
(``/stream-recordings*``, ``/replay*``).

Source: SPEC "Stream recordings"; behavior notes §1 "Connections, protocol handlers, stream
recordings".
"""
from __future__ import annotations

from ninja import Router

router = Router(tags=["stream-recordings"])
