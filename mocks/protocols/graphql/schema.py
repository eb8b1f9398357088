"""Building a mock's GraphQL schema from SDL, once per distinct text, with errors that name
the config key and the line.

Source: behavior notes §10 (``schema`` (SDL) or ``schemaFile``); §15 (files are read from
the config's folder, confined like ``bodyFile``).
"""
from __future__ import annotations

from collections import OrderedDict
from pathlib import Path

from graphql import GraphQLError, GraphQLSchema, build_ast_schema, parse, validate_schema
from graphql.validation.validate import validate_sdl

from mocks.core.errors import ConfigError
from mocks.core.responses import body_file_path

#: Built schemas kept by SDL text (recompiles of an unchanged mock reuse them).
SCHEMA_CACHE_SIZE = 32
#: Largest ``schemaFile`` read, in bytes (8 MiB).
MAX_SCHEMA_FILE_BYTES = 8 * 1024 * 1024

_schemas: OrderedDict[str, GraphQLSchema] = OrderedDict()


def read_schema_file(text: str, base_dir: Path, roots: tuple[Path, ...], key: str) -> str:
    """The SDL of ``schemaFile`` ``text`` (relative to ``base_dir``, confined to ``roots``).

    Raises :class:`ConfigError` at ``key`` when the file is outside ``roots``, missing, too
    large or not UTF-8.
    """
    path = body_file_path(text, base_dir, roots, key)
    try:
        size = path.stat().st_size
        if size > MAX_SCHEMA_FILE_BYTES:
            raise ConfigError(key, f"{text!r} is {size} bytes; a schema file may have at most "
                                   f"{MAX_SCHEMA_FILE_BYTES} bytes")
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(key, f"{text!r}: file not found (looked at {path})") from None
    except UnicodeDecodeError:
        raise ConfigError(key, f"{text!r} is not UTF-8 text") from None
    except OSError as error:
        raise ConfigError(key, f"{text!r} cannot be read: {error.strerror or error}") from None


def _where(error: GraphQLError) -> str:
    locations = error.locations or []
    return f"line {locations[0].line}: " if locations else ""


def build_schema_from_sdl(sdl: str, key: str) -> GraphQLSchema:
    """The validated schema of ``sdl`` (cached by text, :data:`SCHEMA_CACHE_SIZE` entries).

    Raises :class:`ConfigError` at ``key`` (``mocks[0].graphql.schema``) with the line of the
    first problem: ``line 3: Syntax Error: Expected Name, found '}'.``, an unknown type, or
    a schema without a ``Query`` type.
    """
    cached = _schemas.get(sdl)
    if cached is not None:
        _schemas.move_to_end(sdl)
        return cached
    try:
        document = parse(sdl)
    except GraphQLError as error:
        raise ConfigError(key, f"{_where(error)}{error.message}") from None
    problems = validate_sdl(document)
    if problems:
        raise ConfigError(key, f"{_where(problems[0])}{problems[0].message}")
    try:
        schema = build_ast_schema(document, assume_valid_sdl=True)
    except GraphQLError as error:
        raise ConfigError(key, f"{_where(error)}{error.message}") from None
    except (TypeError, ValueError) as error:
        raise ConfigError(key, str(error)) from None
    problems = validate_schema(schema)
    if problems:
        raise ConfigError(key, f"{_where(problems[0])}{problems[0].message}")
    _schemas[sdl] = schema
    if len(_schemas) > SCHEMA_CACHE_SIZE:
        _schemas.popitem(last=False)
    return schema
