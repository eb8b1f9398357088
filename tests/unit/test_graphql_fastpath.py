"""The lean query executor (``mocks.protocols.graphql.fastpath``) against graphql-core:
random queries over the 30-type shop schema (objects, lists, non-null, enums, custom
scalars, interfaces, unions, aliases, ``__typename``, arguments as literals and variables,
resolver variants, templates, errors, table reads) answer exactly what graphql-core's
``execute`` answers with the same resolvers and seed; the plan is used for the plain
queries and refuses the shapes it does not reproduce."""
from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from graphql import (GraphQLEnumType, GraphQLInputObjectType, GraphQLList, GraphQLNonNull,
                     GraphQLObjectType, GraphQLScalarType, execute, get_named_type, parse)

from mocks.core.templating import TemplateState
from mocks.protocols.graphql.executor import RunContext, result_document
from mocks.protocols.graphql.fastpath import Fallback, plan_query
from mocks.engine.core import Engine
from mocks.loader import validate_config
from tests.helpers import make_config, make_request

SDL = (Path(__file__).resolve().parents[1] / "fixtures" / "graphql" / "shop.graphql").read_text()

MOCK = {"id": "shop", "type": "graphql", "graphql": {
    "path": "/graphql", "schema": SDL, "introspection": True,
    "resolvers": {
        "Query.user": {"response": {"id": "{{args.id}}", "name": "Ann", "email": "a@x.org",
                                    "role": "EDITOR", "age": "41", "tags": ["a", "b"],
                                    "profile": {"bio": "{{request.header.x-team}}"}}},
        "Query.greeting": [
            {"match": {"args": {"lang": "fr"}}, "response": "Bonjour {{args.name}}"},
            {"response": "Hello {{args.name}} from {{request.header.x-team}}"}],
        "Query.order": {
            "variants": [{"match": {"args": {"id": "missing"}},
                          "error": {"message": "Order {{args.id}} not found",
                                    "extensions": {"code": "NOT_FOUND"}}}],
            "response": {"id": "{{args.id}}", "status": "PAID", "total": {"amount": 3,
                                                                          "currency": "EUR"}}},
        "Query.failing": {"error": {"message": "upstream down"}},
        "Query.stats": {"response": {"users": "not a number"}},
        "Query.items": {"table": "items", "action": "list"},
        "Query.item": {"table": "items", "action": "get"},
    }}}
TABLES = [{"name": "items", "seedData": [{"id": "1", "name": "Pen", "price": 1.5},
                                         {"id": "2", "name": "Ink", "price": 7}]}]
ARGUMENTS = {"user": ['id: "7"', "id: $id"], "order": ['id: "9"', 'id: "missing"'],
             "greeting": ['name: "Bo", lang: "fr"', 'name: "Bo"', "name: $name"],
             "item": ['id: "1"', 'id: "404"'], "items": ["", 'name: "Pen"'],
             "node": ['id: "1"'], "search": ['term: "x"'], "products": ["", 'category: "c"'],
             "users": ["", "first: 2"]}


def executor_of(mock: dict[str, Any]) -> Any:
    """The GraphQL executor of ``mock`` in an engine with :data:`TABLES`."""
    engine = Engine()
    engine.load(validate_config(make_config(mock, tables=TABLES)))
    return engine.snapshot.routes["/graphql"].action.executor


@pytest.fixture(scope="module")
def shop():
    return executor_of(MOCK)


def selection(kind: Any, rng: random.Random, depth: int, top: bool = False) -> str | None:
    """A random selection set of object type ``kind`` (None when nothing fits)."""
    fields = []
    names = list(kind.fields)
    if depth == 0:  # one to three root fields, often one with arguments
        names = rng.sample(names, rng.randint(1, 3))
        if top:
            names.append(rng.choice(sorted(ARGUMENTS)))
    for name in names:
        definition = kind.fields[name]
        if depth and rng.random() > 0.5:
            continue
        if not isinstance(get_named_type(definition.type), (
                GraphQLObjectType, GraphQLScalarType, GraphQLEnumType)) and rng.random() > 0.2:
            continue  # interfaces and unions now and then (graphql-core answers those)
        if any(isinstance(arg.type, GraphQLNonNull) and isinstance(
                get_named_type(arg.type), GraphQLInputObjectType)
               for arg in definition.args.values()):
            continue  # input objects are not generated here
        if name in ("slow", "createUser", "failing") and rng.random() < 0.7:
            continue
        arguments = ""
        if definition.args:
            choices = ARGUMENTS.get(name)
            if choices is None:
                if any(isinstance(arg.type, GraphQLNonNull) for arg in definition.args.values()):
                    continue
            else:
                chosen = rng.choice(choices)
                arguments = f"({chosen})" if chosen else ""
        named = get_named_type(definition.type)
        alias = f"a{rng.randrange(100)}: " if rng.random() < 0.15 else ""
        if isinstance(named, (GraphQLScalarType, GraphQLEnumType)):
            fields.append(f"{alias}{name}{arguments}")
        elif depth < 3:
            if isinstance(named, GraphQLObjectType):
                inner = selection(named, rng, depth + 1)
            else:  # interface or union: __typename and, for an interface, its fields
                inner = "__typename" + (" id" if "Node" in named.name else "")
            if inner:
                fields.append(f"{alias}{name}{arguments} {{ {inner} }}")
    if rng.random() < 0.2:
        fields.append("__typename")
    unique = []
    keys = set()
    for item in fields:
        key = item.split(":")[0] if ":" in item.split("(")[0] else item.split("(")[0].split()[0]
        if key not in keys:
            keys.add(key)
            unique.append(item)
    return " ".join(unique) or None


def run_both(executor: Any, text: str, variables: dict[str, Any] | None) -> tuple[Any, Any]:
    request = make_request("POST", "/graphql", headers={"X-Team": "blue"})
    prepared = executor.documents.get(text)
    assert not prepared.errors, (text, prepared.errors)
    lean = executor.execute(prepared.document, None, variables,
                            RunContext(request, 7, TemplateState()), prepared=prepared)
    core = execute(executor.schema, parse(text), context_value=RunContext(
        request, 7, TemplateState()), variable_values=variables,
        field_resolver=executor.resolve_field, type_resolver=executor.resolve_type)
    return prepared, (result_document(lean), result_document(core))


def test_random_queries_answer_what_graphql_core_answers(shop):
    rng = random.Random(20261126)
    planned = 0
    for number in range(300):
        body = selection(shop.schema.query_type, rng, 0, top=number % 3 == 0)
        if body is None:
            continue
        uses = [name for name in ("$id", "$name") if name in body]
        header = ", ".join(f"{name}: {'ID!' if name == '$id' else 'String'}" for name in uses)
        text = f"query Q{f'({header})' if header else ''} {{ {body} }}"
        variables = {"id": "v7", "name": "Vee"} if uses else None
        if variables and rng.random() < 0.5:
            variables = {key: value for key, value in variables.items() if f"${key}" in body}
        prepared, (lean, core) = run_both(shop, text, variables)
        assert lean == core, text
        plan = prepared.plans.get(None)
        if plan is not None:
            try:  # the plan alone, without the fallback around it
                alone = plan.run(shop.resolve_field, RunContext(
                    make_request("POST", "/graphql", headers={"X-Team": "blue"}), 7,
                    TemplateState()), variables)
            except Fallback:
                continue
            assert result_document(alone) == core, text
            planned += 1
    assert planned >= 100  # the plan itself answered most of the queries


@pytest.mark.parametrize(("text", "expected"), [
    ('{ user(id: "1") { id name } }', True),
    ('query Q($id: ID!) { user(id: $id) { first: name, second: name, __typename } }', True),
    ('{ search(term: "x") { __typename } }', False),           # a union
    ('{ node(id: "1") { id } }', False),                        # an interface
    ('{ user(id: "1") { ...F } } fragment F on User { id }', False),
    ('{ user(id: "1") @include(if: true) { id } }', False),
    ('{ a: me { id } a: me { name } }', False),                 # one key, two fields
    ('mutation { deleteItem(id: "1") }', False),
    ('{ __schema { queryType { name } } }', False),
])
def test_plan_covers_plain_queries_only(shop, text, expected):
    document = parse(text)
    operation = next(definition for definition in document.definitions
                     if definition.__class__.__name__ == "OperationDefinitionNode")
    assert (plan_query(shop.schema, operation, shop.field_allowed,
                       shop.has_resolver) is not None) is expected


def test_fallback_keeps_graphql_core_errors_and_null_propagation(shop):
    for text in ('{ order(id: "missing") { id } failing }',
                 '{ stats { users } }',                             # Int.serialize fails
                 '{ item(id: "404") { id name } }',                 # table error
                 'query Q($id: ID!) { user(id: $id) { id } }'):     # a missing variable
        prepared, (lean, core) = run_both(shop, text, None)
        assert lean == core and lean.get("errors"), text
    _, (lean, _) = run_both(shop, '{ user(id: "3") { id age role tags profile { bio } } '
                                  'greeting(name: "Al") }', None)
    assert lean == {"data": {"user": {"id": "3", "age": 41, "role": "EDITOR",
                                      "tags": ["a", "b"], "profile": {"bio": "blue"}},
                             "greeting": "Hello Al from blue"}}


def test_a_delayed_or_writing_resolver_is_not_planned(shop):
    executor = executor_of({"id": "g", "type": "graphql", "graphql": {
        "path": "/graphql", "schema": SDL, "resolvers": {
            "Query.slow": {"response": "done", "delay": "10ms"},
            "Mutation.createItem": {"table": "items", "action": "create"},
            "Query.items": {"table": "items", "action": "list"}}}})
    assert not executor.field_allowed("Query", "slow")
    assert not executor.field_allowed("Mutation", "createItem")
    assert executor.field_allowed("Query", "items") and executor.field_allowed("Query", "me")
