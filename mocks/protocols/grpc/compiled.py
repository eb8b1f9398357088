"""A ``grpc`` mock's methods compiled once per snapshot: conditions, templates, statuses.

A call is answered through a :class:`~mocks.core.request.MockRequest` built for it
(:func:`call_request`): method ``grpc``, path ``/pkg.Service/Method``, the call metadata as
headers and the request message's JSON form (:func:`~mocks.protocols.grpc.messages.
to_document`) as the body, so ``{{request.body.x}}``, ``{{request.header.x}}``, ``uuid``,
``faker.*`` ... render as everywhere else. gRPC spellings are rewritten once at compile
(:func:`rewrite_template`): ``{{request.<field>}}`` reads a request field
(``request.body.<field>``), ``{{request.metadata.<name>}}`` a metadata value, and field
names written as in the ``.proto`` (``user_id``) read the JSON name (``userId``).

Static answers (no template, no table) are serialized at compile time: a call then sends
prepared bytes.

Source: behavior notes §10 (``grpc`` row, "gRPC ``error.details``"); SPEC "Templating".
Django-free.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable

import orjson
from google.protobuf import any_pb2, json_format, message_factory, struct_pb2
from google.protobuf import descriptor_pool as default_pools
from google.rpc import error_details_pb2, status_pb2  # noqa: F401 - registers google.rpc types

from mocks.core.errors import ConfigError
from mocks.core.request import MockRequest
from mocks.core.templating import (RenderContext, TemplateError, TemplateState, compile_value,
                                   resolve_seed)
from mocks.protocols.grpc.config import STATUS_CODES, GrpcAnswer, GrpcError, GrpcMethod
from mocks.protocols.grpc.messages import (MessageError, canonical_steps, encode,
                                           fake_document)
from mocks.protocols.grpc.protos import MethodInfo, ProtoSet
from mocks.protocols.http.conditions import json_path_query, json_values_equal

#: Status number of a call that ended well.
OK = 0

#: ``request.<name>`` fields of the template language that keep their meaning in gRPC.
_REQUEST_FIELDS = {"method", "path", "url", "rawbody", "pathparam", "query", "header"}
_BLOCK = re.compile(r"\{\{(.*?)\}\}", re.S)
_REQUEST_REF = re.compile(r"\brequest\.([A-Za-z_]\w*)((?:\.[A-Za-z_]\w*|\.\d+|\[\d+\])*)")
_STEP = re.compile(r"\.?([A-Za-z_]\w*|\d+)|\[(\d+)\]")


class CallError(Exception):
    """A call that ends with a non-OK status.

    Attributes:
        code: the status number (``5`` = ``NOT_FOUND``).
        message: the status message.
        details: serialized ``google.rpc.Status`` for ``grpc-status-details-bin``, or None.
        metadata: more trailing metadata, ``((name, value), ...)`` (``retry-after``).
    """

    def __init__(self, code: int, message: str, details: bytes | None = None,
                 metadata: tuple[tuple[str, str], ...] = ()):
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details
        self.metadata = metadata


def call_request(path: str, metadata: list[tuple[str, str]], document: Any,
                 peer: str = "") -> MockRequest:
    """The :class:`MockRequest` of one call (or one message of a stream): method ``grpc``,
    ``path``, metadata as headers, ``document`` as the JSON body (already decoded, so
    templates and matchers never parse it again)."""
    request = MockRequest("GRPC", path, "", header_pairs=metadata,
                          body=orjson.dumps(document), scheme="grpc", client=peer)
    request.method = "grpc"  # the request log and metrics name the protocol in lower case
    request.__dict__["json"] = document
    return request


# ---------------------------------------------------------------------------- templates


def _path_canonicalizer(info: MethodInfo) -> Callable[[list[str]], list[str]]:
    """Rewrites a field path from the request root to JSON names."""
    if info.kind == "client_stream":
        def canon(steps: list[str]) -> list[str]:
            if steps and steps[0] == "messages" and len(steps) > 1 and steps[1].isdigit():
                return steps[:2] + canonical_steps(info.input, steps[2:])
            if steps and steps[0] == "last":
                return steps[:1] + canonical_steps(info.input, steps[1:])
            return steps
        return canon
    return lambda steps: canonical_steps(info.input, steps)


def _steps(text: str) -> list[str]:
    return [name or index for name, index in _STEP.findall(text)]


def _joined(steps: list[str]) -> str:
    out = ""
    for step in steps:
        out += f"[{step}]" if step.isdigit() and out else ("." + step if out else step)
    return out


def rewrite_template(text: str, canon: Callable[[list[str]], list[str]]) -> str:
    """``text`` with gRPC template spellings rewritten (see the module docstring)."""
    if "{{" not in text or "request." not in text:
        return text

    def reference(found: re.Match[str]) -> str:
        head, rest = found.group(1), found.group(2)
        lower = head.lower()
        if lower in _REQUEST_FIELDS:
            return found.group(0)
        if lower == "metadata":
            return "request.header" + rest
        steps = _steps(rest) if lower == "body" else [head, *_steps(rest)]
        return "request.body." + _joined(canon(steps)) if steps else "request.body"

    return _BLOCK.sub(lambda block: "{{" + _REQUEST_REF.sub(reference, block.group(1)) + "}}",
                      text)


def _rewrite_value(value: Any, canon: Callable[[list[str]], list[str]]) -> Any:
    if isinstance(value, str):
        return rewrite_template(value, canon)
    if isinstance(value, dict):
        return {key: _rewrite_value(item, canon) for key, item in value.items()}
    if isinstance(value, list):
        return [_rewrite_value(item, canon) for item in value]
    return value


# ---------------------------------------------------------------------------- messages


class CompiledMessage:
    """One reply message (``response`` or an item of ``responses``): prepared bytes when
    static, else a value template rendered and encoded per call."""

    __slots__ = ("static", "static_json", "template", "message_class", "pool")

    def __init__(self, value: Any, info: MethodInfo, protos: ProtoSet, key: str,
                 canon: Callable[[list[str]], list[str]]):
        self.message_class = protos.message_class(info.output)
        self.pool = protos.pool
        self.static: bytes | None = None
        self.static_json = b""
        try:
            self.template = compile_value(_rewrite_value(value, canon))
        except TemplateError as error:
            raise ConfigError(key, str(error)) from None
        if self.template.is_static:
            try:
                self.static = encode(value, self.message_class, self.pool)
                self.static_json = orjson.dumps(value)
            except MessageError as error:
                raise ConfigError(key, f"not a valid {info.output.full_name}: {error}") \
                    from None

    def render(self, context: RenderContext) -> tuple[bytes, bytes]:
        """``(serialized message, its JSON as logged)``; raises :class:`CallError`
        (``INTERNAL``) when the rendered JSON does not fit the message type."""
        if self.static is not None:
            return self.static, self.static_json
        value = self.template.render(context)
        try:
            return encode(value, self.message_class, self.pool), orjson.dumps(value)
        except MessageError as error:
            raise CallError(STATUS_CODES["INTERNAL"], f"the mock's answer is not a valid "
                                                      f"{self.message_class.DESCRIPTOR.full_name}:"
                                                      f" {error}") from None


# ---------------------------------------------------------------------------- errors


def _detail_any(value: Any, protos: ProtoSet) -> any_pb2.Any:
    """One ``error.details`` entry packed as ``Any``; raises ``ValueError``."""
    packed = any_pb2.Any()
    if not isinstance(value, dict):
        raise ValueError(f"a detail must be a JSON object, got {type(value).__name__}")
    type_url = value.get("@type")
    if not type_url:
        struct = struct_pb2.Struct()
        struct.update(value)
        packed.Pack(struct)
        return packed
    name = str(type_url).rpartition("/")[2]
    try:
        descriptor = protos.find_message(name)
        pool = protos.pool
    except KeyError:
        try:
            descriptor = default_pools.Default().FindMessageTypeByName(name)
        except KeyError:
            raise ValueError(f"unknown detail type {type_url!r} (google.rpc.* types and the "
                             f"messages of the mock's .proto are known)") from None
        pool = default_pools.Default()
    message = message_factory.GetMessageClass(descriptor)()
    fields = {key: item for key, item in value.items() if key != "@type"}
    try:
        json_format.ParseDict(fields, message, descriptor_pool=pool)
    except json_format.ParseError as error:
        raise ValueError(f"{name}: {error}") from None
    packed.Pack(message)
    return packed


class CompiledError:
    """``error`` compiled: the status code, the message template and the details (prepared
    bytes of the ``google.rpc.Status`` when nothing in them is templated)."""

    __slots__ = ("code", "message", "details", "protos", "static_details", "name")

    def __init__(self, error: GrpcError, protos: ProtoSet, key: str,
                 canon: Callable[[list[str]], list[str]]):
        self.name = error.code
        self.code = STATUS_CODES[error.code]
        self.protos = protos
        try:
            self.message = compile_value(rewrite_template(error.message, canon))
            self.details = (compile_value(_rewrite_value(error.details, canon))
                            if error.details else None)
        except TemplateError as error_text:
            raise ConfigError(key, str(error_text)) from None
        self.static_details: bytes | None = None
        if self.details is not None:
            for index, detail in enumerate(error.details):
                if self.details.is_static or "{{" not in orjson.dumps(detail).decode():
                    try:
                        _detail_any(detail, protos)
                    except ValueError as problem:
                        raise ConfigError(f"{key}.details[{index}]", str(problem)) from None

    def raise_for(self, context: RenderContext) -> None:
        """Raise the :class:`CallError` of this error for one call."""
        message = str(self.message.render(context))
        details = None
        if self.details is not None:
            status = status_pb2.Status(code=self.code, message=message)
            try:
                for detail in self.details.render(context):
                    status.details.append(_detail_any(detail, self.protos))
            except ValueError as problem:
                raise CallError(STATUS_CODES["INTERNAL"],
                                f"the mock's error details are not valid: {problem}") from None
            details = status.SerializeToString()
        raise CallError(self.code, message, details)


# ---------------------------------------------------------------------------- conditions


class CompiledMatch:
    """``match`` compiled: metadata pairs (lower-case names) and request-field queries."""

    __slots__ = ("metadata", "fields")

    def __init__(self, metadata: dict[str, str], request: dict[str, Any], key: str,
                 canon: Callable[[list[str]], list[str]]):
        self.metadata = tuple((name.lower(), value) for name, value in metadata.items())
        fields = []
        for path, expected in request.items():
            expression = path if path.startswith("$") else "$." + _joined(canon(_steps(path)))
            fields.append((json_path_query(expression, f"{key}.request.{path}"), expected))
        self.fields = tuple(fields)

    def holds(self, request: MockRequest) -> bool:
        """Whether every condition holds for the call's request."""
        headers = request.headers
        for name, value in self.metadata:
            if headers.get(name) != value:
                return False
        document = request.json
        for query, expected in self.fields:
            if not any(json_values_equal(expected, found) for found in query.find(document)):
                return False
        return True


# ---------------------------------------------------------------------------- answers


@dataclass(frozen=True, slots=True)
class TableAction:
    """A method answered from a table: ``action`` on ``table`` (``operation`` for
    ``custom``)."""

    action: str
    table: str
    operation: str | None


class CompiledAnswer:
    """One answer of a method (its own entry or a variant).

    Attributes:
        match: the conditions, or None (a default answer).
        messages: the reply messages in order (``responses``, else ``[response]``).
        error: the status to end with, or None.
        delay: seconds before the first message; stream_delay: seconds between messages.
        table: the table action, or None.
        fake: True when the entry says nothing to answer (a fake message is sent).
    """

    __slots__ = ("match", "messages", "error", "delay", "stream_delay", "table", "fake")

    def __init__(self, answer: GrpcAnswer, info: MethodInfo, protos: ProtoSet, key: str,
                 canon: Callable[[list[str]], list[str]]):
        self.match = (CompiledMatch(answer.match.metadata, answer.match.request,
                                    f"{key}.match", canon)
                      if answer.match is not None and (answer.match.metadata
                                                       or answer.match.request) else None)
        if answer.responses is not None:
            self.messages = tuple(CompiledMessage(value, info, protos,
                                                  f"{key}.responses[{index}]", canon)
                                  for index, value in enumerate(answer.responses))
        elif answer.response is not None:
            self.messages = (CompiledMessage(answer.response, info, protos, f"{key}.response",
                                             canon),)
        else:
            self.messages = ()
        self.error = (CompiledError(answer.error, protos, f"{key}.error", canon)
                      if answer.error is not None else None)
        self.delay = answer.delay / 1000.0
        self.stream_delay = answer.stream_delay / 1000.0
        self.table = (TableAction(answer.stateful_action, answer.stateful_resource or "",
                                  answer.operation)
                      if answer.stateful_action is not None else None)
        self.fake = not answer.has_answer


class CompiledMethod:
    """Everything one RPC of a mock needs at run time.

    Attributes:
        info: the method's :class:`~mocks.protocols.grpc.protos.MethodInfo`.
        mock_id: the mock that serves it.
        protos: the mock's :class:`~mocks.protocols.grpc.protos.ProtoSet`.
        answers: the method's own answer, then its variants (empty: fake messages only).
        input_class, output_class: dynamic message classes of request and reply.
        tables: the engine's table store (None when compiled only to validate).
        state: the engine's template state (sequences).
    """

    def __init__(self, info: MethodInfo, mock_id: str, protos: ProtoSet,
                 config: GrpcMethod | None, key: str, tables: Any, state: TemplateState):
        self.info = info
        self.mock_id = mock_id
        self.protos = protos
        self.input_class = protos.message_class(info.input)
        self.output_class = protos.message_class(info.output)
        self.tables = tables
        self.state = state
        canon = _path_canonicalizer(info)
        answers: list[CompiledAnswer] = []
        if config is not None:
            answers.append(CompiledAnswer(config, info, protos, key, canon))
            answers += [CompiledAnswer(variant, info, protos, f"{key}.variants[{index}]", canon)
                        for index, variant in enumerate(config.variants)]
        self.answers = tuple(answers)
        self._conditioned = tuple(answer for answer in self.answers if answer.match is not None)
        self._default = next((answer for answer in self.answers if answer.match is None), None)

    def choose(self, request: MockRequest) -> CompiledAnswer | None:
        """The answer for ``request``: the first entry whose ``match`` holds, else the first
        without one; None when there is no entry (answer a fake message). Raises
        :class:`CallError` ``NOT_FOUND`` when every entry has a ``match`` and none holds."""
        for answer in self._conditioned:
            if answer.match.holds(request):
                return answer
        if self._default is not None:
            return self._default
        if not self.answers:
            return None
        raise CallError(STATUS_CODES["NOT_FOUND"],
                        f"no answer of {self.info.path} matches this request (mock "
                        f"{self.mock_id!r}: every entry has a match and none holds)")

    def context(self, request: MockRequest) -> RenderContext:
        """The render context of one reply (seeded by the ``x-mockd-seed`` metadata)."""
        return RenderContext(request, {}, resolve_seed(request, None), self.state)

    def fake_message(self, context: RenderContext) -> tuple[bytes, bytes]:
        """``(serialized, JSON)`` of a schema-typed fake reply (deterministic when the context
        is seeded)."""
        document = fake_document(self.info.output, context.rng)
        try:
            return (encode(document, self.output_class, self.protos.pool),
                    orjson.dumps(document))
        except MessageError as error:  # pragma: no cover - fakes follow the schema
            raise CallError(STATUS_CODES["INTERNAL"], f"fake message failed: {error}") from None

    def decode(self, data: bytes) -> Any:
        """The request message of ``data``; raises :class:`CallError` ``INTERNAL`` when it
        does not parse as the method's input type."""
        try:
            return self.input_class.FromString(data)
        except Exception as error:  # noqa: BLE001 - DecodeError and friends
            raise CallError(STATUS_CODES["INTERNAL"],
                            f"cannot parse the request as {self.info.input.full_name}: "
                            f"{error}") from None
