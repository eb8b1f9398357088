"""Apollo Federation subgraphs: the definitions a subgraph's SDL uses without declaring, and
the two fields a gateway (router) asks of every subgraph.

A subgraph's SDL uses the federation directives (``@key``, ``@shareable``, ``@external``,
``@requires``, ``@provides``, ``@tag``, ``@override``, ``@inaccessible``,
``@composeDirective``, ``@interfaceObject``, ``@extends``, ``@authenticated``,
``@requiresScopes``, ``@policy``, ``@context``, ``@fromContext``, ``@cost``, ``@listSize``)
and ``extend schema @link(url: "https://specs.apollo.dev/federation/v2.x", import: [...])``
without declaring them: the subgraph library adds them. :func:`add_federation` does the
same for a document that uses one of them (or declares ``_Service``):

* each such directive used but not declared is declared (under the name used: imported
  ``@key``, renamed by ``import: [{name: "@key", as: "@primaryKey"}]``, or namespaced
  ``@federation__key`` / ``@<as>__key``), with the types its arguments need (``FieldSet``,
  ``link__Import``, ``link__Purpose``, ``federation__Scope``, ``federation__Policy``,
  ``federation__ContextFieldValue``);
* an ``extend type X`` (or ``extend interface X``) of a type the subgraph does not define
  becomes its definition (Federation 1 subgraphs extend types owned elsewhere);
* ``scalar _Any``, ``type _Service { sdl: String }``, ``union _Entity`` of the object types
  with ``@key``, and on the query type ``_service: _Service!`` and, when there are entities,
  ``_entities(representations: [_Any!]!): [_Entity]!``.

Answers (:func:`builtin_answers`): ``_service { sdl }`` is the subgraph's SDL as written in
the config; ``_entities`` answers each representation as an object of its ``__typename``
whose key fields are the representation's and whose other fields are answered like any
object's (a resolver ``User.name``, else a fake value).

Source: the Apollo Federation subgraph specification (``_service``, ``_entities``,
``_Any``, ``FieldSet``, the directive definitions of federation v2.9 and link v1.0);
behavior notes §10 (``graphql`` row: ``schema`` (SDL)). Django-free; pure.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import chain
from typing import Any, Callable

from graphql import (DirectiveDefinitionNode, DocumentNode, InterfaceTypeDefinitionNode,
                     InterfaceTypeExtensionNode, ListValueNode, ObjectTypeDefinitionNode,
                     ObjectTypeExtensionNode, ObjectValueNode, OperationType,
                     SchemaDefinitionNode, SchemaExtensionNode, StringValueNode,
                     TypeDefinitionNode, parse)

#: Federation directives: name -> the rest of its definition after ``directive @name``.
DIRECTIVES = {
    "key": "(fields: FieldSet!, resolvable: Boolean = true) repeatable on OBJECT | INTERFACE",
    "requires": "(fields: FieldSet!) on FIELD_DEFINITION",
    "provides": "(fields: FieldSet!) on FIELD_DEFINITION",
    "external": "(reason: String) on OBJECT | FIELD_DEFINITION",
    "extends": " on OBJECT | INTERFACE",
    "shareable": " repeatable on OBJECT | FIELD_DEFINITION",
    "tag": "(name: String!) repeatable on FIELD_DEFINITION | OBJECT | INTERFACE | UNION | "
           "ARGUMENT_DEFINITION | SCALAR | ENUM | ENUM_VALUE | INPUT_OBJECT | "
           "INPUT_FIELD_DEFINITION | SCHEMA",
    "inaccessible": " on FIELD_DEFINITION | OBJECT | INTERFACE | UNION | ARGUMENT_DEFINITION "
                    "| SCALAR | ENUM | ENUM_VALUE | INPUT_OBJECT | INPUT_FIELD_DEFINITION",
    "override": "(from: String!, label: String) on FIELD_DEFINITION",
    "composeDirective": "(name: String!) repeatable on SCHEMA",
    "interfaceObject": " on OBJECT",
    "authenticated": " on FIELD_DEFINITION | OBJECT | INTERFACE | SCALAR | ENUM",
    "requiresScopes": "(scopes: [[federation__Scope!]!]!) on FIELD_DEFINITION | OBJECT | "
                      "INTERFACE | SCALAR | ENUM",
    "policy": "(policies: [[federation__Policy!]!]!) on FIELD_DEFINITION | OBJECT | "
              "INTERFACE | SCALAR | ENUM",
    "context": "(name: String!) repeatable on INTERFACE | OBJECT | UNION",
    "fromContext": "(field: federation__ContextFieldValue) on ARGUMENT_DEFINITION",
    "cost": "(weight: Int!) on ARGUMENT_DEFINITION | ENUM | FIELD_DEFINITION | "
            "INPUT_FIELD_DEFINITION | OBJECT | SCALAR",
    "listSize": "(assumedSize: Int, slicingArguments: [String!], sizedFields: [String!], "
                "requireOneSlicingArgument: Boolean = true) on FIELD_DEFINITION",
    "link": "(url: String!, as: String, for: link__Purpose, import: [link__Import]) "
            "repeatable on SCHEMA",
}
#: Types the directive definitions (and the entity fields) refer to.
SUPPORT_TYPES = {
    "FieldSet": "scalar FieldSet",
    "link__Import": "scalar link__Import",
    "link__Purpose": "enum link__Purpose { SECURITY EXECUTION }",
    "federation__Scope": "scalar federation__Scope",
    "federation__Policy": "scalar federation__Policy",
    "federation__ContextFieldValue": "scalar federation__ContextFieldValue",
    "_Any": "scalar _Any",
    "_Service": "type _Service { sdl: String }",
}
_TYPE_NAMES = re.compile(r"\b(?:" + "|".join(SUPPORT_TYPES) + r")\b")
_SCHEMA_NODES = (SchemaDefinitionNode, SchemaExtensionNode)


@dataclass(frozen=True, slots=True)
class Federation:
    """What :func:`add_federation` found and added.

    Attributes:
        query_type: the name of the query type (``Query`` unless the schema names another).
        entities: the object types with ``@key`` (members of ``_Entity``).
        added: the names of the definitions added (directives with ``@``).
    """

    query_type: str
    entities: tuple[str, ...]
    added: tuple[str, ...]


def add_federation(document: DocumentNode) -> tuple[DocumentNode, Federation | None]:
    """``document`` with the federation definitions it uses without declaring (see the
    module docstring), and what was added; ``(document, None)`` when it is not a subgraph
    (it uses no federation directive and declares no ``_Service``)."""
    declared_directives = {definition.name.value for definition in document.definitions
                           if isinstance(definition, DirectiveDefinitionNode)}
    defined = {definition.name.value for definition in document.definitions
               if isinstance(definition, TypeDefinitionNode)}
    aliases = _aliases(document)
    missing = {name: aliases[name] for name in _used_directives(document)
               if name not in declared_directives and name in aliases}
    if not missing and "_Service" not in defined:
        return document, None
    additions = [f"directive @{name}{DIRECTIVES[base]}" for name, base in missing.items()]
    definitions = []
    for definition in document.definitions:
        name = getattr(definition, "name", None)
        if isinstance(definition, (ObjectTypeExtensionNode, InterfaceTypeExtensionNode)) \
                and name.value not in defined:
            # Federation 1 subgraphs extend types other subgraphs own.
            kind = ObjectTypeDefinitionNode if isinstance(definition, ObjectTypeExtensionNode) \
                else InterfaceTypeDefinitionNode
            definition = kind(name=definition.name, description=None,
                              directives=definition.directives,
                              interfaces=definition.interfaces, fields=definition.fields)
            defined.add(name.value)
        definitions.append(definition)
    key_names = {name for name, base in aliases.items() if base == "key"}
    entities = tuple(dict.fromkeys(
        definition.name.value for definition in definitions
        if isinstance(definition, (ObjectTypeDefinitionNode, ObjectTypeExtensionNode))
        and any(directive.name.value in key_names for directive in definition.directives or ())))
    query_type = _query_type_name(definitions)
    query_fields = {field.name.value for definition in definitions
                    if isinstance(definition, (ObjectTypeDefinitionNode, ObjectTypeExtensionNode))
                    and definition.name.value == query_type for field in definition.fields or ()}
    fields = []
    if "_service" not in query_fields:
        fields.append("_service: _Service!")
    if entities and "_entities" not in query_fields:
        fields.append("_entities(representations: [_Any!]!): [_Entity]!")
        if "_Entity" not in defined:
            additions.append(f"union _Entity = {' | '.join(entities)}")
    if fields:
        additions.append(f"{'extend type' if query_type in defined else 'type'} {query_type} "
                         f"{{ {' '.join(fields)} }}")
    needed = set(_TYPE_NAMES.findall(" ".join(additions)))
    additions[:0] = [SUPPORT_TYPES[name] for name in SUPPORT_TYPES
                     if name in needed and name not in defined]
    added = parse("\n".join(additions), no_location=True).definitions
    federation = Federation(query_type, entities, tuple(
        f"@{definition.name.value}" if isinstance(definition, DirectiveDefinitionNode)
        else definition.name.value for definition in added))
    return DocumentNode(definitions=(*definitions, *added)), federation


def builtin_answers(federation: Federation, sdl: str
                    ) -> dict[str, Callable[[dict[str, Any]], Any]]:
    """``{"Query._service": answer, "Query._entities": answer}`` (the query type's own
    name): each answer takes the field's arguments and returns its value."""
    answers: dict[str, Callable[[dict[str, Any]], Any]] = {
        f"{federation.query_type}._service": lambda args: {"sdl": sdl}}
    if federation.entities:
        answers[f"{federation.query_type}._entities"] = \
            lambda args: list(args.get("representations") or ())
    return answers


def _aliases(document: DocumentNode) -> dict[str, str]:
    """``{directive name as the document may use it: federation directive}``: every
    federation directive by its own name and as ``federation__<name>``, plus the names of
    the ``@link`` imports and namespaces of the document."""
    aliases = {name: name for name in DIRECTIVES}
    aliases.update((f"federation__{name}", name) for name in DIRECTIVES)
    for definition in document.definitions:
        if not isinstance(definition, _SCHEMA_NODES):
            continue
        for directive in definition.directives or ():
            if directive.name.value != "link":
                continue
            arguments = {argument.name.value: argument.value
                         for argument in directive.arguments or ()}
            url = _string(arguments.get("url")) or ""
            if "/federation/" not in url:
                continue
            namespace = _string(arguments.get("as"))
            if namespace:
                aliases.update((f"{namespace}__{name}", name) for name in DIRECTIVES)
            imports = arguments.get("import")
            for entry in imports.values if isinstance(imports, ListValueNode) else ():
                original, alias = _string(entry), None
                if isinstance(entry, ObjectValueNode):
                    fields = {field.name.value: _string(field.value) for field in entry.fields}
                    original, alias = fields.get("name"), fields.get("as")
                if original and original.startswith("@") and original[1:] in DIRECTIVES:
                    aliases[(alias or original).lstrip("@")] = original[1:]
    return aliases


def _string(value: Any) -> str | None:
    return value.value if isinstance(value, StringValueNode) else None


def _used_directives(document: DocumentNode) -> dict[str, None]:
    """The names of the directives used anywhere in the type system definitions, in the
    order of their first use."""
    used: dict[str, None] = {}

    def add(node: Any) -> None:
        for directive in getattr(node, "directives", None) or ():
            used[directive.name.value] = None

    for definition in document.definitions:
        add(definition)
        for member in chain(getattr(definition, "fields", None) or (),
                            getattr(definition, "values", None) or ()):
            add(member)
            for argument in getattr(member, "arguments", None) or ():
                add(argument)
        for argument in getattr(definition, "arguments", None) or ():
            add(argument)
    return used


def _query_type_name(definitions: list[Any]) -> str:
    for definition in definitions:
        if isinstance(definition, _SCHEMA_NODES):
            for operation in definition.operation_types or ():
                if operation.operation is OperationType.QUERY:
                    return operation.type.name.value
    return "Query"
