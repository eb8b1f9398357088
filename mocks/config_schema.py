"""The published JSON Schema of the config file, computed from the pydantic models.

One document, built at run time from :class:`mocks.config.ConfigFile` (ARCHITECTURE seam 1:
the loader, the admin API and this schema share the same models), so it never drifts from
what the loader accepts. ``mockd schema`` prints it and the admin API serves it at
``GET /config/schema``. Django-free; callable from any thread (the result is cached and must
not be changed in place: callers get a fresh copy).
"""
from __future__ import annotations

import copy
from functools import lru_cache
from typing import Any

JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
SCHEMA_TITLE = "mockd configuration file"
SCHEMA_DESCRIPTION = ("A mockd configuration file (YAML or JSON): mocks, tables, extend "
                      "bindings, imports, custom operations and server settings.")


@lru_cache(maxsize=1)
def _build() -> dict[str, Any]:
    from mocks.config import ConfigFile

    document = ConfigFile.model_json_schema(by_alias=True)
    document.pop("$id", None)
    document.pop("title", None)
    document.pop("description", None)
    # Dialect, title and description first and the definitions last, so the file reads
    # top-down in an editor.
    definitions = document.pop("$defs", {})
    return {"$schema": JSON_SCHEMA_DIALECT, "title": SCHEMA_TITLE,
            "description": SCHEMA_DESCRIPTION, **document, "$defs": definitions}


def config_json_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a config file, as a new dict.

    Shape: ``{"$schema", "title", "type": "object", "properties": {"version", "serverConfig",
    "server", "mocks", "tables", ...}, "$defs": {...}}``; keys are the camelCase names a file
    uses; no ``$id``. Never raises for a valid model set.
    """
    return copy.deepcopy(_build())
