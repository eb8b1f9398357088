"""Admin API routes of recorded traffic, shared by the protocols that record (MQTT, SOAP).

:func:`add_recording_routes` puts the ``<prefix>…`` routes of one protocol on its router
(django-ninja; STYLE §8: parse, call, return), each calling the engine-side operation of a
:class:`~mocks.core.recordings.RecordingRoutes` through ``EngineControl``:

=============================================  ============================================
``GET <prefix>``                               ``{recordings, total, limit, offset}``; 400
                                               ``validation_error`` for a bad filter
``DELETE <prefix>``                            ``{deleted: n}``
``GET <prefix>/stats``                         the protocol's statistics
``POST <prefix>/export``                       ``{version, exportedAt, count, dropped,
                                               recordings}``
``POST <prefix>/convert``                      ``{mock, recordingCount, ...}`` (the mock is
                                               not created: POST it to ``/mocks``); 400
                                               ``validation_error`` / ``no_recordings``
``GET <prefix>/{id}``                          the entry; 404 with the routes' message
``DELETE <prefix>/{id}``                       ``{message: "Recording deleted", id}``; 404
``POST <prefix>/{id}/convert``                 as convert, of that entry only; 404
=============================================  ============================================

Source: SPEC "WebSocket, gRPC, MQTT and SOAP administration"; behavior notes §1
(``/mqtt-recordings`` and ``/soap-recordings``).
"""
from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from ninja import Router

from mocks.control import errors
from mocks.control import openapi_docs as oa
from mocks.api import engine_control
from mocks.core.recordings import RecordingQueryError, RecordingRoutes, json_body


def or_404(found: dict[str, Any] | None, message: str) -> dict[str, Any]:
    """``found``; raises 404 ``not_found`` with ``message`` when it is None."""
    if found is None:
        raise errors.not_found(message)
    return found


def add_recording_routes(router: Router, routes: RecordingRoutes, label: str, *,
                         entry: dict[str, Any] | None = None,
                         stats_example: dict[str, Any] | None = None,
                         convert_example: dict[str, Any] | None = None,
                         converted: dict[str, Any] | None = None,
                         nothing_matches: str = "") -> None:
    """Register the ``routes.prefix…`` routes (see the module docstring) on ``router``;
    ``label`` (``MQTT``, ``SOAP``) names them in summaries and operation ids. The OpenAPI
    document shows ``entry`` (one recording), ``stats_example``, ``convert_example`` (a
    convert body), ``converted`` (its answer) and ``nothing_matches`` (the 400
    ``no_recordings`` message) as examples."""
    prefix, missing = routes.prefix, routes.not_found["message"]
    kind = label.lower()
    docs = _route_docs(label, missing, entry or {}, stats_example or {},
                       convert_example or {}, converted or {}, nothing_matches)

    async def listing(request: HttpRequest) -> dict[str, Any]:
        try:
            return await routes.listing(engine_control(), request.GET.dict())
        except RecordingQueryError as problem:
            raise errors.validation_error(str(problem)) from None

    async def clear(request: HttpRequest) -> dict[str, Any]:
        return await routes.clear(engine_control())

    async def stats(request: HttpRequest) -> dict[str, Any]:
        return await routes.stats(engine_control())

    async def export(request: HttpRequest) -> dict[str, Any]:
        return await routes.export(engine_control())

    async def convert_all(request: HttpRequest) -> dict[str, Any]:
        return await _convert(routes, request, None, missing)

    async def one(request: HttpRequest, recording_id: str) -> dict[str, Any]:
        return or_404(await routes.get(engine_control(), recording_id), missing)

    async def delete(request: HttpRequest, recording_id: str) -> dict[str, Any]:
        return or_404(await routes.delete(engine_control(), recording_id), missing)

    async def convert_one(request: HttpRequest, recording_id: str) -> dict[str, Any]:
        return await _convert(routes, request, recording_id, missing)

    for method, path, view, summary in (
            ("get", "", listing, f"Recorded {label} traffic"),
            ("delete", "", clear, f"Delete every {label} recording"),
            ("get", "/stats", stats, f"{label} recording statistics"),
            ("post", "/export", export, f"Export every {label} recording"),
            ("post", "/convert", convert_all, f"{label} recordings to a {label} mock config"),
            ("get", "/{recording_id}", one, f"One {label} recording"),
            ("delete", "/{recording_id}", delete, f"Delete one {label} recording"),
            ("post", "/{recording_id}/convert", convert_one,
             f"One {label} recording to a {label} mock config")):
        decorator = getattr(router, method)(
            prefix + path, summary=summary,
            operation_id=f"{kind}_recordings_{view.__name__}_{method}",
            openapi_extra=docs[view.__name__])
        decorator(view)


def _route_docs(label: str, missing: str, entry: dict[str, Any], stats: dict[str, Any],
                convert_example: dict[str, Any], converted: dict[str, Any],
                nothing_matches: str) -> dict[str, dict[str, Any]]:
    """``openapi_extra`` of each recording route, by view name."""
    not_found = oa.not_found(missing)
    recording_id = entry.get("id", "")
    convert_body = oa.body(convert_example, required=False,
                           description="conversion options (an empty body takes the "
                                       "defaults)")
    convert_errors = {400: oa.bad_request("no_recordings", nothing_matches)}
    return {
        "listing": oa.answers({200: {"recordings": [entry], "total": 1, "limit": 100,
                                     "offset": 0},
                               400: oa.bad_request("validation_error",
                                                   "limit: must be between 1 and 10000, "
                                                   "got 0")}, engine=True),
        "clear": oa.answers({200: {"deleted": 3}}, engine=True),
        "stats": oa.answers({200: stats}, engine=True),
        "export": oa.answers({200: {"version": "1.0", "exportedAt": oa.TIMESTAMP,
                                    "count": 1, "dropped": 0, "recordings": [entry]}},
                             engine=True),
        "convert_all": oa.doc(convert_body, oa.answers({200: converted, **convert_errors},
                                                       engine=True)),
        "one": oa.answers({200: entry, 404: not_found}, engine=True),
        "delete": oa.answers({200: {"message": "Recording deleted", "id": recording_id},
                              404: not_found}, engine=True),
        "convert_one": oa.doc(convert_body, oa.answers({200: converted, **convert_errors,
                                                        404: not_found}, engine=True)),
    }


async def _convert(routes: RecordingRoutes, request: HttpRequest, recording_id: str | None,
                   missing: str) -> dict[str, Any]:
    try:
        found = await routes.convert(engine_control(), json_body(request.body), recording_id)
    except RecordingQueryError as problem:  # also a body that is not JSON
        raise errors.validation_error(str(problem)) from None
    except LookupError as problem:
        raise errors.AdminError(400, "no_recordings", str(problem)) from None
    return or_404(found, missing)
