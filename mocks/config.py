"""The one config schema (ARCHITECTURE seam 1): pydantic models for the config file.

The file loader, the admin API bodies, export and the published JSON Schema all use these
models. Keys stay camelCase through aliases; Python attributes are snake_case.

Source: SPEC "Configuration file", "Mock", "HTTP mock", "Matcher", "Response"; behavior notes
§14 (validator rules, shorthand mocks, ``x-*`` keys, ``serverConfig`` keys).
"""
from __future__ import annotations

import secrets
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model, field_validator, model_validator

from mocks.core.lazymodel import LazyModel, untitled_json_schema
from mocks.core.schema import Open, Strict, scalar_text
from mocks.protocols import MOCK_TYPES, PROTOCOLS, resolve_target
from mocks.protocols.http.config import (HTTP_METHODS, HttpMock, JsonPathExists, Matcher,
                                         RequestValidation, Response)

__all__ = ["HTTP_METHODS", "MOCK_TYPES", "ConfigFile", "HttpMock", "ImportEntry",
           "JsonPathExists", "Matcher", "Mock", "Open", "RecordingConfig",
           "RequestValidation", "Response",
           "ServerConfig", "Strict", "new_mock_id"]


def new_mock_id(mock_type: str) -> str:
    """A fresh mock id ``<type>_<16 hex>`` (behavior notes §1 "Ids")."""
    return f"{mock_type}_{secrets.token_hex(8)}"


class ImportEntry(BaseModel):
    """One ``imports[]`` entry (SPEC "Import entry").

    Attributes:
        path: spec file (or WireMock directory), relative to the config file's folder.
        url: an http(s) URL to fetch instead of ``path``.
        as_prefix: ``as``: namespace of generated ids (``<as>.<operationId>``).
        format: a format name or alias (``openapi``, ``swagger``, ``har``, ...); detected
            from the content when absent.
        include_static: HAR only: keep static assets.
        variables: Postman only: ``{name: value}`` for ``{{name}}`` in the collection (they
            win over the collection's own variables).
    """

    model_config = ConfigDict(extra="forbid", populate_by_name=True, defer_build=True)

    path: str | None = None
    url: str | None = None
    as_prefix: str | None = Field(None, alias="as", min_length=1, pattern=r"^[A-Za-z0-9_.:@+-]+$")
    format: str | None = None
    include_static: bool = Field(False, alias="includeStatic")
    variables: dict[str, str] = Field(default_factory=dict)

    @field_validator("variables", mode="before")
    @classmethod
    def _variable_values_as_text(cls, value: Any) -> Any:
        if isinstance(value, dict):
            return {key: scalar_text(item) for key, item in value.items()}
        return value

    @model_validator(mode="after")
    def _path_or_url(self) -> "ImportEntry":
        if bool(self.path) == bool(self.url):
            raise ValueError("give either path or url")
        if self.url and not self.url.startswith(("http://", "https://")):
            raise ValueError("url must start with http:// or https://")
        return self


class MockFields(Strict):
    """The fields every mock has, whatever its type (SPEC "Mock"); the protocol blocks are
    added from the handlers' config models to make :class:`Mock`. Built on first validation
    (``defer_build``), as every model of this module: importing it builds nothing, and the
    first config validated builds :class:`ConfigFile` once with its parts inside."""

    model_config = ConfigDict(defer_build=True)

    id: str = ""
    type: Literal[MOCK_TYPES] = "http"  # type: ignore[valid-type]
    name: str | None = None
    description: str | None = None
    enabled: bool = True
    workspace_id: str | None = Field(None, alias="workspaceId")
    parent_id: str | None = Field(None, alias="parentId")
    meta_sort_key: float | None = Field(None, alias="metaSortKey")
    created_at: str | None = Field(None, alias="createdAt")
    updated_at: str | None = Field(None, alias="updatedAt")

    @model_validator(mode="before")
    @classmethod
    def _shorthand_and_type(cls, data: Any) -> Any:
        # Behavior notes §14: a shorthand mock holds `matcher`/`response` directly; a missing
        # `type` is inferred from the protocol key present (default http).
        if not isinstance(data, dict):
            return data
        data = dict(data)
        if "matcher" in data or "response" in data:
            http = dict(data.get("http") or {})
            for key in ("matcher", "response", "priority"):
                if key in data:
                    http[key] = data.pop(key)
            data["http"] = http
        if not data.get("type"):
            data["type"] = next((kind for kind in MOCK_TYPES if data.get(kind) is not None), "http")
        return data

    @model_validator(mode="after")
    def _one_protocol_block(self) -> "MockFields":
        if getattr(self, self.type) is None:
            raise ValueError(f"a mock of type {self.type!r} needs a {self.type!r} object")
        others = [kind for kind in MOCK_TYPES if kind != self.type and getattr(self, kind) is not None]
        if others:
            raise ValueError(f"a mock of type {self.type!r} takes only the {self.type!r} "
                             f"object; remove {', '.join(repr(kind) for kind in others)} or "
                             f"change type")
        if not self.id:
            self.id = new_mock_id(self.type)
        return self

    @classmethod
    def __get_pydantic_json_schema__(cls, core_schema: Any, handler: Any) -> dict[str, Any]:
        # The schema reads as the union it validates: exactly one protocol block, the one
        # named by `type` (which may be left out and is then inferred from the block).
        schema = untitled_json_schema(handler(core_schema), handler, MOCK_TYPES)
        target = handler.resolve_ref_schema(schema)
        target["oneOf"] = [{"title": f"{kind} mock", "required": [kind],
                            "properties": {"type": {"const": kind}}} for kind in MOCK_TYPES]
        return schema


class ProtocolBlock(LazyModel):
    """The type of one protocol block of :class:`Mock` (``mock.<type>``): the config model its
    registry entry names (:data:`mocks.protocols.PROTOCOLS`), built when a block of that type
    is first validated (see :class:`LazyModel`). Raises
    :class:`~mocks.protocols.HandlerImportError` when the model cannot be imported.
    """

    __slots__ = ("mock_type",)

    def __init__(self, mock_type: str, target: str):
        super().__init__(target)
        self.mock_type = mock_type

    def model(self) -> type[BaseModel]:
        """The config model class (imported on the first call)."""
        if self._model is None:
            self._model = resolve_target(self.target, self.mock_type)
        return self._model

    def __repr__(self) -> str:
        return f"ProtocolBlock({self.mock_type!r}, {self.target!r})"


#: ``{mock type: its block type}`` in registry order.
PROTOCOL_BLOCKS: dict[str, ProtocolBlock] = {
    entry.mock_type: ProtocolBlock(entry.mock_type, entry.config_model) for entry in PROTOCOLS}

#: SPEC "Mock": the common fields plus one optional block per registered mock type, each typed
#: by its handler's config model (:data:`mocks.protocols.PROTOCOLS`, through
#: :class:`ProtocolBlock`). Validation requires the block named by ``type`` and rejects the
#: others, so a mock is in effect a union over ``type``.
Mock = create_model(  # type: ignore[call-overload]
    "Mock", __base__=MockFields, __module__=__name__,
    __doc__="A mock: the common fields and the protocol block named by its type.",
    **{kind: (Annotated[Any, block] | None, None) for kind, block in PROTOCOL_BLOCKS.items()})


#: A name in a redaction list: non-empty; ``*`` matches any run of characters.
RedactionName = Annotated[str, Field(min_length=1)]


class RecordingConfig(Strict):
    """``recording``: redaction (and storage) of recorded and logged traffic.

    The request log applies the redaction keys to every entry it shows (``GET /requests``,
    the request stream, invocations, near misses); a list given here replaces its default
    (:mod:`mocks.core.redaction`). Names compare case-insensitively and may hold ``*``.

    Attributes:
        filter_headers: ``filterHeaders``: headers whose values are hidden (default
            Authorization, Proxy-Authorization, Cookie, Set-Cookie, X-API-Key, X-Auth-Token).
        filter_query_params: ``filterQueryParams``: query parameters whose values are hidden
            (default: names like keys, tokens, secrets, passwords, signatures).
        filter_body_keys: ``filterBodyKeys``: form-body fields whose values are hidden
            (default: the OAuth secrets ``client_secret``, ``password``, ``code``, ...).
        redact_value: ``redactValue``: what replaces a hidden value (default
            ``[REDACTED]``).
        data_dir, max_bytes, warn_percent: ``dataDir``, ``maxBytes``, ``warnPercent``: the
            stream-recording storage settings (validated and kept).

    Source: SPEC "Admin-side records" (recording redaction configuration), "Limits" (stream
    recording storage).
    """

    model_config = ConfigDict(defer_build=True)  # built inside ConfigFile, or on first use

    filter_headers: list[RedactionName] | None = Field(None, alias="filterHeaders")
    filter_query_params: list[RedactionName] | None = Field(None, alias="filterQueryParams")
    filter_body_keys: list[RedactionName] | None = Field(None, alias="filterBodyKeys")
    redact_value: str | None = Field(None, alias="redactValue", min_length=1)
    data_dir: str | None = Field(None, alias="dataDir")
    max_bytes: int | None = Field(None, alias="maxBytes", ge=0)
    warn_percent: float | None = Field(None, alias="warnPercent", ge=0, le=100)


class ConfigFile(Strict):
    """The whole config file (SPEC "Configuration file")."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, defer_build=True)

    version: str = "1.0"
    kind: str | None = None
    name: str | None = None
    metadata: dict[str, Any] | None = None
    # Typed by their models through LazyModel: built only for a config that has the key.
    server_config: Annotated[Any, LazyModel("mocks.server_config:ServerConfig")] | None = \
        Field(None, alias="serverConfig")
    server: Annotated[Any, LazyModel("mocks.server_config:ServerBlock")] | None = None
    mocks: list[Mock] = Field(default_factory=list)
    tables: list[Annotated[Any, LazyModel("tables.config:TableConfig")]] = \
        Field(default_factory=list)
    extend: list[Annotated[Any, LazyModel("tables.config:ExtendBinding")]] = \
        Field(default_factory=list)
    imports: list[ImportEntry] = Field(default_factory=list)
    custom_operations: list[Annotated[Any, LazyModel(
        "tables.operations_config:CustomOperationConfig")]] = \
        Field(default_factory=list, alias="customOperations")
    stateful_resources: list[Annotated[Any, LazyModel(
        "tables.config:StatefulResourceConfig")]] = \
        Field(default_factory=list, alias="statefulResources")
    recording: RecordingConfig | None = None

    @classmethod
    def __get_pydantic_json_schema__(cls, core_schema: Any, handler: Any) -> dict[str, Any]:
        return untitled_json_schema(handler(core_schema), handler, ("serverConfig", "server"))

    @field_validator("version", mode="before")
    @classmethod
    def _version_text(cls, value: Any) -> Any:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            value = f"{value:.1f}" if isinstance(value, float) else f"{value}.0"
        if value != "1.0":
            raise ValueError(f'unsupported version {value!r}; this mockd reads version "1.0"')
        return value

    @model_validator(mode="before")
    @classmethod
    def _drop_extension_keys(cls, data: Any) -> Any:
        # Behavior notes §14: top-level `x-*` keys are ignored (YAML anchors live there).
        if isinstance(data, dict):
            return {key: value for key, value in data.items()
                    if not (isinstance(key, str) and key.startswith("x-"))}
        return data

    @model_validator(mode="after")
    def _unique_mock_ids(self) -> "ConfigFile":
        seen: set[str] = set()
        for index, mock in enumerate(self.mocks):
            if mock.id in seen:
                raise ValueError(f"mocks[{index}].id: duplicate mock id {mock.id!r}")
            seen.add(mock.id)
        return self


def __getattr__(name: str) -> Any:
    # ``ServerConfig`` is still importable from here, without building it at import time.
    if name == "ServerConfig":
        from mocks.server_config import ServerConfig

        return ServerConfig
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
