"""The chaos configuration: typed models of ``serverConfig.chaos`` and of ``PUT /chaos``.

One set of pydantic models serves the config file (``serverConfig.chaos``), the admin API
body, the engine-control port and the published JSON Schema (ARCHITECTURE seam 1). Durations
are stored as int **milliseconds** and written back as text (``"250ms"``, ``"30s"``);
probabilities are floats in 0..1 (anything else is an error naming the key).

Shape::

    {enabled, seed?, latency: {min, max, probability},
     errorRate: {probability, statusCodes[], defaultCode},
     bandwidth: {bytesPerSecond, probability},
     rules: [{pathPattern (regex), methods[], probability, faults: [{type, probability,
              config: {...}}]}]}

A fault's parameters go in ``config``, flat beside ``type``, or in an object named after the
fault (``circuitBreaker``, ``retryAfter``, ``progressiveDegradation``, ``chunkedDribble``);
``config`` wins over the named object, which wins over flat keys. Unknown parameters and
unknown fault types are errors.

Errors: :func:`parse_chaos` raises :class:`ChaosConfigError` whose ``field`` is the key path
(``rules[0].faults[1].config.failureThreshold``) and ``reason`` what is wrong.

Source: behavior notes §11 (shape, fault table and defaults), §14 (``serverConfig.chaos``).
Django-free.
"""
from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import (BaseModel, BeforeValidator, ConfigDict, Field, PlainSerializer,
                      ValidationError, WithJsonSchema, field_validator, model_validator)

from mocks.core.durations import parse_duration_ms
from mocks.core.errors import validation_issues

#: Every fault type, in the order of the fault table.
FAULT_TYPES: tuple[str, ...] = (
    "latency", "error", "timeout", "corrupt_body", "slow_body", "partial_response",
    "empty_response", "connection_reset", "circuit_breaker", "retry_after",
    "progressive_degradation", "chunked_dribble")

#: Fault types that keep state between requests and always run (no probability roll).
STATEFUL_FAULTS = frozenset({"circuit_breaker", "retry_after", "progressive_degradation"})

#: Object names that may hold a fault's parameters, by fault type.
NAMED_PARAMETER_OBJECTS = {"circuit_breaker": "circuitBreaker", "retry_after": "retryAfter",
                           "progressive_degradation": "progressiveDegradation",
                           "chunked_dribble": "chunkedDribble"}


def format_duration(milliseconds: int) -> str:
    """``30000`` -> ``"30s"``, ``250`` -> ``"250ms"`` (whole seconds are written in s)."""
    if milliseconds and milliseconds % 1000 == 0:
        return f"{milliseconds // 1000}s"
    return f"{milliseconds}ms"


_DURATION_SCHEMA = {"anyOf": [
    {"type": "integer", "minimum": 0, "description": "milliseconds"},
    {"type": "string", "pattern": r"^\s*\d+(\.\d+)?\s*(ms|s|m|h)?\s*$",
     "description": "a number with unit ms, s, m or h (\"250ms\", \"30s\")"}]}

#: A duration field: ``"250ms"``, ``"30s"`` or a number of ms; stored as int ms, written as text.
Duration = Annotated[int, BeforeValidator(parse_duration_ms),
                     PlainSerializer(format_duration, return_type=str, when_used="json"),
                     WithJsonSchema(_DURATION_SCHEMA)]


def _seconds_or_duration(value: Any) -> int:
    """``retryAfter``: a plain number is seconds (like the ``Retry-After`` header); text is a
    duration (``"30s"``, ``"1500ms"``). Returns ms."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return parse_duration_ms(float(value) * 1000)
    return parse_duration_ms(value)


#: ``retryAfter``/``retryAfterSeconds``: a number of seconds or a duration text; stored as ms.
SecondsDuration = Annotated[int, BeforeValidator(_seconds_or_duration),
                            PlainSerializer(format_duration, return_type=str, when_used="json"),
                            WithJsonSchema(_DURATION_SCHEMA)]

#: A probability: 0.0 to 1.0.
Probability = Annotated[float, Field(ge=0.0, le=1.0)]
#: An HTTP status code a fault may answer.
StatusCode = Annotated[int, Field(ge=100, le=599)]
#: An error status code (4xx or 5xx).
ErrorCode = Annotated[int, Field(ge=400, le=599)]


class _Strict(BaseModel):
    """Unknown keys are errors; camelCase keys through aliases, snake_case also accepted."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=True)


# ---------------------------------------------------------------------------- fault parameters


class LatencyParams(_Strict):
    """``latency``: wait a random time in ``min``..``max`` (ms; defaults 0ms and 100ms)."""

    min: Duration = 0
    max: Duration = 100

    @model_validator(mode="after")
    def _ordered(self) -> "LatencyParams":
        if self.min > self.max:
            raise ValueError(f"min ({format_duration(self.min)}) is above max "
                             f"({format_duration(self.max)})")
        return self


class ErrorParams(_Strict):
    """``error``: answer ``"<Reason Phrase>\\n"`` with a status drawn from ``statusCodes``,
    else ``defaultCode`` (500)."""

    status_codes: list[StatusCode] = Field(default_factory=list, alias="statusCodes")
    default_code: StatusCode = Field(500, alias="defaultCode")


class TimeoutParams(_Strict):
    """``timeout``: wait ``duration`` (ms; default 30s), then 504 ``Gateway Timeout``."""

    duration: Duration = 30_000


class CorruptBodyParams(_Strict):
    """``corrupt_body``: each body byte is replaced with probability ``corruptRate`` (0.01)."""

    corrupt_rate: Probability = Field(0.01, alias="corruptRate")


class SlowBodyParams(_Strict):
    """``slow_body``: the body is sent at ``bytesPerSecond`` (default 1024)."""

    bytes_per_second: int = Field(1024, alias="bytesPerSecond", ge=1)


class PartialResponseParams(_Strict):
    """``partial_response``: the connection drops after ``maxBytes`` body bytes (1024)."""

    max_bytes: int = Field(1024, alias="maxBytes", ge=0)


class NoParams(_Strict):
    """``empty_response`` (200, empty body) and ``connection_reset`` take no parameters."""


class CircuitBreakerParams(_Strict):
    """``circuit_breaker``: a breaker ``closed`` -> ``open`` -> ``half_open`` per fault.

    Attributes:
        failure_threshold: ``failureThreshold``: consecutive injected 500s that open it (5).
        success_threshold: ``successThreshold``: passes in ``half_open`` that close it (3).
        open_duration: ``openDuration`` (alias ``recoveryTimeout``): ms it stays open (30s).
        trip_after: ``tripAfter``: open at this request (counted since closed); 0 = never.
        open_status_code: ``openStatusCode`` (alias ``tripStatusCode``): status while open
            (503).
        open_body: ``openBody``: body while open (default a JSON object naming the state).
        closed_error_rate: ``closedErrorRate``: probability of an injected 500 while closed.
        half_open_error_rate: ``halfOpenErrorRate``: probability that a ``half_open``
            request fails and reopens the breaker (0.5).
    """

    failure_threshold: int = Field(5, alias="failureThreshold", ge=1)
    success_threshold: int = Field(3, alias="successThreshold", ge=1)
    open_duration: Duration = Field(30_000, alias="openDuration")
    trip_after: int = Field(0, alias="tripAfter", ge=0)
    open_status_code: ErrorCode = Field(503, alias="openStatusCode")
    open_body: str | None = Field(None, alias="openBody")
    closed_error_rate: Probability = Field(0.0, alias="closedErrorRate")
    half_open_error_rate: Probability = Field(0.5, alias="halfOpenErrorRate")

    @model_validator(mode="before")
    @classmethod
    def _aliases(cls, data: Any) -> Any:
        return _rename(data, {"recoveryTimeout": "openDuration",
                              "tripStatusCode": "openStatusCode"})


class RetryAfterParams(_Strict):
    """``retry_after``: the first request opens a window of ``retryAfter`` in which every
    request gets ``statusCode`` (429 or 503) with ``Retry-After`` (the seconds left, ≥ 1) and
    ``body`` (default ``{"error": "<Reason>", "retry_after": N}``); the first request after
    the window passes, the next opens a new one. ``retryAfter`` (alias
    ``retryAfterSeconds``): a number of seconds or a duration text (default 30s)."""

    status_code: Literal[429, 503] = Field(429, alias="statusCode")
    retry_after: SecondsDuration = Field(30_000, alias="retryAfter")
    body: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _aliases(cls, data: Any) -> Any:
        return _rename(data, {"retryAfterSeconds": "retryAfter"})


class ProgressiveDegradationParams(_Strict):
    """``progressive_degradation``: request n waits ``initialDelay + (n-1)·delayIncrement``
    (at most ``maxDelay``); past ``errorAfter`` requests (0 = never) it answers ``errorCode``;
    after ``resetAfter`` requests (0 = never) the count starts again.

    Defaults: 20ms, 5ms, 5s, 0, 0, 500. Aliases ``errorAfterRequests``, ``errorStatusCode``.
    """

    initial_delay: Duration = Field(20, alias="initialDelay")
    delay_increment: Duration = Field(5, alias="delayIncrement")
    max_delay: Duration = Field(5_000, alias="maxDelay")
    error_after: int = Field(0, alias="errorAfter", ge=0)
    reset_after: int = Field(0, alias="resetAfter", ge=0)
    error_code: ErrorCode = Field(500, alias="errorCode")

    @model_validator(mode="before")
    @classmethod
    def _aliases(cls, data: Any) -> Any:
        return _rename(data, {"errorAfterRequests": "errorAfter",
                              "errorStatusCode": "errorCode"})


class ChunkedDribbleParams(_Strict):
    """``chunked_dribble``: after ``initialDelay`` (0ms) the body goes out chunked, in pieces
    of ``chunkSize`` bytes (1024) ``chunkDelay`` apart (500ms)."""

    chunk_size: int = Field(1024, alias="chunkSize", ge=1)
    chunk_delay: Duration = Field(500, alias="chunkDelay")
    initial_delay: Duration = Field(0, alias="initialDelay")


def _rename(data: Any, aliases: dict[str, str]) -> Any:
    """Move alias keys to their canonical names (the canonical key wins when both are set)."""
    if not isinstance(data, dict) or not any(alias in data for alias in aliases):
        return data
    data = dict(data)
    for alias, canonical in aliases.items():
        if alias in data:
            value = data.pop(alias)
            data.setdefault(canonical, value)
    return data


#: Parameter model of each fault type.
FAULT_PARAMETERS: dict[str, type[_Strict]] = {
    "latency": LatencyParams, "error": ErrorParams, "timeout": TimeoutParams,
    "corrupt_body": CorruptBodyParams, "slow_body": SlowBodyParams,
    "partial_response": PartialResponseParams, "empty_response": NoParams,
    "connection_reset": NoParams, "circuit_breaker": CircuitBreakerParams,
    "retry_after": RetryAfterParams, "progressive_degradation": ProgressiveDegradationParams,
    "chunked_dribble": ChunkedDribbleParams}


# ---------------------------------------------------------------------------- faults and rules


class FaultConfig(_Strict):
    """One fault of a rule: ``{type, probability, config}``.

    Attributes:
        type: one of :data:`FAULT_TYPES` (anything else is an error at ``.type``).
        probability: chance (0..1, default 1.0) that an ordinary fault fires on a request of
            its rule; stateful faults (:data:`STATEFUL_FAULTS`) ignore it and always run.
        config: the type's parameter model (:data:`FAULT_PARAMETERS`), defaults filled in.
    """

    type: Literal[FAULT_TYPES]  # type: ignore[valid-type]
    probability: Probability = 1.0
    config: Any = None

    @model_validator(mode="before")
    @classmethod
    def _gather_parameters(cls, data: Any) -> Any:
        """Parameters from ``config``, the named object and flat keys (``config`` wins)."""
        if not isinstance(data, dict):
            return data
        kind = data.get("type")
        named = NAMED_PARAMETER_OBJECTS.get(kind) if isinstance(kind, str) else None
        flat = {key: value for key, value in data.items()
                if key not in ("type", "probability", "config")
                and not (key == named and isinstance(value, dict))}
        merged: dict[str, Any] = dict(flat)
        if named is not None and isinstance(data.get(named), dict):
            merged.update(data[named])
        config = data.get("config")
        if isinstance(config, dict):
            merged.update(config)
        elif config is not None:
            raise ValueError("config: must be an object of the fault's parameters")
        out = {"type": kind, "config": merged}
        if "probability" in data:
            out["probability"] = data["probability"]
        return out

    @field_validator("config", mode="after")
    @classmethod
    def _typed(cls, value: Any, info: Any) -> Any:
        kind = info.data.get("type")
        model = FAULT_PARAMETERS.get(kind)
        if model is None:
            return value  # the type error is reported at .type
        return model.model_validate(value or {})

    @property
    def stateful(self) -> bool:
        """Whether the fault keeps state between requests (and always runs)."""
        return self.type in STATEFUL_FAULTS


def _fault_type_first(value: Any) -> Any:
    """Report an unknown fault type before its parameters (named ``faults[i].type``)."""
    if isinstance(value, list):
        for index, fault in enumerate(value):
            if isinstance(fault, dict) and fault.get("type") not in FAULT_TYPES:
                kind = fault.get("type")
                shown = "missing" if kind is None else repr(kind)
                raise ValueError(f"[{index}].type: unknown fault type {shown}; expected one "
                                 f"of {', '.join(FAULT_TYPES)}")
    return value


class ChaosRule(_Strict):
    """A rule: requests whose path the regex ``pathPattern`` finds (and whose method is in
    ``methods``, when given) get ``faults`` and no global fault.

    Attributes:
        path_pattern: ``pathPattern``: a Python regex searched in the request path; None
            (absent) matches every path. Must compile.
        methods: methods the rule applies to (upper case; empty: all).
        probability: chance the rule's faults are considered at all (default 1.0).
        faults: the faults, applied in order.
    """

    path_pattern: str | None = Field(None, alias="pathPattern")
    methods: list[str] = Field(default_factory=list)
    probability: Probability = 1.0
    faults: Annotated[list[FaultConfig], BeforeValidator(_fault_type_first)] = \
        Field(default_factory=list)

    @field_validator("path_pattern")
    @classmethod
    def _compiles(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                re.compile(value)
            except re.error as error:
                raise ValueError(f"not a valid regular expression: {error}") from None
        return value

    @field_validator("methods")
    @classmethod
    def _upper(cls, value: list[str]) -> list[str]:
        return [method.strip().upper() for method in value if method.strip()]


class LatencyConfig(LatencyParams):
    """Global ``latency``: wait ``min``..``max`` with ``probability`` (default 1.0)."""

    probability: Probability = 1.0


class ErrorRateConfig(_Strict):
    """Global ``errorRate``: with ``probability`` (default 1.0) answer an error whose status
    is drawn from ``statusCodes``, else ``defaultCode``, else 500."""

    probability: Probability = 1.0
    status_codes: list[StatusCode] = Field(default_factory=list, alias="statusCodes")
    default_code: StatusCode | None = Field(None, alias="defaultCode")


class BandwidthConfig(_Strict):
    """Global ``bandwidth``: with ``probability`` (default 1.0) send the body at
    ``bytesPerSecond`` (counted as a ``slow_body`` fault)."""

    bytes_per_second: int = Field(alias="bytesPerSecond", ge=1)
    probability: Probability = 1.0


class ChaosConfig(_Strict):
    """``serverConfig.chaos`` and the body of ``PUT /chaos``.

    Attributes:
        enabled: inject faults (default False: the data plane ignores the rest).
        seed: seed of the fault dice; the same seed and the same request sequence give the
            same faults (None: a fresh random seed each time the config is applied).
        latency, error_rate, bandwidth: the global faults (``errorRate`` for error_rate),
            applied to requests no rule matched: error first (then nothing else), else
            latency, then bandwidth.
        rules: path rules (see :class:`ChaosRule`).
    """

    enabled: bool = False
    seed: int | None = None
    latency: LatencyConfig | None = None
    error_rate: ErrorRateConfig | None = Field(None, alias="errorRate")
    bandwidth: BandwidthConfig | None = None
    rules: list[ChaosRule] = Field(default_factory=list)

    def document(self) -> dict[str, Any]:
        """The config as JSON data (camelCase keys, durations as text, unset blocks left out)."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


class ChaosConfigError(ValueError):
    """A chaos config that does not validate.

    Attributes:
        field: the key path of the first problem (``rules[0].faults[1].probability``).
        reason: what is wrong with it.
    """

    def __init__(self, field: str, reason: str):
        self.field = field
        self.reason = reason
        super().__init__(f"{field}: {reason}" if field else reason)


def parse_chaos(document: Any) -> ChaosConfig:
    """Validate a chaos document (the ``PUT /chaos`` body).

    Raises :class:`ChaosConfigError` naming the first offending key: a probability outside
    0..1, an unknown fault type or parameter, a bad duration or regex, a non-object body.
    """
    if not isinstance(document, dict):
        raise ChaosConfigError("", "the chaos config must be a JSON object")
    try:
        return ChaosConfig.model_validate(document)
    except ValidationError as error:
        first = validation_issues(error)[0]
        return _raise(first.path, first.reason)


def _raise(path: str, reason: str) -> Any:
    # "rules[0].faults: [1].type: ..." reads better as "rules[0].faults[1].type: ..."
    if reason.startswith("[") and "]" in reason and ": " in reason:
        suffix, _, reason = reason.partition(": ")
        path += suffix
    raise ChaosConfigError(path, reason)


def chaos_json_schema() -> dict[str, Any]:
    """JSON Schema of :class:`ChaosConfig` (camelCase keys)."""
    return ChaosConfig.model_json_schema(by_alias=True)


__all__ = ["ChaosConfig", "ChaosConfigError", "ChaosRule", "FaultConfig", "FAULT_TYPES",
           "FAULT_PARAMETERS", "STATEFUL_FAULTS", "format_duration", "parse_chaos"]
