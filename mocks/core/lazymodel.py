"""A pydantic field type naming its model by import string, built on first use.

:class:`LazyModel` lets a model declare a field typed by another model without importing
that model's module: a config that leaves the field out never builds it (an HTTP-only
config builds no gRPC, chaos or table model). Used by :mod:`mocks.config`,
:mod:`mocks.server_config` and :mod:`mocks.protocols.http.config` (``sse``, ``chunked``,
``statefulBinding``). A target model may be declared with ``defer_build``: it is built when
first validated or when the JSON Schema is asked for.

Source: ARCHITECTURE seam 1 (one config schema); the issue "mockd engine ready in under 0.5 s".
Imports nothing else of the project.
"""
from __future__ import annotations

import importlib
from typing import Any

from pydantic import BaseModel
from pydantic_core import core_schema


class LazyModel:
    """A field type naming a pydantic model by import string (``"module:Class"``): the model
    is imported and built the first time a value of the field is validated or the JSON
    Schema is asked for, so a config that leaves the field out never pays for the model (an
    HTTP-only config builds no gRPC, MQTT, SOAP, GraphQL, WebSocket, identity-provider,
    ``serverConfig``, chaos or table model).

    Validation is the model's own (``Model.model_validate``): the same values, the same error
    types and messages, at the same locations (pydantic prefixes them with the field's key and
    list index); serialisation is the model instance's own; the JSON Schema is the model's
    (the model lands in ``$defs``), so the published schema is unchanged. A field typed
    ``Annotated[Any, LazyModel(...)] | None`` must be listed in its model's
    :func:`untitled_json_schema` hook, as pydantic gives a model-typed field no title.
    Raises ImportError when the model cannot be imported.
    """

    __slots__ = ("target", "_model")

    def __init__(self, target: str):
        self.target = target
        self._model: type[BaseModel] | None = None

    def model(self) -> type[BaseModel]:
        """The model class (imported on the first call)."""
        if self._model is None:
            module_name, _, name = self.target.partition(":")
            self._model = getattr(importlib.import_module(module_name), name)
        return self._model

    def _validate(self, value: Any, info: core_schema.ValidationInfo) -> Any:
        return self.model().model_validate(value, context=info.context)

    def _json_schema(self, schema: Any, handler: Any) -> Any:
        # Through the generator's own entry, so the model lands in $defs and is referenced,
        # as a model field's schema is.
        # A model declared with ``defer_build`` is built here first.
        generator = handler.generate_json_schema
        model = self.model()
        if not model.__pydantic_complete__:
            model.model_rebuild()
        return generator.generate_inner(model.__pydantic_core_schema__)

    def __get_pydantic_core_schema__(self, source: Any, handler: Any) -> Any:
        return core_schema.with_info_plain_validator_function(
            self._validate, metadata={"pydantic_js_annotation_functions": [self._json_schema]})

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.target!r})"


def untitled_json_schema(schema: dict[str, Any], handler: Any,
                          keys: tuple[str, ...]) -> dict[str, Any]:
    """``schema`` (a model's JSON Schema) with no ``title`` on the properties ``keys``: fields
    typed by a :class:`LazyModel` read as fields typed by the model itself, which pydantic
    leaves untitled. Returns ``schema``."""
    target = handler.resolve_ref_schema(schema)
    for key in keys:
        target.get("properties", {}).get(key, {}).pop("title", None)
    return schema
