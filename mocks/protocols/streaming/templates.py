"""The built-in SSE templates: ``llm-chat`` and ``notification-stream``.

``llm-chat`` (also ``openai-chat``, ``openai``) streams OpenAI-compatible
``chat.completion.chunk`` events, one per token, exactly as behavior notes §9 gives them::

    data: {"choices":[{"delta":{"content":"Hello"},"finish_reason":null,"index":0}],"created":1767225600,"id":"chatcmpl-<24 alphanumerics>","model":"gpt-4-mock","object":"chat.completion.chunk"}

No ``event:`` line; ``delayPerToken`` ms (50) before each token; one ``id``/``created`` per
connection; the last token carries ``finish_reason`` = ``finishReason`` (``stop``);
``includeDone`` (true) appends ``data: [DONE]``. Params: ``tokens`` (default ``Hello``, ``!``,
`` How``, `` can``, `` I``, `` help``, `` you``, ``?``), ``model`` (``gpt-4-mock``).

``notification-stream`` (also ``notification``) sends one event per entry, ``interval`` ms
(1000) before each, in one of two forms:

* ``messages: [{type, payload}]`` → ``event: <type, default notification>``,
  ``data: <payload>``;
* ``notifications: [{type, message}]`` with ``eventType`` (``notification``),
  ``includeTimestamp`` and ``includeId`` (both false) → ``event: <eventType>``,
  ``data: {"type","message","timestamp"?,"id"?}``, plus an ``id:`` line (1, 2, …) when
  ``includeId``. ``timestamp`` is the send time (RFC 3339 UTC).

Payloads and messages may hold ``{{…}}`` templates and ``$…`` placeholders.

Source: SPEC "SSE config" (``template``, ``templateParams``); behavior notes §9.
"""
from __future__ import annotations

import secrets
import string
import time
from typing import Any

import orjson

from mocks.core.errors import ConfigError

from mocks.protocols.streaming.events import CompiledEvent, StaticSequence
from mocks.protocols.streaming.names import LLM_CHAT_NAMES, NOTIFICATION_NAMES, TEMPLATE_NAMES
from mocks.protocols.streaming.placeholders import DataTemplate, _Object, _Timestamp, compile_event_data


DEFAULT_TOKENS = ("Hello", "!", " How", " can", " I", " help", " you", "?")
DEFAULT_MODEL = "gpt-4-mock"
DEFAULT_FINISH_REASON = "stop"
DEFAULT_DELAY_PER_TOKEN_MS = 50
DEFAULT_NOTIFICATION_INTERVAL_MS = 1000

_ALPHANUMERICS = string.ascii_letters + string.digits


def chat_completion_id() -> str:
    """``chatcmpl-`` and 24 random alphanumerics."""
    return "chatcmpl-" + "".join(secrets.choice(_ALPHANUMERICS) for _ in range(24))


def chat_chunk(chat_id: str, created: int, model: str, token: str,
               finish_reason: str | None) -> str:
    """One ``chat.completion.chunk`` as compact JSON, keys in the order of behavior notes §9."""
    return orjson.dumps({
        "choices": [{"delta": {"content": token}, "finish_reason": finish_reason, "index": 0}],
        "created": created, "id": chat_id, "model": model, "object": "chat.completion.chunk",
    }).decode()


def _param(params: dict[str, Any], name: str, kinds: type | tuple[type, ...], default: Any,
           key_path: str) -> Any:
    value = params.get(name, default)
    if value is None:
        return default
    if isinstance(value, bool) and bool not in (kinds if isinstance(kinds, tuple) else (kinds,)):
        raise ConfigError(f"{key_path}.{name}", f"expected {_kind_names(kinds)}, got {value!r}")
    if not isinstance(value, kinds):
        raise ConfigError(f"{key_path}.{name}", f"expected {_kind_names(kinds)}, got {value!r}")
    return value


def _kind_names(kinds: type | tuple[type, ...]) -> str:
    names = {str: "a string", int: "an integer", bool: "true or false", list: "a list",
             dict: "an object"}
    kinds_tuple = kinds if isinstance(kinds, tuple) else (kinds,)
    return " or ".join(names.get(kind, kind.__name__) for kind in kinds_tuple)


class LlmChatTemplate:
    """``llm-chat``: a new chat id and ``created`` per connection, so :meth:`sequence` builds
    the (small) event list for each connection. The SSE opening goes inline (see
    :class:`~mocks.protocols.streaming.framing.SseFraming`)."""

    inline_opening = True

    def __init__(self, params: dict[str, Any], key_path: str):
        tokens = _param(params, "tokens", list, None, key_path)
        if tokens:
            for index, token in enumerate(tokens):
                if not isinstance(token, str):
                    raise ConfigError(f"{key_path}.tokens[{index}]",
                                      f"expected a string, got {token!r}")
        self.tokens: tuple[str, ...] = tuple(tokens) if tokens else DEFAULT_TOKENS
        self.model: str = _param(params, "model", str, DEFAULT_MODEL, key_path)
        self.finish_reason: str = _param(params, "finishReason", str, DEFAULT_FINISH_REASON,
                                         key_path)
        self.include_done: bool = _param(params, "includeDone", bool, True, key_path)
        delay = _param(params, "delayPerToken", int, DEFAULT_DELAY_PER_TOKEN_MS, key_path)
        if delay < 0:
            raise ConfigError(f"{key_path}.delayPerToken", "must be 0 or more milliseconds")
        self.delay_per_token_ms: int = delay

    def sequence(self) -> StaticSequence:
        """The events of one connection (one chat id and ``created`` for all its chunks)."""
        chat_id, created = chat_completion_id(), int(time.time())
        last = len(self.tokens) - 1
        events = [CompiledEvent(data=DataTemplate(True, chat_chunk(
            chat_id, created, self.model, token, self.finish_reason if index == last else None)),
            delay_ms=self.delay_per_token_ms) for index, token in enumerate(self.tokens)]
        if self.include_done:
            events.append(CompiledEvent(data=DataTemplate(True, "[DONE]")))
        return StaticSequence(tuple(events))


class NotificationTemplate:
    """``notification-stream``: the same events for every connection (timestamps are drawn
    when each event is sent)."""

    inline_opening = False

    def __init__(self, params: dict[str, Any], key_path: str):
        interval = _param(params, "interval", int, DEFAULT_NOTIFICATION_INTERVAL_MS, key_path)
        if interval < 0:
            raise ConfigError(f"{key_path}.interval", "must be 0 or more milliseconds")
        messages = _param(params, "messages", list, None, key_path)
        notifications = _param(params, "notifications", list, None, key_path)
        if messages and notifications:
            raise ConfigError(key_path, "give messages or notifications, not both")
        if not messages and not notifications:
            raise ConfigError(key_path, "notification-stream needs templateParams.messages "
                                        "([{type, payload}]) or .notifications "
                                        "([{type, message}])")
        events: list[CompiledEvent] = []
        if messages:
            for index, entry in enumerate(messages):
                where = f"{key_path}.messages[{index}]"
                entry = _entry(entry, where)
                events.append(CompiledEvent(
                    type=_param(entry, "type", str, "notification", where),
                    data=compile_event_data(entry.get("payload"), f"{where}.payload"),
                    delay_ms=interval))
        else:
            event_type = _param(params, "eventType", str, "notification", key_path)
            with_time = _param(params, "includeTimestamp", bool, False, key_path)
            with_id = _param(params, "includeId", bool, False, key_path)
            for index, entry in enumerate(notifications):
                where = f"{key_path}.notifications[{index}]"
                entry = _entry(entry, where)
                event_id = str(index + 1) if with_id else None
                fields: list[tuple[str, Any, DataTemplate | None]] = [
                    ("type", _param(entry, "type", str, "info", where), None)]
                message = compile_event_data(entry.get("message", ""), f"{where}.message")
                fields.append(("message", message.value, None) if message.is_static
                              else ("message", None, message))
                if with_time:
                    fields.append(("timestamp", None, _Timestamp(False, "$timestamp")))
                if event_id is not None:
                    fields.append(("id", event_id, None))
                data = (DataTemplate(True, {key: value for key, value, _ in fields})
                        if all(child is None for _, _, child in fields)
                        else _Object(None, tuple(fields)))
                events.append(CompiledEvent(type=event_type, data=data, id=event_id,
                                            delay_ms=interval))
        self._sequence = StaticSequence(tuple(events))

    def sequence(self) -> StaticSequence:
        """The events (shared by every connection)."""
        return self._sequence


def _entry(entry: Any, key_path: str) -> dict[str, Any]:
    if not isinstance(entry, dict):
        raise ConfigError(key_path, f"expected an object, got {entry!r}")
    return entry


def compile_sse_template(name: str, params: dict[str, Any],
                         key_path: str) -> LlmChatTemplate | NotificationTemplate:
    """The template ``name`` with ``params`` (``key_path`` points at the ``sse`` block).

    Raises :class:`ConfigError` at ``<key_path>.template`` for an unknown name, or at
    ``<key_path>.templateParams…`` for a bad parameter.
    """
    if name in LLM_CHAT_NAMES:
        return LlmChatTemplate(params, f"{key_path}.templateParams")
    if name in NOTIFICATION_NAMES:
        return NotificationTemplate(params, f"{key_path}.templateParams")
    raise ConfigError(f"{key_path}.template",
                      f"unknown template {name!r}; use one of {', '.join(TEMPLATE_NAMES)}")
