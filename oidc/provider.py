"""One compiled identity-provider mock: discovery, JWKS and the oauthlib endpoints behind them.

:class:`IdentityProvider` is built once per snapshot compile from the mock's ``oauth`` block
(STYLE §12: "Discovery and JWKS are built from one object per IdP mock"). Each public method
takes a :class:`~mocks.core.request.MockRequest` and returns an :class:`EndpointResponse`;
:mod:`oidc.engine` only sends it. The grant logic is oauthlib's (``AuthorizationEndpoint``,
``TokenEndpoint``, ``IntrospectEndpoint``, ``RevocationEndpoint``) over
:class:`~oidc.validator.MockRequestValidator`; ``/userinfo``, discovery and JWKS are small
enough to answer here.

Source: SPEC "Identity-provider endpoints" (paths, methods, discovery fields, token and
introspection answers), "Errors"; behavior notes §8 (mounting under the issuer's path, methods
and 405, ``Cache-Control: no-store`` and ``Pragma: no-cache``, ``/authorize`` JSON errors
versus redirects, ``/userinfo`` body).

Concurrency: engine loop only; oauthlib is called synchronously. Django-free.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Callable
from urllib.parse import parse_qsl, urlencode

import orjson
from oauthlib.oauth2 import (AuthorizationCodeGrant, ClientCredentialsGrant, ImplicitGrant,
                             RefreshTokenGrant, ResourceOwnerPasswordCredentialsGrant)
from oauthlib.oauth2.rfc6749.endpoints import (AuthorizationEndpoint, IntrospectEndpoint,
                                               RevocationEndpoint, TokenEndpoint)
from oauthlib.oauth2.rfc6749.errors import OAuth2Error

from mocks.core.request import MockRequest

from oidc.config import GRANT_TYPES, OAuthConfig
from oidc.errors import (AccessDeniedError, InvalidBearerTokenError, InvalidRequestError,
                     MethodNotAllowedError, MissingBearerTokenError, UnsupportedGrantTypeError,
                     UnsupportedResponseTypeError, error_body, normalize_error_body)
from oidc.keys import SigningKey
from oidc.store import (AUTHORIZATION_CODE_LIFETIME, TokenStore, TokenStoreUnavailable,
                        shared_tokens)
from oidc.tokens import JwtBearerToken, TokenIssuer
from oidc.validator import IntrospectionValidator, MockRequestValidator, RevocationValidator

# oauthlib logs codes and tokens at DEBUG ("Issuing token ..."); the identity provider must
# never put a secret in a log (issue 8 item 5), whatever level the user runs with.
logging.getLogger("oauthlib").setLevel(logging.WARNING)

#: Claims every discovery document lists; the users' own claim keys are added after them.
STANDARD_CLAIMS = ("sub", "iss", "aud", "exp", "iat", "nonce", "name", "given_name",
                   "family_name", "email", "email_verified", "picture")
CLIENT_AUTH_METHODS = ["client_secret_basic", "client_secret_post"]
FORM_TYPE = "application/x-www-form-urlencoded"


@dataclass(frozen=True, slots=True)
class EndpointResponse:
    """What one identity-provider endpoint answers.

    Attributes:
        status: HTTP status.
        headers: ``(name, value)`` pairs, lower-case names.
        body: the body bytes (JSON, or empty for redirects and ``/revoke``).
    """

    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes = b""


def json_response(status: int, payload: Any,
                  extra_headers: dict[str, str] | None = None) -> EndpointResponse:
    """JSON with ``Cache-Control: no-store`` and ``Pragma: no-cache`` (notes §8)."""
    headers = [("content-type", "application/json"), ("cache-control", "no-store"),
               ("pragma", "no-cache")]
    headers += [(name.lower(), value) for name, value in (extra_headers or {}).items()]
    return EndpointResponse(status, tuple(headers), orjson.dumps(payload))


def error_response(error: OAuth2Error) -> EndpointResponse:
    """The SPEC error body ``{error, error_description}`` at the error's own status."""
    return json_response(error.status_code, error_body(error.error, error.description),
                         error.headers)


def from_oauthlib(headers: dict[str, str], body: str | None, status: int) -> EndpointResponse:
    """An oauthlib ``(headers, body, status)`` answer, error bodies reduced to the SPEC shape."""
    extra = {name: value for name, value in headers.items()
             if name.lower() not in ("content-type", "cache-control", "pragma")}
    if status >= 400:
        normalized = normalize_error_body(body)
        if normalized is not None:
            return json_response(status, normalized, extra)
    if body:
        return EndpointResponse(status, tuple(
            [("content-type", "application/json"), ("cache-control", "no-store"),
             ("pragma", "no-cache")] + [(name.lower(), value) for name, value in extra.items()]),
            body.encode())
    return EndpointResponse(status, tuple([("cache-control", "no-store")] + [
        (name.lower(), value) for name, value in extra.items()]))


@dataclass(frozen=True, slots=True)
class Endpoint:
    """One identity-provider endpoint: its path under the issuer, methods and handler name."""

    suffix: str
    methods: frozenset[str]
    handler: str


#: SPEC "Identity-provider endpoints" and notes §8 (methods; anything else is 405).
ENDPOINTS = (
    Endpoint("/.well-known/openid-configuration", frozenset({"GET", "HEAD"}),
             "openid_configuration"),
    Endpoint("/.well-known/jwks.json", frozenset({"GET", "HEAD"}), "key_set"),
    Endpoint("/authorize", frozenset({"GET", "POST"}), "authorize"),
    Endpoint("/token", frozenset({"POST"}), "token"),
    Endpoint("/userinfo", frozenset({"GET", "POST"}), "userinfo"),
    Endpoint("/introspect", frozenset({"POST"}), "introspect"),
    Endpoint("/revoke", frozenset({"POST"}), "revoke"),
)


class IdentityProvider:
    """The compiled ``oauth`` mock ``mock_id``.

    Attributes:
        mock_id: the owning mock.
        config: its validated ``oauth`` block.
        store: its engine-owned token store (the same object across recompiles).
        key: the process signing key.
        tokens: the :class:`TokenIssuer` (claims, storage, introspection, revocation).
        discovery: the OpenID discovery document (dict).
        jwks: the key set ``{keys: [...]}``.
    """

    def __init__(self, mock_id: str, config: OAuthConfig, store: TokenStore, key: SigningKey):
        shared = shared_tokens()
        if shared is not None:  # a state store: codes and tokens live in Redis
            store = shared.store_for(mock_id)
            store.max_lifetime = max(config.token_expiry, config.refresh_expiry,
                                     AUTHORIZATION_CODE_LIFETIME)
        self.mock_id = mock_id
        self.config = config
        self.store = store
        self.key = key
        self.tokens = TokenIssuer(config, store, key)
        validator = MockRequestValidator(self)
        token_handler = JwtBearerToken(self.tokens, validator)
        # The pre_auth hook runs after the client and redirect URI are trusted, so its errors
        # are redirected to the client with `state` (notes §8 "later problems -> 302").
        code_grant = AuthorizationCodeGrant(validator, pre_auth=[self._check_authorization])
        implicit_grant = ImplicitGrant(validator, pre_auth=[self._check_authorization])
        self.authorization_endpoint = AuthorizationEndpoint(
            default_response_type="code", default_token_type=token_handler,
            response_types={"code": code_grant, "token": implicit_grant})
        self.token_endpoint = TokenEndpoint(
            # An unknown or missing grant_type reaches the default grant, whose first
            # pre_token hook answers invalid_request or unsupported_grant_type.
            default_grant_type="client_credentials", default_token_type=token_handler,
            grant_types={
                "authorization_code": code_grant,
                "client_credentials": ClientCredentialsGrant(
                    validator, pre_token=[self._check_grant_type]),
                "password": ResourceOwnerPasswordCredentialsGrant(validator),
                "refresh_token": RefreshTokenGrant(validator, issue_new_refresh_tokens=True),
            })
        self.introspect_endpoint = IntrospectEndpoint(IntrospectionValidator(self))
        self.revocation_endpoint = RevocationEndpoint(RevocationValidator(self))
        self.discovery = self._discovery_document()
        self.jwks = {"keys": [dict(key.public_jwk)]}
        self._discovery_body = json_response(200, self.discovery)
        self._jwks_body = json_response(200, self.jwks)

    # ------------------------------------------------------------ documents
    def url(self, suffix: str) -> str:
        """The absolute URL of an endpoint: the issuer plus ``suffix``."""
        return f"{self.config.issuer}{suffix}"

    def _discovery_document(self) -> dict[str, Any]:
        claims = list(STANDARD_CLAIMS)
        for user in self.config.users:
            claims += [name for name in user.claims if name not in claims]
        return {
            "issuer": self.config.issuer,
            "authorization_endpoint": self.url("/authorize"),
            "token_endpoint": self.url("/token"),
            "userinfo_endpoint": self.url("/userinfo"),
            "jwks_uri": self.url("/.well-known/jwks.json"),
            "revocation_endpoint": self.url("/revoke"),
            "introspection_endpoint": self.url("/introspect"),
            "response_types_supported": ["code", "token"],
            "response_modes_supported": ["query", "fragment"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["RS256"],
            "scopes_supported": list(self.config.default_scopes),
            "token_endpoint_auth_methods_supported": list(CLIENT_AUTH_METHODS),
            "introspection_endpoint_auth_methods_supported": list(CLIENT_AUTH_METHODS),
            "revocation_endpoint_auth_methods_supported": list(CLIENT_AUTH_METHODS),
            "claims_supported": claims,
            "grant_types_supported": [*GRANT_TYPES, "implicit"],
            "code_challenge_methods_supported": ["S256", "plain"],
        }

    # ------------------------------------------------------------ dispatch
    def handle(self, endpoint: Endpoint, request: MockRequest) -> EndpointResponse:
        """Answer ``request`` at ``endpoint``: 405 for other methods, else the handler's answer.

        Errors raised as :class:`OAuth2Error` are rendered here; a state store that cannot
        be reached answers 503 ``temporarily_unavailable`` naming it; anything else
        propagates to the caller, which logs it and answers 500 ``server_error``.
        """
        if request.method not in endpoint.methods:
            return self._method_not_allowed(request, endpoint)
        handler: Callable[[MockRequest], EndpointResponse] = getattr(self, endpoint.handler)
        store = self.store
        if store.remote:
            return self._handle_shared(handler, request)
        try:
            return handler(request)
        except OAuth2Error as error:
            return error_response(error)

    def _handle_shared(self, handler: Callable[[MockRequest], EndpointResponse],
                       request: MockRequest) -> EndpointResponse:
        """``handler(request)`` on a Redis token store: the records it read are written back
        when changed (:meth:`~oidc.store.RedisTokenStore.commit`)."""
        store = self.store
        store.begin()
        try:
            try:
                response = handler(request)
            except OAuth2Error as error:
                response = error_response(error)
            store.commit()
            return response
        except TokenStoreUnavailable as error:
            store.begin()
            return json_response(503, error_body("temporarily_unavailable", str(error)))

    def _method_not_allowed(self, request: MockRequest, endpoint: Endpoint) -> EndpointResponse:
        allowed = ", ".join(sorted(endpoint.methods))
        error = MethodNotAllowedError(description=f"{request.method} is not allowed at "
                                                  f"{endpoint.suffix}; use {allowed}")
        return json_response(error.status_code, error_body(error.error, error.description),
                             {"Allow": allowed})

    # ------------------------------------------------------------ endpoints
    def openid_configuration(self, request: MockRequest) -> EndpointResponse:
        """``/.well-known/openid-configuration``: the discovery document."""
        return self._discovery_body

    def key_set(self, request: MockRequest) -> EndpointResponse:
        """``/.well-known/jwks.json``: the public signing key."""
        return self._jwks_body

    def authorize(self, request: MockRequest) -> EndpointResponse:
        """``/authorize``: auto-approves with the first user and redirects (302)."""
        uri, body, headers = self._oauthlib_arguments(request)
        params = dict(parse_qsl(request.query_string, keep_blank_values=True))
        if request.method == "POST":
            params.update(parse_qsl(body, keep_blank_values=True))
        # Notes §8: missing parameters are answered as JSON, before any redirect is trusted.
        for name in ("client_id", "redirect_uri", "response_type"):
            if not params.get(name):
                raise InvalidRequestError(description=f"{name} is required")
        first_user = self.config.users[0] if self.config.users else None
        return from_oauthlib(*self.authorization_endpoint.create_authorization_response(
            uri, request.method, body, headers, scopes=None,
            credentials={"user": first_user}))

    def _check_authorization(self, request: Any) -> dict[str, Any]:
        """oauthlib ``pre_auth`` hook: response type and an approving user (SPEC: auto-approve
        with the first configured user)."""
        if request.response_type not in ("code", "token"):
            raise UnsupportedResponseTypeError(
                description=f"response_type {request.response_type!r} is not supported; use "
                            f"code or token", request=request)
        if request.user is None:
            raise AccessDeniedError(description="no user to approve the request: add one "
                                                "under oauth.users", request=request)
        return {}

    def _check_grant_type(self, request: Any) -> None:
        """oauthlib ``pre_token`` hook of the default grant: name a missing or unknown
        ``grant_type`` and what to use instead."""
        if not request.grant_type:
            raise InvalidRequestError(description="grant_type is required", request=request)
        if request.grant_type not in self.token_endpoint.grant_types:
            raise UnsupportedGrantTypeError(
                description=f"grant_type {request.grant_type!r} is not supported; use "
                            f"{', '.join(GRANT_TYPES)}", request=request)

    def token(self, request: MockRequest) -> EndpointResponse:
        """``/token``: every grant of the SPEC grants table."""
        uri, body, headers = self._oauthlib_arguments(request)
        return from_oauthlib(*self.token_endpoint.create_token_response(
            uri, "POST", body, headers))

    def userinfo(self, request: MockRequest) -> EndpointResponse:
        """``/userinfo``: ``{sub, ...claims of the user whose sub it is}`` (notes §8)."""
        scheme, _, token = (request.headers.get("authorization") or "").partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            raise MissingBearerTokenError(description="send the access token as "
                                                      "'Authorization: Bearer <token>'")
        found = self.tokens.access_token_record(token)
        if found is None:
            raise InvalidBearerTokenError(description="access token is not valid")
        record = found[0]
        if record.revoked:
            raise InvalidBearerTokenError(description="access token was revoked")
        if not self.store.is_active(record):
            raise InvalidBearerTokenError(description="access token has expired")
        answer: dict[str, Any] = {"sub": record.subject}
        if record.username is not None:
            user = self.config.user_by_subject(record.subject) or self.config.user(
                record.username)
            if user is not None:
                answer.update(user.claims)
                answer["sub"] = record.subject
        return json_response(200, answer)

    def introspect(self, request: MockRequest) -> EndpointResponse:
        """``/introspect`` (RFC 7662): ``{active: true, ...}`` or ``{active: false}``."""
        uri, body, headers = self._oauthlib_arguments(request)
        return from_oauthlib(*self.introspect_endpoint.create_introspect_response(
            uri, "POST", body, headers))

    def revoke(self, request: MockRequest) -> EndpointResponse:
        """``/revoke`` (RFC 7009): 200 for any token, known or not."""
        uri, body, headers = self._oauthlib_arguments(request)
        return from_oauthlib(*self.revocation_endpoint.create_revocation_response(
            uri, "POST", body, headers))

    # ------------------------------------------------------------ adapters
    def _oauthlib_arguments(self, request: MockRequest) -> tuple[str, str, dict[str, str]]:
        """``(uri, form body, headers)`` as oauthlib reads them.

        The query and form are re-encoded canonically: oauthlib refuses characters that
        clients and browsers leave unescaped. A body that is not a form is refused here with
        a message saying what to send.
        """
        query = urlencode(parse_qsl(request.query_string, keep_blank_values=True))
        uri = f"{request.scheme}://{request.host}{request.path}" + (f"?{query}" if query else "")
        body = ""
        if request.body and request.method == "POST":
            content_type = request.headers.get("content-type", FORM_TYPE)
            if content_type.split(";")[0].strip().lower() != FORM_TYPE:
                raise InvalidRequestError(description=f"send the parameters as {FORM_TYPE}, "
                                                      f"not {content_type}")
            body = urlencode(parse_qsl(request.text, keep_blank_values=True))
        return uri, body, dict(request.headers)
