"""The published JSON Schema of the config file, computed from the pydantic models.

One document, built at run time from :class:`mocks.config.ConfigFile` (ARCHITECTURE seam 1:
the loader, the admin API and this schema share the same models), so it never drifts from
what the loader accepts. ``mockd schema`` prints it and the admin API serves it at
``GET /config/schema``. Django-free; callable from any thread (the result is cached and must
not be changed in place: callers get a fresh copy).
"""
from __future__ import annotations

import copy
import re
from functools import lru_cache
from typing import Any

JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
SCHEMA_TITLE = "mockd configuration file"
SCHEMA_DESCRIPTION = ("A mockd configuration file (YAML or JSON): mocks, tables, extend "
                      "bindings, imports, custom operations and server settings.")


@lru_cache(maxsize=1)
def _build() -> dict[str, Any]:
    from mocks.config import ConfigFile

    document = _user_facing(ConfigFile.model_json_schema(by_alias=True))
    document.pop("$id", None)
    document.pop("title", None)
    document.pop("description", None)
    # Dialect, title and description first and the definitions last, so the file reads
    # top-down in an editor.
    definitions = document.pop("$defs", {})
    return {"$schema": JSON_SCHEMA_DIALECT, "title": SCHEMA_TITLE,
            "description": SCHEMA_DESCRIPTION, **document, "$defs": definitions}


#: Where a model docstring cites the documents it implements: ``(behavior notes §14)``,
#: ``SPEC "Matcher": ``. The published schema states behaviour only.
_CITATION = re.compile(r"\s*\([^()]*(?:SPEC|behavior notes|§)[^()]*\)|SPEC \"[^\"]*\":\s*")


def _user_facing(node: Any) -> Any:
    """``node`` with every ``description`` cut to its first paragraph and stripped of
    citations; a description that still cites a document is dropped."""
    if isinstance(node, list):
        return [_user_facing(item) for item in node]
    if not isinstance(node, dict):
        return node
    cleaned: dict[str, Any] = {}
    for key, value in node.items():
        if key == "description" and isinstance(value, str):
            text = " ".join(_CITATION.sub("", value.split("\n\n", 1)[0]).split())
            if text and "SPEC" not in text and "behavior notes" not in text:
                cleaned[key] = text
            continue
        cleaned[key] = _user_facing(value)
    return cleaned


def config_json_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a config file, as a new dict.

    Shape: ``{"$schema", "title", "type": "object", "properties": {"version", "serverConfig",
    "server", "mocks", "tables", ...}, "$defs": {...}}``; keys are the camelCase names a file
    uses; no ``$id``. Never raises for a valid model set.
    """
    return copy.deepcopy(_build())
