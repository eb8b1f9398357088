"""Admin API routes of the recording proxy and its CA (``/proxy/*``).

=====================================  ===================================================
``POST /proxy/start``                  body ``{port=8888, mode="record", sessionName=
                                       "default", caPath?, filters?, upstreamCa?,
                                       insecureUpstream?, fallthrough?, host?, bodyCap?}``
                                       -> status; 409 ``already_running``, 400
                                       ``port_error``, ``invalid_mode``, ``validation_error``
``POST /proxy/stop``                   -> status (``running: false``); 404 ``not_running``
``PUT /proxy/mode``                    ``{mode}`` -> status; 404 ``not_running``, 400
                                       ``invalid_mode``
``GET /proxy/status``                  ``{running, port?, mode?, sessionId?,
                                       recordingCount?, uptime?, ...}``
``GET|PUT /proxy/filters``             ``{includePaths, excludePaths, includeHosts,
                                       excludeHosts}``
``GET /proxy/ca``                      ``{exists, path?, fingerprint?, expiresAt?,
                                       organization?}``
``POST /proxy/ca``                     ``{caPath}`` (relative to the data dir) -> 201 CA
                                       status; 409 ``ca_exists``, 400 ``validation_error``
``GET /proxy/ca/download``             the CA certificate, ``application/x-pem-file``
                                       attachment; 404 ``no_ca``
=====================================  ===================================================

The proxy runs in the server's event loop (these views are async and run on it); it stops
with the server (a shutdown hook on :data:`mockd_project.runtime.runtime`).

Source: SPEC "Proxy, CA and recordings", "States and transitions" (Proxy); behavior notes §1
"Proxy, CA, sessions, recordings".
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from django.http import HttpRequest, HttpResponse
from ninja import Router

from mockd_project.runtime import runtime
from mocks.api import json_body
from mocks.control.errors import AdminError
from proxy.manager import ProxyError, manager

router = Router(tags=["proxy"])


def _data_dir() -> Path | None:
    return Path(runtime.data_dir) if runtime.data_dir else None


def _redaction() -> Any:
    log = getattr(runtime.control, "request_log", None)
    return getattr(log, "redaction", None)


def _admin_error(error: ProxyError) -> AdminError:
    return AdminError(error.status, error.code, error.message)


def _body(request: HttpRequest) -> Any:
    return json_body(request) if request.body.strip() else {}


def _add_hook(hook: Any) -> None:
    runtime.shutdown_hooks.append(hook)


def _remove_hook(hook: Any) -> None:
    if hook in runtime.shutdown_hooks:
        runtime.shutdown_hooks.remove(hook)


@router.post("/proxy/start", summary="Start the recording proxy")
async def start_proxy(request: HttpRequest) -> dict[str, Any]:
    """The proxy status once listening; creates the session ``sessionName``."""
    try:
        return await manager.start(_body(request), data_dir=_data_dir(),
                                   redaction=_redaction(), on_started=_add_hook)
    except ProxyError as error:
        raise _admin_error(error) from None


@router.post("/proxy/stop", summary="Stop the recording proxy")
async def stop_proxy(request: HttpRequest) -> dict[str, Any]:
    """The final status with ``running: false``; 404 ``not_running``."""
    try:
        return await manager.stop(on_stopped=_remove_hook)
    except ProxyError as error:
        raise _admin_error(error) from None


@router.put("/proxy/mode", summary="Change the proxy mode")
async def put_mode(request: HttpRequest) -> dict[str, Any]:
    """``{mode: record|passthrough|playback}`` -> status."""
    body = json_body(request)
    if not isinstance(body, dict) or "mode" not in body:
        raise AdminError(400, "missing_field", "mode is required (record, passthrough or "
                                               "playback)")
    try:
        return manager.set_mode(body["mode"])
    except ProxyError as error:
        raise _admin_error(error) from None


@router.get("/proxy/status", summary="Proxy status")
async def proxy_status(request: HttpRequest) -> dict[str, Any]:
    """``{running: false}`` or the running proxy's port, mode, session and counts."""
    return manager.status()


@router.get("/proxy/filters", summary="Recording filters")
async def get_filters(request: HttpRequest) -> dict[str, Any]:
    """``{includePaths, excludePaths, includeHosts, excludeHosts}``."""
    return manager.filters.document()


@router.put("/proxy/filters", summary="Replace the recording filters")
async def put_filters(request: HttpRequest) -> dict[str, Any]:
    """The filters as stored; 400 ``validation_error`` naming the key."""
    try:
        return manager.set_filters(json_body(request))
    except ProxyError as error:
        raise _admin_error(error) from None


@router.get("/proxy/ca", summary="Proxy CA status")
async def ca_status(request: HttpRequest) -> dict[str, Any]:
    """``{exists, path?, fingerprint?, expiresAt?, organization?}``."""
    return manager.ca_status(_data_dir())


@router.post("/proxy/ca", summary="Generate the proxy CA")
async def generate_ca(request: HttpRequest) -> HttpResponse:
    """201 with the CA status; 409 ``ca_exists``; 400 for a caPath leaving the data dir."""
    body = _body(request)
    if not isinstance(body, dict):
        raise AdminError(400, "validation_error", "the body must be {\"caPath\": \"...\"}")
    try:
        document = manager.generate(_data_dir(), body.get("caPath"))
    except ProxyError as error:
        raise _admin_error(error) from None
    import orjson

    return HttpResponse(orjson.dumps(document), status=201, content_type="application/json")


@router.get("/proxy/ca/download", summary="Download the proxy CA certificate")
async def download_ca(request: HttpRequest) -> HttpResponse:
    """The CA certificate (PEM) as an attachment; 404 ``no_ca``."""
    try:
        pem = manager.ca_pem(_data_dir())
    except ProxyError as error:
        raise _admin_error(error) from None
    response = HttpResponse(pem, content_type="application/x-pem-file")
    response["Content-Disposition"] = 'attachment; filename="mockd-ca.crt"'
    return response
