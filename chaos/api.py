"""Admin API routes of chaos (django-ninja ``Router``; STYLE §8: parse, call, return).

Composed in :mod:`mockd_project.api`. Operations marked E call ``EngineControl`` (its chaos
block, :class:`chaos.control.ChaosControl`) on the engine loop; without an engine: 503
``no_engine``. The profile listings need no engine.

=================================================  ===========================================
``GET /chaos`` E                                   the config; ``{"enabled": false}`` when off
``PUT /chaos`` E                                   ``{"status": "ok"}``; 400 ``validation_error``
                                                   naming the field (probability outside
                                                   0..1, unknown fault type or parameter)
``GET /chaos/stats`` E                             ``{totalRequests, injectedFaults,
                                                   latencyInjected, errorsInjected,
                                                   timeoutsInjected, bandwidthInjected,
                                                   faultsByType}``
``POST /chaos/stats/reset`` E (``DELETE            ``{"message": "chaos stats reset"}``
/chaos/stats``)
``GET /chaos/faults`` E                            ``{circuitBreakers, retryAfterTrackers,
                                                   progressiveDegradation(s)}`` by key
                                                   ``"<ruleIndex>:<faultIndex>"``
``POST /chaos/circuit-breakers/{key}/trip|reset``  ``{"message": "circuit breaker tripped" |
E (also singular ``circuit-breaker``)              "circuit breaker reset", "key"}``; 404
                                                   ``circuit breaker not found: <key>``
``GET /chaos/profiles``                            ``[{name, description, config}]`` by name
``GET /chaos/profiles/{name}``                     the profile; 404 ``chaos profile not
                                                   found: <name>``
``POST /chaos/profiles/{name}/apply`` E            ``{"status": "ok", "profile", "message":
                                                   "chaos profile applied: <description>"}``
=================================================  ===========================================

Source: behavior notes §1 "Chaos", §11.
"""
from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from ninja import Router

from chaos.control import ChaosError, profile_document
from mocks.api import engine_control, json_body
from mocks.control import openapi_docs as oa
from mocks.control.errors import AdminError

router = Router(tags=["chaos"])


async def _call(method: str, *args: Any) -> Any:
    """``EngineControl.<method>(*args)``; a :class:`ChaosError` becomes an ``AdminError``."""
    try:
        return await getattr(engine_control(), method)(*args)
    except ChaosError as error:
        raise AdminError(error.status, error.code, error.message) from None


_CONFIG_SCHEMA = {"$ref": "#/components/schemas/ChaosConfig"}
_CONFIG_EXAMPLE = {"enabled": True, "seed": 42,
                   "latency": {"min": "10ms", "max": "100ms", "probability": 1.0},
                   "errorRate": {"probability": 0.1, "statusCodes": [500, 503]}}
_CONFIG_BODY = oa.doc(oa.body(_CONFIG_EXAMPLE, _CONFIG_SCHEMA), oa.answers({
    200: {"status": "ok"}, 400: oa.bad_request(
        "validation_error", "errorRate.probability: Input should be less than or equal to 1")},
    engine=True))
_PROFILE_MISSING = oa.not_found("chaos profile not found: dial-up")
_PROFILE = {"name": "flaky", "description": "Unreliable service with random errors",
            "config": {"enabled": True,
                       "latency": {"min": "0ms", "max": "100ms", "probability": 1.0},
                       "errorRate": {"probability": 0.2, "statusCodes": [500, 502, 503]},
                       "rules": []}}
_STATS_RESET = oa.answers({200: {"message": "chaos stats reset"}}, engine=True)


@router.get("/chaos", summary="Chaos configuration", openapi_extra=oa.answers(
    {200: {"enabled": False}}, {200: _CONFIG_SCHEMA},
    {200: "The live chaos config (as PUT /chaos takes it); {\"enabled\": false} while "
          "chaos is off"}, engine=True))
async def get_chaos(request: HttpRequest) -> dict[str, Any]:
    """The live chaos config; ``{"enabled": false}`` while chaos is off."""
    return await _call("chaos_config")


@router.put("/chaos", summary="Replace the chaos configuration", openapi_extra=_CONFIG_BODY)
async def put_chaos(request: HttpRequest) -> dict[str, Any]:
    """``{"status": "ok"}``; 400 ``validation_error`` naming the field."""
    return await _call("set_chaos", json_body(request))


@router.get("/chaos/stats", summary="Chaos statistics", openapi_extra=oa.answers({
    200: {"totalRequests": 120, "injectedFaults": 14, "latencyInjected": 120,
          "errorsInjected": 12, "timeoutsInjected": 0, "bandwidthInjected": 0,
          "faultsByType": {"latency": 120, "error": 12, "timeout": 0, "corrupt_body": 0,
                           "slow_body": 0, "partial_response": 0, "empty_response": 0,
                           "connection_reset": 0, "circuit_breaker": 2, "retry_after": 0,
                           "progressive_degradation": 0, "chunked_dribble": 0}}},
    engine=True))
async def get_stats(request: HttpRequest) -> dict[str, Any]:
    """Counters of injected faults since start or the last reset."""
    return await _call("chaos_stats")


@router.post("/chaos/stats/reset", summary="Reset chaos statistics", openapi_extra=_STATS_RESET)
@router.delete("/chaos/stats", summary="Reset chaos statistics",
               operation_id="chaos_api_delete_stats", openapi_extra=_STATS_RESET)
async def reset_stats(request: HttpRequest) -> dict[str, Any]:
    """``{"message": "chaos stats reset"}``."""
    return await _call("reset_chaos_stats")


@router.get("/chaos/faults", summary="State of stateful faults", openapi_extra=oa.answers({
    200: {"circuitBreakers": {"payments": {
              "state": "open", "tripCount": 1, "requestCount": 10, "failureCount": 5,
              "consecutiveFailures": 5, "consecutiveSuccesses": 0, "totalTrips": 1,
              "totalRejected": 3, "totalPassed": 7, "totalHalfOpen": 0, "stateChanges": 1,
              "openedAt": oa.TIMESTAMP}},
          "retryAfterTrackers": {}, "progressiveDegradation": {},
          "progressiveDegradations": {}}}, engine=True))
async def get_faults(request: HttpRequest) -> dict[str, Any]:
    """Circuit breakers, retry-after trackers and progressive degradations by key."""
    return await _call("chaos_faults")


def _breaker_action(action: str, summary: str, path: str) -> None:
    async def operation(request: HttpRequest, key: str) -> dict[str, Any]:
        return await _call("circuit_breaker_action", key, action)

    operation.__name__ = f"{action}_{'breakers' if 'breakers' in path else 'breaker'}"
    operation.__doc__ = (f"``{{\"message\": \"circuit breaker "
                         f"{'tripped' if action == 'trip' else 'reset'}\", \"key\"}}``; 404 "
                         f"``circuit breaker not found: <key>``.")
    done = "tripped" if action == "trip" else "reset"
    router.post(path, summary=summary, openapi_extra=oa.answers({
        200: {"message": f"circuit breaker {done}", "key": "payments"},
        404: oa.not_found("circuit breaker not found: payments")}, engine=True))(operation)


for _action, _summary in (("trip", "Trip a circuit breaker (open)"),
                          ("reset", "Reset a circuit breaker (closed)")):
    _breaker_action(_action, _summary, f"/chaos/circuit-breakers/{{key}}/{_action}")
    _breaker_action(_action, _summary, f"/chaos/circuit-breaker/{{key}}/{_action}")


@router.get("/chaos/profiles", summary="List chaos profiles", openapi_extra=oa.answers(
    {200: [_PROFILE]}))
def list_profiles(request: HttpRequest) -> list[dict[str, Any]]:
    """``[{name, description, config}]`` sorted by name."""
    from chaos.profiles import profile_documents  # the chaos config model, on first use

    return profile_documents()


@router.get("/chaos/profiles/{name}", summary="One chaos profile", openapi_extra=oa.answers(
    {200: _PROFILE, 404: _PROFILE_MISSING}))
def get_profile(request: HttpRequest, name: str) -> dict[str, Any]:
    """``{name, description, config}``; 404 ``chaos profile not found: <name>``."""
    try:
        return profile_document(name)
    except ChaosError as error:
        raise AdminError(error.status, error.code, error.message) from None


@router.post("/chaos/profiles/{name}/apply", summary="Apply a chaos profile",
             openapi_extra=oa.answers({
                 200: {"status": "ok", "profile": "flaky",
                       "message": "chaos profile applied: Unreliable service with random "
                                  "errors"},
                 404: _PROFILE_MISSING}, engine=True))
async def apply_profile(request: HttpRequest, name: str) -> dict[str, Any]:
    """Replaces the chaos config with the profile (enabled)."""
    return await _call("apply_chaos_profile", name)

