"""WebSocket and SSE stream recordings."""
