"""The ``--sse*`` flags of ``mockd add`` / ``mockd http add``: they turn the mock's answer
into an ``sse`` block.

==================================  ========================================================
``--sse``                           stream server-sent events instead of a response
``--sse-event TYPE:DATA``           one event (repeatable); ``DATA`` is parsed as JSON when it
                                    is JSON; without ``TYPE:`` the type is ``message``
``--sse-delay MS``                  milliseconds between events (100)
``--sse-template NAME``             ``llm-chat`` (``openai-chat``, ``openai``) or
                                    ``notification-stream`` (``notification``)
``--sse-repeat N``                  send the events N times (1); 0 = endlessly
``--sse-keepalive SECONDS``         ``: keepalive`` ping interval (0 = off, else ≥ 5)
==================================  ========================================================

Any ``--sse-event``/``--sse-template`` implies ``--sse``. No events: one ``message`` event
``{"status":"connected"}``. With ``--sse-template notification-stream`` the events become
its ``messages`` and ``--sse-delay`` its ``interval``; ``llm-chat`` uses its default tokens.

Source: behavior notes §15 (``add`` flags); SPEC "SSE config".
"""
from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import click

from mocks.protocols.streaming.names import (KEEPALIVE_MINIMUM_SECONDS, NOTIFICATION_NAMES,
                                             TEMPLATE_NAMES)

DEFAULT_EVENT = {"type": "message", "data": {"status": "connected"}}


def _keepalive(context: click.Context, parameter: click.Parameter, value: int) -> int:
    if 0 < value < KEEPALIVE_MINIMUM_SECONDS:
        raise click.BadParameter(f"must be 0 (off) or at least {KEEPALIVE_MINIMUM_SECONDS} "
                                 f"seconds, got {value}")
    return value


def sse_options(function: Callable) -> Callable:
    """Add the ``--sse*`` flags to a click command (their values arrive in its options)."""
    options = [
        click.option("--sse", "sse", is_flag=True,
                     help="Stream server-sent events instead of a response."),
        click.option("--sse-event", "sse_events", multiple=True, metavar="TYPE:DATA",
                     help="SSE event (repeatable); DATA may be JSON; no TYPE: means message."),
        click.option("--sse-delay", "sse_delay", type=click.IntRange(0, None), default=100,
                     show_default=True, help="Milliseconds between SSE events."),
        click.option("--sse-template", "sse_template", type=click.Choice(TEMPLATE_NAMES),
                     default=None, help="Built-in SSE template."),
        click.option("--sse-repeat", "sse_repeat", type=click.IntRange(0, None), default=1,
                     show_default=True, help="Send the SSE events this many times (0 = endless)."),
        click.option("--sse-keepalive", "sse_keepalive", type=click.IntRange(0, None),
                     default=0, show_default=True, callback=_keepalive,
                     help=f"Seconds between keepalive pings (0 = off, else at least "
                          f"{KEEPALIVE_MINIMUM_SECONDS})."),
    ]
    for option in reversed(options):
        function = option(function)
    return function


def parse_sse_event(text: str) -> dict[str, Any]:
    """``TYPE:DATA`` → ``{type, data}``; ``DATA`` is parsed as JSON when it is JSON.

    Text that starts like JSON (``{``, ``[``, ``"``) has no type (``message``), so
    ``--sse-event '{"a":1}'`` is not split at its first colon.
    """
    event_type, data = "message", text
    if not text.lstrip().startswith(("{", "[", '"')):
        name, separator, rest = text.partition(":")
        if separator and name.strip():
            event_type, data = name.strip(), rest
    try:
        value: Any = json.loads(data)
    except ValueError:
        value = data
    return {"type": event_type, "data": value}


def sse_block(*, events: tuple[str, ...], delay_ms: int, template: str | None, repeat: int,
              keepalive_seconds: int) -> dict[str, Any]:
    """The ``sse`` block the flags describe."""
    block: dict[str, Any] = {"timing": {"fixedDelay": delay_ms}}
    if keepalive_seconds:
        block["lifecycle"] = {"keepaliveInterval": keepalive_seconds}
    parsed = [parse_sse_event(text) for text in events] or [dict(DEFAULT_EVENT)]
    if template in NOTIFICATION_NAMES:
        # The notification template needs messages: the events become them, the delay its
        # interval.
        block["template"] = template
        block["templateParams"] = {"interval": delay_ms, "messages": [
            {"type": event["type"], "payload": event["data"]} for event in parsed]}
        return block
    if template:
        block["template"] = template  # llm-chat: its default tokens and delayPerToken
        return block
    if repeat == 0:
        # Endless: a template generator starts its batch over whenever it runs out.
        block["generator"] = {"type": "template", "template": {"events": parsed}}
    else:
        block["events"] = parsed * repeat
    return block


def apply_sse_options(mock: dict[str, Any], options: dict[str, Any]) -> None:
    """Replace ``mock``'s ``response`` by an ``sse`` block when any ``--sse*`` flag asks for
    one (behavior notes §9: ``sse`` goes instead of ``response``)."""
    if not (options.get("sse") or options.get("sse_events") or options.get("sse_template")):
        return
    http = mock["http"]
    http.pop("response", None)
    http["sse"] = sse_block(events=options.get("sse_events") or (),
                            delay_ms=options.get("sse_delay", 100),
                            template=options.get("sse_template"),
                            repeat=options.get("sse_repeat", 1),
                            keepalive_seconds=options.get("sse_keepalive", 0))
