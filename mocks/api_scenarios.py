"""Admin API routes of scenarios (django-ninja ``Router``; STYLE §8: parse, call, return).

Composed in :mod:`mockd_project.api`. Every operation is async and calls ``EngineControl``
on the engine loop (ARCHITECTURE seam 5); without an engine: 503 ``no_engine``.

=============================================  ============================================
``GET /scenarios``                             ``{scenarios: [{name, state, possibleStates,
                                               workspaceId}], count}``
``PUT /scenarios/{name}/state``                body ``{state}``; the scenario as listed;
                                               404 ``Scenario not found: <name>``, 400 for a
                                               state none of its mocks names
``POST /scenarios/reset``                      ``{"status": "reset", "scenarios": n}``
=============================================  ============================================

Every route takes ``?workspaceId=``: listings and resets narrow to that workspace; without
it they span every workspace, and a state change applies to the scenario of that name in
every workspace. ``POST /state/reset`` and ``POST /reset`` reset scenarios too.

Source: WireMock's scenario admin routes, in our shapes (WireMock import, scenarios).
"""
from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from ninja import Query, Router

from mocks.api import engine_control, json_body
from mocks.protocols.http.scenarios import ScenarioError
from mocks.control import openapi_docs as oa
from mocks.control.errors import AdminError

router = Router(tags=["scenarios"])


def _workspace_query() -> Any:
    return Query(None, alias="workspaceId",
                 description="Workspace id; empty or missing: every workspace")


_SCENARIO = {"name": "checkout", "state": "Started", "possibleStates": ["Started", "Paid"],
             "workspaceId": "local"}


@router.get("/scenarios", summary="List scenarios and their states", openapi_extra=oa.answers(
    {200: {"scenarios": [_SCENARIO], "count": 1}}, engine=True))
async def list_scenarios(request: HttpRequest,
                         workspace_id: str | None = _workspace_query()) -> dict[str, Any]:
    """``{scenarios: [{name, state, possibleStates, workspaceId}], count}``."""
    return await engine_control().scenarios(workspace_id or None)


@router.put("/scenarios/{name}/state", summary="Put a scenario in a state",
            openapi_extra=oa.doc(
                oa.body({"state": "Paid"}, {"type": "object", "required": ["state"],
                                            "properties": {"state": {"type": "string"}}}),
                oa.answers({200: {**_SCENARIO, "state": "Paid"},
                            400: oa.bad_request("missing_field", 'state: required; send '
                                                '{"state": "<one of the possibleStates>"}'),
                            404: oa.not_found("Scenario not found: checkout")}, engine=True)))
async def set_state(request: HttpRequest, name: str,
                    workspace_id: str | None = _workspace_query()) -> dict[str, Any]:
    """The scenario ``{name, state, possibleStates, workspaceId}`` after the change."""
    body = json_body(request)
    try:
        return await engine_control().set_scenario_state(name, body, workspace_id or None)
    except ScenarioError as error:
        raise AdminError(error.status, error.code, error.message) from None


@router.post("/scenarios/reset", summary="Put every scenario back in Started",
             openapi_extra=oa.answers({200: {"status": "reset", "scenarios": 1}}, engine=True))
async def reset_scenarios(request: HttpRequest,
                          workspace_id: str | None = _workspace_query()) -> dict[str, Any]:
    """``{"status": "reset", "scenarios": <how many had left Started>}``."""
    count = await engine_control().reset_scenarios(workspace_id or None)
    return {"status": "reset", "scenarios": count}
