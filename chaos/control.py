"""Chaos operations of the engine's control interface, and their routes on the
engine-control port.

:class:`ChaosControl` is mixed into ``EngineControl`` (like ``TableControl``): the admin API
(:mod:`chaos.api`) calls these methods in process in full mode, and :func:`route_chaos`
serves the same routes on the engine-control port of ``mockd engine``:

=================================================  ===========================================
``GET /chaos``                                     the config; ``{"enabled": false}`` when off
``PUT /chaos``                                     ``{"status": "ok"}``; 400 ``validation_error``
``GET /chaos/stats``                               statistics
``POST /chaos/stats/reset``, ``DELETE /chaos/stats``  ``{"message": "chaos stats reset"}``
``GET /chaos/faults``                              fault state by ``"<rule>:<fault>"``
``POST /chaos/circuit-breakers/{key}/trip|reset``  ``{"message": "circuit breaker tripped" |
(also ``circuit-breaker``)                         "circuit breaker reset", "key"}``; 404
``GET /chaos/profiles``                            ``[{name, description, config}]`` by name
``GET /chaos/profiles/{name}``                     one profile; 404
``POST /chaos/profiles/{name}/apply``              ``{"status": "ok", "profile", "message"}``
=================================================  ===========================================

Errors are :class:`ChaosError` (``status``, ``code``, ``message``): 400 ``validation_error``
naming the field, 404 ``not_found`` (``circuit breaker not found: <key>``, ``chaos profile not
found: <name>``).

Concurrency: every method runs on the engine's event loop (ARCHITECTURE seam 5).

Source: behavior notes §1 "Chaos", §11, §16 (the engine-control port mirrors the admin's
``/chaos…`` routes). Django-free.
"""
from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import orjson

if TYPE_CHECKING:
    from chaos.config import ChaosConfig
    from chaos.injector import ChaosRuntime


class ChaosError(Exception):
    """A chaos request that cannot be carried out.

    Attributes:
        status: HTTP status (400 or 404).
        code: the admin error code (``validation_error``, ``not_found``).
        message: what is wrong, naming the field or the unknown name.
    """

    def __init__(self, status: int, code: str, message: str):
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message


def validated(document: Any) -> ChaosConfig:
    """Parse a ``PUT /chaos`` body; raises :class:`ChaosError` 400 ``validation_error``
    naming the field (``errorRate.probability: ...``)."""
    # Imported on the first chaos request, not when the engine starts (as the other parts
    # of this module's imports): an engine that is never asked about chaos never loads them.
    from chaos.config import ChaosConfigError, parse_chaos

    try:
        return parse_chaos(document)
    except ChaosConfigError as error:
        raise ChaosError(400, "validation_error", str(error)) from None


def profile_document(name: str) -> dict[str, Any]:
    """``{name, description, config}``; raises :class:`ChaosError` 404."""
    from chaos.profiles import UnknownProfile, get_profile

    try:
        return get_profile(name).document()
    except UnknownProfile as error:
        raise ChaosError(404, "not_found", str(error)) from None


class ChaosControl:
    """The chaos block of ``EngineControl`` (needs ``self.engine``, whose
    ``chaos_runtime`` holds the state)."""

    engine: Any

    @property
    def _chaos(self) -> ChaosRuntime:
        return self.engine.chaos_runtime

    async def chaos_config(self) -> dict[str, Any]:
        """The live chaos config; ``{"enabled": false}`` while chaos is off."""
        return self._chaos.document()

    async def set_chaos(self, document: Any) -> dict[str, Any]:
        """Replace the chaos config (fault state starts afresh; statistics are kept):
        ``{"status": "ok"}``. Raises :class:`ChaosError` 400 naming the field."""
        self._chaos.configure(validated(document))
        return {"status": "ok"}

    def install_chaos(self, config: ChaosConfig) -> None:
        """Apply an already validated config at start-up (``serverConfig.chaos``, flags)."""
        self._chaos.configure(config)

    async def chaos_stats(self) -> dict[str, Any]:
        """``{totalRequests, injectedFaults, latencyInjected, errorsInjected,
        timeoutsInjected, bandwidthInjected, faultsByType}``."""
        return self._chaos.stats.document()

    async def reset_chaos_stats(self) -> dict[str, Any]:
        """Every counter back to 0: ``{"message": "chaos stats reset"}``."""
        self._chaos.stats.reset()
        return {"message": "chaos stats reset"}

    async def chaos_faults(self) -> dict[str, Any]:
        """Fault state: ``{circuitBreakers, retryAfterTrackers, progressiveDegradation,
        progressiveDegradations}`` keyed ``"<rule>:<fault>"``."""
        return self._chaos.injector.fault_state()

    async def circuit_breaker_action(self, key: str, action: str) -> dict[str, Any]:
        """``action`` ``trip`` (-> open) or ``reset`` (-> closed) on the breaker at ``key``:
        ``{"message": "circuit breaker tripped" | "circuit breaker reset", "key"}``. Raises
        :class:`ChaosError` 404 ``circuit breaker not found: <key>``, 400 for another
        action."""
        from chaos.injector import CircuitBreakerNotFound

        try:
            breaker = self._chaos.circuit_breaker(key)
        except CircuitBreakerNotFound as error:
            raise ChaosError(404, "not_found", str(error)) from None
        if action == "trip":
            breaker.trip()
            return {"message": "circuit breaker tripped", "key": key}
        if action == "reset":
            breaker.reset()
            return {"message": "circuit breaker reset", "key": key}
        raise ChaosError(400, "validation_error",
                         f"action: expected trip or reset, got {action!r}")

    async def apply_chaos_profile(self, name: str) -> dict[str, Any]:
        """Replace the chaos config with profile ``name`` (enabled):
        ``{"status": "ok", "profile", "message": "chaos profile applied: <description>"}``.
        Raises :class:`ChaosError` 404 ``chaos profile not found: <name>``."""
        from chaos.profiles import UnknownProfile, get_profile

        try:
            profile = get_profile(name)
        except UnknownProfile as error:
            raise ChaosError(404, "not_found", str(error)) from None
        self._chaos.configure(profile.config)
        return {"status": "ok", "profile": profile.name,
                "message": f"chaos profile applied: {profile.description}"}


_BREAKER = re.compile(r"^/chaos/circuit-breakers?/([^/]+)/(trip|reset)$")
_PROFILE = re.compile(r"^/chaos/profiles/([^/]+)(/apply)?$")

Answer = Callable[[int, Any], Awaitable[None]]


async def route_chaos(control: Any, method: str, path: str,
                      read_body: Callable[[], Awaitable[bytes]], answer: Answer) -> bool:
    """Answer a ``/chaos…`` route of the engine-control port; False when ``path`` is not one.

    ``control`` is an ``EngineControl``; ``read_body()`` returns the request body;
    ``answer(status, payload)`` sends JSON. Errors answer ``{error, message}``.
    """
    if not (path == "/chaos" or path.startswith("/chaos/")):
        return False
    try:
        await _route(control, method, path, read_body, answer)
    except ChaosError as error:
        await answer(error.status, {"error": error.code, "message": error.message})
    except orjson.JSONDecodeError:
        await answer(400, {"error": "invalid_json", "message": "Invalid JSON in request body"})
    return True


async def _route(control: Any, method: str, path: str,
                 read_body: Callable[[], Awaitable[bytes]], answer: Answer) -> None:
    if path == "/chaos":
        if method == "GET":
            await answer(200, await control.chaos_config())
        elif method == "PUT":
            await answer(200, await control.set_chaos(orjson.loads(await read_body() or b"{}")))
        else:
            await _wrong_method(method, answer)
    elif path == "/chaos/stats":
        if method == "GET":
            await answer(200, await control.chaos_stats())
        elif method == "DELETE":
            await answer(200, await control.reset_chaos_stats())
        else:
            await _wrong_method(method, answer)
    elif path == "/chaos/stats/reset":
        if method == "POST":
            await answer(200, await control.reset_chaos_stats())
        else:
            await _wrong_method(method, answer)
    elif path == "/chaos/faults":
        if method == "GET":
            await answer(200, await control.chaos_faults())
        else:
            await _wrong_method(method, answer)
    elif path == "/chaos/profiles":
        if method == "GET":
            from chaos.profiles import profile_documents

            await answer(200, profile_documents())
        else:
            await _wrong_method(method, answer)
    elif found := _PROFILE.match(path):
        name, apply = found.group(1), found.group(2)
        if apply and method == "POST":
            await answer(200, await control.apply_chaos_profile(name))
        elif not apply and method == "GET":
            await answer(200, profile_document(name))
        else:
            await _wrong_method(method, answer)
    elif found := _BREAKER.match(path):
        if method == "POST":
            await answer(200, await control.circuit_breaker_action(found.group(1),
                                                                   found.group(2)))
        else:
            await _wrong_method(method, answer)
    else:
        await answer(404, {"error": "not_found", "message": "Resource not found"})


async def _wrong_method(method: str, answer: Answer) -> None:
    await answer(405, {"error": "method_not_allowed", "message": f"{method} is not allowed here"})
