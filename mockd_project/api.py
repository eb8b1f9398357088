"""The admin API's table of contents: composes each app's ninja ``Router`` (STYLE §8).

Every route of the admin port, in the order Django resolves them (fixed paths such as
``/mocks/bulk`` and ``/requests/stream`` come before their ``{id}`` siblings), and the ONE place
where exceptions become the SPEC error body ``{error, message}`` (SPEC "Errors"; behavior
notes §1-§3). Swagger UI is served at ``/docs`` and the OpenAPI document at
``/openapi-admin.json`` (``/openapi.json`` is the mocks export route of a later issue).
"""
from __future__ import annotations

import inspect
import logging
import threading
from collections.abc import Sequence
from typing import Any, Callable, Iterator

import orjson
from django.core.exceptions import RequestDataTooBig
from django.http import Http404, HttpRequest, HttpResponse
from ninja import NinjaAPI
from ninja import operation as ninja_operation
from ninja.errors import ConfigError, HttpError, ValidationError
from ninja.params.models import ParamModel
from ninja.renderers import BaseRenderer
from ninja.signature import ViewSignature


def defer_parameter_models() -> None:
    """Make the parameter models ninja creates for each operation (query, path, body...)
    build their pydantic validators on first use instead of when the route is declared
    (pydantic's ``defer_build``): of the ~180 admin operations a server answers a few, and
    building them all costs about 0.07 s of CPU per start. Call before the routers are
    imported; validation and the OpenAPI document are unchanged."""
    pending: list[type] = [ParamModel]
    while pending:
        model = pending.pop()
        model.model_config["defer_build"] = True
        pending += model.__subclasses__()


defer_parameter_models()


class DeferredModels(Sequence):
    """The parameter models of one operation (``Operation.models``: a list of ninja
    ``ParamModel`` classes), made by its :class:`DeferredViewSignature` when first read (a
    request of the operation, or the OpenAPI document). Then also runs ninja's
    ``request.FILES`` check for the methods the operation was declared with, raising its
    ``ConfigError`` as the declaration would have."""

    def __init__(self, signature: "DeferredViewSignature"):
        self._signature = signature
        self._file_checks: list[tuple[str, list[str]]] = []  # (path, methods) to check
        self._models: list[Any] | None = None

    def resolved(self) -> list[Any]:
        """The real list of models (made now if not yet); ConfigError as ninja raises it."""
        models = self._models
        if models is None:
            models = self._signature.resolve().models
            for path, methods in self._file_checks:
                if _need_to_fix_request_files(methods, models):
                    raise ConfigError(
                        f"Router '{path}' has method(s) {methods}  that require fixing "
                        f"request.FILES. Please add '{ninja_operation.FIX_MIDDLEWARE_PATH}' "
                        f"to settings.MIDDLEWARE")
            self._models = models
        return models

    def __getitem__(self, index: Any) -> Any:
        return self.resolved()[index]

    def __len__(self) -> int:
        return len(self.resolved())

    def __iter__(self) -> Iterator[Any]:
        return iter(self.resolved())

    def __repr__(self) -> str:
        return repr(self._models) if self._models is not None else "<models not made yet>"


class DeferredViewSignature:
    """What ninja's ``ViewSignature`` is for an operation (the view's parameters read from its
    type hints, and the pydantic parameter models made from them: about 0.4 ms of CPU each),
    made on first use instead of when the route is declared. ``docstring`` (the operation's
    default description) and ``models`` (:class:`DeferredModels`) are there at once; any other
    attribute (``response_arg``, ``params``...) makes the real signature. Errors of a view's
    signature are raised on its first use (its first request or the OpenAPI document) instead
    of at import.

    Attributes:
        built: how many real signatures every deferred one has made so far (class-wide).
    """

    built = 0
    _lock = threading.Lock()

    def __init__(self, path: str, view_func: Callable[..., Any]):
        self._arguments = (path, view_func)
        self._real: ViewSignature | None = None
        self.docstring = inspect.cleandoc(view_func.__doc__ or "")
        self.models = DeferredModels(self)

    def resolve(self) -> ViewSignature:
        """The real ``ViewSignature`` (made once; ninja's ``ConfigError`` for a bad view)."""
        real = self._real
        if real is None:
            with DeferredViewSignature._lock:
                real = self._real
                if real is None:
                    real = self._real = ViewSignature(*self._arguments)
                    DeferredViewSignature.built += 1
        return real

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in ("_arguments", "_real"):
            raise AttributeError(name)
        return getattr(self.resolve(), name)


_need_to_fix_request_files = ninja_operation.need_to_fix_request_files


def _request_files_check(methods: list[str], params_models: Any) -> bool:
    """ninja's declaration-time ``request.FILES`` check, kept for when the models of a
    :class:`DeferredModels` are made (False now)."""
    if isinstance(params_models, DeferredModels) and params_models._models is None:
        path = params_models._signature._arguments[0]
        params_models._file_checks.append((path, list(methods)))
        return False
    return _need_to_fix_request_files(methods, params_models)


def defer_view_signatures() -> None:
    """Make each admin operation's ``ViewSignature`` on first use (:class:`DeferredViewSignature`):
    of the ~180 operations a server answers a few, and reading them all costs about 0.08 s of
    CPU per start (before the first admin answer). Call before the routers are imported;
    requests, validation errors and the OpenAPI document are unchanged."""
    ninja_operation.ViewSignature = DeferredViewSignature
    ninja_operation.need_to_fix_request_files = _request_files_check


defer_view_signatures()

from mockd_project import __version__
from mockd_project.api_keys import router as api_keys_router
from chaos.api import router as chaos_router
from mockd_project.metrics import router as metrics_router
from mocks.api_portability import router as portability_router
from mocks.api import (config_router, health_router, mocks_router, requests_router,
                       verification_router, workspaces_router)
from mocks.api_scenarios import router as scenarios_router
from mocks.api_extras import router as extras_router
from mocks.api_engines import router as engines_router
from mocks.config import ConfigFile, Mock as MockConfig
from mocks.loader import format_location
from mocks.protocols import admin_routers
from mocks.control.errors import AdminError
from tables.api import router as tables_router
from proxy.api import router as proxy_router
from recordings.api import router as recordings_router
from recordings.stream_api import router as stream_recordings_router

logger = logging.getLogger("mockd.admin")


class OrjsonRenderer(BaseRenderer):
    """JSON answers rendered with orjson (ARCHITECTURE: "Use orjson for JSON")."""

    media_type = "application/json"

    def render(self, request: HttpRequest, data: Any, *, response_status: int) -> bytes:
        """``data`` as compact JSON bytes."""
        return orjson.dumps(data, option=orjson.OPT_NON_STR_KEYS)


#: Routes that never need the API key (behavior notes §2).
OPEN_PATHS = ("/health", "/ready", "/metrics")


class AdminAPI(NinjaAPI):
    """The NinjaAPI of the admin port; its OpenAPI document also carries the config schema
    (``Mock``, ``ConfigFile`` and their parts) that request bodies refer to."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self._openapi_documents: dict[tuple, Any] = {}

    def get_openapi_schema(self, *, path_prefix: str | None = None,
                           path_params: dict[str, Any] | None = None) -> Any:
        """The OpenAPI document with the config-schema components added: a dict, built once
        per ``path_prefix``/``path_params`` (the routes do not change while the server runs;
        the first build takes about half a second of CPU) and shared, so callers must not
        change it."""
        key = (path_prefix, tuple(sorted((path_params or {}).items())))
        cached = self._openapi_documents.get(key)
        if cached is None:
            cached = self._openapi_documents[key] = self._build_openapi_schema(
                path_prefix=path_prefix, path_params=path_params)
        return cached

    def _build_openapi_schema(self, **kwargs: Any) -> Any:
        schema = super().get_openapi_schema(**kwargs)
        components = schema.setdefault("components", {})
        schemas = components.setdefault("schemas", {})
        for model in (MockConfig, ConfigFile):
            document = model.model_json_schema(by_alias=True,
                                               ref_template="#/components/schemas/{model}")
            schemas.update(document.pop("$defs", {}))
            schemas[model.__name__] = document
        # The key is checked by the admin gateway (mockd_project/middleware.py), not by ninja;
        # documented here so Swagger UI's "Authorize" works (behavior notes §2).
        components["securitySchemes"] = {
            "ApiKeyHeader": {"type": "apiKey", "in": "header", "name": "X-API-Key"},
            "BearerKey": {"type": "http", "scheme": "bearer"},
            "ApiKeyQuery": {"type": "apiKey", "in": "query", "name": "api_key"},
        }
        schema["security"] = [{"ApiKeyHeader": []}, {"BearerKey": []}, {"ApiKeyQuery": []}]
        for path in OPEN_PATHS:
            for operation in schema.get("paths", {}).get(path, {}).values():
                operation["security"] = []
        return schema


api = AdminAPI(title="mockd admin API", version=__version__, urls_namespace="mockd-admin",
               docs_url="/docs", openapi_url="/openapi-admin.json", renderer=OrjsonRenderer(),
               description="Control plane of the mockd mock server. Send the API key as "
                           "`X-API-Key`, `Authorization: Bearer <key>` or `?api_key=`.")

api.add_router("", health_router)
api.add_router("", metrics_router)
api.add_router("", mocks_router)
api.add_router("", verification_router)
api.add_router("", config_router)
api.add_router("", requests_router)
api.add_router("", workspaces_router)
api.add_router("", api_keys_router)
api.add_router("", tables_router)
api.add_router("", scenarios_router)
api.add_router("", portability_router)
# Each protocol's own admin routes (its folder's api.py), as the registry names them.
for protocol_router in admin_routers():
    api.add_router("", protocol_router)
api.add_router("", proxy_router)
api.add_router("", recordings_router)
api.add_router("", stream_recordings_router)
api.add_router("", chaos_router)
api.add_router("", extras_router)
api.add_router("", engines_router)


# ---------------------------------------------------------------------------- errors


def error_response(request: HttpRequest, status: int, code: str, message: str,
                   details: dict[str, Any] | None = None) -> HttpResponse:
    """The admin error body ``{error, message, details?}`` with ``status``."""
    payload: dict[str, Any] = {"error": code, "message": message}
    if details:
        payload["details"] = details
    return api.create_response(request, payload, status=status)


@api.exception_handler(AdminError)
def _admin_error(request: HttpRequest, error: AdminError) -> HttpResponse:
    return error_response(request, error.status, error.code, error.message, error.details)


@api.exception_handler(ValidationError)
def _validation_error(request: HttpRequest, error: ValidationError) -> HttpResponse:
    first = error.errors[0] if error.errors else {}
    location = tuple(first.get("loc", ()))
    source = location[0] if location else ""
    field = format_location(location[1:]) if len(location) > 1 else str(source)
    reason = str(first.get("msg", "invalid value")).removeprefix("Value error, ")
    if source == "body" and first.get("type") == "json_invalid":
        return error_response(request, 400, "invalid_json", "Invalid JSON in request body")
    return error_response(request, 400, "validation_error",
                          f"{field}: {reason}" if field else reason)


@api.exception_handler(Http404)
def _not_found(request: HttpRequest, error: Http404) -> HttpResponse:
    return error_response(request, 404, "not_found", "Resource not found")


@api.exception_handler(HttpError)
def _http_error(request: HttpRequest, error: HttpError) -> HttpResponse:
    code = {400: "bad_request", 401: "unauthorized", 403: "forbidden", 404: "not_found",
            405: "method_not_allowed", 409: "conflict", 413: "body_too_large",
            429: "rate_limited"}.get(error.status_code, "error")
    return error_response(request, error.status_code, code, str(error))


@api.exception_handler(RequestDataTooBig)
def _too_big(request: HttpRequest, error: RequestDataTooBig) -> HttpResponse:
    return error_response(request, 413, "body_too_large",
                          "Request body exceeds 10485760 bytes (10 MiB)")


@api.exception_handler(Exception)
def _unexpected(request: HttpRequest, error: Exception) -> HttpResponse:
    logger.exception("admin %s %s failed", request.method, request.path)
    return error_response(request, 500, "internal_error",
                          f"Unexpected server error ({type(error).__name__}); see the server "
                          f"log")
