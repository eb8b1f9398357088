"""Scenarios: stateful flows of HTTP mocks (``http.scenario``).

Owns :class:`ScenarioStore` (the current state of every scenario, per workspace), the match
condition of ``requiredState`` (:class:`~mocks.protocols.http.conditions.ScenarioStateCondition`,
built by :func:`scenario_condition`) and the action wrapper that moves a scenario to
``newState`` when its mock answers (:func:`scenario_action`). Also the engine-control port's
``/scenarios`` routes (:func:`route_scenarios`), mirroring the admin's:

=============================================  ============================================
``GET /scenarios``                             ``{scenarios: [{name, state, possibleStates,
                                               workspaceId}], count}``
``PUT /scenarios/{name}/state``                body ``{state}``; the scenario as listed
                                               (404 unknown scenario, 400 unknown state)
``POST /scenarios/reset``                      ``{"status": "reset", "scenarios": n}``
=============================================  ============================================

Every scenario starts in ``Started``. States are runtime data: they survive config reloads,
are reset with the tables (``POST /state/reset``, ``POST /reset``) and by
``POST /scenarios/reset``, and start over on restart.

Concurrency: the store is owned by the engine's event loop (ARCHITECTURE seam 5); the state
moves before the answer is sent, with no await in between, so two requests never both see
the old state. Django-free.

Source: WireMock import (``scenarioName``, ``requiredScenarioState``, ``newScenarioState``;
WireMock's admin ``/scenarios`` routes, in our shapes).
"""
from __future__ import annotations

import re
from typing import Any, Awaitable, Callable, Iterable

from mocks.protocols.http.conditions import ScenarioStateCondition
from mocks.protocols.http.config import SCENARIO_STARTED
from mocks.protocols.streaming.sender import StreamAction

#: A scenario's key in the store: ``(workspace id, scenario name)``.
ScenarioKey = tuple[str, str]

#: Workspace of a mock without ``workspaceId``.
DEFAULT_WORKSPACE = "local"


class ScenarioStore:
    """The current state of every scenario that left ``Started``.

    Attributes:
        states: ``{(workspace, name): state}``; a scenario not listed is in ``Started``.
            Match conditions hold this very dict (never replace it, only change it).
    """

    def __init__(self) -> None:
        self.states: dict[ScenarioKey, str] = {}

    def state(self, key: ScenarioKey) -> str:
        """The state of scenario ``key``."""
        return self.states.get(key, SCENARIO_STARTED)

    def move(self, key: ScenarioKey, state: str) -> None:
        """Put scenario ``key`` in ``state``."""
        if state == SCENARIO_STARTED:
            self.states.pop(key, None)
        else:
            self.states[key] = state

    def reset(self, workspace: str | None = None) -> int:
        """Put every scenario (of ``workspace``; None: of all) back in ``Started``; returns
        how many had left it."""
        if workspace is None:
            count = len(self.states)
            self.states.clear()
            return count
        keys = [key for key in self.states if key[0] == workspace]
        for key in keys:
            del self.states[key]
        return len(keys)


def scenario_key(mock: Any) -> ScenarioKey:
    """``(workspace, scenario name)`` of a mock with ``http.scenario``."""
    return (mock.workspace_id or DEFAULT_WORKSPACE, mock.http.scenario.name)


def scenario_condition(mock: Any, store: ScenarioStore) -> ScenarioStateCondition | None:
    """The match condition of the mock's ``http.scenario.requiredState`` (None without
    one)."""
    scenario = mock.http.scenario
    if scenario is None or scenario.required_state is None:
        return None
    return ScenarioStateCondition(store.states, scenario_key(mock), scenario.required_state,
                                  SCENARIO_STARTED)


class ScenarioAction:
    """Moves the scenario to its new state, then answers with ``action`` (anything with
    ``async respond(request, path_params, template_state, send) -> status``)."""

    __slots__ = ("store", "key", "new_state", "action")

    def __init__(self, store: ScenarioStore, key: ScenarioKey, new_state: str, action: Any):
        self.store = store
        self.key = key
        self.new_state = new_state
        self.action = action

    async def respond(self, request: Any, path_params: dict[str, str], state: Any,
                      send: Any) -> int:
        """The action's answer; the scenario has moved before it starts."""
        self.store.move(self.key, self.new_state)
        return await self.action.respond(request, path_params, state, send)


class ScenarioStreamAction(StreamAction):
    """:class:`ScenarioAction` for SSE and chunked mocks (served through :meth:`stream`)."""

    def __init__(self, store: ScenarioStore, key: ScenarioKey, new_state: str,
                 action: StreamAction):
        self.store = store
        self.key = key
        self.new_state = new_state
        self.action = action
        self.kind = action.kind

    async def stream(self, request: Any, path_params: dict[str, str], mock_id: str,
                     engine: Any, receive: Any, send: Any) -> int:
        """The stream; the scenario has moved before it starts."""
        self.store.move(self.key, self.new_state)
        return await self.action.stream(request, path_params, mock_id, engine, receive, send)


def scenario_action(mock: Any, store: ScenarioStore, action: Any) -> Any:
    """``action`` wrapped to move the scenario to ``http.scenario.newState``; ``action``
    itself when the mock moves no scenario (such mocks pay nothing)."""
    scenario = mock.http.scenario
    if scenario is None or scenario.new_state is None:
        return action
    if isinstance(action, StreamAction):
        return ScenarioStreamAction(store, scenario_key(mock), scenario.new_state, action)
    return ScenarioAction(store, scenario_key(mock), scenario.new_state, action)


def scenario_overview(mocks: Iterable[Any], store: ScenarioStore,
                      workspace: str | None = None) -> list[dict[str, Any]]:
    """``[{name, state, possibleStates, workspaceId}]`` of the scenarios the ``mocks`` use
    (of ``workspace``; None: all), sorted by workspace and name. ``possibleStates`` lists
    ``Started`` first, then the other required and new states in the order the mocks name
    them."""
    found: dict[ScenarioKey, dict[str, None]] = {}
    for mock in mocks:
        http = getattr(mock, "http", None) if mock.type == "http" else None
        if http is None or http.scenario is None:
            continue
        key = scenario_key(mock)
        if workspace is not None and key[0] != workspace:
            continue
        states = found.setdefault(key, {SCENARIO_STARTED: None})
        for state in (http.scenario.required_state, http.scenario.new_state):
            if state is not None:
                states.setdefault(state, None)
    return [{"name": name, "state": store.state((space, name)),
             "possibleStates": list(states), "workspaceId": space}
            for (space, name), states in sorted(found.items())]


class ScenarioError(Exception):
    """A scenario operation that cannot be done.

    Attributes:
        status: 404 (unknown scenario) or 400 (unknown state, missing ``state``).
        code: ``not_found``, ``validation_error`` or ``missing_field``.
        message: what is wrong and what to try.
    """

    def __init__(self, status: int, code: str, message: str):
        self.status = status
        self.code = code
        self.message = message
        super().__init__(message)

    def body(self) -> dict[str, str]:
        """The admin error body ``{error, message}``."""
        return {"error": self.code, "message": self.message}


def set_scenario_state(mocks: Iterable[Any], store: ScenarioStore, name: str, body: Any,
                       workspace: str | None = None) -> dict[str, Any]:
    """Put scenario ``name`` (of ``workspace``; None: of every workspace that has it) in
    ``body["state"]``; returns the scenario as :func:`scenario_overview` lists it (the first
    one when several workspaces have it).

    Raises :class:`ScenarioError`: 400 ``missing_field`` without a text ``state``, 404
    ``not_found`` for a scenario no mock uses, 400 ``validation_error`` for a state none of
    its mocks names.
    """
    if not isinstance(body, dict) or not isinstance(body.get("state"), str) \
            or not body["state"]:
        raise ScenarioError(400, "missing_field",
                            'state: required; send {"state": "<one of the possibleStates>"}')
    wanted = body["state"]
    matching = [row for row in scenario_overview(mocks, store, workspace)
                if row["name"] == name]
    if not matching:
        raise ScenarioError(404, "not_found", f"Scenario not found: {name}")
    for row in matching:
        if wanted not in row["possibleStates"]:
            raise ScenarioError(400, "validation_error",
                                f"state: scenario {name!r} has no state {wanted!r}; use one "
                                f"of {', '.join(row['possibleStates'])}")
    for row in matching:
        store.move((row["workspaceId"], name), wanted)
        row["state"] = wanted
    return matching[0]


# ---------------------------------------------------------------------------- HTTP face

_STATE = re.compile(r"^/scenarios/([^/]+)/state$")


async def route_scenarios(control: Any, method: str, path: str, query: dict[str, str],
                          body: Callable[[], Awaitable[bytes]],
                          answer: Callable[[int, Any], Awaitable[None]]) -> bool:
    """Answer a ``/scenarios…`` route of the engine-control port; False when ``path`` is not
    one. ``control`` is an ``EngineControl``; ``query`` may carry ``workspaceId``;
    ``answer(status, payload)`` sends JSON."""
    import orjson

    workspace = query.get("workspaceId") or None
    if path == "/scenarios":
        if method != "GET":
            await answer(405, {"error": "method_not_allowed",
                               "message": f"{method} is not allowed here"})
        else:
            await answer(200, await control.scenarios(workspace))
    elif path == "/scenarios/reset":
        if method != "POST":
            await answer(405, {"error": "method_not_allowed",
                               "message": f"{method} is not allowed here"})
        else:
            await answer(200, {"status": "reset",
                               "scenarios": await control.reset_scenarios(workspace)})
    elif found := _STATE.match(path):
        if method != "PUT":
            await answer(405, {"error": "method_not_allowed",
                               "message": f"{method} is not allowed here"})
            return True
        try:
            document = orjson.loads(await body() or b"{}")
            await answer(200, await control.set_scenario_state(found.group(1), document,
                                                               workspace))
        except ScenarioError as error:
            await answer(error.status, error.body())
    else:
        return False
    return True
