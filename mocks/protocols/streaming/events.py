"""SSE events compiled once, and the sequences a stream reads them from.

A *sequence* answers ``event_at(position)`` for positions 0, 1, 2, … (None once it is done)
and ``position_after(event_id)`` for ``Last-Event-ID`` resumption. Streams keep their own
position, so one compiled sequence serves every connection of a mock:

* :class:`StaticSequence` — ``sse.events`` (and the built-in templates);
* :class:`SequenceGenerator`, :class:`RandomGenerator`, :class:`TemplateGenerator` —
  ``sse.generator``: endless, made in batches of ``count`` that start over when they run out
  (behavior notes §9: "refills when exhausted (bound by ``maxEvents``)").

:class:`SseTiming` applies the delay precedence of behavior notes §9.

Source: SPEC "SSE config"; behavior notes §9.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, replace
from typing import Protocol

from mocks.core.errors import ConfigError

from mocks.protocols.streaming.config import (DEFAULT_GENERATOR_COUNT, GeneratorConfig, SseEventConfig,
                     SseTimingConfig)
from mocks.protocols.streaming.framing import MAX_EVENT_PAYLOAD_BYTES, payload_text
from mocks.protocols.streaming.placeholders import DataTemplate, compile_event_data


@dataclass(frozen=True, slots=True)
class CompiledEvent:
    """One event definition, compiled.

    Attributes:
        type, id, retry, comment: as configured (``id`` as text; ``retry`` in ms).
        data: the compiled payload, or None for an event without ``data:`` lines.
        delay_ms: the event's own delay in ms (beats every ``timing`` setting), or None.
    """

    type: str | None = None
    data: DataTemplate | None = None
    id: str | None = None
    retry: int | None = None
    comment: str | None = None
    delay_ms: int | None = None


def compile_event(config: SseEventConfig, key_path: str) -> CompiledEvent:
    """Compile one ``events[]`` item. Raises :class:`ConfigError` naming the key for a bad
    template or placeholder, or a static payload over 1 MiB."""
    data = None
    if config.data is not None:
        data = compile_event_data(config.data, f"{key_path}.data")
        if data.is_static and len(payload_text(data.value).encode()) > MAX_EVENT_PAYLOAD_BYTES:
            raise ConfigError(f"{key_path}.data", "the payload is larger than 1 MiB (the limit "
                                                  "of one SSE event); split it into events")
    return CompiledEvent(type=config.type, data=data, id=config.id, retry=config.retry,
                         comment=config.comment, delay_ms=config.delay)


class EventSequence(Protocol):
    """What a stream reads its events from."""

    def event_at(self, position: int) -> CompiledEvent | None:
        """The event at ``position`` (0-based), or None when the sequence is done."""

    def position_after(self, event_id: str) -> int | None:
        """Where a client that last saw ``event_id`` continues, or None if it is unknown."""


def _numbered_position(event_id: str, length: int) -> int | None:
    """``"3"`` → 3 (the event numbered 3 is at position 2; continue at 3), within ``length``."""
    if event_id.isdigit():
        number = int(event_id)
        if 1 <= number <= length:
            return number
    return None


class StaticSequence:
    """A fixed list of events (``sse.events``, or a built-in template's events)."""

    __slots__ = ("events", "_positions")

    def __init__(self, events: tuple[CompiledEvent, ...]):
        self.events = events
        self._positions: dict[str, int] = {}
        for position, event in enumerate(events):
            if event.id is not None:
                self._positions.setdefault(event.id, position + 1)

    def event_at(self, position: int) -> CompiledEvent | None:
        events = self.events
        return events[position] if position < len(events) else None

    def position_after(self, event_id: str) -> int | None:
        return self._positions.get(event_id)


class SequenceGenerator:
    """``generator: {type: sequence}``: data ``format`` with ``%d`` = ``start + j·increment``
    for j = 0 … count-1, id = the value; then the batch starts over."""

    __slots__ = ("count", "start", "increment", "format")

    def __init__(self, count: int, start: int, increment: int, text_format: str):
        self.count, self.start, self.increment, self.format = count, start, increment, text_format

    def event_at(self, position: int) -> CompiledEvent | None:
        value = self.start + (position % self.count) * self.increment
        return CompiledEvent(data=DataTemplate(True, self.format.replace("%d", str(value))),
                             id=str(value))

    def position_after(self, event_id: str) -> int | None:
        try:
            value = int(event_id)
        except ValueError:
            return None
        offset = value - self.start
        if self.increment == 0:
            return 1 if offset == 0 else None
        index, remainder = divmod(offset, self.increment)
        return index + 1 if remainder == 0 and 0 <= index < self.count else None


class RandomGenerator:
    """``generator: {type: random}``: the ``random.schema`` with its placeholders drawn anew
    for every event, ids 1 … count; then the batch starts over."""

    __slots__ = ("count", "schema")

    def __init__(self, count: int, schema: DataTemplate):
        self.count, self.schema = count, schema

    def event_at(self, position: int) -> CompiledEvent | None:
        return CompiledEvent(data=self.schema, id=str(position % self.count + 1))

    def position_after(self, event_id: str) -> int | None:
        return _numbered_position(event_id, self.count)


class TemplateGenerator:
    """``generator: {type: template}``: ``template.events`` cycled ``repeat`` times (0 = 1),
    at most ``count`` events per batch, ids 1 … batch length; then the batch starts over."""

    __slots__ = ("events", "length")

    def __init__(self, events: tuple[CompiledEvent, ...], repeat: int, count: int):
        self.events = events
        self.length = min(len(events) * max(repeat, 1), count)

    def event_at(self, position: int) -> CompiledEvent | None:
        index = position % self.length
        return replace(self.events[index % len(self.events)], id=str(index + 1))

    def position_after(self, event_id: str) -> int | None:
        return _numbered_position(event_id, self.length)


def compile_generator(config: GeneratorConfig, key_path: str) -> EventSequence:
    """Compile ``sse.generator``; raises :class:`ConfigError` naming the key."""
    count = config.count or DEFAULT_GENERATOR_COUNT
    if config.type == "sequence":
        sequence = config.sequence
        assert sequence is not None  # filled in by the config model
        return SequenceGenerator(count, sequence.start, sequence.increment, sequence.format)
    if config.type == "random":
        assert config.random is not None
        return RandomGenerator(count, compile_event_data(config.random.schema_,
                                                         f"{key_path}.random.schema"))
    assert config.template is not None
    events = tuple(compile_event(event, f"{key_path}.template.events[{index}]")
                   for index, event in enumerate(config.template.events))
    return TemplateGenerator(events, config.template.repeat, count)


class SseTiming:
    """The wait before each event (behavior notes §9), all config values in ms.

    ``delay(event, position, sent, rng)`` in **seconds**: the event's own ``delay`` >
    ``perEventDelays[position]`` > ``burst`` (``interval`` inside a group of ``count``
    events, ``pause`` before the first event of every later group, counted per connection by
    ``sent``) > ``randomDelay`` (uniform, inclusive) > ``fixedDelay`` > 0.
    :attr:`initial_seconds` is waited once, before the first event.
    """

    __slots__ = ("initial_seconds", "per_event", "burst", "random_range", "fixed_seconds")

    def __init__(self, config: SseTimingConfig):
        self.initial_seconds = config.initial_delay / 1000.0
        self.per_event = tuple(delay / 1000.0 for delay in config.per_event_delays or ())
        self.burst = config.burst
        self.random_range = ((config.random_delay.min, config.random_delay.max)
                             if config.random_delay is not None else None)
        self.fixed_seconds = (config.fixed_delay or 0) / 1000.0

    def delay(self, event: CompiledEvent, position: int, sent: int,
              rng: random.Random) -> float:
        """Seconds to wait before ``event`` at ``position``, the ``sent``-th on this
        connection (0-based)."""
        if event.delay_ms is not None:
            return event.delay_ms / 1000.0
        if position < len(self.per_event):
            return self.per_event[position]
        burst = self.burst
        if burst is not None:
            starts_group = sent > 0 and sent % burst.count == 0
            return (burst.pause if starts_group else burst.interval) / 1000.0
        if self.random_range is not None:
            return rng.randint(*self.random_range) / 1000.0
        return self.fixed_seconds
