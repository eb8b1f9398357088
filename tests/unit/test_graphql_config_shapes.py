"""The GraphQL config shapes of behavior notes §10 ("Shapes inside those configs"): a
resolver with a ``match`` of its own answers only when it fits (else the field answers as if
the resolver were absent, table action included); a subscription event's ``data`` may be the
operation's data object ``{"<field>": value}``."""
from __future__ import annotations

from typing import Any

import orjson
import pytest

from mocks.core.request import MockRequest
from mocks.core.templating import RenderContext, TemplateState
from mocks.engine.core import Engine
from mocks.loader import validate_config
from mocks.protocols.graphql.config import Subscription
from mocks.protocols.graphql.subscriptions import CompiledSubscription
from tests.helpers import make_config

SDL = """
type User { id: ID! name: String! }
type Query { user(id: ID!): User, greeting(lang: String): String!, item(id: ID!): User }
type Subscription { ticks: Int!, user: User!, named: Named! }
type Named { ticks: Int, other: Int }
"""


def _action(resolvers: dict[str, Any], **extra: Any) -> Any:
    mock = {"id": "g", "type": "graphql",
            "graphql": {"path": "/graphql", "schema": SDL, "resolvers": resolvers}}
    engine = Engine()
    engine.load(validate_config(make_config(mock, **extra)))
    return engine.snapshot.routes["/graphql"].action


async def _data(action: Any, query: str) -> Any:
    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    request = MockRequest("POST", "/graphql", body=orjson.dumps({"query": query}),
                          header_pairs=[("content-type", "application/json")])
    status = await action.respond(request, {}, TemplateState(), send)
    answer = orjson.loads(sent[-1]["body"])
    assert status == 200, answer
    return answer["data"]


async def test_resolver_with_its_own_match_answers_only_the_matching_arguments():
    action = _action({"Query.user": {"match": {"args": {"id": "1"}},
                                     "response": {"id": "1", "name": "Ann"}}})
    assert await _data(action, '{ user(id: "1") { id name } }') == {
        "user": {"id": "1", "name": "Ann"}}
    other = (await _data(action, '{ user(id: "2") { id name } }'))["user"]
    assert other["name"] != "Ann" and other["id"] != "1"  # faked as without a resolver


async def test_own_match_is_tried_after_the_variants():
    action = _action({"Query.greeting": {
        "variants": [{"match": {"args": {"lang": "fr"}}, "response": "Bonjour"}],
        "match": {"args": {"lang": "en"}}, "response": "Hello"}})
    assert await _data(action, '{ a: greeting(lang: "fr") b: greeting(lang: "en") }') == {
        "a": "Bonjour", "b": "Hello"}
    faked = (await _data(action, '{ greeting(lang: "de") }'))["greeting"]
    assert faked not in ("Bonjour", "Hello")


async def test_own_match_gates_a_table_action_too():
    action = _action({"Query.item": {"match": {"args": {"id": "1"}}, "table": "items",
                                     "action": "get"}},
                     tables=[{"name": "items", "seedData": [{"id": "1", "name": "Pen"},
                                                            {"id": "2", "name": "Ink"}]}])
    assert await _data(action, '{ item(id: "1") { name } }') == {"item": {"name": "Pen"}}
    assert (await _data(action, '{ item(id: "2") { name } }'))["item"]["name"] != "Ink"


def _rendered(field: str, data: Any) -> Any:
    compiled = CompiledSubscription(Subscription.model_validate({"events": [{"data": data}]}),
                                    f"subscriptions.{field}", field)
    template, _ = compiled.events[0]
    return template.render(RenderContext(MockRequest("GET", "/graphql"), {}, None,
                                         TemplateState(), {}))


@pytest.mark.parametrize("field,data,value", [
    pytest.param("ticks", {"ticks": 1}, 1, id="data object of a scalar field"),
    pytest.param("ticks", 1, 1, id="the field's value itself"),
    pytest.param("user", {"user": {"id": "1", "name": "Ann"}}, {"id": "1", "name": "Ann"},
                 id="data object of an object field"),
    pytest.param("user", {"id": "1", "name": "Ann"}, {"id": "1", "name": "Ann"},
                 id="the object itself"),
    pytest.param("named", {"ticks": 1, "other": 2}, {"ticks": 1, "other": 2},
                 id="more keys than the field's name: the value itself"),
])
def test_subscription_event_data_may_be_the_operations_data_object(field, data, value):
    assert _rendered(field, data) == value
