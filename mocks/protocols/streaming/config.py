"""Config schema of streaming mocks: the ``http.sse`` and ``http.chunked`` blocks.

Pydantic models only (no engine imports). :class:`~mocks.protocols.http.config.HttpMock`
names :class:`SseConfig` and :class:`ChunkedConfig` by import string
(:class:`~mocks.core.lazymodel.LazyModel`), so an HTTP config without streams never imports
this module. Keys stay camelCase through aliases. Units follow the SPEC and are named in
every field: delays are **milliseconds**, lifecycle intervals and timeouts are **seconds**.

Source: SPEC "SSE config (``http.sse``)", "Chunked config", "HTTP mock"; behavior notes §9
(placement, ``resume``, ``generator``, ``simulateDisconnect``, chunked ``dataFile``) and §18
(SSE limits).
"""
from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from mocks.protocols.streaming.names import KEEPALIVE_MINIMUM_SECONDS
from mocks.protocols.streaming.names import DEFAULT_BUFFER_SIZE  # noqa: E402  (re-exported)
#: Events per generator batch when ``generator.count`` is 0 or not set (behavior notes §9).
DEFAULT_GENERATOR_COUNT = 100
#: Default ``chunked.chunkSize`` in bytes (behavior notes §9).
DEFAULT_CHUNK_SIZE = 1024


class _Strict(BaseModel):
    """Unknown keys are errors; camelCase aliases and snake_case names are both accepted.

    (The same rules as :class:`mocks.config.Strict`, repeated here because that module
    imports this one.) Each model is built on its first validation (``defer_build``): the
    engine imports this module for its defaults, and a config without ``sse`` or ``chunked``
    never builds these models.
    """

    model_config = ConfigDict(extra="forbid", populate_by_name=True, defer_build=True)


class SseEventConfig(_Strict):
    """One item of ``sse.events`` (SPEC "SSE config"; behavior notes §9).

    ``data`` is a string (sent as it is) or any JSON value (sent as compact JSON); strings may
    hold ``{{…}}`` templates, and a string value that is exactly a placeholder (``$uuid``,
    ``$timestamp``, ``$random(min,max)``, ``$pick(a,b,c)``) is replaced on every send.
    Without ``data`` the event carries no ``data:`` line (a client dispatches nothing for it:
    useful for a bare ``comment`` or ``retry``).
    """

    type: str | None = None
    data: Any = None
    id: str | None = None
    retry: int | None = Field(None, ge=0, description="reconnection time in ms")
    comment: str | None = None
    delay: int | None = Field(None, ge=0, description="ms before this event (beats timing)")

    @field_validator("id", mode="before")
    @classmethod
    def _id_as_text(cls, value: Any) -> Any:
        # YAML turns `id: 3` into an int; an SSE id is text.
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value)
        return value

    @field_validator("type", "id")
    @classmethod
    def _single_line(cls, value: str | None) -> str | None:
        if value is not None and ("\n" in value or "\r" in value):
            raise ValueError("must be one line (an SSE field cannot hold a line break)")
        return value


class RandomDelayConfig(_Strict):
    """``timing.randomDelay``: a gap drawn uniformly from ``min``..``max`` ms (inclusive)."""

    min: int = Field(0, ge=0)
    max: int = Field(0, ge=0)

    @model_validator(mode="after")
    def _ordered(self) -> "RandomDelayConfig":
        if self.min > self.max:
            raise ValueError(f"min ({self.min}) must not be larger than max ({self.max})")
        return self


class BurstConfig(_Strict):
    """``timing.burst``: events in groups of ``count``, ``interval`` ms apart inside a group,
    ``pause`` ms between groups."""

    count: int = Field(1, ge=1)
    interval: int = Field(0, ge=0)
    pause: int = Field(0, ge=0)


class SseTimingConfig(_Strict):
    """``sse.timing`` (all values in ms). Precedence per event: event ``delay`` >
    ``perEventDelays[i]`` > ``burst`` > ``randomDelay`` > ``fixedDelay`` > 0, after
    ``initialDelay`` once (behavior notes §9)."""

    initial_delay: int = Field(0, alias="initialDelay", ge=0)
    fixed_delay: int | None = Field(None, alias="fixedDelay", ge=0)
    random_delay: RandomDelayConfig | None = Field(None, alias="randomDelay")
    burst: BurstConfig | None = None
    per_event_delays: list[int] | None = Field(None, alias="perEventDelays")

    @field_validator("per_event_delays")
    @classmethod
    def _non_negative(cls, value: list[int] | None) -> list[int] | None:
        if value is not None and any(delay < 0 for delay in value):
            raise ValueError("delays must be 0 or more milliseconds")
        return value


class TerminationConfig(_Strict):
    """``lifecycle.termination``: how a stream ends once its events are done or a limit hits.

    ``graceful`` sends ``finalEvent`` (if set), waits ``closeDelay`` ms and ends the response
    cleanly; ``abrupt`` drops the connection without a final event or a clean end; ``error``
    sends ``finalEvent`` (default: an ``error`` event), waits ``closeDelay`` ms and drops the
    connection. ``complete`` (written by other tools' CLIs) means ``graceful``.
    """

    type: Literal["graceful", "abrupt", "error"] = "graceful"
    final_event: SseEventConfig | None = Field(None, alias="finalEvent")
    close_delay: int = Field(0, alias="closeDelay", ge=0, description="ms")

    @field_validator("type", mode="before")
    @classmethod
    def _complete_is_graceful(cls, value: Any) -> Any:
        return "graceful" if value == "complete" else value


class SseLifecycleConfig(_Strict):
    """``sse.lifecycle``. ``keepaliveInterval``, ``timeout`` and ``connectionTimeout`` are in
    **seconds**; 0 means off. ``timeout`` ends a stream that sent no event for that long;
    ``connectionTimeout`` caps the whole stream."""

    keepalive_interval: int = Field(0, alias="keepaliveInterval", ge=0)
    timeout: int = Field(0, ge=0)
    max_events: int = Field(0, alias="maxEvents", ge=0)
    connection_timeout: int = Field(0, alias="connectionTimeout", ge=0)
    termination: TerminationConfig = Field(default_factory=TerminationConfig)
    simulate_disconnect: int | None = Field(None, alias="simulateDisconnect", ge=0)

    @field_validator("keepalive_interval")
    @classmethod
    def _keepalive_minimum(cls, value: int) -> int:
        if 0 < value < KEEPALIVE_MINIMUM_SECONDS:
            raise ValueError(f"must be 0 (off) or at least {KEEPALIVE_MINIMUM_SECONDS} seconds, "
                             f"got {value}")
        return value


class ResumeConfig(_Strict):
    """``sse.resume``: ``enabled`` also numbers events without an ``id`` (1, 2, …) so they can
    be resumed; ``bufferSize`` events are kept per mock; ``maxAge`` (s, 0 = no limit) drops
    older ones."""

    enabled: bool = False
    buffer_size: int = Field(DEFAULT_BUFFER_SIZE, alias="bufferSize", ge=1, le=100_000)
    max_age: int = Field(0, alias="maxAge", ge=0)


class SequenceGeneratorConfig(_Strict):
    """``generator.sequence``: values ``start``, ``start + increment``, … as ``format``."""

    start: int = 1
    increment: int = 1
    format: str = "%d"


class RandomGeneratorConfig(_Strict):
    """``generator.random``: ``schema`` is a JSON value whose placeholder strings are drawn
    anew for every event."""

    schema_: Any = Field(default_factory=dict, alias="schema")


class TemplateGeneratorConfig(_Strict):
    """``generator.template``: ``events`` cycled ``repeat`` times per batch (0 counts as 1)."""

    events: list[SseEventConfig] = Field(default_factory=list)
    repeat: int = Field(0, ge=0)


class GeneratorConfig(_Strict):
    """``sse.generator``: events made on the fly, ``count`` per batch (0 = 100); a batch that
    runs out is made again, so the stream only ends by ``lifecycle`` (behavior notes §9)."""

    type: Literal["sequence", "random", "template"]
    count: int = Field(DEFAULT_GENERATOR_COUNT, ge=0)
    sequence: SequenceGeneratorConfig | None = None
    random: RandomGeneratorConfig | None = None
    template: TemplateGeneratorConfig | None = None

    @model_validator(mode="after")
    def _settings_of_type(self) -> "GeneratorConfig":
        if self.type == "sequence" and self.sequence is None:
            self.sequence = SequenceGeneratorConfig()
        if self.type == "random" and self.random is None:
            raise ValueError("a random generator needs random.schema")
        if self.type == "template" and (self.template is None or not self.template.events):
            raise ValueError("a template generator needs template.events")
        return self


class SseConfig(_Strict):
    """``http.sse``: turns a mock's answer into a server-sent event stream (SPEC "SSE config")."""

    events: list[SseEventConfig] = Field(default_factory=list)
    generator: GeneratorConfig | None = None
    timing: SseTimingConfig = Field(default_factory=SseTimingConfig)
    lifecycle: SseLifecycleConfig = Field(default_factory=SseLifecycleConfig)
    resume: ResumeConfig = Field(default_factory=ResumeConfig)
    template: str | None = None
    template_params: dict[str, Any] = Field(default_factory=dict, alias="templateParams")

    @model_validator(mode="after")
    def _something_to_send(self) -> "SseConfig":
        if not self.events and self.generator is None and not self.template:
            raise ValueError("an sse block needs events, a generator or a template")
        return self


class ChunkedConfig(_Strict):
    """``http.chunked``: a body streamed in pieces (SPEC "Chunked config"; notes §9).

    Exactly one of ``data`` (text; other JSON values are sent as compact JSON),
    ``dataFile`` (read when requested; relative to the config file) and ``ndjsonItems``.
    ``chunkSize`` bytes per piece (1024), ``chunkDelay`` ms between pieces. ``format: ndjson``
    (implied by ``ndjsonItems``) sends one compact JSON value per line, one line per piece.
    """

    data: Any = None
    data_file: str | None = Field(None, alias="dataFile")
    ndjson_items: list[Any] | None = Field(None, alias="ndjsonItems")
    chunk_size: int = Field(DEFAULT_CHUNK_SIZE, alias="chunkSize", ge=1)
    chunk_delay: int = Field(0, alias="chunkDelay", ge=0)
    format: Literal["raw", "ndjson"] | None = None

    @model_validator(mode="after")
    def _one_source(self) -> "ChunkedConfig":
        given = [name for name, value in (("data", self.data), ("dataFile", self.data_file),
                                          ("ndjsonItems", self.ndjson_items))
                 if value is not None]
        if len(given) != 1:
            raise ValueError("give exactly one of data, dataFile or ndjsonItems"
                             + (f" (got {', '.join(given)})" if given else ""))
        return self

    @property
    def is_ndjson(self) -> bool:
        """True for ``format: ndjson``, or ``ndjsonItems`` without a ``format``."""
        return self.format == "ndjson" or (self.format is None and self.ndjson_items is not None)
