"""Config schema of tables, extend bindings and response transforms (ARCHITECTURE seam 1).

Pydantic models for the ``tables``, ``extend`` and legacy ``statefulResources`` keys of the
config file and for ``http.statefulBinding`` on a mock. :mod:`mocks.config` uses them for
``ConfigFile`` and ``HttpMock``; the admin API and export read the same models. Keys stay
camelCase through aliases, Python attributes are snake_case, unknown keys are errors.

The validation rule (:class:`FieldRule`) and the base :class:`ConfigModel` live in
:mod:`tables.rules` (re-exported here), so an HTTP mock's rules need none of this module.
Every model is built on its first validation (``defer_build``): an engine whose config
has no tables or bindings imports these classes but never builds them.

No Django here: the engine imports this module.

Source: SPEC "Table", "Extend binding", "Validation", "Response transform", "Configuration
file" (``statefulResources``); behavior notes §6 (bindings, transforms, ``maxItems``), §7
(validation rule keys, modes, formats) and §18 (``maxItems`` 0 = unlimited).
"""
from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from tables.names import ACTIONS, ID_STRATEGIES
from tables.rules import RULE_TYPES, ConfigModel, FieldRule

#: Validation modes (SPEC "Validation"; behavior notes §7).
VALIDATION_MODES = ("strict", "warn", "permissive")

Action = Literal["list", "get", "create", "update", "patch", "delete", "custom"]


def _status(value: int | None) -> int | None:
    if value is not None and not 100 <= value <= 599:
        raise ValueError(f"status must be an HTTP status between 100 and 599, got {value}")
    return value


# ---------------------------------------------------------------------------- transforms


class TimestampsTransform(ConfigModel):
    """``response.timestamps``: output form of ``createdAt``/``updatedAt``.

    Attributes:
        format: ``rfc3339`` (stored form, nanoseconds), ``iso8601`` (whole seconds),
            ``unix`` (integer epoch seconds) or ``none`` (both fields removed).
        fields: output names, e.g. ``{createdAt: created}``.
    """

    format: Literal["unix", "iso8601", "rfc3339", "none"] = "rfc3339"
    fields: dict[str, str] = Field(default_factory=dict)


class ListWrap(ConfigModel):
    """One ``fields.wrapAsList`` entry: ``url`` may use ``{{field}}`` of the parent item."""

    url: str | None = None


class FieldsTransform(ConfigModel):
    """``response.fields``: reshape item keys without touching stored data.

    Attributes:
        inject: constant fields added last (always present).
        hide: top-level keys removed from the output.
        rename: ``{storedKey: outputKey}`` for top-level keys.
        wrap_as_list: ``{arrayField: {url?} | null}``; the array becomes
            ``{"object": "list", "data": [...], "has_more": false, "url"?}``.
    """

    inject: dict[str, Any] = Field(default_factory=dict)
    hide: list[str] = Field(default_factory=list)
    rename: dict[str, str] = Field(default_factory=dict)
    wrap_as_list: dict[str, ListWrap | None] = Field(default_factory=dict, alias="wrapAsList")


class ListTransform(ConfigModel):
    """``response.list``: the list envelope becomes one flat object.

    ``extraFields`` + ``<dataField>: items`` + ``total, limit, offset, count`` (renamed by
    ``metaFields``) unless ``hideMeta``; ``has_more``/``hasMore`` inside ``extraFields`` get
    the computed value (behavior notes §6).
    """

    data_field: str = Field("data", alias="dataField", min_length=1)
    extra_fields: dict[str, Any] = Field(default_factory=dict, alias="extraFields")
    hide_meta: bool = Field(False, alias="hideMeta")
    meta_fields: dict[str, str] = Field(default_factory=dict, alias="metaFields")


class CreateTransform(ConfigModel):
    """``response.create``: ``status`` of a successful create (default 201)."""

    status: int | None = None

    @field_validator("status")
    @classmethod
    def _status_in_range(cls, value: int | None) -> int | None:
        return _status(value)


class DeleteTransform(ConfigModel):
    """``response.delete``: ``status`` (default 204), ``preserve`` (answer but keep the item),
    ``body`` (JSON value; strings get ``{{item.<field>}}``)."""

    status: int | None = None
    preserve: bool = False
    body: Any = None

    @field_validator("status")
    @classmethod
    def _status_in_range(cls, value: int | None) -> int | None:
        return _status(value)


class ErrorsTransform(ConfigModel):
    """``response.errors``: reshape table error bodies (status unchanged).

    Attributes:
        wrap: key that wraps the whole error object (``{"error": {...}}``).
        fields: ``{source: outputName}`` for the sources ``message``, ``resource``, ``id``,
            ``field``, ``type`` (from ``typeMap``) and ``code`` (from ``codeMap``); when
            given, only the listed sources appear.
        type_map, code_map: internal code (``NOT_FOUND``, ``CONFLICT``, ``VALIDATION_ERROR``,
            ``PAYLOAD_TOO_LARGE``, ``CAPACITY_EXCEEDED``, ``INTERNAL_ERROR``) -> output text.
        inject: constant fields added to the error object.
    """

    wrap: str | None = None
    fields: dict[str, str] = Field(default_factory=dict)
    type_map: dict[str, str] = Field(default_factory=dict, alias="typeMap")
    code_map: dict[str, str] = Field(default_factory=dict, alias="codeMap")
    inject: dict[str, Any] = Field(default_factory=dict)


class ResponseTransform(ConfigModel):
    """``response`` on a table (default) or a binding (replaces the table's): SPEC "Response
    transform". Every key is optional; an empty transform changes nothing."""

    timestamps: TimestampsTransform | None = None
    fields: FieldsTransform | None = None
    list_envelope: ListTransform | None = Field(None, alias="list")
    create: CreateTransform | None = None
    delete: DeleteTransform | None = None
    errors: ErrorsTransform | None = None


# ---------------------------------------------------------------------------- validation


class ValidationOverlay(ConfigModel):
    """``onCreate`` / ``onUpdate``: merged over the table's base validation."""

    mode: Literal["strict", "warn", "permissive"] | None = None
    fields: dict[str, FieldRule] = Field(default_factory=dict)
    required: list[str] = Field(default_factory=list)


class TableValidation(ConfigModel):
    """A table's ``validation`` block (SPEC "Validation"; behavior notes §7).

    Attributes:
        mode: ``strict`` (reject any failure), ``warn`` (never reject; warnings in the
            ``X-Mockd-Validation-Warnings`` header), ``permissive`` (reject only missing
            required fields).
        fields: ``{dot.path: rule}``; a path reaches nested fields and every array element
            (``items.sku``).
        required: dot paths that must be present.
        path_params: ``{name: rule}`` checked against the request's path parameters.
        on_create, on_update: overlays merged over the base for creates / updates.
        auto: infer ``type`` rules from the seed data (explicit rules win).
        json_schema: a JSON Schema object (``schema``); its ``properties``/``required``
            become rules.
    """

    mode: Literal["strict", "warn", "permissive"] = "strict"
    fields: dict[str, FieldRule] = Field(default_factory=dict)
    required: list[str] = Field(default_factory=list)
    path_params: dict[str, FieldRule] = Field(default_factory=dict, alias="pathParams")
    on_create: ValidationOverlay | None = Field(None, alias="onCreate")
    on_update: ValidationOverlay | None = Field(None, alias="onUpdate")
    auto: bool = False
    json_schema: dict[str, Any] | None = Field(None, alias="schema")


# ---------------------------------------------------------------------------- tables


class Relationship(ConfigModel):
    """``relationships.<field>``: the field holds an id of ``table``; ``field`` is the target
    table's field compared (default: its ``idField``)."""

    table: str = Field(min_length=1)
    field: str | None = None


class TableConfig(ConfigModel):
    """A table (SPEC "Table"): an in-memory data store that bindings expose.

    Attributes:
        name: unique table name, referenced by bindings.
        id_field: name of the identifier field (default ``id``).
        id_strategy: ``uuid`` (default), ``prefix`` (``idPrefix`` + 16 hex), ``ulid``,
            ``sequence`` (1, 2, 3, ... after the highest numeric seed id), ``short`` (16 hex).
        id_prefix: required for ``prefix`` (e.g. ``cus_``).
        seed_data: initial items, restored on reset and restart.
        parent_field: sub-resource tables: the path parameter of this name is stored on
            create and filters list.
        relationships: ``{field: {table, field?}}`` used by ``expand``.
        validation: the table's validation block.
        response: table-level default transform.
        max_items: capacity (0 = unlimited); a create beyond it answers 507.
    """

    name: str = Field(min_length=1)
    id_field: str = Field("id", alias="idField", min_length=1)
    id_strategy: Literal["uuid", "prefix", "ulid", "sequence", "short"] = Field(
        "uuid", alias="idStrategy")
    id_prefix: str | None = Field(None, alias="idPrefix")
    seed_data: list[dict[str, Any]] = Field(default_factory=list, alias="seedData")
    parent_field: str | None = Field(None, alias="parentField")
    relationships: dict[str, Relationship] = Field(default_factory=dict)
    validation: TableValidation | None = None
    response: ResponseTransform | None = None
    max_items: int = Field(0, alias="maxItems", ge=0)

    @model_validator(mode="after")
    def _prefix_needs_id_prefix(self) -> "TableConfig":
        if self.id_strategy == "prefix" and not self.id_prefix:
            raise ValueError("idStrategy 'prefix' needs idPrefix (for example 'cus_')")
        return self


class StatefulResourceConfig(TableConfig):
    """Legacy ``statefulResources[]`` entry (SPEC "Configuration file"): loads into the same
    tables. ``basePath`` is accepted for old files and kept for export; routes come from
    ``extend`` bindings or ``http.statefulBinding``."""

    base_path: str | None = Field(None, alias="basePath")


# ---------------------------------------------------------------------------- bindings


class StatefulBinding(ConfigModel):
    """``http.statefulBinding`` on a mock: the same wiring as an extend binding, without the
    mock reference (behavior notes §6)."""

    table: str = ""
    action: Action
    operation: str | None = None
    response: ResponseTransform | None = None

    @model_validator(mode="after")
    def _table_or_operation(self) -> "StatefulBinding":
        if self.action == "custom":
            if not self.operation:
                raise ValueError("action 'custom' needs operation (the custom operation name)")
        elif not self.table:
            raise ValueError(f"action {self.action!r} needs table (the table name)")
        return self


class ExtendBinding(StatefulBinding):
    """``extend[]`` (SPEC "Extend binding"): binds mock ``mock`` to ``table``.

    ``mock`` resolves by mock id, then operation id (imports: ``<as>.<operationId>``), then
    the literal ``"METHOD /path"`` (behavior notes §6).
    """

    mock: str = Field(min_length=1)
