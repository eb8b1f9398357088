"""A ``websocket`` mock compiled once per snapshot: matchers, responses, scenario steps.

Nothing here is compiled per message: regexes, JSONPaths, templates and binary payloads are
built when the snapshot is compiled, and a bad one is a :class:`ConfigError` naming its key
(``mocks[2].websocket.matchers[1].match.value: bad regex ...``).

A message is matched and answered through a :class:`~mocks.core.request.MockRequest` whose
body is the message (:func:`message_request`): so ``{{message}}``, ``{{message.<path>}}``,
``{{request.pathParam.x}}`` and ``{{request.query.x}}`` all render from one context, and the
message's text and JSON are decoded at most once.

Source: behavior notes §10 (``websocket`` row, "Shapes inside those configs"); SPEC
"Templating".
"""
from __future__ import annotations

import base64
import re
from dataclasses import dataclass
from typing import Any

import orjson

from mocks.core.errors import ConfigError
from mocks.core.paths import PathForm, compile_path
from mocks.core.request import INVALID_JSON, MockRequest
from mocks.core.templating import (RenderContext, TemplateError, TemplateState, compile_template,
                                   compile_value, resolve_seed)
from mocks.protocols.http.conditions import json_path_query, json_values_equal
from mocks.protocols.websocket.config import (MessageMatch, MessageResponse, ScenarioStep,
                                              WebSocketMock)


def message_request(upgrade: MockRequest, data: bytes) -> MockRequest:
    """A request for one message: the upgrade request's method, path, query, headers and
    peer, with ``data`` as its body."""
    return MockRequest(upgrade.method, upgrade.path, upgrade.query_string, body=data,
                       scheme=upgrade.scheme, raw_headers=upgrade.raw_headers,
                       peer=upgrade.peer, server=upgrade.server, tls=upgrade.tls)


class CompiledMatch:
    """One ``match`` (see :class:`~mocks.protocols.websocket.config.MessageMatch`).

    :meth:`matches` takes the message's request (:func:`message_request`) and whether the
    frame was binary; it never raises (malformed JSON simply does not match).
    """

    __slots__ = ("kind", "text", "regex", "query", "expected", "message_type")

    def __init__(self, match: MessageMatch, key_path: str):
        self.kind = match.type
        self.message_type = match.message_type
        self.text = match.value if isinstance(match.value, str) else ""
        self.regex: re.Pattern[str] | None = None
        self.query: Any = None
        self.expected = match.value
        if self.kind == "regex":
            try:
                self.regex = re.compile(self.text)
            except re.error as error:
                raise ConfigError(f"{key_path}.value", f"bad regex {self.text!r}: {error}") \
                    from None
        elif self.kind == "json" and match.path is not None:
            self.query = json_path_query(match.path, f"{key_path}.path")

    def matches(self, request: MockRequest, binary: bool) -> bool:
        """Whether the message (its request) satisfies this match."""
        if self.message_type is not None and (self.message_type == "binary") != binary:
            return False
        kind = self.kind
        if kind == "json":
            document = request.json
            if document is INVALID_JSON:
                return False
            if self.query is None:
                return json_values_equal(self.expected, document)
            found = self.query.find(document)
            if self.expected is None:
                return bool(found)
            return any(json_values_equal(self.expected, value) for value in found)
        text = request.text
        if kind == "exact":
            return text == self.text
        if kind == "contains":
            return self.text in text
        if kind == "prefix":
            return text.startswith(self.text)
        if kind == "suffix":
            return text.endswith(self.text)
        return self.regex.search(text) is not None  # regex


@dataclass(frozen=True, slots=True)
class OutgoingMessage:
    """A rendered message: ``data`` is ``str`` for a text frame, ``bytes`` for a binary one."""

    data: str | bytes
    delay_seconds: float


class CompiledResponse:
    """One ``{type, value, delay}`` message (see
    :class:`~mocks.protocols.websocket.config.MessageResponse`), templates compiled."""

    __slots__ = ("kind", "template", "value_template", "payload", "delay_seconds")

    def __init__(self, response: MessageResponse, key_path: str):
        self.kind = response.type
        self.delay_seconds = response.delay / 1000.0
        self.template: Any = None
        self.value_template: Any = None
        self.payload: bytes | None = None
        try:
            if self.kind == "text":
                self.template = compile_template(response.value)
            elif self.kind == "json":
                self.value_template = compile_value(response.value)
            else:
                self.payload = base64.b64decode(response.value)
        except TemplateError as error:
            raise ConfigError(f"{key_path}.value", str(error)) from None

    def render(self, request: MockRequest, path_params: dict[str, str],
               state: TemplateState) -> OutgoingMessage:
        """The message to send for ``request`` (the incoming message's, or the upgrade's)."""
        if self.payload is not None:
            return OutgoingMessage(self.payload, self.delay_seconds)
        context = RenderContext(request, path_params, resolve_seed(request, None), state)
        if self.template is not None:
            return OutgoingMessage(self.template.render(context), self.delay_seconds)
        value = self.value_template.render(context)
        return OutgoingMessage(orjson.dumps(value).decode(), self.delay_seconds)


@dataclass(frozen=True, slots=True)
class CompiledStep:
    """One scenario step: ``kind`` ``send`` (``message``), ``expect`` (``match``,
    ``timeout_seconds``), ``wait`` (``duration_seconds``); ``optional`` for expect."""

    kind: str
    message: CompiledResponse | None
    match: CompiledMatch | None
    duration_seconds: float
    timeout_seconds: float | None
    optional: bool


class CompiledWebSocketMock:
    """Everything one ``websocket`` mock needs at run time.

    Attributes:
        mock_id, name: the mock's id and name.
        path: the configured path; ``path_form`` its compiled form (``{name}`` captures).
        rules: ``[(match, response or None)]`` in order; None = ``noResponse``.
        default: the ``defaultResponse``, or None.
        echo: ``echoMode``.
        steps: the compiled scenario (empty without one); ``loop``, ``reset_on_reconnect``,
            ``scenario_name``.
        heartbeat: ``(interval s, timeout s)`` or None.
        max_message_size: bytes; idle_timeout: seconds or None; max_connections or None.
        subprotocols, require_subprotocol: negotiation.
    """

    def __init__(self, mock: Any, config: WebSocketMock, key_path: str, path: str):
        self.mock_id: str = mock.id
        self.name: str | None = mock.name
        self.path = path
        self.path_form: PathForm = compile_path(path, f"{key_path}.path")
        self.rules: list[tuple[CompiledMatch, CompiledResponse | None]] = []
        for index, rule in enumerate(config.matchers):
            here = f"{key_path}.matchers[{index}]"
            response = (CompiledResponse(rule.response, f"{here}.response")
                        if rule.response is not None else None)
            self.rules.append((CompiledMatch(rule.match, f"{here}.match"), response))
        self.default = (CompiledResponse(config.default_response, f"{key_path}.defaultResponse")
                        if config.default_response is not None else None)
        self.echo = config.echo_mode
        scenario = config.scenario
        self.steps: tuple[CompiledStep, ...] = ()
        self.loop = False
        self.reset_on_reconnect = True
        self.scenario_name = ""
        if scenario is not None:
            self.steps = tuple(_compile_step(step, f"{key_path}.scenario.steps[{index}]")
                               for index, step in enumerate(scenario.steps))
            self.loop = scenario.loop
            self.reset_on_reconnect = scenario.reset_on_reconnect
            self.scenario_name = scenario.name
        beat = config.heartbeat
        self.heartbeat = ((beat.interval / 1000.0, beat.timeout / 1000.0)
                          if beat is not None and beat.enabled else None)
        self.max_message_size = config.max_message_size
        self.idle_timeout = config.idle_timeout / 1000.0 if config.idle_timeout else None
        self.max_connections = config.max_connections
        self.subprotocols = tuple(config.subprotocols)
        self.require_subprotocol = config.require_subprotocol

    def answer(self, request: MockRequest, binary: bool) -> CompiledResponse | None | bool:
        """What answers one message: the first matching rule's response (None for
        ``noResponse``), else the default response, else True for echo, else False (no
        answer)."""
        for match, response in self.rules:
            if match.matches(request, binary):
                return response
        if self.default is not None:
            return self.default
        return self.echo

    def choose_subprotocol(self, offered: list[str]) -> str | None:
        """The first configured subprotocol the client offered, or None."""
        for name in self.subprotocols:
            if name in offered:
                return name
        return None


def _compile_step(step: ScenarioStep, key_path: str) -> CompiledStep:
    return CompiledStep(
        kind=step.type,
        message=(CompiledResponse(step.message, f"{key_path}.message")
                 if step.message is not None else None),
        match=CompiledMatch(step.match, f"{key_path}.match") if step.match is not None else None,
        duration_seconds=(step.duration or 0) / 1000.0,
        timeout_seconds=step.timeout / 1000.0 if step.timeout is not None else None,
        optional=step.optional)
