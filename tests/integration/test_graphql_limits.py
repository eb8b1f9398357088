"""GraphQL cost limits against a real ``mockd start``: a fragment bomb sent by GET is refused
at once with a GraphQL error while a plain HTTP mock on the same port keeps answering; with
the limits raised, the same bomb is stopped by its time budget and the port still answers;
the same limits over WebSocket; a real client's introspection passes the defaults.

Timing bounds are wide (a loaded 2-core machine): unprotected, the bomb holds the port for
5 to 11 seconds."""
from __future__ import annotations

import asyncio
import json
import threading
import time
from typing import Any

import httpx
import pytest
from gql import Client, gql
from gql.transport.httpx import HTTPXTransport

from tests.helpers import start_server
from tests.unit.test_graphql_limits import fragment_bomb

pytestmark = pytest.mark.integration

SDL = """
type User { id: ID! name: String! friends: [User!]! }
type Query { me: User! hello: String }
type Subscription { joined: User! }
"""
QUICK_EVENTS = {"joined": {"timing": {"fixedDelay": "10ms"}}}
CONFIG = {"version": "1.0", "mocks": [
    {"id": "guarded", "type": "graphql", "graphql": {
        "path": "/graphql", "schema": SDL, "introspection": True,
        "subscriptions": QUICK_EVENTS}},
    {"id": "loose", "type": "graphql", "graphql": {
        "path": "/loose/graphql", "schema": SDL, "subscriptions": QUICK_EVENTS,
        "limits": {"maxComplexity": 10 ** 12, "maxAliases": 1_000_000, "timeoutMs": 300}}},
    {"id": "hello", "type": "http", "http": {
        "matcher": {"method": "GET", "path": "/hello"},
        "response": {"statusCode": 200, "body": {"message": "hello"}}}},
]}
#: Bound on every answer here, in seconds (the bomb unprotected: 5 to 11 s).
QUICK = 2.0


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with start_server(tmp_path_factory.mktemp("graphql-limits"), CONFIG) as process:
        yield process


def _bomb_beside_hello(server, path: str) -> tuple[httpx.Response, float, list[float]]:
    """Send the fragment bomb by GET to ``path`` and, while it is under way, GET ``/hello``
    (at most 20 times, for at most 15 s). Returns the bomb's response, its time and the
    times of the ``/hello`` requests."""
    outcome: dict[str, Any] = {}

    def bomb() -> None:
        started = time.monotonic()
        with httpx.Client(trust_env=False, timeout=30) as client:
            outcome["response"] = client.get(server.base + path,
                                              params={"query": fragment_bomb(7, 3)})
        outcome["elapsed"] = time.monotonic() - started

    thread = threading.Thread(target=bomb)
    thread.start()
    hello_times: list[float] = []
    deadline = time.monotonic() + 15
    with httpx.Client(trust_env=False, timeout=30) as client:
        time.sleep(0.05)  # let the bomb reach the server first
        for _ in range(20):
            started = time.monotonic()
            assert client.get(server.base + "/hello").json() == {"message": "hello"}
            hello_times.append(time.monotonic() - started)
            if not thread.is_alive() or time.monotonic() > deadline:
                break
    thread.join(timeout=30)
    assert "response" in outcome, "the bomb got no answer within 30 s"
    return outcome["response"], outcome["elapsed"], hello_times


def test_fragment_bomb_by_get_is_refused_at_once_while_the_port_keeps_serving(server):
    response, elapsed, hello_times = _bomb_beside_hello(server, "/graphql")
    assert response.status_code == 400
    body = response.json()
    assert set(body) == {"errors"}
    limits = [error["extensions"]["limit"] for error in body["errors"]]
    assert limits == ["maxComplexity", "maxAliases"]
    assert "graphql.limits.maxComplexity" in body["errors"][0]["message"]
    assert elapsed < QUICK, elapsed
    assert max(hello_times) < QUICK, hello_times


def test_expensive_query_past_raised_limits_is_stopped_by_its_time_budget(server):
    response, elapsed, hello_times = _bomb_beside_hello(server, "/loose/graphql")
    assert response.status_code == 400
    (error,) = response.json()["errors"]
    assert error["extensions"] == {"code": "QUERY_TIMEOUT", "limit": "timeoutMs", "max": 300}
    assert "time budget of 300 ms" in error["message"]
    assert elapsed < QUICK + 1.0, elapsed
    assert max(hello_times) < QUICK, hello_times


async def _first_answer(server, path: str, query: str) -> dict[str, Any]:
    """The first message after ``subscribe`` on a graphql-transport-ws socket at ``path``."""
    import websockets

    url = server.base.replace("http://", "ws://") + path
    async with asyncio.timeout(15):
        async with websockets.connect(url, subprotocols=["graphql-transport-ws"]) as socket:
            await socket.send(json.dumps({"type": "connection_init"}))
            assert json.loads(await socket.recv())["type"] == "connection_ack"
            await socket.send(json.dumps({"type": "subscribe", "id": "1",
                                          "payload": {"query": query}}))
            return json.loads(await socket.recv())


async def test_limits_apply_over_websocket(server):
    query = fragment_bomb(7, 3).replace("{ me {", "subscription { joined {", 1)
    message = await _first_answer(server, "/graphql", query)
    assert message["type"] == "error" and message["id"] == "1"
    assert message["payload"][0]["extensions"]["limit"] == "maxComplexity"


async def test_subscription_event_past_its_time_budget_ends_with_an_error(server):
    query = fragment_bomb(7, 3).replace("{ me {", "subscription { joined {", 1)
    started = time.monotonic()
    message = await _first_answer(server, "/loose/graphql", query)
    assert message["type"] == "error"
    assert message["payload"][0]["extensions"]["code"] == "QUERY_TIMEOUT"
    assert time.monotonic() - started < QUICK + 1.0


def test_client_introspection_passes_the_default_limits(server):
    transport = HTTPXTransport(url=server.base + "/graphql", timeout=10)
    with Client(transport=transport, fetch_schema_from_transport=True) as session:
        assert session.execute(gql("{ me { id friends { name } } }"))["me"]["id"]
        assert session.client.schema.query_type.name == "Query"
