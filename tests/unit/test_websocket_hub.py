"""The WebSocket hub's connection bookkeeping: a client that stops reading is closed with 1008
once its bounded outbox is full, a close drops what was queued, and a retired mock's
connections get 1012."""
from __future__ import annotations

import asyncio
from types import SimpleNamespace

from mocks.protocols.websocket.hub import (SEND_QUEUE_LIMIT, CloseRequest, Outbox,
                                           WebSocketConnection, WebSocketHub)


def connection(mock_id="m"):
    compiled = SimpleNamespace(mock_id=mock_id, name=None)
    return WebSocketConnection(compiled, "/ws", "127.0.0.1:5000", "", None)


def test_full_outbox_closes_the_connection_with_1008_and_drops_the_backlog():
    client = connection()
    assert all(client.push(f"m{n}") for n in range(SEND_QUEUE_LIMIT))
    assert client.push("one too many") is False
    assert client.close_code == 1008 and "not reading" in client.close_reason
    item = client.queue.get_nowait()
    assert isinstance(item, CloseRequest) and item.code == 1008
    assert client.queue.empty()
    assert client.push("after close") is False


def test_outbox_wakes_its_reader_in_order():
    async def scenario():
        box = Outbox(3)
        reader = asyncio.ensure_future(box.get())
        await asyncio.sleep(0)
        box.put_nowait("a")
        box.put_nowait("b")
        return await reader, box.get_nowait(), box.empty()

    assert asyncio.run(scenario()) == ("a", "b", True)


def test_retire_and_broadcast_follow_the_live_compiled_mocks():
    hub = WebSocketHub()
    old, new = connection("a"), connection("b")
    hub.add(old)
    hub.add(new)
    assert hub.broadcast("hi") == 2
    assert hub.broadcast("only b", mock_id="b") == 1
    assert hub.retire({id(new.compiled)}) == 1
    assert old.close_code == 1012 and new.close_code is None
    assert hub.stats()["connectionsByMock"] == {"a": 1, "b": 1}
