"""Durations in config files: ``"400ms"``, ``"5s"``, ``"2m"``, ``"1h"`` or a plain number of
milliseconds, as the protocol configs write them (WebSocket delays and timeouts, GraphQL
delays, gRPC stream delays, MQTT intervals).

:data:`DurationMs` is the pydantic field type: it validates any of those forms and stores an
``int`` of **milliseconds**, so handlers never parse text at run time. :data:`DurationRangeMs`
accepts ``"100ms-500ms"`` (or one duration, a range of one value) and stores ``(low, high)``
in ms.

Source: behavior notes §10 ("durations are strings (``"400ms"``, ``"5s"``) or integers in
ms"; ``randomDelay "100ms-500ms"``).
"""
from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import BeforeValidator, WithJsonSchema

#: Largest duration accepted anywhere: one day, in ms.
MAX_DURATION_MS = 24 * 60 * 60 * 1000

_UNITS_MS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000}
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$")


def parse_duration_ms(value: Any) -> int:
    """Milliseconds of ``value``: an int or float (ms) or text ``<number><unit>`` with unit
    ``ms``, ``s``, ``m`` or ``h`` (no unit: ms).

    Raises:
        ValueError: negative, longer than :data:`MAX_DURATION_MS`, or not a duration; the
            message says what is accepted (pydantic reports it under the field's key).
    """
    if isinstance(value, bool):
        raise ValueError("expected a duration such as 500, \"400ms\" or \"5s\", got a boolean")
    if isinstance(value, (int, float)):
        milliseconds = float(value)
    elif isinstance(value, str) and (found := _DURATION.match(value)):
        milliseconds = float(found.group(1)) * _UNITS_MS[found.group(2) or "ms"]
    else:
        raise ValueError(f"expected a duration such as 500, \"400ms\", \"5s\" or \"2m\", "
                         f"got {value!r}")
    if milliseconds < 0:
        raise ValueError(f"a duration cannot be negative, got {value!r}")
    if milliseconds > MAX_DURATION_MS:
        raise ValueError(f"a duration must be at most 24h, got {value!r}")
    return int(round(milliseconds))


def parse_duration_range_ms(value: Any) -> tuple[int, int]:
    """``(low, high)`` ms of ``"100ms-500ms"``, ``[100, 500]`` or one duration (low = high).

    Raises:
        ValueError: a part is not a duration, or low > high.
    """
    if isinstance(value, (list, tuple)) and len(value) == 2:
        low, high = (parse_duration_ms(part) for part in value)
    elif isinstance(value, str) and "-" in value.strip().lstrip("-"):
        first, _, second = value.partition("-")
        low, high = parse_duration_ms(first), parse_duration_ms(second)
    else:
        low = high = parse_duration_ms(value)
    if low > high:
        raise ValueError(f"a range must go from low to high, got {value!r}")
    return low, high


_DURATION_SCHEMA = {"anyOf": [
    {"type": "integer", "minimum": 0, "description": "milliseconds"},
    {"type": "string", "pattern": r"^\s*\d+(\.\d+)?\s*(ms|s|m|h)?\s*$",
     "description": "a number with unit ms, s, m or h (\"400ms\", \"5s\")"}]}

#: A pydantic field holding a duration, stored as int milliseconds.
DurationMs = Annotated[int, BeforeValidator(parse_duration_ms),
                       WithJsonSchema(_DURATION_SCHEMA)]
#: A pydantic field holding a duration range, stored as ``(low ms, high ms)``.
DurationRangeMs = Annotated[tuple[int, int], BeforeValidator(parse_duration_range_ms),
                            WithJsonSchema({"anyOf": [
                                {"type": "string", "description": "\"100ms-500ms\" or one "
                                                                  "duration"},
                                {"type": "integer", "minimum": 0},
                                {"type": "array", "minItems": 2, "maxItems": 2}]})]
