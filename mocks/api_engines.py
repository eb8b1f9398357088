"""Admin routes of the engines an admin drives: ``GET/POST /engines``, ``DELETE
/engines/{id}`` (behavior notes §1 "Other routes"; issue 32 items 1 and 3).

``POST /engines`` is how ``mockd engine --join ADMIN_URL`` registers (admin API key
required, like every admin route): ``{url, token, configVersion?, name?}`` with the URL of
the engine's control port and its engine token. The admin pushes the current config at once
(and every change after); registering again with the same URL refreshes the entry and pushes
the config only when the engine reports another version. The token is kept in memory only
and never shown. The admin calls that URL, so it must be http or https, and an admin whose
``--host`` is loopback (the default) accepts loopback URLs only unless it was started with
``--allow-remote-engines``.

``GET /engines`` lists the admin's own engine (``id: local``, absent with
``--engines-only``) and every remote engine (workers of ``--workers`` as ``worker-<n>``)
with its health, the config version it serves and the last push or health-check error.
"""
from __future__ import annotations

from typing import Any
import orjson
from django.http import HttpRequest, HttpResponse
from ninja import Router

from mocks.api import engine_control, json_body
from mocks.control import errors
from mocks.control import openapi_docs as oa
from mocks.control.engines import (LOCAL_ENGINE_ID, MAX_NAME_LENGTH, MAX_TOKEN_LENGTH,
                                   MAX_URL_LENGTH, engine_url_problem)

router = Router(tags=["engines"])

_REMOTE = {"id": "eng_0123456789ab", "url": "http://10.0.0.7:4281", "name": "replica-a",
           "status": "healthy", "healthy": True, "configVersion": 3,
           "lastPushAt": oa.TIMESTAMP, "lastSeenAt": oa.TIMESTAMP, "lastError": None,
           "lastErrorAt": None, "registeredAt": oa.TIMESTAMP}
_LOCAL = {"id": LOCAL_ENGINE_ID, "url": None, "local": True, "status": "healthy",
          "healthy": True, "configVersion": 3}
_REGISTER_BODY = {"type": "object", "required": ["url", "token"], "properties": {
    "url": {"type": "string", "description": "the engine-control URL the admin pushes to"},
    "token": {"type": "string", "description": "the engine's X-Engine-Token"},
    "configVersion": {"type": "integer", "description": "the version the engine serves"},
    "name": {"type": "string"}}}
_MISSING = oa.not_found("Engine not found")


def _fanout() -> Any:
    """The admin's :class:`~mocks.control.engines.FanOutControl`; 503 ``no_engine`` when
    this admin drives no engine set."""
    control = engine_control()
    if not hasattr(control, "engines"):
        raise errors.AdminError(503, "no_engine", "This admin drives no remote engines")
    return control


def _text(body: dict[str, Any], key: str, limit: int, required: bool = True) -> str | None:
    value = body.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value.strip():
        raise errors.validation_error(f"{key}: required, a non-empty string")
    if len(value) > limit:
        raise errors.validation_error(f"{key}: at most {limit} characters")
    return value.strip()


@router.get("/engines", summary="Engines this admin drives", openapi_extra=oa.answers(
    {200: {"engines": [_LOCAL, _REMOTE], "count": 2, "configVersion": 3}}, engine=True))
async def list_engines(request: HttpRequest) -> dict[str, Any]:
    """``{engines: [{id, url, name?, worker?, local?, status, healthy, configVersion,
    lastPushAt, lastSeenAt, lastError, lastErrorAt, registeredAt}], count, configVersion}``:
    the admin's own engine first (``id: local``), then the remote ones in registration
    order; ``configVersion`` at the top is the admin's current version."""
    control = _fanout()
    engines = control.engines
    rows = []
    if control.local is not None:
        rows.append({**_LOCAL, "configVersion": engines.version})
    rows += engines.rows()
    engines.start_checker()
    return {"engines": rows, "count": len(rows), "configVersion": engines.version}


@router.post("/engines", summary="Register an engine (split mode)", response={201: None},
             openapi_extra=oa.doc(
                 oa.body({"url": "http://10.0.0.7:4281", "token": "engine-token",
                          "configVersion": 0, "name": "replica-a"}, _REGISTER_BODY),
                 oa.answers({201: _REMOTE, 200: _REMOTE,
                             400: oa.bad_request("validation_error",
                                                 "url: use an http:// or https:// URL")},
                            engine=True)))
async def register_engine(request: HttpRequest) -> HttpResponse:
    """``{url, token, configVersion?, name?}`` -> 201 with the new engine's row (200 when
    the URL was registered already), after pushing it the current config when it reports
    another version; a failed push shows in the row (``healthy: false``, ``lastError``).
    400 ``validation_error`` naming the key: ``url`` other than http/https, or off loopback
    on an admin whose ``--host`` is loopback without ``--allow-remote-engines``
    (:func:`~mocks.control.engines.engine_url_problem`); past the engine limit 400 too."""
    control = _fanout()
    body = json_body(request)
    if not isinstance(body, dict):
        raise errors.validation_error("body: a JSON object {url, token} is required")
    url = _text(body, "url", MAX_URL_LENGTH)
    problem = engine_url_problem(url, control.engines.remote_allowed)
    if problem:
        raise errors.validation_error(problem)
    token = _text(body, "token", MAX_TOKEN_LENGTH)
    name = _text(body, "name", MAX_NAME_LENGTH, required=False)
    reported = body.get("configVersion")
    if reported is not None and (isinstance(reported, bool) or not isinstance(reported, int)):
        raise errors.validation_error("configVersion: must be a whole number")
    engines = control.engines
    try:
        record, created = engines.add(url, token, name)
    except ValueError as error:
        raise errors.validation_error(str(error)) from None
    if reported is not None:
        record.config_version = reported
    if created or reported != engines.version or not record.healthy:
        if engines.document is None and engines.version == 0:
            engines.set_config(await control.current_config())
        await engines.push(record)
    engines.start_checker()
    return HttpResponse(orjson.dumps(record.document()), status=201 if created else 200,
                        content_type="application/json")


@router.delete("/engines/{engine_id}", summary="Forget an engine", response={204: None},
               openapi_extra=oa.answers({204: None, 404: _MISSING,
                                         400: oa.bad_request(
                                             "validation_error",
                                             "local: the admin's own engine stays")},
                                        engine=True))
async def delete_engine(request: HttpRequest, engine_id: str) -> HttpResponse:
    """204; the admin stops pushing to the engine (which keeps serving what it has, and is
    registered again if it still runs with ``--join``). 404 "Engine not found"; 400 for
    ``local``."""
    control = _fanout()
    if engine_id == LOCAL_ENGINE_ID:
        raise errors.validation_error("local: the admin's own engine stays")
    if not control.engines.remove(engine_id):
        raise errors.not_found("Engine not found")
    return HttpResponse(status=204)
