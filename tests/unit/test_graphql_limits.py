"""GraphQL cost limits: depth counted through fragment spreads and inline fragments, the
complexity estimate with fragments expanded (linear to compute, saturating), aliases
through fragments, the refusals a request gets (400, the standard error shape, naming the
config key), the ``limits`` config and its errors, introspection within the defaults, the
time budget of execution and long texts prepared off the event loop."""
from __future__ import annotations

import threading
import time
from typing import Any

import orjson
import pytest
from graphql import build_schema, get_introspection_query, parse

from mocks.core.errors import ConfigError
from mocks.core.request import MockRequest
from mocks.core.templating import TemplateState
from mocks.engine.snapshot import compile_snapshot
from mocks.loader import validate_config
from mocks.protocols.graphql import executor as executor_module
from mocks.protocols.graphql.config import QueryLimits
from mocks.protocols.graphql.executor import DocumentCache
from mocks.protocols.graphql.limits import (LIST_ESTIMATE, MAX_NESTING, SATURATION, QueryCost,
                                            measure_document)
from tests.helpers import make_config

SDL = """
type User { id: ID! name: String! friends: [User!]! best: User grid: [[Int]] }
type Category { id: ID! name: String parent: Category }
union Result = User | Category
type Query { me: User! hello: String category: Category search: [Result!]! }
type Subscription { joined: User! }
"""
SCHEMA = build_schema(SDL)


def fragment_bomb(levels: int = 7, width: int = 3) -> str:
    """``levels`` nested fragments, each selecting the next one under ``width`` aliases of
    a list field: about 500 bytes that expand to (``width`` x list size) ** ``levels``."""
    fragments = [f"fragment F{level} on User {{ "
                 + " ".join(f"a{index}: friends {{ ...F{level + 1} }}" for index in range(width))
                 + " }" for level in range(1, levels)]
    fragments.append(f"fragment F{levels} on User {{ name }}")
    return "{ me { ...F1 } } " + " ".join(fragments)


def fragment_chain(length: int, field: str = "friends") -> str:
    """``length`` fragments, each nesting the next one one field deeper."""
    fragments = [f"fragment F{index} on User {{ {field} {{ ...F{index + 1} }} }}"
                 for index in range(1, length)]
    fragments.append(f"fragment F{length} on User {{ name }}")
    return "{ me { ...F1 } } " + " ".join(fragments)


def _cost(query: str) -> QueryCost:
    (cost,) = measure_document(SCHEMA, parse(query)).values()
    return cost


def _errors(query: str, **limits: Any) -> list[Any]:
    cache = DocumentCache(SCHEMA, introspection=True,
                          limits=QueryLimits.model_validate(limits))
    return list(cache.get(query).errors)


# ---------------------------------------------------------------- measuring


@pytest.mark.parametrize("query,depth", [
    pytest.param("{ hello }", 1, id="one field"),
    pytest.param("{ me { name } }", 2, id="nested field"),
    pytest.param("{ me { ...U } } fragment U on User { best { name } }", 3,
                 id="fragment spread adds its fields, no level of its own"),
    pytest.param("{ me { ... on User { best { ... { name } } } } }", 3,
                 id="inline fragments add no level"),
    pytest.param("{ me { ...A } } fragment A on User { best { ...B } } "
                 "fragment B on User { best { ...C } } fragment C on User { best { id } }", 5,
                 id="spreads of spreads"),
    pytest.param("{ me { ...A best { best { best { id } } } } } fragment A on User { id }", 5,
                 id="deepest path wins"),
])
def test_depth_is_counted_through_fragments(query, depth):
    assert _cost(query).depth == depth


@pytest.mark.parametrize("query,complexity", [
    pytest.param("{ hello }", 1, id="one field"),
    pytest.param("{ me { id name } }", 3, id="object"),
    pytest.param("{ me { friends { id name } } }", 2 + LIST_ESTIMATE * 2,
                 id="list counted as LIST_ESTIMATE items"),
    pytest.param("{ me { grid } }", 2, id="leaf list counts one field"),
    pytest.param("{ me { friends { friends { id } } } }",
                 2 + LIST_ESTIMATE * (1 + LIST_ESTIMATE), id="nested lists multiply"),
    pytest.param("{ me { ...U ...U } } fragment U on User { id name }", 1 + 2 * 2,
                 id="each spread counts its fragment"),
    pytest.param("{ search { ... on User { id name } ... on Category { id } } }",
                 1 + LIST_ESTIMATE * 3, id="every branch of a union counts"),
    pytest.param("{ __schema { types { name } } }", 2 + LIST_ESTIMATE,
                 id="introspection fields have their types"),
    pytest.param("{ nope { a b } }", 3, id="unknown field counted as an object"),
])
def test_complexity_expands_fragments_and_counts_lists(query, complexity):
    assert _cost(query).complexity == complexity


def test_aliases_are_counted_with_fragments_expanded():
    query = ("{ me { a: best { ...U } b: best { ...U } friends { ...U } best { ...U } } } "
             "fragment U on User { x: id y: name z: id }")
    assert _cost(query).aliases == 2 + 4 * 3


def test_seven_level_fragment_bomb_is_measured_at_its_expanded_size():
    query = fragment_bomb(7, 3)
    assert len(query) < 600
    cost = _cost(query)
    assert cost.depth == 8
    assert cost.complexity > 500_000  # about (3 aliases x 3 items) ** 6
    assert cost.aliases == sum(3 ** level for level in range(1, 7))


def test_measuring_is_linear_and_saturates():
    query = fragment_bomb(60, 10)
    started = time.perf_counter()
    cost = _cost(query)
    elapsed = time.perf_counter() - started
    assert cost.complexity == SATURATION and cost.aliases == SATURATION
    assert elapsed < 1.0, elapsed  # about a millisecond; wide for a loaded machine


def test_fragment_cycle_is_left_to_validation():
    query = "{ me { ...A } } fragment A on User { best { ...B } } " \
            "fragment B on User { best { ...A } }"
    assert _cost(query).depth == 3
    errors = _errors(query)
    assert len(errors) == 1 and "Cannot spread fragment 'A' within itself" in errors[0].message


def test_spreads_nested_past_the_walk_bound_count_as_too_deep():
    fragments = " ".join(f"fragment F{index} on User {{ ...F{index + 1} }}"
                         for index in range(1, 400))
    query = "{ me { ...F1 } } " + fragments + " fragment F400 on User { id }"
    assert _cost(query).depth == MAX_NESTING + 1
    (error,) = _errors(query)
    assert "more than 250 levels deep" in error.message and "maxDepth" in error.message


# ---------------------------------------------------------------- refusing


def test_chain_of_sixty_fragments_goes_over_the_default_depth():
    errors = _errors(fragment_chain(60, "best"))
    assert len(errors) == 1
    error = errors[0]
    assert error.message.startswith("The query nests fields 61 levels deep (fragments "
                                    "included); this mock answers at most 32.")
    assert "graphql.limits.maxDepth" in error.message
    assert error.extensions == {"code": "QUERY_TOO_COMPLEX", "limit": "maxDepth", "max": 32,
                                "actual": 61}
    assert not _errors(fragment_chain(60, "best"), maxDepth=61)


def test_fragment_bomb_goes_over_complexity_and_aliases():
    started = time.perf_counter()
    errors = _errors(fragment_bomb(7, 3))
    assert time.perf_counter() - started < 1.0
    assert [error.extensions["limit"] for error in errors] == ["maxComplexity", "maxAliases"]
    assert "graphql.limits.maxComplexity" in errors[0].message
    assert "uses 1,092 aliases (fragments expanded); this mock answers at most 200" in \
        errors[1].message


def test_eleven_levels_of_plain_nesting_go_over_complexity():
    query = "{ me " + "{ friends " * 11 + "{ name }" + " }" * 11 + " }"
    (error,) = _errors(query)
    assert error.extensions["limit"] == "maxComplexity"


@pytest.mark.parametrize("count,refused", [(200, False), (201, True)])
def test_aliases_up_to_the_default_are_answered(count, refused):
    query = "{ " + " ".join(f"a{index}: hello" for index in range(count)) + " }"
    errors = _errors(query)
    assert bool(errors) == refused
    if refused:
        assert errors[0].extensions["limit"] == "maxAliases"


def test_limits_are_checked_per_operation_and_name_it():
    query = "query Small { hello } query Big { " + \
            " ".join(f"a{index}: hello" for index in range(5)) + " }"
    (error,) = _errors(query, maxAliases=4)
    assert error.message.startswith("Operation 'Big' uses 5 aliases")


def test_limits_apply_before_validation():
    # Unknown fields would fail validation; the limit answers first.
    (error,) = _errors("{ nope " + "{ nope " * 40 + "}" * 41)
    assert error.extensions["limit"] == "maxDepth"


@pytest.mark.parametrize("options", [
    pytest.param({"descriptions": True}, id="descriptions"),
    pytest.param({"descriptions": True, "specified_by_url": True,
                  "directive_is_repeatable": True, "schema_description": True,
                  "input_value_deprecation": True, "one_of": True}, id="every option"),
])
def test_standard_introspection_query_passes_the_defaults(options):
    query = get_introspection_query(**options)
    assert _cost(query).depth >= 14  # the TypeRef fragment nests ofType nine times
    assert not _errors(query)


# ---------------------------------------------------------------- config


def _mock(**graphql: Any) -> dict[str, Any]:
    return {"id": "g", "type": "graphql",
            "graphql": {"path": "/graphql", "schema": SDL, **graphql}}


def test_limits_default_and_configured_values():
    default = validate_config(make_config(_mock())).mocks[0].graphql.limits
    assert (default.max_depth, default.max_complexity, default.max_aliases,
            default.timeout_ms) == (32, 10_000, 200, 1000)
    limits = validate_config(make_config(_mock(limits={
        "maxDepth": 50, "maxComplexity": 50_000, "maxAliases": 0, "timeoutMs": "2s"})
    )).mocks[0].graphql.limits
    assert (limits.max_depth, limits.max_complexity, limits.max_aliases,
            limits.timeout_ms) == (50, 50_000, 0, 2000)


@pytest.mark.parametrize("limits,key", [
    pytest.param({"maxDepth": 0}, "maxDepth", id="depth zero"),
    pytest.param({"maxDepth": 101}, "maxDepth", id="depth past the recursion bound"),
    pytest.param({"maxDepth": "deep"}, "maxDepth", id="depth not a number"),
    pytest.param({"maxComplexity": 0}, "maxComplexity", id="complexity zero"),
    pytest.param({"maxAliases": -1}, "maxAliases", id="negative aliases"),
    pytest.param({"timeoutMs": 0}, "timeoutMs", id="timeout zero"),
    pytest.param({"timeoutMs": "soon"}, "timeoutMs", id="timeout not a duration"),
    pytest.param({"maxDeep": 3}, "maxDeep", id="unknown key"),
])
def test_bad_limits_are_config_errors_naming_the_key(limits, key):
    with pytest.raises(ConfigError) as raised:
        validate_config(make_config(_mock(limits=limits)))
    assert raised.value.path == f"mocks[0].graphql.limits.{key}"


# ---------------------------------------------------------------- serving


def _action(**graphql: Any) -> Any:
    snapshot = compile_snapshot(validate_config(make_config(_mock(**graphql))), ".",
                                body_file_roots=())
    return snapshot.routes["/graphql"].action


async def _ask(action: Any, query: str, method: str = "POST") -> tuple[int, Any, float]:
    sent: list[dict] = []

    async def send(message):
        sent.append(message)

    if method == "GET":
        from urllib.parse import urlencode

        request = MockRequest("GET", "/graphql", urlencode({"query": query}))
    else:
        request = MockRequest("POST", "/graphql", body=orjson.dumps({"query": query}))
    started = time.perf_counter()
    status = await action.respond(request, {}, TemplateState(), send)
    return status, orjson.loads(sent[-1]["body"]), time.perf_counter() - started


async def test_fragment_bomb_by_get_is_refused_at_once_in_the_standard_shape():
    status, body, elapsed = await _ask(_action(), fragment_bomb(7, 3), "GET")
    assert status == 400
    assert set(body) == {"errors"}
    assert body["errors"][0]["extensions"]["code"] == "QUERY_TOO_COMPLEX"
    assert "graphql.limits.maxComplexity" in body["errors"][0]["message"]
    assert elapsed < 1.0, elapsed


async def test_time_budget_stops_an_expensive_execution():
    action = _action(limits={"maxComplexity": 10 ** 12, "maxAliases": 10 ** 6,
                             "timeoutMs": 100})
    status, body, elapsed = await _ask(action, fragment_bomb(7, 3))
    assert status == 400
    assert body == {"errors": [{
        "message": "The query exceeded its time budget of 100 ms and was stopped. Simplify "
                   "the query, or raise graphql.limits.timeoutMs in the mock's config.",
        "extensions": {"code": "QUERY_TIMEOUT", "limit": "timeoutMs", "max": 100}}]}
    # Unbounded it runs for seconds; stopped, about 100 ms (wide for a loaded machine).
    assert elapsed < 2.0, elapsed
    assert not action.executor.memo


async def test_time_spent_waiting_for_a_delay_is_not_counted():
    action = _action(resolvers={"Query.hello": {"response": "hi", "delay": "150ms"}},
                     limits={"timeoutMs": 50})
    status, body, _ = await _ask(action, "{ hello me { name } }")
    assert status == 200 and body["data"]["hello"] == "hi"


async def test_a_cheap_query_is_answered_with_the_budget_in_place():
    status, body, _ = await _ask(_action(), "{ me { id friends { name } } }")
    assert status == 200 and len(body["data"]["me"]["friends"]) in (2, 3)


async def test_long_texts_are_prepared_on_a_worker_thread(monkeypatch):
    threads: list[str] = []
    prepare = DocumentCache._prepare

    def spy(self, text):
        threads.append(threading.current_thread().name)
        return prepare(self, text)

    monkeypatch.setattr(DocumentCache, "_prepare", spy)
    cache = DocumentCache(SCHEMA, introspection=False)
    short = "{ me { id } }"
    long = "{ me { " + " ".join(f"f{index}: name" for index in range(150)) + " } }"
    assert len(long) > executor_module.INLINE_PREPARE_LENGTH
    assert not (await cache.prepare(short)).errors
    assert not (await cache.prepare(long)).errors
    assert threads == [threading.current_thread().name, threads[1]]
    assert threads[1].startswith("mockd-graphql-prepare")
    assert await cache.prepare(long) is cache.get(long)  # cached: no second preparation
    assert len(threads) == 2
