"""GraphQL mock configs: every bad input is a config error naming its key (and the SDL
line); accepted shapes (variants as a list or under ``variants``, durations, table
resolvers); fake values by type and name, seeded; argument matching; the document cache."""
from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from graphql import build_schema

from mocks.core.errors import ConfigError
from mocks.engine.snapshot import compile_snapshot
from mocks.loader import validate_config
from mocks.protocols.graphql.executor import DocumentCache, args_match
from mocks.protocols.graphql.fake import fake_value
from tests.helpers import make_config

SDL = "type User { id: ID!, name: String }\ntype Query { user(id: ID!): User, hi: String }\n" \
      "type Subscription { ping: Int }"


def _mock(**graphql: Any) -> dict[str, Any]:
    block = {"path": "/graphql", "schema": SDL, **graphql}
    return {"id": "g", "type": "graphql", "graphql": block}


def _compile(*mocks: dict[str, Any], base_dir: Path | str = ".", roots=(), **extra: Any):
    return compile_snapshot(validate_config(make_config(*mocks, **extra)), base_dir,
                            body_file_roots=roots)


def _error(*mocks: dict[str, Any], **extra: Any) -> ConfigError:
    with pytest.raises(ConfigError) as raised:
        _compile(*mocks, **extra)
    return raised.value


@pytest.mark.parametrize("sdl,reason", [
    pytest.param("type Query {\n  a: String\n  b: }", "line 3: Syntax Error: Expected Name",
                 id="syntax error with its line"),
    pytest.param("type Query {\n  a: Nope\n}", "line 2: Unknown type 'Nope'",
                 id="unknown type"),
    pytest.param("type User { a: Int }", "Query root type must be provided", id="no Query"),
    pytest.param("interface N { id: ID }\ntype Query { a: Int }\ntype X implements N { a: Int }",
                 "X does not provide it", id="interface not implemented"),
])
def test_sdl_that_does_not_build_names_the_key_and_line(sdl, reason):
    error = _error(_mock(schema=sdl))
    assert error.path == "mocks[0].graphql.schema"
    assert reason in str(error)


@pytest.mark.parametrize("graphql,key,reason", [
    pytest.param({"resolvers": {"Query.nope": {"response": 1}}},
                 "mocks[0].graphql.resolvers.Query.nope", "type Query has no field 'nope'",
                 id="unknown field"),
    pytest.param({"resolvers": {"Nope.x": {"response": 1}}},
                 "mocks[0].graphql.resolvers.Nope.x", "no object type 'Nope'",
                 id="unknown type"),
    pytest.param({"resolvers": {"Query.hi": {"response": "{{nope}}"}}},
                 "mocks[0].graphql.resolvers.Query.hi.response", "unknown template",
                 id="bad template"),
    pytest.param({"resolvers": {"Query.hi": [{"match": {"args": {}}},
                                             {"error": {"message": "{{bad.x}}"}}]}},
                 "mocks[0].graphql.resolvers.Query.hi.variants[1].error.message",
                 "unknown template", id="bad error template in a variant"),
    pytest.param({"subscriptions": {"pong": {"events": [{"data": 1}]}}},
                 "mocks[0].graphql.subscriptions.pong", "has no field 'pong'",
                 id="unknown subscription field"),
    pytest.param({"subscriptions": {"ping": {"events": [{"data": {"a": "{{x.y}}"}}]}}},
                 "mocks[0].graphql.subscriptions.ping.events[0].data.a", "unknown template",
                 id="bad event template"),
])
def test_resolvers_and_subscriptions_are_checked_against_the_schema(graphql, key, reason):
    error = _error(_mock(**graphql))
    assert error.path == key and reason in str(error)


@pytest.mark.parametrize("graphql,key,reason", [
    pytest.param({"schema": None}, "mocks[0].graphql", "exactly one", id="no schema"),
    pytest.param({"schemaFile": "s.graphql"}, "mocks[0].graphql", "exactly one",
                 id="schema and schemaFile"),
    pytest.param({"path": "graphql"}, "mocks[0].graphql.path", "must start with '/'",
                 id="relative path"),
    pytest.param({"resolvers": {"hi": {"response": 1}}}, "mocks[0].graphql.resolvers",
                 "must be '<Type>.<field>'", id="resolver key without a type"),
    pytest.param({"resolvers": {"Query.hi": {"delay": "soon"}}},
                 "mocks[0].graphql.resolvers.Query.hi.delay", "duration", id="bad delay"),
    pytest.param({"resolvers": {"Query.hi": {"table": "t"}}},
                 "mocks[0].graphql.resolvers.Query.hi", "needs action", id="table no action"),
    pytest.param({"subscriptions": {"ping": {"timing": {"randomDelay": "5s-1s"}}}},
                 "mocks[0].graphql.subscriptions.ping.timing.randomDelay", "low to high",
                 id="bad random delay"),
    pytest.param({"resolvers": {"Query.hi": {"respnse": 1}}},
                 "mocks[0].graphql.resolvers.Query.hi.respnse", "", id="unknown key"),
])
def test_bad_blocks_are_config_errors_naming_the_key(graphql, key, reason):
    block = _mock(**graphql)
    if block["graphql"].get("schema") is None and "schemaFile" not in block["graphql"]:
        block["graphql"].pop("schema")
    with pytest.raises(ConfigError) as raised:
        validate_config(make_config(block))
    assert raised.value.path == key and reason in str(raised.value)


def test_schema_file_is_read_from_the_config_folder_and_confined(tmp_path):
    (tmp_path / "api.graphql").write_text(SDL)
    block = _mock(schemaFile="api.graphql")
    del block["graphql"]["schema"]
    snapshot = _compile(block, base_dir=tmp_path, roots=(tmp_path,))
    assert "/graphql" in snapshot.routes and "/graphql" in snapshot.websocket_routes
    outside = _mock(schemaFile="../elsewhere.graphql")
    del outside["graphql"]["schema"]
    error = _error(outside, base_dir=tmp_path, roots=(tmp_path,))
    assert error.path == "mocks[0].graphql.schemaFile" and "outside" in str(error)
    missing = _mock(schemaFile="missing.graphql")
    del missing["graphql"]["schema"]
    assert "file not found" in str(_error(missing, base_dir=tmp_path))


def test_schema_file_with_bad_sdl_names_the_schema_file_key(tmp_path):
    (tmp_path / "bad.graphql").write_text("type Query {\n  a: }")
    block = _mock(schemaFile="bad.graphql")
    del block["graphql"]["schema"]
    error = _error(block, base_dir=tmp_path)
    assert error.path == "mocks[0].graphql.schemaFile" and "line 2" in str(error)


def test_extend_binds_one_resolver_by_mock_field_reference():
    snapshot = _compile(_mock(), tables=[{"name": "users"}],
                        extend=[{"mock": "g.Query.user", "table": "users", "action": "get"}])
    assert not snapshot.compiled["g"].reusable
    error = _error(_mock(), tables=[{"name": "users"}],
                   extend=[{"mock": "g.Query.nope", "table": "users", "action": "get"}])
    assert error.path == "extend[0].mock" and "no field 'nope'" in str(error)
    whole = _error(_mock(), tables=[{"name": "users"}],
                   extend=[{"mock": "g", "table": "users", "action": "list"}])
    assert whole.path == "extend[0].mock" and "g.Query.<field>" in str(whole)


def test_variants_as_a_list_or_under_variants_are_the_same():
    as_list = validate_config(make_config(_mock(resolvers={"Query.hi": [
        {"match": {"args": {"a": 1}}, "response": "x"}]}))).mocks[0].graphql
    nested = validate_config(make_config(_mock(resolvers={"Query.hi": {"variants": [
        {"match": {"args": {"a": 1}}, "response": "x"}]}}))).mocks[0].graphql
    assert as_list.resolvers == nested.resolvers


def test_durations_are_stored_in_milliseconds():
    graphql = validate_config(make_config(_mock(
        resolvers={"Query.hi": {"delay": "1.5s"}},
        subscriptions={"ping": {"timing": {"fixedDelay": "2s",
                                           "randomDelay": "100ms-500ms"}}}))).mocks[0].graphql
    assert graphql.resolvers["Query.hi"].delay == 1500
    assert graphql.subscriptions["ping"].timing.fixed_delay == 2000
    assert graphql.subscriptions["ping"].timing.random_delay == (100, 500)


# ---------------------------------------------------------------- executor pieces


@pytest.mark.parametrize("expected,actual,fits", [
    pytest.param("5", 5, True, id="text fits number"),
    pytest.param(5, "5", True, id="number fits text"),
    pytest.param(True, "true", True, id="boolean as text"),
    pytest.param(1, True, False, id="one is not true"),
    pytest.param({"a": 1}, {"a": 1, "b": 2}, True, id="object subset"),
    pytest.param({"a": {"b": "x"}}, {"a": {"b": "y"}}, False, id="nested mismatch"),
    pytest.param([1, 2], [1, 2], True, id="list"),
    pytest.param([1, 2], [1], False, id="list length"),
])
def test_args_match(expected, actual, fits):
    assert args_match(expected, actual) is fits


def test_fake_values_are_seeded_and_typed():
    schema = build_schema("enum E { A B }\ntype T { e: E! n: Int }\n"
                          "type Query { t: [T!]! email: String }")
    field = schema.query_type.fields["t"]
    first = fake_value(field.type, "t", random.Random("7"), schema)
    assert first == fake_value(field.type, "t", random.Random("7"), schema)
    assert 2 <= len(first) <= 3 and first[0] == {}
    enum = schema.type_map["T"].fields["e"]
    assert fake_value(enum.type, "e", random.Random(1), schema) in ("A", "B")
    assert "@" in fake_value(schema.query_type.fields["email"].type, "email",
                             random.Random(1), schema)


def test_document_cache_parses_a_text_once_and_is_bounded():
    schema = build_schema(SDL)
    cache = DocumentCache(schema, introspection=False, size=2)
    first = cache.get("{ hi }")
    assert cache.get("{ hi }") is first and not first.errors
    cache.get("{ user(id: 1) { id } }")
    cache.get("query A { hi }")
    assert len(cache) == 2 and cache.get("{ hi }") is not first
    assert cache.get("{ __schema { types { name } } }").errors
    assert not DocumentCache(schema, introspection=True).get("{ __schema { types { name } } }"
                                                             ).errors


async def test_only_answers_that_depend_on_the_query_alone_are_remembered():
    import orjson

    from mocks.core.request import MockRequest
    from mocks.core.templating import TemplateState

    block = _mock(resolvers={"Query.hi": {"response": "hi {{args.x}}"},
                             "Query.user": {"response": {"id": "{{request.header.x-id}}"}}})
    block["graphql"]["schema"] = SDL.replace("hi: String", "hi(x: String): String")
    action = _compile(block).routes["/graphql"].action
    sent: list[dict] = []

    async def send(message):
        sent.append(message)

    async def ask(query: str, header: str = "1") -> Any:
        request = MockRequest("POST", "/graphql", header_pairs=[("x-id", header)],
                              body=orjson.dumps({"query": query}))
        await action.respond(request, {}, TemplateState(), send)
        return orjson.loads(sent[-1]["body"])

    assert await ask('{ hi(x: "a") }') == {"data": {"hi": "hi a"}}
    assert len(action.executor.memo) == 1  # arguments only: remembered
    assert await ask('{ user(id: "1") { id } }', "7") == {"data": {"user": {"id": "7"}}}
    assert await ask('{ user(id: "1") { id } }', "8") == {"data": {"user": {"id": "8"}}}
    first = await ask('{ user(id: "1") { name } }')
    assert len(action.executor.memo) == 1  # request headers and fake data: run every time
    assert first["data"]["user"]["name"]
