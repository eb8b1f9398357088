"""The one config schema (ARCHITECTURE seam 1): pydantic models for the config file.

The file loader, the admin API bodies, export and the published JSON Schema all use these
models. Keys stay camelCase through aliases; Python attributes are snake_case.

Source: SPEC "Configuration file", "Mock", "HTTP mock", "Matcher", "Response"; behavior notes
§14 (validator rules, shorthand mocks, ``x-*`` keys, ``serverConfig`` keys).
"""
from __future__ import annotations

import secrets
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from tables.config import (ExtendBinding, FieldRule, StatefulBinding,
                           StatefulResourceConfig, TableConfig)
from tables.operations_config import CustomOperationConfig

from mocks.protocols.streaming.config import ChunkedConfig, SseConfig, check_stream_placement
from mocks.server_config import ServerBlock, ServerConfig

MOCK_TYPES = ("http", "graphql", "grpc", "websocket", "mqtt", "soap", "oauth")
HTTP_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS")


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
    """

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    path: str | None = None
    url: str | None = None
    as_prefix: str | None = Field(None, alias="as", min_length=1, pattern=r"^[A-Za-z0-9_.:@+-]+$")
    format: str | None = None
    include_static: bool = Field(False, alias="includeStatic")

    @model_validator(mode="after")
    def _path_or_url(self) -> "ImportEntry":
        if bool(self.path) == bool(self.url):
            raise ValueError("give either path or url")
        if self.url and not self.url.startswith(("http://", "https://")):
            raise ValueError("url must start with http:// or https://")
        return self


class Strict(BaseModel):
    """Base for config objects: unknown keys are errors, camelCase aliases accepted."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=False)


class Open(BaseModel):
    """Base for config objects whose full shape belongs to a later feature: kept as given."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)


class JsonPathExists(Strict):
    """``{exists: true|false}`` as a ``bodyJsonPath`` value."""

    exists: bool


class Matcher(Strict):
    """SPEC "Matcher": every field present becomes one condition; all must hold."""

    method: str | None = None
    path: str | None = None
    path_pattern: str | None = Field(None, alias="pathPattern")
    query_params: dict[str, str] | None = Field(None, alias="queryParams")
    headers: dict[str, str] | None = None
    body_contains: str | None = Field(None, alias="bodyContains")
    body_equals: str | None = Field(None, alias="bodyEquals")
    body_pattern: str | None = Field(None, alias="bodyPattern")
    body_json_path: dict[str, JsonPathExists | str | int | float | bool | None] | None = Field(
        None, alias="bodyJsonPath")

    @field_validator("method")
    @classmethod
    def _method_known(cls, value: str | None) -> str | None:
        if value is None:
            return None
        upper = value.upper()
        if upper not in HTTP_METHODS:
            raise ValueError(f"unknown method {value!r}; use one of {', '.join(HTTP_METHODS)}")
        return upper

    @field_validator("path")
    @classmethod
    def _path_absolute(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith("/"):
            raise ValueError(f"path must start with '/', got {value!r}")
        return value

    @field_validator("query_params", "headers", mode="before")
    @classmethod
    def _scalar_values_as_text(cls, value: Any) -> Any:
        # YAML turns `page: 1` into an int; the matcher compares text.
        if isinstance(value, dict):
            return {key: _scalar_text(item) for key, item in value.items()}
        return value


def _scalar_text(value: Any) -> Any:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    return value


class Response(Strict):
    """SPEC "Response": a static or templated answer."""

    status_code: int = Field(200, alias="statusCode", ge=100, le=599)
    headers: dict[str, str] | None = None
    body: Any = None
    body_file: str | None = Field(None, alias="bodyFile")
    delay_ms: int = Field(0, alias="delayMs", ge=0, le=30000)
    seed: int | None = None

    @field_validator("headers", mode="before")
    @classmethod
    def _header_values_as_text(cls, value: Any) -> Any:
        if isinstance(value, dict):
            return {key: _scalar_text(item) for key, item in value.items()}
        return value

    @model_validator(mode="after")
    def _body_xor_body_file(self) -> "Response":
        if self.body is not None and self.body_file is not None:
            raise ValueError("give either body or bodyFile, not both")
        return self


class RequestValidation(Strict):
    """``http.validation``: rules the request must satisfy before the mock answers (behavior
    notes §7). Rule keys and formats are those of table validation (:class:`FieldRule`).

    Attributes:
        mode: ``strict`` (default: any failure rejects), ``warn`` (never rejects; the issues
            go to the ``X-Mockd-Validation-Warnings`` header), ``permissive`` (only
            ``required`` failures reject).
        fields: ``{dot.path: rule}`` over the JSON body (``items.sku`` reaches every element).
        required: body dot paths that must be present and not null.
        path_params, query_params, headers: ``{name: rule}`` over the text values of the path
            parameters, the query (first value) and the headers (names compared without case);
            ``type: integer|number|boolean`` parses the text first.
        json_schema: a JSON Schema object (``schema``): its ``properties``/``required`` become
            body rules, its root ``type`` is checked (code ``schema``) and
            ``additionalProperties: false`` reports other top-level keys (``unknown_field``).
        fail_status: status of the rejection (default 400).
    """

    mode: Literal["strict", "warn", "permissive"] = "strict"
    fields: dict[str, FieldRule] = Field(default_factory=dict)
    required: list[str] = Field(default_factory=list)
    path_params: dict[str, FieldRule] = Field(default_factory=dict, alias="pathParams")
    query_params: dict[str, FieldRule] = Field(default_factory=dict, alias="queryParams")
    headers: dict[str, FieldRule] = Field(default_factory=dict)
    json_schema: dict[str, Any] | None = Field(None, alias="schema")
    fail_status: int = Field(400, alias="failStatus", ge=100, le=599)


class HttpMock(Strict):
    """SPEC "HTTP mock" (``http`` key of a mock)."""

    priority: int = Field(0, ge=0)
    matcher: Matcher
    response: Response | None = None
    sse: SseConfig | None = None
    chunked: ChunkedConfig | None = None
    stateful_operation: str | None = Field(None, alias="statefulOperation")
    stateful_binding: StatefulBinding | None = Field(None, alias="statefulBinding")
    validation: RequestValidation | None = None

    @model_validator(mode="after")
    def _stream_replaces_response(self) -> "HttpMock":
        check_stream_placement(self)  # behavior notes §9: sse/chunked instead of response
        return self


class Mock(Strict):
    """SPEC "Mock". Only the protocol key that matches ``type`` is used."""

    id: str = ""
    type: Literal["http", "graphql", "grpc", "websocket", "mqtt", "soap", "oauth"] = "http"
    name: str | None = None
    description: str | None = None
    enabled: bool = True
    workspace_id: str | None = Field(None, alias="workspaceId")
    parent_id: str | None = Field(None, alias="parentId")
    meta_sort_key: float | None = Field(None, alias="metaSortKey")
    created_at: str | None = Field(None, alias="createdAt")
    updated_at: str | None = Field(None, alias="updatedAt")
    http: HttpMock | None = None
    graphql: dict[str, Any] | None = None
    grpc: dict[str, Any] | None = None
    websocket: dict[str, Any] | None = None
    mqtt: dict[str, Any] | None = None
    soap: dict[str, Any] | None = None
    oauth: dict[str, Any] | None = None

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
    def _protocol_key_present(self) -> "Mock":
        if getattr(self, self.type) is None:
            raise ValueError(f"a mock of type {self.type!r} needs a {self.type!r} object")
        if not self.id:
            self.id = new_mock_id(self.type)
        return self


class ConfigFile(Strict):
    """The whole config file (SPEC "Configuration file")."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    version: str = "1.0"
    kind: str | None = None
    name: str | None = None
    metadata: dict[str, Any] | None = None
    server_config: ServerConfig | None = Field(None, alias="serverConfig")
    server: ServerBlock | None = None
    mocks: list[Mock] = Field(default_factory=list)
    tables: list[TableConfig] = Field(default_factory=list)
    extend: list[ExtendBinding] = Field(default_factory=list)
    imports: list[ImportEntry] = Field(default_factory=list)
    custom_operations: list[CustomOperationConfig] = Field(default_factory=list,
                                                           alias="customOperations")
    stateful_resources: list[StatefulResourceConfig] = Field(default_factory=list,
                                                             alias="statefulResources")
    recording: dict[str, Any] | None = None

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
