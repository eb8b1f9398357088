"""The identity-provider mock's compiler: one ``oauth`` mock -> the data-plane routes it serves.

Registered in :data:`mocks.protocols.PROTOCOLS` as the handler of ``"oauth"``. The snapshot consults
these exact-path routes before HTTP mocks (behavior notes §4).

Source: SPEC "Identity-provider endpoints"; behavior notes §8 ("endpoints live on the mock
port under the path part of ``issuer``": ``http://localhost:4280/auth`` -> ``/auth/token``,
no path -> root).

Concurrency: compiled and served on the engine loop. The signing key (per process) and the
token store (in the engine's per-mock state) live outside the compiled objects, so a recompile
(every admin edit) keeps issued codes and tokens valid. Django-free.

The provider core (oauthlib, PyJWT, cryptography: about 60 ms of imports) is imported when the
first ``oauth`` mock compiles, so an engine without one starts without it.
"""
from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from mocks.core.request import MockRequest
from mocks.core.responses import Send, send_simple
from mocks.protocols import CompileContext, CompiledMock, ProtocolRoute

from oidc.config import OAuthConfig, validate_oauth_config

if TYPE_CHECKING:
    from oidc.provider import Endpoint, IdentityProvider

logger = logging.getLogger("mockd.oidc")

#: Methods the routes claim. OPTIONS is left to the engine (CORS preflight and its answer for
#: unmatched requests); every other method reaches the endpoint, which answers 405 when it is
#: not one of its own (notes §8).
ROUTE_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"})


class IdentityProviderAction:
    """The route action of one endpoint of one identity-provider mock.

    Same interface as a static response: ``async respond(request, path_params,
    template_state, send) -> status``.
    """

    __slots__ = ("provider", "endpoint")

    def __init__(self, provider: IdentityProvider, endpoint: Endpoint):
        self.provider = provider
        self.endpoint = endpoint

    async def respond(self, request: MockRequest, path_params: dict[str, str],
                      template_state: Any, send: Send) -> int:
        """Answer ``request``; a bug costs one 500 ``server_error``, logged without secrets."""
        try:
            response = self.provider.handle(self.endpoint, request)
        except Exception:  # noqa: BLE001 - one failed answer, never a dead route
            from oidc.errors import ServerError, error_body
            from oidc.provider import json_response

            # The traceback names code paths only; the request (which may carry secrets) is
            # not formatted into the message.
            logger.exception("identity provider %s failed at %s", self.provider.mock_id,
                             self.endpoint.suffix)
            response = json_response(500, error_body(ServerError.error))
        headers = [(name.encode("latin-1"), value.encode("latin-1", "replace"))
                   for name, value in response.headers]
        await send_simple(send, response.status, headers, response.body,
                          head=request.method == "HEAD")
        return response.status


class OAuthHandler:
    """The protocol handler of ``oauth`` mocks (:data:`mocks.protocols.PROTOCOLS`)."""

    mock_type = "oauth"
    config_model = OAuthConfig

    def compile(self, mock: Any, context: CompileContext) -> CompiledMock:
        """The routes of one ``oauth`` mock: one :class:`ProtocolRoute` per endpoint, mounted
        under the issuer's path, plus a prefix route answering 404 for unknown endpoints
        below a non-root issuer path.

        ``mock.oauth`` is the validated :class:`~oidc.config.OAuthConfig` (a raw mapping is
        validated here). ``context.state`` (the engine's runtime state of this mock) holds
        the token store under ``"tokens"``, so codes and tokens outlive a recompile and are
        freed when the mock is deleted.

        Raises :class:`~mocks.core.errors.ConfigError` naming ``<key_path>.oauth.<field>``.
        """
        from oidc.keys import process_signing_key
        from oidc.provider import ENDPOINTS, IdentityProvider
        from oidc.store import TokenStore

        config = mock.oauth
        if not isinstance(config, OAuthConfig):
            config = validate_oauth_config(config, context.key_path)
        store = context.state.get("tokens")
        if store is None:
            store = context.state["tokens"] = TokenStore()
        provider = IdentityProvider(mock.id, config, store, process_signing_key())
        base = config.issuer_path
        routes = [ProtocolRoute(path=f"{base}{endpoint.suffix}", mock_id=mock.id,
                                action=IdentityProviderAction(provider, endpoint),
                                methods=ROUTE_METHODS)
                  for endpoint in ENDPOINTS]
        if base:
            # Notes §8: an unknown sub-path of the issuer answers 404 (only when no mock
            # matched).
            routes.append(ProtocolRoute(path=base, mock_id=mock.id,
                                        action=UnknownEndpointAction(), methods=ROUTE_METHODS,
                                        prefix=True))
        return CompiledMock(routes=tuple(routes))


class UnknownEndpointAction:
    """404 ``{"error": "not_found", "error_description": "unknown OAuth endpoint"}``
    for paths under the issuer that are no endpoint (behavior notes §8)."""

    BODY = b'{"error":"not_found","error_description":"unknown OAuth endpoint"}'

    async def respond(self, request: MockRequest, path_params: dict[str, str],
                      template_state: Any, send: Send) -> int:
        await send_simple(send, 404, [(b"content-type", b"application/json"),
                                      (b"cache-control", b"no-store")], self.BODY,
                          head=request.method == "HEAD")
        return 404


#: The registered handler object.
HANDLER = OAuthHandler()
