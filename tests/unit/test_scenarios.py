"""Scenarios (``http.scenario``): state-dependent matching, transitions, the engine-control
``/scenarios`` routes, and resets together with the tables."""
from __future__ import annotations

import asyncio

import httpx
import pytest

from mocks.core.errors import ConfigError
from mocks.engine.app import DataPlaneApp
from mocks.engine.control import EngineControl, EngineControlApp
from mocks.engine.core import Engine
from mocks.loader import validate_config
from tests.helpers import http_mock, make_config

#: A to-do list that is empty, gets one item added, then shows it (a three-step flow).
TODO_FLOW = [
    http_mock("list-empty", "GET", "/todo", body="[]",
              scenario={"name": "todo", "requiredState": "Started"}),
    http_mock("add", "POST", "/todo", status=201, body="added",
              scenario={"name": "todo", "requiredState": "Started", "newState": "Added"}),
    http_mock("list-one", "GET", "/todo", body='["milk"]',
              scenario={"name": "todo", "requiredState": "Added"}),
    http_mock("clear", "DELETE", "/todo", status=204,
              scenario={"name": "todo", "newState": "Started"}),
    http_mock("any-state", "GET", "/health-of-todo", body="fine",
              scenario={"name": "todo"}),
]


def _clients(engine: Engine):
    control = EngineControl(engine, max_log_entries=10)
    link = httpx.AsyncClient(
        transport=httpx.ASGITransport(app=EngineControlApp(control, token="t")),
        base_url="http://localhost",
        headers={"X-Engine-Token": "t", "Content-Type": "application/json"})
    data = httpx.AsyncClient(transport=httpx.ASGITransport(app=DataPlaneApp(engine)),
                             base_url="http://data")
    return link, data


def _engine(*mocks) -> Engine:
    engine = Engine()
    engine.load(validate_config(make_config(*mocks)))
    return engine


def test_scenario_flow_walks_its_states_and_resets():
    async def flow() -> list:
        link, data = _clients(_engine(*TODO_FLOW))
        seen = []
        async with link, data:
            seen.append((await data.get("/todo")).text)
            seen.append((await data.get("/health-of-todo")).text)
            seen.append((await data.post("/todo")).status_code)
            seen.append((await data.get("/todo")).text)
            seen.append((await data.post("/todo")).status_code)  # no mock in state Added
            seen.append((await link.get("/scenarios")).json())
            seen.append((await link.post("/scenarios/reset")).json())
            seen.append((await data.get("/todo")).text)
        return seen

    seen = asyncio.run(flow())
    assert seen[:5] == ["[]", "fine", 201, '["milk"]', 404]
    assert seen[5] == {"scenarios": [{"name": "todo", "state": "Added",
                                      "possibleStates": ["Started", "Added"],
                                      "workspaceId": "local"}], "count": 1}
    assert seen[6] == {"status": "reset", "scenarios": 1}
    assert seen[7] == "[]"


def test_scenario_state_is_reset_with_the_tables():
    async def flow() -> list:
        link, data = _clients(_engine(*TODO_FLOW))
        async with link, data:
            await data.post("/todo")
            before = (await data.get("/todo")).text
            await link.post("/state/reset")
            after_state_reset = (await data.get("/todo")).text
            await data.post("/todo")
            await link.post("/reset")
            after_reset = (await data.get("/todo")).text
        return [before, after_state_reset, after_reset]

    assert asyncio.run(flow()) == ['["milk"]', "[]", "[]"]


def test_scenario_state_can_be_set_and_errors_name_the_problem():
    async def flow() -> list:
        link, data = _clients(_engine(*TODO_FLOW))
        async with link, data:
            put = await link.put("/scenarios/todo/state", json={"state": "Added"})
            listed = (await data.get("/todo")).text
            unknown_state = await link.put("/scenarios/todo/state", json={"state": "Gone"})
            unknown = await link.put("/scenarios/nope/state", json={"state": "Started"})
            missing = await link.put("/scenarios/todo/state", json={})
        return [put, listed, unknown_state, unknown, missing]

    put, listed, unknown_state, unknown, missing = asyncio.run(flow())
    assert put.status_code == 200 and put.json()["state"] == "Added"
    assert listed == '["milk"]'
    assert unknown_state.status_code == 400
    assert unknown_state.json() == {
        "error": "validation_error",
        "message": "state: scenario 'todo' has no state 'Gone'; use one of Started, Added"}
    assert unknown.status_code == 404
    assert unknown.json() == {"error": "not_found", "message": "Scenario not found: nope"}
    assert missing.status_code == 400 and missing.json()["error"] == "missing_field"


def test_scenario_state_survives_a_config_reload():
    engine = _engine(*TODO_FLOW)

    async def flow() -> list:
        link, data = _clients(engine)
        async with link, data:
            await data.post("/todo")
            await link.post("/config", json=make_config(*TODO_FLOW, http_mock(
                "other", "GET", "/other", body="x")))
            return [(await data.get("/todo")).text]

    assert asyncio.run(flow()) == ['["milk"]']


def test_scenarios_are_kept_per_workspace():
    def in_workspace(mock: dict, workspace: str) -> dict:
        return {**mock, "id": f"{workspace}-{mock['id']}", "workspaceId": workspace}

    engine = _engine(*(in_workspace(mock, "a") for mock in TODO_FLOW[:3]),
                     *(in_workspace({**mock, "http": {**mock["http"], "matcher": {
                         **mock["http"]["matcher"], "path": "/b/todo"}}}, "b")
                       for mock in TODO_FLOW[:3]))

    async def flow() -> list:
        link, data = _clients(engine)
        async with link, data:
            await data.post("/todo")
            return [(await data.get("/todo")).text, (await data.get("/b/todo")).text,
                    (await link.get("/scenarios", params={"workspaceId": "b"})).json()]

    a_list, b_list, b_scenarios = asyncio.run(flow())
    assert (a_list, b_list) == ('["milk"]', "[]")
    assert [row["state"] for row in b_scenarios["scenarios"]] == ["Started"]


def test_scenario_mock_wins_over_a_mock_without_scenario_while_in_its_state():
    plain = http_mock("plain", "GET", "/todo", body="plain")
    engine = _engine(plain, *TODO_FLOW[1:3])

    async def flow() -> list:
        _, data = _clients(engine)
        async with data:
            first = (await data.get("/todo")).text
            await data.post("/todo")
            return [first, (await data.get("/todo")).text]

    assert asyncio.run(flow()) == ["plain", '["milk"]']


def test_scenario_near_miss_names_the_state():
    async def flow() -> dict:
        _, data = _clients(_engine(TODO_FLOW[2]))
        async with data:
            return (await data.get("/todo")).json()

    answer = asyncio.run(flow())
    reasons = [miss["reason"] for miss in answer["nearMisses"]]
    assert reasons == ['method and path matched, but scenario "todo" expected in state "Added", '
                       'is in "Started"']


@pytest.mark.parametrize("scenario,message", [
    pytest.param({"requiredState": "x"}, "mocks[0].http.scenario.name: required field is missing",
                 id="name missing"),
    pytest.param({"name": "s", "requiredState": ""},
                 "mocks[0].http.scenario.requiredState:", id="empty state"),
])
def test_scenario_bad_config_names_the_key(scenario, message):
    with pytest.raises(ConfigError) as caught:
        validate_config(make_config(http_mock("m", "GET", "/a", scenario=scenario)))
    assert str(caught.value).startswith(message)
