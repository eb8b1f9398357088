"""GraphQL mocks over real sockets with the ``gql`` client against a real ``mockd start``:
fake values type-correct for every kind of type of a realistic schema, resolver overrides,
argument templates, match variants, errors, introspection on and off, delays, tables shared
with REST mocks, subscriptions over graphql-transport-ws and legacy graphql-ws, the request
log, verification, metrics and the export/import round trip."""
from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from gql import Client, gql
from gql.transport.exceptions import TransportQueryError
from gql.transport.httpx import HTTPXTransport
from graphql import (GraphQLEnumType, GraphQLList, GraphQLNonNull, GraphQLObjectType,
                     GraphQLScalarType, build_schema, is_abstract_type)

from tests.helpers import start_server

pytestmark = pytest.mark.integration

#: A shop and social schema: 30 named types of every kind (scalars, custom scalars, enums,
#: objects, interfaces, unions, inputs, lists, non-null).
SDL = (Path(__file__).resolve().parents[1] / "fixtures" / "graphql" / "shop.graphql").read_text()

MOCKS = [
    {"id": "shop", "type": "graphql", "graphql": {
        "path": "/graphql", "schema": SDL, "introspection": True,
        "resolvers": {
            "Query.user": {"response": {"id": "{{args.id}}", "name": "Ann Example",
                                        "email": "ann@example.com"}},
            "Query.greeting": [
                {"match": {"args": {"lang": "fr"}}, "response": "Bonjour {{args.name}}"},
                {"match": {"args": {"lang": "de"}}, "response": "Hallo {{args.name}}"},
                {"response": "Hello {{args.name}} from {{request.header.X-Team}}"}],
            "Query.order": {
                "variants": [{"match": {"args": {"id": "missing"}},
                              "error": {"message": "Order {{args.id}} not found",
                                        "extensions": {"code": "NOT_FOUND"}}}],
                "response": {"id": "{{args.id}}", "status": "PAID"}},
            "Query.failing": {"error": {"message": "upstream down", "path": ["failing"],
                                        "extensions": {"code": "UNAVAILABLE"}}},
            "Query.slow": {"response": "done", "delay": "300ms"},
            "Query.items": {"table": "items", "action": "list"},
            "Mutation.createItem": {"table": "items", "action": "create"},
            "Mutation.deleteItem": {"table": "items", "action": "delete"},
        },
        "subscriptions": {
            "messageAdded": {"events": [
                {"data": {"id": "1", "text": "hi", "from": "{{args.room}}"}},
                {"data": {"id": "2", "text": "there", "from": "bob"}, "delay": "20ms"},
                {"data": {"id": "3", "text": "bye", "from": "carol"}}],
                "timing": {"fixedDelay": "10ms", "randomDelay": "0ms-20ms"}},
            "counter": {"events": [{"data": 1}, {"data": 2}],
                        "timing": {"fixedDelay": "10ms", "repeat": 2}}}}},
    {"id": "private", "type": "graphql", "graphql": {
        "path": "/private/graphql", "schema": "type Query { secret: String }"}},
    {"id": "rest-items", "type": "http", "http": {"matcher": {"method": "GET",
                                                              "path": "/api/items"}}},
    {"id": "rest-create", "type": "http", "http": {"matcher": {"method": "POST",
                                                               "path": "/api/items"}}},
]

CONFIG = {
    "version": "1.0",
    "tables": [{"name": "items", "idStrategy": "sequence",
                "seedData": [{"id": 1, "name": "Pen", "price": 1.5}]}],
    "mocks": MOCKS,
    "extend": [
        {"mock": "shop.Query.item", "table": "items", "action": "get"},
        {"mock": "shop.Mutation.renameItem", "table": "items", "action": "patch"},
        {"mock": "rest-items", "table": "items", "action": "list"},
        {"mock": "rest-create", "table": "items", "action": "create"},
    ],
}

SCHEMA = build_schema(SDL)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    process = start_server(tmp_path_factory.mktemp("graphql"), CONFIG)
    try:
        yield process
    finally:
        process.stop()


def _client(server, path: str = "/graphql", headers: dict[str, str] | None = None,
            fetch_schema: bool = False) -> Client:
    return Client(transport=HTTPXTransport(url=server.base + path, timeout=10,
                                           headers=headers),
                  fetch_schema_from_transport=fetch_schema)


def _execute(server, query: str, variables: dict[str, Any] | None = None,
             headers: dict[str, str] | None = None) -> dict[str, Any]:
    request = gql(query)
    request.variable_values = variables
    with _client(server, headers=headers) as session:
        return session.execute(request)


# ---------------------------------------------------------------- fake values


def _selection(kind: Any, depth: int, prefix: str = "") -> str:
    """A selection set asking for every field of ``kind`` down to ``depth`` levels."""
    named = kind
    while isinstance(named, (GraphQLNonNull, GraphQLList)):
        named = named.of_type
    if isinstance(named, (GraphQLScalarType, GraphQLEnumType)):
        return ""
    if is_abstract_type(named):
        parts = ["__typename"]
        for possible in SCHEMA.get_possible_types(named):
            # Aliased per type: fields of one name may differ in type between the members.
            parts.append(f"... on {possible.name} "
                         f"{_selection(possible, depth, possible.name + '__')}")
        return "{ " + " ".join(parts) + " }"
    fields = []
    for name, field in named.fields.items():
        if any(isinstance(arg.type, GraphQLNonNull) for arg in field.args.values()):
            continue
        alias = f"{prefix}{name}: " if prefix else ""
        if _is_leaf(field.type):
            fields.append(alias + name)
        elif depth > 0:
            fields.append(f"{alias}{name} {_selection(field.type, depth - 1)}")
    return "{ __typename " + " ".join(fields) + " }"


def _is_leaf(kind: Any) -> bool:
    while isinstance(kind, (GraphQLNonNull, GraphQLList)):
        kind = kind.of_type
    return isinstance(kind, (GraphQLScalarType, GraphQLEnumType))


def _check(value: Any, kind: Any, where: str, fake_lists: bool = True) -> None:
    """``value`` is a correct result of ``kind`` (as sent by the server)."""
    if isinstance(kind, GraphQLNonNull):
        assert value is not None, f"{where}: null for a non-null type"
        _check(value, kind.of_type, where, fake_lists)
        return
    if value is None:
        return
    if isinstance(kind, GraphQLList):
        assert isinstance(value, list), f"{where}: not a list"
        if fake_lists:
            assert 2 <= len(value) <= 3, f"{where}: {len(value)} items"
        for index, item in enumerate(value):
            _check(item, kind.of_type, f"{where}[{index}]", fake_lists)
        return
    if isinstance(kind, GraphQLEnumType):
        assert value in kind.values, f"{where}: {value!r} not in {kind.name}"
        return
    if isinstance(kind, GraphQLScalarType):
        expected = {"Int": int, "Float": (int, float), "String": str, "ID": str,
                    "Boolean": bool, "DateTime": str, "URL": str, "JSON": dict}[kind.name]
        assert isinstance(value, expected), f"{where}: {value!r} is not {kind.name}"
        if kind.name == "Int":
            assert not isinstance(value, bool) and -2**31 <= value < 2**31
        if kind.name == "DateTime":
            assert value[:4].isdigit() and "T" in value, f"{where}: {value!r}"
        if kind.name == "URL":
            assert value.startswith("http"), f"{where}: {value!r}"
        return
    assert isinstance(value, dict), f"{where}: not an object"
    if is_abstract_type(kind):
        names = {possible.name for possible in SCHEMA.get_possible_types(kind)}
        assert value["__typename"] in names, f"{where}: {value['__typename']} not in {names}"
        kind = SCHEMA.type_map[value["__typename"]]
    assert isinstance(kind, GraphQLObjectType)
    assert value["__typename"] == kind.name
    for name, item in value.items():
        if name == "__typename":
            continue
        name = name.split("__")[-1]  # aliases of fields inside fragments on abstract types
        _check(item, kind.fields[name].type, f"{where}.{name}", fake_lists)


@pytest.mark.parametrize("field", ["me", "search(term: \"x\")", "activity", "products",
                                   "stats", "users", "node(id: \"n1\")"])
def test_fields_without_resolvers_answer_type_correct_fake_values(server, field):
    name = field.split("(")[0]
    kind = SCHEMA.query_type.fields[name].type
    data = _execute(server, "{ " + field + " " + _selection(kind, 3) + " }")
    _check(data[name], kind, name)


def test_fake_values_follow_field_names(server):
    data = _execute(server, "{ me { email name username age createdAt profile { avatar } "
                            "address { location { latitude longitude } } } }")
    me = data["me"]
    assert "@" in me["email"] and me["email"].endswith((".com", ".net", ".org"))
    assert " " in me["name"]
    assert 18 <= me["age"] <= 90
    assert me["createdAt"].endswith("Z")
    assert -90 <= me["address"]["location"]["latitude"] <= 90


def test_fake_values_are_the_same_under_one_seed(server):
    query = "{ me { id name email tags orders { id total { amount currency } } } }"
    first = _execute(server, query, headers={"X-Mockd-Seed": "42"})
    again = _execute(server, query, headers={"X-Mockd-Seed": "42"})
    other = _execute(server, query, headers={"X-Mockd-Seed": "43"})
    assert first == again != other
    with httpx.Client(trust_env=False, timeout=10) as client:
        by_query = client.get(server.base + "/graphql",
                              params={"query": query, "_mock_seed": "42"}).json()
    assert by_query["data"] == first


# ---------------------------------------------------------------- resolvers


def test_resolver_response_templates_arguments_and_keeps_unlisted_fields_fake(server):
    data = _execute(server, 'query($id: ID!) { user(id: $id) { id name email age } }',
                    {"id": "u-7"})
    assert data["user"]["id"] == "u-7" and data["user"]["name"] == "Ann Example"
    assert data["user"]["email"] == "ann@example.com" and isinstance(data["user"]["age"], int)


def test_match_variants_are_tried_in_order_and_the_last_reads_the_request(server):
    query = 'query($name: String, $lang: String) { greeting(name: $name, lang: $lang) }'
    assert _execute(server, query, {"name": "Ann", "lang": "fr"}) == {"greeting": "Bonjour Ann"}
    assert _execute(server, query, {"name": "Bo", "lang": "de"}) == {"greeting": "Hallo Bo"}
    assert _execute(server, query, {"name": "Cy", "lang": "es"},
                    headers={"X-Team": "core"}) == {"greeting": "Hello Cy from core"}


def test_error_variant_answers_a_graphql_error_with_http_200(server):
    with httpx.Client(trust_env=False, timeout=10) as client:
        answer = client.post(server.base + "/graphql", json={
            "query": '{ order(id: "missing") { id } other: order(id: "o1") { id status } }'})
    assert answer.status_code == 200
    body = answer.json()
    assert body["data"] == {"order": None, "other": {"id": "o1", "status": "PAID"}}
    assert body["errors"] == [{"message": "Order missing not found",
                               "locations": [{"line": 1, "column": 3}], "path": ["order"],
                               "extensions": {"code": "NOT_FOUND"}}]


def test_configured_error_reaches_gql_as_a_query_error(server):
    with pytest.raises(TransportQueryError) as raised:
        _execute(server, "{ failing }")
    assert raised.value.errors[0]["message"] == "upstream down"
    assert raised.value.errors[0]["extensions"] == {"code": "UNAVAILABLE"}


def test_delay_waits_before_the_field_answers(server):
    started = time.monotonic()
    assert _execute(server, "{ slow }") == {"slow": "done"}
    assert time.monotonic() - started >= 0.3


# ---------------------------------------------------------------- request errors


@pytest.mark.parametrize("body,headers,status,message", [
    pytest.param(b"{not json", {"content-type": "application/json"}, 400, "not valid JSON",
                 id="not json"),
    pytest.param(b'{"variables": {}}', {"content-type": "application/json"}, 400,
                 "Must provide query string", id="no query"),
    pytest.param(b'{"query": "{ me { id "}', {"content-type": "application/json"}, 400,
                 "Syntax Error", id="does not parse"),
    pytest.param(b'{"query": "{ nope }"}', {"content-type": "application/json"}, 400,
                 "Cannot query field 'nope'", id="does not validate"),
    pytest.param(b'{"query": "query A { me { id } } query B { stats { users } }"}',
                 {"content-type": "application/json"}, 400, "Must provide operation name",
                 id="operation not chosen"),
    pytest.param(b'{"query": "query($id: ID!) { user(id: $id) { id } }"}',
                 {"content-type": "application/json"}, 400, "non-null type 'ID!'",
                 id="missing variable"),
    pytest.param(b'{"query": "subscription { counter }"}',
                 {"content-type": "application/json"}, 400, "WebSocket", id="subscription"),
])
def test_bad_requests_get_graphql_errors_with_400(server, body, headers, status, message):
    with httpx.Client(trust_env=False, timeout=10) as client:
        answer = client.post(server.base + "/graphql", content=body, headers=headers)
    assert answer.status_code == status
    assert message in answer.json()["errors"][0]["message"]


def test_get_answers_queries_and_refuses_mutations(server):
    with httpx.Client(trust_env=False, timeout=10) as client:
        got = client.get(server.base + "/graphql",
                         params={"query": "query($n: String) { greeting(name: $n) }",
                                 "variables": '{"n": "Get"}'})
        mutation = client.get(server.base + "/graphql",
                              params={"query": 'mutation { deleteItem(id: "1") }'})
        put = client.put(server.base + "/graphql", json={"query": "{ stats { users } }"})
    assert got.status_code == 200 and got.json()["data"]["greeting"].startswith("Hello Get")
    assert mutation.status_code == 405 and mutation.headers["allow"] == "POST"
    assert put.status_code == 405


def test_application_graphql_body_is_the_query(server):
    with httpx.Client(trust_env=False, timeout=10) as client:
        answer = client.post(server.base + "/graphql?operationName=G",
                             content=b'query G { greeting(name: "Raw", lang: "fr") }',
                             headers={"content-type": "application/graphql"})
    assert answer.json() == {"data": {"greeting": "Bonjour Raw"}}


# ---------------------------------------------------------------- introspection


def test_introspection_on_lets_gql_fetch_the_schema(server):
    with _client(server, fetch_schema=True) as session:
        assert "greeting" in session.client.schema.query_type.fields
        assert session.client.schema.get_type("SearchResult") is not None


def test_introspection_off_by_default_rejects_introspection_queries(server):
    with httpx.Client(trust_env=False, timeout=10) as client:
        refused = client.post(server.base + "/private/graphql",
                              json={"query": "{ __schema { types { name } } }"})
        typename = client.post(server.base + "/private/graphql",
                               json={"query": "{ __typename secret }"})
    assert refused.status_code == 400
    assert "introspection" in refused.json()["errors"][0]["message"].lower()
    assert typename.status_code == 200 and typename.json()["data"]["__typename"] == "Query"


# ---------------------------------------------------------------- tables


def test_table_resolvers_share_items_with_rest_mocks_on_the_same_table(server):
    created = _execute(server, 'mutation($i: ItemInput!) { createItem(input: $i) { id name } }',
                       {"i": {"name": "Lamp", "price": 20.0}})["createItem"]
    with httpx.Client(trust_env=False, timeout=10) as client:
        listed = client.get(server.base + "/api/items").json()["data"]
        assert {"Pen", "Lamp"} <= {item["name"] for item in listed}
        made = client.post(server.base + "/api/items", json={"name": "Desk", "price": 99})
        assert made.status_code == 201
    names = {item["name"] for item in _execute(server, "{ items { id name price } }")["items"]}
    assert {"Pen", "Lamp", "Desk"} <= names
    assert _execute(server, '{ items(name: "Desk") { name } }') == {"items": [{"name": "Desk"}]}
    got = _execute(server, 'query($id: ID!) { item(id: $id) { id name price } }',
                   {"id": created["id"]})
    assert got["item"]["name"] == "Lamp" and got["item"]["price"] == 20.0
    renamed = _execute(server, 'mutation($id: ID!) { renameItem(id: $id, name: "Torch") '
                               '{ name } }', {"id": created["id"]})
    assert renamed == {"renameItem": {"name": "Torch"}}
    assert _execute(server, 'mutation($id: ID!) { deleteItem(id: $id) }',
                    {"id": created["id"]}) == {"deleteItem": True}
    with httpx.Client(trust_env=False, timeout=10) as client:
        names = {item["name"] for item in client.get(server.base + "/api/items").json()["data"]}
    assert "Torch" not in names and "Desk" in names


def test_table_error_is_a_graphql_error_with_code_and_status(server):
    with pytest.raises(TransportQueryError) as raised:
        _execute(server, '{ item(id: "999") { id } }')
    assert raised.value.errors[0]["extensions"]["status"] == 404


# ---------------------------------------------------------------- subscriptions


async def _subscribe(server, query: str, subprotocol: str,
                     variables: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    from gql.transport.websockets import WebsocketsTransport

    url = server.base.replace("http://", "ws://") + "/graphql"
    transport = WebsocketsTransport(url=url, subprotocols=[subprotocol], connect_timeout=10,
                                    close_timeout=5, ack_timeout=10)
    received = []
    request = gql(query)
    request.variable_values = variables
    async with Client(transport=transport) as session:
        async with asyncio.timeout(20):
            async for result in session.subscribe(request):
                received.append(result)
    return received


@pytest.mark.parametrize("subprotocol", ["graphql-transport-ws", "graphql-ws"])
async def test_subscription_streams_configured_events_then_completes(server, subprotocol):
    events = await _subscribe(server, 'subscription($r: String) { messageAdded(room: $r) '
                                      '{ id text from } }', subprotocol, {"r": "lobby"})
    assert events == [{"messageAdded": {"id": "1", "text": "hi", "from": "lobby"}},
                      {"messageAdded": {"id": "2", "text": "there", "from": "bob"}},
                      {"messageAdded": {"id": "3", "text": "bye", "from": "carol"}}]


@pytest.mark.parametrize("subprotocol", ["graphql-transport-ws", "graphql-ws"])
async def test_subscription_repeat_and_fake_events(server, subprotocol):
    counted = await _subscribe(server, "subscription { counter }", subprotocol)
    assert counted == [{"counter": 1}, {"counter": 2}, {"counter": 1}, {"counter": 2}]


async def test_subscription_without_configured_events_sends_fake_ones(server):
    from gql.transport.websockets import WebsocketsTransport

    url = server.base.replace("http://", "ws://") + "/graphql"
    transport = WebsocketsTransport(url=url, subprotocols=["graphql-transport-ws"])
    received = []
    async with Client(transport=transport) as session:
        query = gql("subscription { userJoined { id name email role } }")
        async with asyncio.timeout(2.5):
            async for result in session.subscribe(query):
                received.append(result["userJoined"])
                break  # the client stops: the server stops the operation
    assert "@" in received[0]["email"] and received[0]["role"] in ("ADMIN", "EDITOR", "VIEWER")


async def test_queries_run_over_the_websocket_too(server):
    from gql.transport.websockets import WebsocketsTransport

    url = server.base.replace("http://", "ws://") + "/graphql"
    transport = WebsocketsTransport(url=url, subprotocols=["graphql-transport-ws"])
    async with Client(transport=transport) as session:
        got = await session.execute(gql('{ greeting(name: "Ws", lang: "de") }'))
    assert got == {"greeting": "Hallo Ws"}


async def _close_code_after(server, messages: list[dict[str, Any]]) -> int:
    """The close code the server sends after ``messages`` on a graphql-transport-ws socket."""
    import json

    import websockets

    url = server.base.replace("http://", "ws://") + "/graphql"
    async with asyncio.timeout(15):
        async with websockets.connect(url, subprotocols=["graphql-transport-ws"]) as socket:
            for message in messages:
                await socket.send(json.dumps(message))
            try:
                for _ in range(20):  # an ack or a result may come before the close
                    await socket.recv()
            except websockets.ConnectionClosed as closed:
                return closed.rcvd.code if closed.rcvd else -1
    return 0


@pytest.mark.parametrize(("messages", "code"), [
    ([{"type": "subscribe", "id": "1", "payload": {"query": "subscription { counter }"}}],
     4401),  # no connection_init first
    ([{"type": "connection_init"}, {"type": "connection_init"}], 4429),
    ([{"type": "connection_init"}, {"type": "no-such-type"}], 4400),
    ([{"type": "connection_init"}, {"id": "1", "payload": {}}], 4400),
    ([{"type": "connection_init"},
      {"type": "subscribe", "id": "1", "payload": {"query": "subscription { userJoined { id } }"}},
      {"type": "subscribe", "id": "1", "payload": {"query": "subscription { userJoined { id } }"}}],
     4409),  # the first is still running: fake events have no end
])
async def test_graphql_transport_ws_protocol_errors_close_with_its_codes(server, messages, code):
    assert await _close_code_after(server, messages) == code


# ---------------------------------------------------------------- admin


def test_requests_are_logged_with_operation_type_and_name(server):
    with server.admin_client() as admin:
        admin.delete("/requests")
        _execute(server, "query Greet { greeting(name: \"Log\") }")
        _execute(server, 'mutation AddOne { createItem(input: {name: "Log"}) { id } }')
        queries = admin.get("/requests", params={"graphqlOpType": "query"}).json()["requests"]
        mutations = admin.get("/requests",
                              params={"graphqlOpType": "mutation"}).json()["requests"]
        by_protocol = admin.get("/requests", params={"protocol": "graphql"}).json()
    assert [entry["graphqlOperationName"] for entry in queries] == ["Greet"]
    assert queries[0]["protocol"] == "graphql" and queries[0]["matchedMockId"] == "shop"
    assert queries[0]["graphql"] == {"operationType": "query", "operationName": "Greet",
                                     "errors": 0}
    assert [entry["graphqlOperationName"] for entry in mutations] == ["AddOne"]
    assert by_protocol["count"] == 2


async def test_subscriptions_are_logged_as_subscription_operations(server):
    await _subscribe(server, "subscription Count { counter }", "graphql-transport-ws")
    with server.admin_client() as admin:
        for _ in range(50):
            entries = admin.get("/requests",
                                params={"graphqlOpType": "subscription"}).json()["requests"]
            if entries:
                break
            await asyncio.sleep(0.05)
    entry = entries[0]
    assert entry["graphqlOperationName"] == "Count" and entry["statusCode"] == 101
    assert entry["graphql"]["events"] == 4 and entry["wsConnectionId"].startswith("ws_")


def test_verification_counts_graphql_requests(server):
    with server.admin_client() as admin:
        admin.delete("/mocks/private/invocations")
        for _ in range(3):
            _execute_private(server)
        verdict = admin.post("/mocks/private/verify", json={"exactly": 3}).json()
        metrics = admin.get("/metrics").text
    assert verdict["passed"] is True, verdict
    assert 'path="/private/graphql"' in metrics


def _execute_private(server) -> None:
    with _client(server, "/private/graphql") as session:
        assert set(session.execute(gql("{ secret }"))) == {"secret"}


def test_export_and_import_round_trip_keeps_the_graphql_mock(server):
    with server.admin_client() as admin:
        exported = admin.get("/config").json()
        shop = next(mock for mock in exported["mocks"] if mock["id"] == "shop")
        assert shop["graphql"]["resolvers"]["Query.greeting"]["variants"][0]["match"] == {
            "args": {"lang": "fr"}}
        assert shop["graphql"]["subscriptions"]["counter"]["timing"]["repeat"] == 2
        assert shop["graphql"]["path"] == "/graphql" and "extend" in exported
        imported = admin.post("/config", params={"replace": "true"}, json=exported)
        assert imported.status_code == 200, imported.text
        again = next(mock for mock in admin.get("/config").json()["mocks"]
                     if mock["id"] == "shop")
    assert again["graphql"] == shop["graphql"]
    assert _execute(server, '{ greeting(name: "Back", lang: "fr") }') == {
        "greeting": "Bonjour Back"}
    assert _execute(server, '{ item(id: "1") { name } }') == {"item": {"name": "Pen"}}
