"""A fake in-process ASGI client for streaming responses, shared by the SSE unit tests."""
from __future__ import annotations

import asyncio

from mocks.engine.app import DataPlaneApp

LIMIT = 5.0  # seconds any single step may take before the test fails


def sse_mock(mock_id: str, path: str, **sse) -> dict:
    return {"id": mock_id, "http": {"matcher": {"path": path}, "sse": sse}}


class FakeClient:
    """One in-process ASGI request: collects what the app sends, can disconnect."""

    def __init__(self, app: DataPlaneApp, path: str, method: str = "GET",
                 headers: dict[str, str] | None = None):
        self.messages: list[dict] = []
        self.arrivals: list[float] = []
        self.inbox: asyncio.Queue = asyncio.Queue()
        self.inbox.put_nowait({"type": "http.request", "body": b"", "more_body": False})
        self.changed = asyncio.Event()
        scope = {"type": "http", "method": method, "path": path, "query_string": b"",
                 "headers": [(name.lower().encode(), value.encode())
                             for name, value in (headers or {}).items()],
                 "scheme": "http", "client": ("127.0.0.1", 50000),
                 "server": ("127.0.0.1", 4280)}
        self.task = asyncio.create_task(app(scope, self.inbox.get, self._send))

    async def _send(self, message: dict) -> None:
        self.messages.append(message)
        self.arrivals.append(asyncio.get_running_loop().time())
        self.changed.set()

    def disconnect(self) -> None:
        self.inbox.put_nowait({"type": "http.disconnect"})

    @property
    def status(self) -> int:
        return self.messages[0]["status"]

    @property
    def headers(self) -> dict[str, str]:
        return {name.decode(): value.decode() for name, value in self.messages[0]["headers"]}

    @property
    def body(self) -> bytes:
        return b"".join(message.get("body", b"") for message in self.messages[1:])

    @property
    def completed(self) -> bool:
        """The response ended cleanly (a last body message without more_body)."""
        last = self.messages[-1] if len(self.messages) > 1 else {}
        return last.get("type") == "http.response.body" and not last.get("more_body", False)

    def events(self) -> list[dict[str, str]]:
        """Parsed SSE blocks that carry data (as an EventSource dispatches them)."""
        out = []
        for block in self.body.decode().split("\n\n"):
            fields: dict[str, str] = {}
            for line in block.split("\n"):
                if line.startswith(":") or ":" not in line:
                    continue
                name, _, value = line.partition(":")
                value = value[1:] if value.startswith(" ") else value
                fields[name] = fields[name] + "\n" + value if name == "data" and name in fields \
                    else value
            if "data" in fields:
                out.append(fields)
        return out

    async def wait_events(self, count: int) -> None:
        async def enough() -> None:
            while len(self.events()) < count:
                self.changed.clear()
                await self.changed.wait()
        await asyncio.wait_for(enough(), LIMIT)

    async def finished(self) -> None:
        await asyncio.wait_for(self.task, LIMIT)
