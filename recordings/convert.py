"""Stream recordings -> mock configs that ``POST /mocks`` accepts.

* WebSocket: a ``websocket`` mock at the recording's path whose ``scenario`` is the recorded
  conversation: each client text frame becomes an ``expect`` step matching that exact text
  (a binary one: any binary frame), each server text or binary frame a ``send`` step whose
  ``delay`` is the recorded gap before it (ms). Ping, pong and close frames are left out.
* SSE: an HTTP ``GET`` mock at the recording's path with ``sse.events``: each recorded event
  with its ``type`` (left out for ``message``), ``data``, ``id`` and ``delay`` (the recorded
  gap before it, ms).

Delays are clamped to ``minDelay``..``maxDelay`` (ms); ``simplifyTiming`` rounds each to the
nearest 100 ms first. Recorded text is template-escaped (``{{`` -> ``\\{{``) so it is sent
as recorded.

Source: SPEC "Stream recordings" (convert, ``simplifyTiming``, ``minDelay``, ``maxDelay``),
"SSE config"; behavior notes §9, §10 (``websocket`` row). Django-free.
"""
from __future__ import annotations

import re
from typing import Any

#: Longest delay a converted mock may carry, in ms (one hour).
MAX_DELAY_MS = 3_600_000
#: How long a converted ``expect`` step waits for the client, in ms.
EXPECT_TIMEOUT_MS = 30_000
SIMPLIFY_STEP_MS = 100


class ConvertError(Exception):
    """Options or a recording that cannot be converted; ``message`` names the key."""


def _options(options: dict[str, Any]) -> tuple[bool, int, int]:
    if not isinstance(options, dict):
        raise ConvertError("body: must be a JSON object")
    unknown = sorted(set(options) - {"simplifyTiming", "minDelay", "maxDelay"})
    if unknown:
        raise ConvertError(f"{unknown[0]}: unknown key (use simplifyTiming, minDelay, "
                           f"maxDelay)")
    simplify = options.get("simplifyTiming", False)
    if not isinstance(simplify, bool):
        raise ConvertError("simplifyTiming: must be true or false")
    bounds = []
    for key, default in (("minDelay", 0), ("maxDelay", MAX_DELAY_MS)):
        value = options.get(key)
        if value is None:
            value = default
        if isinstance(value, bool) or not isinstance(value, int) or not (
                0 <= value <= MAX_DELAY_MS):
            raise ConvertError(f"{key}: must be an integer of ms from 0 to {MAX_DELAY_MS}")
        bounds.append(value)
    if bounds[0] > bounds[1]:
        raise ConvertError(f"minDelay ({bounds[0]}) must not be larger than maxDelay "
                           f"({bounds[1]})")
    return simplify, bounds[0], bounds[1]


def _delay(gap_ms: float, simplify: bool, low: int, high: int) -> int:
    delay = max(0.0, gap_ms)
    if simplify:
        delay = int(delay / SIMPLIFY_STEP_MS + 0.5) * SIMPLIFY_STEP_MS  # half up
    return int(min(max(round(delay), low), high))


def _literal(text: str) -> str:
    """``text`` as a template that renders to itself."""
    return text.replace("{{", "\\{{") if "{{" in text else text


def _mock_id(recording: dict[str, Any]) -> str:
    return "recorded-" + re.sub(r"[^a-z0-9]+", "-", str(recording["id"]).lower()).strip("-")


def convert(recording: dict[str, Any], options: dict[str, Any] | None = None) -> dict[str, Any]:
    """The mock config of ``recording`` (see the module docstring). ``options``:
    ``{simplifyTiming?: bool, minDelay?: ms, maxDelay?: ms}``. Raises :class:`ConvertError`
    for bad options or a recording with nothing to replay."""
    simplify, low, high = _options(options or {})
    path = recording["metadata"]["path"]
    name = f"{recording.get('name') or path} (recorded)"
    if recording["protocol"] == "websocket":
        return {"id": _mock_id(recording), "name": name, "type": "websocket",
                "websocket": _websocket(recording, path, simplify, low, high)}
    events = []
    previous = 0.0
    for event in (recording.get("sse") or {}).get("events") or ():
        relative = float(event.get("relativeMs") or 0.0)
        item: dict[str, Any] = {}
        if event.get("type") not in (None, "message"):
            item["type"] = event["type"]
        item["data"] = _literal(str(event.get("data") or ""))
        if event.get("id") is not None:
            item["id"] = str(event["id"])
        item["delay"] = _delay(relative - previous, simplify, low, high)
        previous = relative
        events.append(item)
    if not events:
        raise ConvertError("the recording has no events to convert")
    return {"id": _mock_id(recording), "name": name, "type": "http",
            "http": {"matcher": {"method": "GET", "path": path}, "sse": {"events": events}}}


def _websocket(recording: dict[str, Any], path: str, simplify: bool, low: int,
               high: int) -> dict[str, Any]:
    part = recording.get("websocket") or {}
    steps: list[dict[str, Any]] = []
    previous = 0.0
    for frame in part.get("frames") or ():
        kind = frame.get("type")
        if kind not in ("text", "binary"):
            continue
        relative = float(frame.get("relativeMs") or 0.0)
        data = str(frame.get("data") or "")
        if frame.get("direction") == "c2s":
            match = ({"type": "exact", "value": data} if kind == "text"
                     else {"type": "contains", "value": "", "messageType": "binary"})
            steps.append({"type": "expect", "match": match, "timeout": EXPECT_TIMEOUT_MS})
        else:
            message = {"type": "text", "value": _literal(data)} if kind == "text" else {
                "type": "binary", "value": data}
            message["delay"] = _delay(relative - previous, simplify, low, high)
            steps.append({"type": "send", "message": message})
        previous = relative
    if not steps:
        raise ConvertError("the recording has no text or binary frames to convert")
    config: dict[str, Any] = {"path": path,
                              "scenario": {"name": recording.get("name") or path,
                                           "steps": steps}}
    if part.get("subprotocol"):
        config["subprotocols"] = [part["subprotocol"]]
    return config
