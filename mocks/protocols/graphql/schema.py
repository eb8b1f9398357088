"""Loading a mock's GraphQL schema, once per distinct text, from SDL or introspection JSON,
leniently enough for the schemas services publish, with errors that name the config key
and the line.

Accepted (``schema`` text and ``schemaFile`` alike; the form is told by the text):

* **SDL** (GraphQL schema language). Parsed with graphql-core's parser, without source
  locations (a big schema is far smaller and faster so); when a
  problem is found the text is parsed again with locations, so the error names its line.
* **Introspection JSON**: the result of an introspection query (``{"__schema": ...}``, with
  or without its ``{"data": ...}`` wrapper), as GraphiQL, Postman, codegen tools and
  packages such as ``@shopify/hydrogen-react`` save it; built with graphql-core's
  ``build_client_schema``. A text whose first character (after spaces) is ``{`` is read as
  JSON: an SDL document never starts so.
* **Federation subgraphs** (Apollo Federation 1 and 2): the federation directives,
  ``_Service``, ``_Any``, ``_Entity`` and the ``_service`` / ``_entities`` fields are added
  when the SDL uses them without declaring them (:mod:`~mocks.protocols.graphql.federation`).

Lenient where published schemas are known to differ from graphql-core's rules (each
tolerated problem is one warning, logged under ``mockd.graphql`` with the config key):

* the same field (input field, enum value) declared twice in one type or its extensions:
  the first is kept (GitHub's schema declares
  ``EnterpriseOwnerInfo.repositoryDeployKeySetting`` twice);
* rules newer than graphql-js 16, which the published schemas predate
  (:data:`NEWER_RULES`): a deprecated field implementing a field of an interface that is
  not deprecated (GitHub: ``Project.id`` of ``Node``), a default value that does not fit its
  type.

Everything else is an error as before: a syntax error, an unknown type or directive, a type
that does not implement its interface, no ``Query`` type.

Schemas declaring ``@defer`` or ``@stream`` load as any other; the executor decides what a
query using them gets (:mod:`~mocks.protocols.graphql.executor`).

Source: behavior notes §10 (``schema`` (SDL) or ``schemaFile``); §15 (files are read from
the config's folder, confined like ``bodyFile``); graphql-js 16 (``buildSchema``,
``buildClientSchema``) as the measure of what tools load.
"""
from __future__ import annotations

import gc
import logging
import re
from collections import OrderedDict
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterable, Iterator

import orjson
from graphql import (DocumentNode, EnumTypeDefinitionNode, EnumTypeExtensionNode,
                     GraphQLError, GraphQLSchema, InputObjectTypeDefinitionNode,
                     InputObjectTypeExtensionNode, InterfaceTypeDefinitionNode,
                     InterfaceTypeExtensionNode, ObjectTypeDefinitionNode,
                     ObjectTypeExtensionNode, Source, build_ast_schema, build_client_schema,
                     parse)
from graphql.type.validate import SchemaValidationContext
from graphql.validation.validate import validate_sdl

from mocks.core.errors import ConfigError
from mocks.core.responses import body_file_path
from mocks.protocols.graphql.federation import Federation, add_federation
from mocks.protocols.graphql.introspection import IntrospectionMemo

logger = logging.getLogger("mockd.graphql")

#: Built schemas kept by text (recompiles of an unchanged mock reuse them).
SCHEMA_CACHE_SIZE = 32
#: Largest ``schemaFile`` read, in bytes (8 MiB).
MAX_SCHEMA_FILE_BYTES = 8 * 1024 * 1024
#: Schema validation messages of rules newer than graphql-js 16: pattern -> (what the
#: warning calls the rule, how it names one case). Published schemas predate them, and a
#: schema breaking them still serves every query correctly.
NEWER_RULES = {
    re.compile(r"Interface field (\S+) is not deprecated, so implementation field (\S+) "
               r"must not be deprecated"): (
        "deprecated fields implementing an interface field that is not deprecated", r"\2 (\1)"),
    re.compile(r"(.*) has invalid default value(.*)", re.DOTALL): (
        "default values that do not fit their type", r"\1\2"),
}
#: Warnings listing more names than this say how many more there are.
WARNING_NAMES = 8

_FIELDED = (ObjectTypeDefinitionNode, ObjectTypeExtensionNode, InterfaceTypeDefinitionNode,
            InterfaceTypeExtensionNode)
_INPUTS = (InputObjectTypeDefinitionNode, InputObjectTypeExtensionNode)
_ENUMS = (EnumTypeDefinitionNode, EnumTypeExtensionNode)


@dataclass(eq=False)
class LoadedSchema:
    """A built schema and what was learnt while loading it (shared by every mock with the
    same text).

    Attributes:
        schema: the graphql-core schema (built with ``assume_valid``: it was validated here).
        text: the text it was built from (``_service { sdl }`` of a subgraph answers it).
        form: ``"SDL"`` or ``"introspection JSON"``.
        warnings: the tolerated problems, one sentence each.
        federation: what the federation support added (None: not a subgraph).
        incremental: the schema declares ``@defer`` or ``@stream``.
        introspection: answers of introspection queries of this schema, computed once each
            (:class:`~mocks.protocols.graphql.introspection.IntrospectionMemo`).
    """

    schema: GraphQLSchema
    text: str
    form: str
    warnings: tuple[str, ...] = ()
    federation: Federation | None = None
    incremental: bool = field(init=False)
    introspection: IntrospectionMemo = field(init=False)

    def __post_init__(self) -> None:
        self.introspection = IntrospectionMemo(self.schema)
        self.incremental = bool(self.schema.get_directive("defer")
                                or self.schema.get_directive("stream"))


_schemas: OrderedDict[str, LoadedSchema] = OrderedDict()


def read_schema_file(text: str, base_dir: Path, roots: tuple[Path, ...], key: str) -> str:
    """The text (SDL or introspection JSON) of ``schemaFile`` ``text`` (relative to
    ``base_dir``, confined to ``roots``).

    Raises :class:`ConfigError` at ``key`` when the file is outside ``roots``, missing, too
    large (over :data:`MAX_SCHEMA_FILE_BYTES`) or not UTF-8.
    """
    path = body_file_path(text, base_dir, roots, key)
    try:
        size = path.stat().st_size
        if size > MAX_SCHEMA_FILE_BYTES:
            raise ConfigError(key, f"{text!r} is {size} bytes; a schema file may have at most "
                                   f"{MAX_SCHEMA_FILE_BYTES} bytes")
        return path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise ConfigError(key, f"{text!r}: file not found (looked at {path})") from None
    except UnicodeDecodeError:
        raise ConfigError(key, f"{text!r} is not UTF-8 text") from None
    except OSError as error:
        raise ConfigError(key, f"{text!r} cannot be read: {error.strerror or error}") from None


def load_schema(text: str, key: str) -> LoadedSchema:
    """The schema of ``text`` (SDL or introspection JSON; see the module docstring), cached
    by text (:data:`SCHEMA_CACHE_SIZE` entries). Its warnings are logged when it is built.

    Raises :class:`ConfigError` at ``key`` (``mocks[0].graphql.schema``) with the line of
    the first problem: ``line 3: Syntax Error: Expected Name, found '}'.``, an unknown type,
    a schema without a ``Query`` type, introspection JSON without ``__schema``.
    """
    cached = _schemas.get(text)
    if cached is not None:
        _schemas.move_to_end(text)
        return cached
    with _collector_paused():
        if text.lstrip()[:1] == "{":
            loaded = _load_introspection(text, key)
        else:
            try:
                loaded = _load_sdl(text, key, no_location=True)
            except ConfigError:
                # Again with source locations, so that the error names its line.
                loaded = _load_sdl(text, key, no_location=False)
    for warning in loaded.warnings:
        logger.warning("%s: %s", key, warning)
    _schemas[text] = loaded
    if len(_schemas) > SCHEMA_CACHE_SIZE:
        _schemas.popitem(last=False)
    return loaded


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector paused (unless it already was): building a big
    schema makes about a million objects that all live on, and the collector would walk
    them again and again while they are made (40 % of the CPU time of loading GitHub's
    schema). The few cycles made meanwhile (the parser's token list) are collected once it
    runs again."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _where(error: GraphQLError) -> str:
    locations = error.locations or []
    return f"line {locations[0].line}: " if locations else ""


def _config_error(key: str, error: GraphQLError) -> ConfigError:
    return ConfigError(key, f"{_where(error)}{error.message}")


def parse_sdl(text: str, no_location: bool = False) -> DocumentNode:
    """The document of SDL ``text``, parsed by graphql-core.

    ``no_location``: build no source locations (faster and far smaller for a big schema;
    errors found later then carry no line, and the text is parsed again with them).

    Raises :class:`GraphQLError` for a syntax error (its ``locations`` give the line), or
    for a document nested too deeply to parse.
    """
    try:
        return parse(Source(text, "GraphQL schema"), no_location=no_location)
    except RecursionError:
        pass  # raised outside the handler, so the deep stack is not kept as its context
    raise GraphQLError("Syntax Error: the document is nested too deeply to be parsed.")


def _load_sdl(text: str, key: str, no_location: bool) -> LoadedSchema:
    try:
        document = parse_sdl(text, no_location=no_location)
    except GraphQLError as error:
        raise _config_error(key, error) from None
    document, federation = add_federation(document)
    document, duplicates = _without_duplicates(document)
    problems = validate_sdl(document)
    if problems:
        raise _config_error(key, problems[0])
    try:
        schema = build_ast_schema(document, assume_valid=True, assume_valid_sdl=True)
    except GraphQLError as error:
        raise _config_error(key, error) from None
    except (TypeError, ValueError) as error:
        raise ConfigError(key, str(error)) from None
    warnings = _duplicate_warnings(duplicates) + _checked(schema, key)
    return LoadedSchema(schema, text, "SDL", warnings, federation)


def _load_introspection(text: str, key: str) -> LoadedSchema:
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError as error:
        raise ConfigError(key, f"line {error.lineno}: the schema starts with '{{' but is not "
                               f"valid JSON ({error.msg}); give SDL or the JSON result of an "
                               f"introspection query") from None
    if isinstance(value, dict) and isinstance(value.get("data"), dict):
        value = value["data"]
    if not isinstance(value, dict) or not isinstance(value.get("__schema"), dict):
        raise ConfigError(key, "introspection JSON must hold a __schema object (the result of "
                               "an introspection query, with or without its 'data' wrapper)")
    introspection, duplicates = _introspection_without_duplicates(value)
    try:
        schema = build_client_schema(introspection, assume_valid=True)
    except GraphQLError as error:
        raise _config_error(key, error) from None
    except (TypeError, ValueError, KeyError, AttributeError) as error:
        raise ConfigError(key, f"the introspection JSON does not describe a schema: "
                               f"{error}") from None
    warnings = _duplicate_warnings(duplicates) + _checked(schema, key)
    return LoadedSchema(schema, text, "introspection JSON", warnings)


def _checked(schema: GraphQLSchema, key: str) -> tuple[str, ...]:
    """Validate ``schema`` (graphql-core's schema rules): warnings for problems of
    :data:`NEWER_RULES`; raises :class:`ConfigError` for the first other problem."""
    context = SchemaValidationContext(schema)
    context.validate_root_types()
    context.validate_directives()
    context.validate_types()
    tolerated: dict[str, list[str]] = {}
    for error in context.errors:
        for pattern, (rule, case) in NEWER_RULES.items():
            found = pattern.match(error.message)
            if found is not None:
                tolerated.setdefault(rule, []).append(found.expand(case).rstrip("."))
                break
        else:
            raise _config_error(key, error)
    return tuple(f"{rule}, accepted (a rule newer than graphql-js 16): {_listed(cases)}"
                 for rule, cases in tolerated.items())


def _listed(names: list[str]) -> str:
    shown = "; ".join(names[:WARNING_NAMES])
    more = len(names) - WARNING_NAMES
    return f"{shown} and {more} more" if more > 0 else shown


def _duplicate_warnings(duplicates: list[str]) -> tuple[str, ...]:
    if not duplicates:
        return ()
    return (f"declared more than once, the first declaration kept: {_listed(duplicates)}",)


def _without_duplicates(document: DocumentNode) -> tuple[DocumentNode, list[str]]:
    """``document`` with the second and later declarations of each field, input field and
    enum value of a type (its definition and extensions together) left out, and the
    ``Type.name`` of each one left out."""
    seen: dict[tuple[str, str], set[str]] = {}
    duplicates: list[str] = []
    definitions = []
    changed = False
    for definition in document.definitions:
        if isinstance(definition, _FIELDED):
            attribute, kind = "fields", "fields"
        elif isinstance(definition, _INPUTS):
            attribute, kind = "fields", "input"
        elif isinstance(definition, _ENUMS):
            attribute, kind = "values", "enum"
        else:
            definitions.append(definition)
            continue
        members = getattr(definition, attribute) or ()
        type_name = definition.name.value
        names = seen.setdefault((kind, type_name), set())
        kept = []
        for member in members:
            name = member.name.value
            if name in names:
                duplicates.append(f"{type_name}.{name}")
            else:
                names.add(name)
                kept.append(member)
        if len(kept) != len(members):
            definition = replace(definition, **{attribute: tuple(kept)})
            changed = True
        definitions.append(definition)
    if not changed:
        return document, duplicates
    return replace(document, definitions=tuple(definitions)), duplicates


def _introspection_without_duplicates(value: dict[str, Any]
                                      ) -> tuple[dict[str, Any], list[str]]:
    """The introspection result with the second and later entries of a type name, and of
    a field, input field or enum value name within a type, left out (and their names)."""
    schema = value["__schema"]
    types = schema.get("types")
    if not isinstance(types, list):
        return value, []
    duplicates: list[str] = []
    kept_types = []
    type_names: set[Any] = set()
    changed = False
    for kind in types:
        if not isinstance(kind, dict):
            kept_types.append(kind)
            continue
        name = kind.get("name")
        if name in type_names:
            duplicates.append(str(name))
            changed = True
            continue
        type_names.add(name)
        replaced = {}
        for attribute in ("fields", "inputFields", "enumValues"):
            members = kind.get(attribute)
            if isinstance(members, list):
                unique = list(_first_of_each(members, f"{name}.", duplicates))
                if len(unique) != len(members):
                    replaced[attribute] = unique
        if replaced:
            kind = {**kind, **replaced}
            changed = True
        kept_types.append(kind)
    if not changed:
        return value, duplicates
    return {**value, "__schema": {**schema, "types": kept_types}}, duplicates


def _first_of_each(members: Iterable[Any], prefix: str, duplicates: list[str]
                   ) -> Iterable[Any]:
    names: set[Any] = set()
    for member in members:
        name = member.get("name") if isinstance(member, dict) else None
        if name is not None and name in names:
            duplicates.append(f"{prefix}{name}")
            continue
        names.add(name)
        yield member
