"""SSE mocks: ``http.sse`` compiled once into an :class:`SseAction` that streams events.

One stream, step by step (behavior notes §9):

1. 200 with ``Content-Type: text/event-stream``, ``Cache-Control: no-cache``,
   ``Connection: keep-alive``, ``X-Accel-Buffering: no`` (no ``Accept`` check); then
   ``retry: 3000`` and a blank line. Beyond the connection limit (100): 503.
2. A ``Last-Event-ID`` request header resumes: the events the mock sent after that id (its
   buffer) are sent at once, and the sequence continues after the last of them; an id that is
   not buffered but names a configured event continues after that event.
3. ``timing.initialDelay`` once, then before every event the delay of :class:`SseTiming`.
   Waits are scheduled from the previous event's due time, so they do not drift.
4. The stream ends when the events are done, after ``lifecycle.maxEvents`` events, after
   ``lifecycle.connectionTimeout`` s, or after ``lifecycle.timeout`` s without an event; it
   then ends by ``lifecycle.termination``. ``lifecycle.simulateDisconnect: n`` drops the
   connection after n events. ``keepaliveInterval`` s sends ``: keepalive`` pings meanwhile.
5. It stops at once when the client disconnects, the admin closes it, or its mock changes.

Events with an id are kept in the mock's buffer (``resume.bufferSize``, 100); with
``resume.enabled`` events without an id are numbered by their position (1, 2, …).

Source: SPEC "SSE config (``http.sse``)", "Events" → "Mock SSE streams"; behavior notes §9.
"""
from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from mocks.core.errors import ConfigError
from mocks.core.templating import RenderContext, resolve_seed

from mocks.protocols.streaming.events import (CompiledEvent, EventSequence, SseTiming, StaticSequence, compile_event,
                     compile_generator)
from mocks.protocols.streaming.framing import MAX_EVENT_PAYLOAD_BYTES, SseEvent, SseFraming, payload_text
from mocks.protocols.streaming.runtime import SSE, BufferedEvent, StreamConnection, StreamRuntime
from mocks.protocols.streaming.sender import StreamAbort, StreamAction, StreamClock, refuse, serve_stream
from mocks.protocols.streaming.templates import compile_sse_template
from recordings import stream_registry
from recordings.stream_registry import ARMED as ARMED_RECORDINGS

logger = logging.getLogger("mockd.streaming")

SSE_HEADERS = ((b"cache-control", b"no-cache"), (b"connection", b"keep-alive"),
               (b"x-accel-buffering", b"no"))

if TYPE_CHECKING:  # the model is imported where an sse block is compiled
    from mocks.protocols.streaming.config import SseConfig

#: Data of the ``error`` event ``termination: error`` sends when no ``finalEvent`` is set.
DEFAULT_ERROR_DATA = '{"error":"stream_error","message":"The stream ended with an error"}'

#: A stream this late on its schedule stops catching up and starts a new schedule from now.
_CATCH_UP_LIMIT_SECONDS = 1.0


class SseAction(StreamAction):
    """The compiled answer of one SSE mock.

    Raises :class:`ConfigError` naming the key (``mocks[2].http.sse.events[0].data``) for a
    bad template, placeholder or template parameter.
    """

    kind = SSE

    def __init__(self, config: SseConfig, key_path: str):
        self.config = config
        self.timing = SseTiming(config.timing)
        lifecycle = config.lifecycle
        self.keepalive_seconds = float(lifecycle.keepalive_interval)
        self.max_events = lifecycle.max_events
        self.idle_timeout_seconds = float(lifecycle.timeout)
        self.connection_timeout_seconds = float(lifecycle.connection_timeout)
        self.simulate_disconnect = lifecycle.simulate_disconnect
        termination = lifecycle.termination
        self.termination_type = termination.type
        self.close_delay_seconds = termination.close_delay / 1000.0
        self.final_event = (compile_event(termination.final_event,
                                          f"{key_path}.lifecycle.termination.finalEvent")
                            if termination.final_event is not None else None)
        self.numbering = config.resume.enabled
        self.buffer_capacity = config.resume.buffer_size
        self.buffer_max_age = float(config.resume.max_age)
        self.template = (compile_sse_template(config.template, config.template_params,
                                              key_path)
                         if config.template else None)
        self._sequence: EventSequence | None = None
        if self.template is None:
            if config.generator is not None:
                self._sequence = compile_generator(config.generator, f"{key_path}.generator")
            else:
                self._sequence = StaticSequence(tuple(
                    compile_event(event, f"{key_path}.events[{index}]")
                    for index, event in enumerate(config.events)))

    def sequence_for_connection(self) -> EventSequence:
        """The event sequence of a new connection (per connection for ``llm-chat``)."""
        if self.template is not None:
            return self.template.sequence()
        assert self._sequence is not None
        return self._sequence

    async def stream(self, request: Any, path_params: dict[str, str], mock_id: str,
                     engine: Any, receive: Any, send: Any) -> int:
        """Serve one SSE request to the end of its stream; returns the status sent."""
        headers = list(SSE_HEADERS)
        if request.method == "HEAD":
            await send({"type": "http.response.start", "status": 200,
                        "headers": [(b"content-type", SseFraming.content_type), *headers]})
            await send({"type": "http.response.body", "body": b""})
            return 200
        runtime: StreamRuntime = engine.streams
        last_event_id = request.headers.get("last-event-id") or None
        connection = runtime.open(SSE, mock_id, path=request.path, client=request.client,
                                  user_agent=request.headers.get("user-agent", ""),
                                  resumed_from=last_event_id)
        if connection is None:
            return await refuse(send, runtime.max_connections)
        context = RenderContext(request=request, path_params=path_params,
                                seed=resolve_seed(request, None), state=engine.template_state)
        sequence = self.sequence_for_connection()

        def source(clock: StreamClock) -> AsyncIterator[SseEvent]:
            return self._events(clock, connection, runtime, sequence, context, last_event_id)

        framing = SseFraming(opening_inline=bool(self.template is not None
                                                 and self.template.inline_opening))
        recorder = None
        if ARMED_RECORDINGS:  # a stream recording armed at this path records the events
            recorder = stream_registry.claim("sse", request.path, request.raw_headers,
                                             request.query_string)
            if recorder is not None:
                plain_source = source

                def source(clock: StreamClock) -> AsyncIterator[SseEvent]:
                    return stream_registry.recorded_events(plain_source(clock), recorder)
        try:
            return await serve_stream(send, receive, runtime=runtime, connection=connection,
                                      framing=framing, source=source, headers=headers,
                                      keepalive_seconds=self.keepalive_seconds,
                                      event_id_of=_event_id)
        finally:
            if recorder is not None:
                stream_registry.finish(recorder)

    # ------------------------------------------------------------------ the event source
    async def _events(self, clock: StreamClock, connection: StreamConnection,
                      runtime: StreamRuntime, sequence: EventSequence, context: RenderContext,
                      last_event_id: str | None) -> AsyncIterator[SseEvent]:
        """The events of one connection, waiting through ``clock`` (see the module doc)."""
        started = clock.now()
        stream_deadline = (started + self.connection_timeout_seconds
                           if self.connection_timeout_seconds else None)
        sent = 0
        position, replay = self._resume_point(runtime, connection.mock_id, sequence,
                                              last_event_id)
        for buffered in replay:
            if self._limit_reached(sent):
                break
            yield SseEvent(type=buffered.type, data=buffered.data, id=buffered.id,
                           retry=buffered.retry, position=buffered.position)
            sent += 1

        due = started + self.timing.initial_seconds
        last_event_at = clock.now()
        ended_by_time = False
        while not self._limit_reached(sent):
            event = sequence.event_at(position)
            if event is None:
                break
            due += self.timing.delay(event, position, sent, context.rng)
            now = clock.now()
            if due < now - _CATCH_UP_LIMIT_SECONDS:
                due = now  # a long stall: do not send the missed events in one burst
            limit = _earliest(stream_deadline,
                              last_event_at + self.idle_timeout_seconds
                              if self.idle_timeout_seconds else None)
            if limit is not None and due >= limit:
                await clock.sleep_until(limit)
                ended_by_time = True
                break
            await clock.sleep_until(due)
            outgoing = self._render(event, position, context)
            if outgoing is not None:
                yield outgoing
                sent += 1
                last_event_at = clock.now()
                if outgoing.id is not None:
                    runtime.buffer(connection.mock_id, self.buffer_capacity,
                                   self.buffer_max_age).add(BufferedEvent(
                                       outgoing.id, outgoing.type, outgoing.data, outgoing.retry,
                                       position, time.time()))
            position += 1

        connection.status = "closing"
        if (self.simulate_disconnect is not None and sent >= self.simulate_disconnect
                and not ended_by_time):
            raise StreamAbort
        async for final in self._terminate(clock, context):
            yield final

    def _limit_reached(self, sent: int) -> bool:
        if self.max_events and sent >= self.max_events:
            return True
        return self.simulate_disconnect is not None and sent >= self.simulate_disconnect

    def _resume_point(self, runtime: StreamRuntime, mock_id: str, sequence: EventSequence,
                      last_event_id: str | None) -> tuple[int, list[BufferedEvent]]:
        """``(position to continue at, buffered events to send first)`` for a client that
        last saw ``last_event_id`` (``(0, [])`` without one, or when it is unknown)."""
        if last_event_id is None:
            return 0, []
        buffer = runtime.existing_buffer(mock_id)
        seen = buffer.find(last_event_id) if buffer is not None else None
        if seen is not None:
            replay = buffer.after(last_event_id)
            return (replay[-1].position if replay else seen.position) + 1, replay
        position = sequence.position_after(last_event_id)
        if position is None and self.numbering and last_event_id.isdigit():
            position = int(last_event_id)
        return (position or 0), []

    def _render(self, event: CompiledEvent, position: int, context: RenderContext,
                numbered: bool = True) -> SseEvent | None:
        """The event to send at ``position``, or None when its payload is over 1 MiB.

        ``numbered``: give it its position as id when it has none and ``resume.enabled``.
        """
        data = None
        if event.data is not None:
            data = payload_text(event.data.render(context))
            # UTF-8 takes 1 to 4 bytes a character: only long texts need encoding to measure.
            if len(data) > MAX_EVENT_PAYLOAD_BYTES // 4 and (
                    len(data.encode()) > MAX_EVENT_PAYLOAD_BYTES):
                logger.warning("SSE event at position %d skipped: its payload is over 1 MiB",
                               position)
                return None
        event_id = event.id
        if event_id is None and self.numbering and numbered:
            event_id = str(position + 1)
        return SseEvent(type=event.type, data=data, id=event_id, retry=event.retry,
                        comment=event.comment, position=position)

    async def _terminate(self, clock: StreamClock,
                         context: RenderContext) -> AsyncIterator[SseEvent]:
        """The end of a stream by ``lifecycle.termination`` (behavior notes §9 "End")."""
        if self.termination_type == "abrupt":
            raise StreamAbort
        final = self.final_event
        if final is not None:
            outgoing = self._render(final, -1, context, numbered=False)
            if outgoing is not None:
                yield outgoing
        elif self.termination_type == "error":
            yield SseEvent(type="error", data=DEFAULT_ERROR_DATA, position=-1)
        if self.close_delay_seconds:
            await clock.sleep(self.close_delay_seconds)
        if self.termination_type == "error":
            raise StreamAbort


def _earliest(first: float | None, second: float | None) -> float | None:
    if first is None:
        return second
    if second is None:
        return first
    return min(first, second)


def _event_id(item: SseEvent) -> str | None:
    return item.id


def compile_sse_action(config: SseConfig, key_path: str) -> SseAction:
    """Compile ``http.sse`` (``key_path`` points at it). Raises :class:`ConfigError`."""
    from mocks.protocols.streaming.config import SseConfig

    if not isinstance(config, SseConfig):
        raise ConfigError(key_path, "expected an sse object")
    return SseAction(config, key_path)
