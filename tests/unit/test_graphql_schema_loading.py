"""Loading GraphQL schemas as services publish them (``mocks.protocols.graphql.schema``,
``federation``): duplicate fields keep the first with a warning; rules newer than graphql-js 16 are warnings; truly broken SDL
is still an error naming its line; introspection JSON with or without ``data``; federation
subgraphs (Federation 1 and 2) load and answer ``_service`` and ``_entities``."""
from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import orjson
import pytest
from graphql import (GraphQLObjectType, build_schema,
                     introspection_from_schema, print_schema)

from mocks.core.errors import ConfigError
from mocks.core.request import MockRequest
from mocks.core.templating import TemplateState
from mocks.engine.snapshot import compile_snapshot
from mocks.loader import validate_config
from mocks.protocols.graphql import schema as schema_module
from mocks.protocols.graphql.schema import load_schema
from tests.helpers import make_config

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "graphql"
SHOP = (FIXTURES / "shop.graphql").read_text()
SUBGRAPH = (FIXTURES / "subgraph.graphql").read_text()


# ---------------------------------------------------------------- lenient SDL


def test_duplicate_fields_keep_the_first_with_a_warning_naming_them(caplog):
    sdl = ('type Query { a: Int b: String a: String }\n'
           'extend type Query { b: Int c: Int }\n'
           'enum E { X Y X }\ninput I { p: Int p: String }\n'
           'type Other { e: E i: String }')
    with caplog.at_level(logging.WARNING, logger="mockd.graphql"):
        loaded = load_schema(sdl, "mocks[0].graphql.schema")
    query = loaded.schema.query_type
    assert list(query.fields) == ["a", "b", "c"]
    assert str(query.fields["a"].type) == "Int" and str(query.fields["b"].type) == "String"
    assert list(loaded.schema.type_map["E"].values) == ["X", "Y"]
    assert str(loaded.schema.type_map["I"].fields["p"].type) == "Int"
    assert loaded.warnings == ("declared more than once, the first declaration kept: "
                               "Query.a; Query.b; E.X; I.p",)
    assert "mocks[0].graphql.schema: declared more than once" in caplog.text


@pytest.mark.parametrize("sdl,warning", [
    pytest.param("interface Node { id: ID! }\n"
                 "type Project implements Node { id: ID! @deprecated(reason: \"old\") }\n"
                 "type Query { node: Node project: Project }",
                 "deprecated fields implementing an interface field that is not deprecated, "
                 "accepted (a rule newer than graphql-js 16): Project.id (Node.id)",
                 id="deprecated implementation of a live interface field"),
    pytest.param('type Query { list(first: Int = "ten"): [Int] }',
                 "default values that do not fit their type, accepted (a rule newer than "
                 "graphql-js 16): Query.list(first:)",
                 id="default value of the wrong type"),
])
def test_rules_newer_than_graphql_js_16_are_warnings(sdl, warning):
    loaded = load_schema(sdl, "k")
    assert len(loaded.warnings) == 1
    assert loaded.warnings[0].startswith(warning)


@pytest.mark.parametrize("sdl,reason", [
    pytest.param("type Query {\n  a: Int\n}\n\n\n\ntype B {\n  b: Nope\n}",
                 "line 8: Unknown type 'Nope'", id="unknown type on its line"),
    pytest.param("type Query {\n  a: Int @nope\n}", "line 2: Unknown directive '@nope'",
                 id="unknown directive on its line"),
    pytest.param("type Query { a: Int }\ntype Query { b: Int }",
                 "line 1: There can be only one type named 'Query'", id="type named twice"),
    pytest.param("interface N { id: ID }\ntype Query { a: Int }\n\n"
                 "type X implements N { a: Int }", "line 1: Interface field N.id expected "
                 "but X does not provide it", id="interface field missing, on its line"),
])
def test_truly_broken_sdl_is_an_error_naming_its_line(sdl, reason):
    with pytest.raises(ConfigError) as raised:
        load_schema(sdl, "mocks[0].graphql.schema")
    assert raised.value.path == "mocks[0].graphql.schema"
    assert reason in str(raised.value)


def test_loaded_schemas_are_cached_by_text():
    assert load_schema(SHOP, "a") is load_schema(SHOP, "b")


# ---------------------------------------------------------------- introspection JSON


def _introspection(sdl: str = SHOP) -> dict[str, Any]:
    return introspection_from_schema(build_schema(sdl))


@pytest.mark.parametrize("wrap", [
    pytest.param(lambda value: value, id="bare __schema"),
    pytest.param(lambda value: {"data": value}, id="with its data wrapper"),
])
def test_introspection_json_loads_as_the_same_schema(wrap):
    loaded = load_schema(json.dumps(wrap(_introspection()), indent=2), "k")
    assert loaded.form == "introspection JSON"
    assert print_schema(loaded.schema) == print_schema(build_schema(SHOP))


def test_duplicate_fields_in_introspection_json_keep_the_first():
    value = _introspection("type Query { a: Int b: String }")
    query = next(kind for kind in value["__schema"]["types"] if kind["name"] == "Query")
    first = query["fields"][0]
    query["fields"].append({**first, "type": {"kind": "SCALAR", "name": "String",
                                              "ofType": None}})
    loaded = load_schema(json.dumps(value), "k")
    assert str(loaded.schema.query_type.fields["a"].type) == "Int"
    assert loaded.warnings == ("declared more than once, the first declaration kept: Query.a",)


@pytest.mark.parametrize("text,reason", [
    pytest.param('{\n  "__schema": {\n    "types": [,]\n  }\n}', "line 3: the schema starts "
                 "with '{' but is not valid JSON", id="not JSON, with its line"),
    pytest.param('{"data": {"user": {"id": 1}}}', "introspection JSON must hold a __schema",
                 id="JSON without __schema"),
    pytest.param('{"__schema": {"types": []}}', "Query root type must be provided",
                 id="__schema without a query type"),
    pytest.param('{"__schema": {"queryType": {"name": "Query"}, "types": [{"kind": "OBJECT", '
                 '"name": "Query", "interfaces": [], "fields": [{"name": "a", "args": [], '
                 '"type": {"kind": "SCALAR", "name": "Nope"}}]}]}}',
                 "the introspection JSON does not describe a schema", id="unknown type"),
])
def test_bad_introspection_json_is_an_error_saying_what_to_give(text, reason):
    with pytest.raises(ConfigError) as raised:
        load_schema(text, "mocks[0].graphql.schemaFile")
    assert raised.value.path == "mocks[0].graphql.schemaFile"
    assert reason in str(raised.value)


def test_schema_file_may_hold_introspection_json(tmp_path):
    (tmp_path / "schema.json").write_text(json.dumps({"data": _introspection()}))
    mock = {"id": "g", "type": "graphql", "graphql": {"path": "/graphql",
                                                      "schemaFile": "schema.json"}}
    snapshot = compile_snapshot(validate_config(make_config(mock)), tmp_path,
                                body_file_roots=(tmp_path,))
    assert "Product" in snapshot.routes["/graphql"].action.executor.schema.type_map


# ---------------------------------------------------------------- federation


def test_federation_2_subgraph_loads_with_its_imported_and_renamed_directives():
    loaded = load_schema(SUBGRAPH, "k")
    assert loaded.warnings == ()
    assert loaded.federation is not None
    assert loaded.federation.entities == ("Product", "Review", "User", "Media")
    schema = loaded.schema
    for name in ("key", "primaryKey", "shareable", "external", "requires", "provides", "tag",
                 "federation__tag", "override", "inaccessible", "composeDirective",
                 "interfaceObject", "link", "audited"):
        assert schema.get_directive(name) is not None, name
    for name in ("FieldSet", "link__Import", "link__Purpose", "_Any", "_Service", "_Entity"):
        assert name in schema.type_map, name
    query = schema.query_type
    assert str(query.fields["_service"].type) == "_Service!"
    assert str(query.fields["_entities"].type) == "[_Entity]!"


def test_federation_1_subgraph_extending_types_it_does_not_own_loads():
    sdl = ('extend type Query { topProducts: [Product] }\n'
           'type Product @key(fields: "upc") { upc: String! name: String }\n'
           'extend type User @key(fields: "id") { id: ID! @external reviews: [Product] }')
    loaded = load_schema(sdl, "k")
    assert loaded.federation.entities == ("Product", "User")
    assert isinstance(loaded.schema.type_map["User"], GraphQLObjectType)
    assert set(loaded.schema.query_type.fields) == {"topProducts", "_service", "_entities"}


def test_a_schema_without_federation_gets_nothing_added():
    loaded = load_schema(SHOP, "k")
    assert loaded.federation is None
    assert "_service" not in loaded.schema.query_type.fields


def _action(**graphql: Any) -> Any:
    mock = {"id": "g", "type": "graphql", "graphql": {"path": "/graphql", **graphql}}
    return compile_snapshot(validate_config(make_config(mock)), ".",
                            body_file_roots=()).routes["/graphql"].action


async def _post(action: Any, query: str, variables: Any = None,
                accept: str = "application/json") -> tuple[int, dict[bytes, bytes], bytes]:
    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    request = MockRequest("POST", "/graphql", body=orjson.dumps(
        {"query": query, "variables": variables}), header_pairs=[
        ("content-type", "application/json"), ("accept", accept)])
    status = await action.respond(request, {}, TemplateState(), send)
    body = b"".join(message.get("body", b"") for message in sent
                    if message["type"] == "http.response.body")
    return status, dict(sent[0]["headers"]), body


async def test_subgraph_answers_its_sdl_as_written_and_its_entities():
    action = _action(schema=SUBGRAPH, resolvers={"Review.body": {"response": "Great"}})
    status, _, body = await _post(action, "{ _service { sdl } }")
    assert status == 200 and orjson.loads(body) == {"data": {"_service": {"sdl": SUBGRAPH}}}
    query = ("query($r: [_Any!]!) { _entities(representations: $r) { __typename "
             "... on Product { upc } ... on Review { id body rating } } }")
    status, _, body = await _post(action, query, {"r": [
        {"__typename": "Product", "upc": "p-1"}, {"__typename": "Review", "id": "r-9"}]})
    entities = orjson.loads(body)["data"]["_entities"]
    assert status == 200
    assert entities[0] == {"__typename": "Product", "upc": "p-1"}
    assert entities[1]["__typename"] == "Review" and entities[1]["id"] == "r-9"
    assert entities[1]["body"] == "Great" and isinstance(entities[1]["rating"], int)


# ---------------------------------------------------------------- @defer and @stream

DEFER_SDL = """
directive @defer(label: String, if: Boolean! = true) on FRAGMENT_SPREAD | INLINE_FRAGMENT
directive @stream(label: String, if: Boolean! = true, initialCount: Int = 0) on FIELD
type User { id: ID! name: String! friends: [User!]! }
type Query { me: User! hello: String! }
type Mutation { rename(name: String!): User! }
"""


@pytest.mark.parametrize("query", [
    pytest.param('mutation { rename(name: "Ann") { name } }', id="mutation"),
    pytest.param("{ me { ...U } } fragment U on User { id name }", id="fragment"),
    pytest.param("{ __schema { directives { name } } }", id="introspection"),
    pytest.param("{ hello ... @defer { me { id } } }", id="deferred fragment, JSON client"),
    pytest.param("{ me { friends @stream(initialCount: 1) { id } } }",
                 id="streamed list, JSON client"),
])
async def test_schema_declaring_defer_answers_every_operation_in_one_json(query):
    action = _action(schema=DEFER_SDL, introspection=True,
                     resolvers={"Mutation.rename": {"response": {"name": "{{args.name}}"}}})
    status, headers, body = await _post(action, query)
    assert status == 200, body
    assert headers[b"content-type"] == b"application/json"
    answer = orjson.loads(body)
    assert "errors" not in answer and answer["data"]


async def test_deferred_fragment_is_answered_incrementally_to_a_multipart_client():
    action = _action(schema=DEFER_SDL, resolvers={"Query.hello": {"response": "hi"},
                                                   "Query.me": {"response": {"id": "1"}}})
    status, headers, body = await _post(action, "{ hello ... @defer { me { id } } }",
                                        accept="multipart/mixed, application/json")
    assert status == 200
    assert headers[b"content-type"] == b'multipart/mixed; boundary="-"'
    assert body.startswith(b"\r\n---\r\n") and body.endswith(b"\r\n-----\r\n")
    parts = [orjson.loads(part.split(b"\r\n\r\n", 1)[1])
             for part in body[:-len(b"\r\n-----\r\n")].split(b"\r\n---\r\n")[1:]]
    assert parts == [
        {"data": {"hello": "hi"}, "pending": [{"id": "0", "path": []}], "hasNext": True},
        {"incremental": [{"data": {"me": {"id": "1"}}, "id": "0"}], "completed": [{"id": "0"}],
         "hasNext": False}]


# ---------------------------------------------------------------- introspection memo


async def test_introspection_is_computed_once_per_query_and_variables(monkeypatch):
    computed: list[Any] = []
    compute = schema_module.IntrospectionMemo.compute

    def spy(self, document, operation_name, variables):
        computed.append(variables)
        return compute(self, document, operation_name, variables)

    monkeypatch.setattr(schema_module.IntrospectionMemo, "compute", spy)
    action = _action(schema=SHOP + "\n# memo test", introspection=True)
    query = "query T($n: String!) { __type(name: $n) { name fields { name } } }"
    answers = [await _post(action, query, {"n": name}) for name in ("User", "User", "Order")]
    assert computed == [{"n": "User"}, {"n": "Order"}]
    assert answers[0] == answers[1]
    assert orjson.loads(answers[2][2])["data"]["__type"]["name"] == "Order"


async def test_concurrent_first_introspections_share_one_computation(monkeypatch):
    import asyncio

    computed: list[str] = []
    compute = schema_module.IntrospectionMemo.compute

    def spy(self, document, operation_name, variables):
        import threading

        computed.append(threading.current_thread().name)
        return compute(self, document, operation_name, variables)

    monkeypatch.setattr(schema_module.IntrospectionMemo, "compute", spy)
    action = _action(schema=SHOP + "\n# concurrency test", introspection=True)
    answers = await asyncio.gather(*(_post(action, "{ __schema { types { name } } }")
                                     for _ in range(5)))
    assert len(computed) == 1 and computed[0].startswith("mockd-graphql-prepare")
    assert len({answer[2] for answer in answers}) == 1
