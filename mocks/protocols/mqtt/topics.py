"""MQTT topic filters: matching with captures, and the mock's payload templates.

``match(filter, topic)`` answers the levels matched by each ``+`` and ``#`` (in order), or
None; ``$``-topics never match a filter starting with a wildcard (MQTT 3.1.1 §4.7.2).
``shared_subscription(filter)`` splits a shared subscription ``$share/<group>/<filter>``
(MQTT 5 §4.8.2, which 3.1.1 clients use by name) into its group and filter.

Payload templates are the core templates (:mod:`mocks.core.templating`) with MQTT names
rewritten before compiling: ``{{payload}}`` -> ``request.rawBody``, ``{{payload.<path>}}``
-> ``request.body.<path>``, ``{{topic}}`` -> ``request.path``, ``{{wildcard.<i>}}`` ->
``request.pathParam.w<i>`` and ``{{device.id}}`` -> ``request.pathParam.deviceId``; the
request of a render is a synthetic :class:`~mocks.core.request.MockRequest` (method
``mqtt``, path = topic, body = payload).

Source: behavior notes §10 (``mqtt`` row); SPEC "Templating" (MQTT response bodies).
Django-free.
"""
from __future__ import annotations

import re
from typing import Any

from mocks.core.errors import ConfigError
from mocks.core.request import MockRequest
from mocks.core.templating import (RenderContext, Template, TemplateError, TemplateState,
                                   compile_template)

_MQTT_EXPRESSION = re.compile(
    r"\{\{\s*(payload(?P<path>(?:[.\[][^{}]*)?)|topic|device\.id|wildcard\.(?P<index>\d+))"
    r"\s*\}\}")


def match(topic_filter: str, topic: str) -> list[str] | None:
    """The captures of ``topic`` under ``topic_filter`` (one per ``+``, and the rest of the
    topic for ``#``), or None when it does not match."""
    if topic.startswith("$") and topic_filter[:1] in ("+", "#"):
        return None
    wanted = topic_filter.split("/")
    levels = topic.split("/")
    captures: list[str] = []
    for index, part in enumerate(wanted):
        if part == "#":
            captures.append("/".join(levels[index:]))
            return captures
        if index >= len(levels):
            return None
        if part == "+":
            captures.append(levels[index])
        elif part != levels[index]:
            return None
    return captures if len(wanted) == len(levels) else None


#: The prefix of a shared subscription's topic filter.
SHARE_PREFIX = "$share/"


def shared_subscription(topic_filter: str) -> tuple[str, str] | None:
    """``(group, filter)`` of a shared subscription ``$share/<group>/<filter>``, or None when
    ``topic_filter`` is not one. Raises ``ValueError`` (the reason) for a ``$share/`` filter
    without a group name, with ``+`` or ``#`` in it, or without a filter after it."""
    if not topic_filter.startswith(SHARE_PREFIX):
        return None
    group, _, inner = topic_filter[len(SHARE_PREFIX):].partition("/")
    if not group or "+" in group or "#" in group:
        raise ValueError("a shared subscription needs a group name without '+' or '#' "
                         "($share/<group>/<filter>)")
    if not inner:
        raise ValueError("a shared subscription needs a topic filter after its group "
                         "($share/<group>/<filter>)")
    return group, inner


def _rewrite(found: re.Match[str]) -> str:
    name = found.group(1)
    if name == "topic":
        return "{{request.path}}"
    if name == "device.id":
        return "{{request.pathParam.deviceId}}"
    if found.group("index") is not None:
        return "{{request.pathParam.w" + found.group("index") + "}}"
    path = found.group("path") or ""
    return "{{request.rawBody}}" if not path else "{{request.body" + path + "}}"


def compile_payload(text: str, key_path: str) -> Template:
    """Compile a payload or topic template; raises :class:`ConfigError` at ``key_path``."""
    try:
        return compile_template(_MQTT_EXPRESSION.sub(_rewrite, text))
    except TemplateError as error:
        raise ConfigError(key_path, str(error)) from None


def message_request(topic: str, payload: bytes, client_id: str = "") -> MockRequest:
    """The synthetic request templates and the request log see for one MQTT message."""
    request = MockRequest("MQTT", topic, "", body=payload, scheme="mqtt", client=client_id)
    request.method = "mqtt"
    return request


def render(template: Template, request: MockRequest, params: dict[str, str],
           state: TemplateState) -> str:
    """Render ``template`` for ``request`` with ``params`` (``w0``..., ``deviceId``)."""
    return template.render(RenderContext(request, params, None, state))


def capture_params(captures: list[str] | None, extra: dict[str, Any] | None = None
                   ) -> dict[str, str]:
    """``{"w0": ..., "w1": ...}`` from the captures, plus ``extra``."""
    params = {f"w{index}": value for index, value in enumerate(captures or ())}
    if extra:
        params.update(extra)
    return params
