"""The config model of a ``websocket`` mock: path, matchers, responses, scenario, limits.

Shape (every duration is ``"400ms"``, ``"5s"`` or an integer of ms; stored as int ms)::

    websocket:
      path: /ws/chat/{room}          # {name} segments capture like HTTP paths
      subprotocols: [chat.v1]        # offered; the first one the client also asks for wins
      requireSubprotocol: false      # true: refuse clients that share none (close 1002)
      matchers:                      # first match answers
        - match: {type: exact, value: ping}          # exact|contains|prefix|suffix|regex|json
          response: {type: text, value: pong}        # text|json|binary (base64), delay
        - match: {type: json, path: $.type, value: join}
          response: {type: json, value: {joined: "{{message.user}}"}}
        - match: {type: contains, value: ignore}
          noResponse: true
      defaultResponse: {type: text, value: "unknown: {{message}}"}
      echoMode: false                # no matcher and no default: send the message back
      scenario: {name, steps: [{type: send|expect|wait, ...}], loop, resetOnReconnect}
      heartbeat: {enabled: true, interval: 30s, timeout: 10s}
      maxMessageSize: 65536          # bytes; larger frames close with 1009
      idleTimeout: 5m                # no frame from the client for this long: close 1001
      maxConnections: 100            # more clients are refused with close 1013

Source: behavior notes §10 (``websocket`` row and "Shapes inside those configs"); SPEC
"Mock", "Templating".
"""
from __future__ import annotations

import base64
import binascii
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from mocks.core.durations import DurationMs
from mocks.core.schema import Strict

#: Default largest message a client may send, in bytes (1 MiB).
DEFAULT_MAX_MESSAGE_SIZE = 1024 * 1024
#: Largest ``maxMessageSize`` accepted, in bytes (16 MiB).
MAX_MESSAGE_SIZE_LIMIT = 16 * 1024 * 1024

MatchType = Literal["exact", "contains", "prefix", "suffix", "regex", "json"]


class MessageMatch(Strict):
    """``match``: one condition on an incoming message.

    Attributes:
        type: ``exact``, ``contains``, ``prefix``, ``suffix``, ``regex`` (searched; inline
            flags work) on the message text, or ``json``: the message parses as JSON and the
            value at ``path`` (JSONPath; the whole document when absent) equals ``value``.
        value: the text (or, for ``json``, the JSON value) to compare with.
        path: JSONPath of a ``json`` match (``$.type``).
        message_type: ``text`` or ``binary``: only messages of that frame type match
            (binary frames are compared as UTF-8 text with replacement).
    """

    type: MatchType
    value: Any = None
    path: str | None = None
    message_type: Literal["text", "binary"] | None = Field(None, alias="messageType")

    @model_validator(mode="after")
    def _value_fits_type(self) -> "MessageMatch":
        if self.type != "json":
            if self.path is not None:
                raise ValueError("path is only used by type json")
            if not isinstance(self.value, str):
                raise ValueError(f"type {self.type} needs a text value")
        elif self.value is None and self.path is None:
            raise ValueError("type json needs a value, a path, or both")
        return self


class MessageResponse(Strict):
    """A message the server sends: ``{type: text|json|binary, value, delay?}``.

    ``text`` values and the strings inside ``json`` values are templates; a ``binary`` value
    is standard base64 of the bytes to send (never templated). ``delay`` waits before sending
    (stored in ms).
    """

    type: Literal["text", "json", "binary"] = "text"
    value: Any = None
    delay: DurationMs = 0

    @model_validator(mode="after")
    def _value_fits_type(self) -> "MessageResponse":
        if self.type == "text" and not isinstance(self.value, str):
            if self.value is None:
                raise ValueError("type text needs a value")
            raise ValueError("type text needs a text value; use type json for objects")
        if self.type == "binary":
            if not isinstance(self.value, str):
                raise ValueError("type binary needs a base64 text value")
            try:
                base64.b64decode(self.value, validate=True)
            except (binascii.Error, ValueError):
                raise ValueError("type binary needs standard base64 text") from None
        return self


class MessageMatcher(Strict):
    """One entry of ``matchers``: a ``match`` and what it answers (``response``), or
    ``noResponse: true`` to swallow the message."""

    match: MessageMatch
    response: MessageResponse | None = None
    no_response: bool = Field(False, alias="noResponse")

    @model_validator(mode="after")
    def _one_outcome(self) -> "MessageMatcher":
        if self.response is None and not self.no_response:
            raise ValueError("give a response or noResponse: true")
        if self.response is not None and self.no_response:
            raise ValueError("give either response or noResponse: true, not both")
        return self


class ScenarioStep(Strict):
    """One step of a scenario.

    Attributes:
        type: ``send`` (send ``message``), ``expect`` (wait for a client message matching
            ``match``, at most ``timeout``), ``wait`` (pause ``duration``).
        optional: an ``expect`` step that times out or sees a message that does not match is
            skipped instead of ending the scenario.
    """

    type: Literal["send", "expect", "wait"]
    message: MessageResponse | None = None
    match: MessageMatch | None = None
    duration: DurationMs | None = None
    timeout: DurationMs | None = None
    optional: bool = False

    @model_validator(mode="after")
    def _fields_fit_type(self) -> "ScenarioStep":
        needs = {"send": "message", "expect": "match", "wait": "duration"}[self.type]
        if getattr(self, needs) is None:
            article = "an" if self.type == "expect" else "a"
            raise ValueError(f"{article} {self.type} step needs {needs}")
        return self


class Scenario(Strict):
    """``scenario``: a scripted conversation run for each connection.

    Attributes:
        name: a label (request log, admin listings).
        steps: run in order when the client connects.
        loop: start again at the first step after the last.
        reset_on_reconnect: each new connection starts at the first step (default); when
            false, a new connection resumes where the previous connection of this mock
            stopped.
    """

    name: str = ""
    steps: list[ScenarioStep] = Field(min_length=1)
    loop: bool = False
    reset_on_reconnect: bool = Field(True, alias="resetOnReconnect")


class Heartbeat(Strict):
    """``heartbeat``: a ping every ``interval``; no pong within ``timeout`` closes with 1011."""

    enabled: bool = True
    interval: DurationMs = 30_000
    timeout: DurationMs = 10_000

    @field_validator("interval")
    @classmethod
    def _interval_positive(cls, value: int) -> int:
        if value < 100:
            raise ValueError("interval must be at least 100ms")
        return value


class WebSocketMock(Strict):
    """The ``websocket`` block of a mock (see the module docstring)."""

    path: str
    subprotocols: list[str] = Field(default_factory=list)
    require_subprotocol: bool = Field(False, alias="requireSubprotocol")
    matchers: list[MessageMatcher] = Field(default_factory=list)
    default_response: MessageResponse | None = Field(None, alias="defaultResponse")
    echo_mode: bool = Field(False, alias="echoMode")
    scenario: Scenario | None = None
    heartbeat: Heartbeat | None = None
    max_message_size: int = Field(DEFAULT_MAX_MESSAGE_SIZE, alias="maxMessageSize", ge=1,
                                  le=MAX_MESSAGE_SIZE_LIMIT)
    idle_timeout: DurationMs | None = Field(None, alias="idleTimeout")
    max_connections: int | None = Field(None, alias="maxConnections", ge=1)

    @field_validator("path")
    @classmethod
    def _path_absolute(cls, value: str) -> str:
        if not value.startswith("/"):
            raise ValueError(f"path must start with '/', got {value!r}")
        return value

    @model_validator(mode="after")
    def _subprotocols_to_require(self) -> "WebSocketMock":
        if self.require_subprotocol and not self.subprotocols:
            raise ValueError("requireSubprotocol needs a subprotocols list")
        return self
