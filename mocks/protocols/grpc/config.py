"""The config model of a ``grpc`` mock: port, protos, services and their methods.

Shape (durations are ``"400ms"``, ``"5s"`` or an integer of ms; stored as int ms)::

    grpc:
      port: 50051                        # required, 1-65535; its own gRPC server
      protoFile: ./greeter.proto         # or protoFiles: [...], or protoContent: "syntax ..."
      importPaths: [./protos]            # extra -I folders (relative to the config file)
      protoSources:                      # inline files by import name (what `mockd import -I`
        shop/v1/types.proto: "syntax ..."  # and `mockd grpc add -I` send); protoFile may name one
      reflection: true                   # grpc.reflection.v1alpha / v1 for grpcurl & Postman
      services:
        helloworld.Greeter:              # fully qualified service name
          methods:
            SayHello:
              response: {message: "Hello {{request.name}}"}   # templated JSON of the reply
              match: {metadata: {x-tenant: acme}, request: {name: Bob}}
              variants:                  # tried in order when match is absent or fails
                - match: {request: {name: nobody}}
                  error: {code: NOT_FOUND, message: "no {{request.name}}",
                          details: [{"@type": "type.googleapis.com/google.rpc.ErrorInfo",
                                     reason: NO_USER, domain: example.com}]}
              delay: 50ms
            ListFeatures: {responses: [{name: a}, {name: b}], streamDelay: 100ms}
            CreateUser: {statefulResource: users, statefulAction: create}

A method without an entry (or with an entry that has no answer) answers a schema-typed fake
message.

Source: behavior notes §10 (``grpc`` row, "gRPC ``error.details``"); SPEC "Mock kinds",
"Templating".
"""
from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from mocks.core.durations import DurationMs
from mocks.core.schema import Strict

#: gRPC status code names and numbers (grpc/status codes; ``OK`` = 0 ... ``UNAUTHENTICATED``
#: = 16).
STATUS_CODES: dict[str, int] = {
    "OK": 0, "CANCELLED": 1, "UNKNOWN": 2, "INVALID_ARGUMENT": 3, "DEADLINE_EXCEEDED": 4,
    "NOT_FOUND": 5, "ALREADY_EXISTS": 6, "PERMISSION_DENIED": 7, "RESOURCE_EXHAUSTED": 8,
    "FAILED_PRECONDITION": 9, "ABORTED": 10, "OUT_OF_RANGE": 11, "UNIMPLEMENTED": 12,
    "INTERNAL": 13, "UNAVAILABLE": 14, "DATA_LOSS": 15, "UNAUTHENTICATED": 16,
}

#: Status code number -> name.
STATUS_NAMES: dict[int, str] = {number: name for name, number in STATUS_CODES.items()}

#: ``statefulAction`` values (the table actions of SOAP and REST bindings).
StatefulAction = Literal["list", "get", "create", "update", "patch", "delete", "custom"]


class GrpcError(Strict):
    """``error``: the call ends with this status instead of (or, when streaming, after) the
    response messages.

    Attributes:
        code: a gRPC status code name (``NOT_FOUND``, ``UNAVAILABLE``, ...; any case) or its
            number (``5``); stored as the upper-case name.
        message: the status message; templated.
        details: rich error details: a list of protobuf ``Any`` messages in JSON form
            (``{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": ...}``), sent
            in ``grpc-status-details-bin`` as a ``google.rpc.Status``; a single object is a
            list of one; an object without ``@type`` is sent as a ``google.protobuf.Struct``.
            String values are templated.
    """

    code: str = "UNKNOWN"
    message: str = ""
    details: list[dict[str, Any]] = Field(default_factory=list)

    @field_validator("code", mode="before")
    @classmethod
    def _code_name(cls, value: Any) -> Any:
        if isinstance(value, bool):
            raise ValueError("expected a gRPC status code name such as NOT_FOUND")
        if isinstance(value, int):
            if value not in STATUS_NAMES:
                raise ValueError(f"unknown gRPC status code {value} (0-16)")
            return STATUS_NAMES[value]
        if isinstance(value, str):
            name = value.strip().upper()
            if name not in STATUS_CODES:
                raise ValueError(f"unknown gRPC status code {value!r}; use one of "
                                 + ", ".join(STATUS_CODES))
            return name
        return value

    @field_validator("details", mode="before")
    @classmethod
    def _detail_list(cls, value: Any) -> Any:
        if isinstance(value, dict):
            return [value]
        return [] if value is None else value


class GrpcMatch(Strict):
    """``match``: every condition must hold.

    Attributes:
        metadata: metadata name (case-insensitive) -> exact value.
        request: field path -> expected JSON value; a path is a field name (``name``), a dotted
            path (``user.address.city``) or a JSONPath (``$.items[0].id``) into the request
            message in its JSON form (field names as in the ``.proto`` or in lowerCamelCase).
            Client streaming: the request is ``{messages: [...], count, last}``.
    """

    metadata: dict[str, str] = Field(default_factory=dict)
    request: dict[str, Any] = Field(default_factory=dict)

    @field_validator("metadata", mode="before")
    @classmethod
    def _texts(cls, value: Any) -> Any:
        if isinstance(value, dict):
            return {str(key): (str(item).lower() if isinstance(item, bool) else str(item))
                    for key, item in value.items()}
        return value


class GrpcAnswer(Strict):
    """What a method (or one of its variants) answers.

    Attributes:
        response: the reply message as JSON (templated); unary and client-streaming calls
            send it, server-streaming calls send it when ``responses`` is absent,
            bidirectional calls send it once per received message.
        responses: the messages of a server stream (each templated), sent ``streamDelay``
            apart; a bidirectional call sends all of them per received message.
        delay: time before the first message (or the error), in ms.
        stream_delay: time between stream messages (``streamDelay``), in ms.
        error: end the call with this status (after any ``responses``).
        match: conditions on metadata and request fields (see :class:`GrpcMatch`).
        stateful_resource / stateful_action / operation: answer from a table (``get``,
            ``list``, ``create``, ``update``, ``patch``, ``delete``) or a custom operation
            (``custom`` + ``operation``), the same tables REST and SOAP mocks use.
    """

    response: Any = None
    responses: list[Any] | None = None
    delay: DurationMs = 0
    stream_delay: DurationMs = Field(0, alias="streamDelay")
    error: GrpcError | None = None
    match: GrpcMatch | None = None
    stateful_resource: str | None = Field(None, alias="statefulResource")
    stateful_action: StatefulAction | None = Field(None, alias="statefulAction")
    operation: str | None = None

    @model_validator(mode="after")
    def _stateful_pair(self) -> "GrpcAnswer":
        if self.stateful_resource is not None and self.stateful_action is None:
            raise ValueError("statefulResource needs a statefulAction (get, list, create, "
                             "update, patch, delete or custom)")
        if self.stateful_action is not None and self.stateful_action != "custom" and \
                not self.stateful_resource:
            raise ValueError(f"statefulAction {self.stateful_action} needs a "
                             f"statefulResource (the table name)")
        if self.stateful_action == "custom" and not self.operation:
            raise ValueError("statefulAction custom needs operation (the custom operation "
                             "name)")
        if self.stateful_action is not None and (self.response is not None
                                                 or self.responses is not None):
            raise ValueError("a stateful method answers from its table; remove "
                             "response/responses")
        return self

    @property
    def has_answer(self) -> bool:
        """Whether this entry says what to answer (else a fake message is sent)."""
        return (self.response is not None or self.responses is not None
                or self.error is not None or self.stateful_action is not None)


class GrpcMethod(GrpcAnswer):
    """One entry of ``methods``: its own answer plus ``variants`` (each a
    :class:`GrpcAnswer` with its own ``match``). Entries whose ``match`` holds win in order
    (the method's own entry first); otherwise the first entry without a ``match``; when
    every entry has a ``match`` and none holds the call ends with ``NOT_FOUND``."""

    variants: list[GrpcAnswer] = Field(default_factory=list)


class GrpcService(Strict):
    """One entry of ``services``: ``methods`` by method name."""

    methods: dict[str, GrpcMethod] = Field(default_factory=dict)


#: A ``protoSources`` name: a relative ``/``-separated path ending in ``.proto`` whose
#: segments do not start with ``.`` (so no ``..``, ``.`` or hidden names), with no empty
#: segment, backslash or drive, as ``import`` statements name files.
_SOURCE_NAME = re.compile(r"^[A-Za-z0-9_@+\-][A-Za-z0-9_.@+\-]*"
                          r"(?:/[A-Za-z0-9_@+\-][A-Za-z0-9_.@+\-]*)*\.proto$")


class GrpcMock(Strict):
    """The ``grpc`` block of a mock (see the module docstring).

    Attributes:
        port: the TCP port of the gRPC server (1-65535); gRPC mocks of one port share it.
        proto_file / proto_files / proto_content: the ``.proto`` source (``protoFile``,
            ``protoFiles``, ``protoContent``); files are relative to the config file's
            folder, except a name that is a key of ``protoSources``, which is that inline
            file.
        proto_sources: inline ``.proto`` files (``protoSources``): import name
            (``google/pubsub/v1/schema.proto``) -> file text. They are compiled as if they
            lay in one folder searched before ``importPaths``, so the server reads no file
            for them; ``mockd import -I`` and ``mockd grpc add -I`` send a ``.proto`` and the
            files it imports this way.
        import_paths: extra include folders for ``import`` statements (``importPaths``).
        reflection: register the server reflection service.
        services: service full name -> :class:`GrpcService`.
    """

    port: int = Field(ge=1, le=65535)
    proto_file: str | None = Field(None, alias="protoFile")
    proto_files: list[str] = Field(default_factory=list, alias="protoFiles")
    proto_content: str | None = Field(None, alias="protoContent")
    proto_sources: dict[str, str] = Field(default_factory=dict, alias="protoSources")
    import_paths: list[str] = Field(default_factory=list, alias="importPaths")
    reflection: bool = False
    services: dict[str, GrpcService] = Field(default_factory=dict)

    @field_validator("proto_sources")
    @classmethod
    def _source_names(cls, value: dict[str, str]) -> dict[str, str]:
        for name in value:
            if not _SOURCE_NAME.match(name):
                raise ValueError(f"protoSources name {name!r} is not an import name: use a "
                                 f"relative path such as 'shop/v1/orders.proto' (letters, "
                                 f"digits, '_', '-', '.', '@', '+' and '/'; no '..')")
        return value

    @model_validator(mode="after")
    def _some_proto(self) -> "GrpcMock":
        if not self.proto_file and not self.proto_files and not self.proto_content:
            raise ValueError("give protoFile, protoFiles or protoContent (the .proto that "
                             "describes the services; protoSources only holds files they "
                             "import or name)")
        return self

    @property
    def binds_tables(self) -> bool:
        """Whether any method answers from a table (its compiled form then depends on the
        config's tables, not only on the mock)."""
        return any(answer.stateful_action is not None
                   for service in self.services.values()
                   for method in service.methods.values()
                   for answer in (method, *method.variants))
