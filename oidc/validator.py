"""The seam between oauthlib and our storage: one ``RequestValidator`` per identity-provider mock.

oauthlib runs the grant logic (parameter checks, PKCE, refresh without rotation, redirects with
``state``); this class answers its questions from the mock's config (clients, users, scopes)
and from the engine-owned :class:`~oidc.store.TokenStore` (codes and tokens). Where the SPEC
fixes a code or status that oauthlib would choose differently (401 for wrong user credentials,
``invalid_grant`` for a missing PKCE verifier or a redirect mismatch at ``/token``,
``invalid_client`` with 401 for an unknown client at ``/authorize``), the validator raises the
exact error class from :mod:`oidc.errors` instead of returning False; oauthlib renders any
``OAuth2Error`` raised from a validator call.

Source: SPEC "Identity-provider endpoints" (grants table), "Authentication" (identity-provider
part: ``client_secret_basic``, ``client_secret_post``, public clients), "Errors"; behavior
notes §8. Anchor: django-oauth-toolkit ``oauth2_validators.py``.

Concurrency: called synchronously from the engine loop; no awaits, so no interleaving.
Django-free.
"""
from __future__ import annotations

import base64
import binascii
import hmac
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import unquote_plus

from oauthlib.oauth2 import RequestValidator
from oauthlib.oauth2.rfc6749.grant_types.authorization_code import (
    code_challenge_method_plain, code_challenge_method_s256)

from oidc.config import OAuthClient
from oidc.errors import (InvalidClientError, InvalidGrantError, InvalidRequestFatalError,
                     InvalidScopeError, InvalidUserCredentialsError, UnauthorizedClientError)
from oidc.store import AUTHORIZATION_CODE_LIFETIME, AuthorizationCodeRecord, TokenRecord
from oidc.tokens import new_grant_id

if TYPE_CHECKING:
    from oauthlib.common import Request

    from oidc.store import TokenStore

#: PKCE checks by ``code_challenge_method`` (oauthlib's own functions, constant-time).
CODE_CHALLENGE_CHECKS = {"S256": code_challenge_method_s256, "plain": code_challenge_method_plain}


def client_credentials(request: "Request") -> tuple[str | None, str | None]:
    """``(client_id, client_secret)`` from HTTP Basic, else from the form fields.

    Basic credentials are form-urlencoded before base64 (RFC 6749 §2.3.1), so both halves are
    decoded with ``unquote_plus``. Raises :class:`InvalidClientError` for a malformed Basic
    header or a form ``client_id`` that contradicts it.
    """
    header = request.headers.get("Authorization") or ""
    if header[:6].lower() == "basic ":
        try:
            decoded = base64.b64decode(header[6:].strip(), validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            raise InvalidClientError(description="malformed HTTP Basic credentials; send "
                                                 "base64(client_id:client_secret)",
                                     request=request) from None
        client_id, separator, secret = decoded.partition(":")
        if not separator:
            raise InvalidClientError(description="malformed HTTP Basic credentials; send "
                                                 "base64(client_id:client_secret)",
                                     request=request)
        client_id, secret = unquote_plus(client_id), unquote_plus(secret)
        form_client_id = request.client_id
        if form_client_id and form_client_id != client_id:
            raise InvalidClientError(description="client_id in the form differs from the "
                                                 "HTTP Basic client", request=request)
        return client_id, secret
    return request.client_id, request.client_secret


class ValidatorProvider(Protocol):
    """What a validator reads of its identity provider
    (:class:`~oidc.provider.IdentityProvider` is one): ``config`` (the mock's
    :class:`~oidc.config.OAuthConfig`), ``store`` (its codes and tokens) and ``tokens`` (its
    :class:`~oidc.tokens.TokenIssuer`: ``record_issued``, ``introspect``, ``revoke``).

    A protocol rather than the provider class, so that this module does not import
    :mod:`oidc.provider`, which imports it.
    """

    config: Any
    store: TokenStore
    tokens: Any


class MockRequestValidator(RequestValidator):
    """oauthlib's questions answered for one :class:`~oidc.provider.IdentityProvider`.

    Used by ``/authorize`` and ``/token``. Subclasses change client authentication for
    ``/introspect`` (required) and ``/revoke`` (optional).
    """

    def __init__(self, provider: ValidatorProvider):
        super().__init__()
        self.provider = provider
        self.config = provider.config
        self.store = provider.store

    # ----------------------------------------------------------------- clients
    def _known_client(self, client_id: str | None, request: "Request") -> OAuthClient:
        client = self.config.client(client_id)
        if client is None:
            description = (f"unknown client {client_id!r}" if client_id else
                           "client authentication is required: send client_id and "
                           "client_secret as form fields or with HTTP Basic")
            raise InvalidClientError(description=description, request=request)
        return client

    def _bind_client(self, client: OAuthClient, request: "Request") -> None:
        request.client = client
        request.client_id = client.client_id

    def client_authentication_required(self, request: "Request", *args: Any,
                                       **kwargs: Any) -> bool:
        """Confidential clients (and unknown ones, so they fail) must authenticate."""
        client_id, _ = client_credentials(request)
        client = self.config.client(client_id)
        return client is None or not client.is_public

    def authenticate_client(self, request: "Request", *args: Any, **kwargs: Any) -> bool:
        """Check the client secret (Basic or form); raises :class:`InvalidClientError`."""
        client_id, secret = client_credentials(request)
        client = self._known_client(client_id, request)
        if client.is_public:
            raise InvalidClientError(
                description=f"client {client.client_id!r} is public (empty clientSecret) and "
                            f"cannot authenticate here; give it a clientSecret",
                request=request)
        if not secret:
            raise InvalidClientError(
                description=f"client_secret is required for confidential client "
                            f"{client.client_id!r}", request=request)
        if not hmac.compare_digest(secret.encode(), client.client_secret.encode()):
            raise InvalidClientError(description=f"wrong client_secret for client "
                                                 f"{client.client_id!r}", request=request)
        self._bind_client(client, request)
        return True

    def authenticate_client_id(self, client_id: str | None, request: "Request", *args: Any,
                               **kwargs: Any) -> bool:
        """A public client names itself; raises :class:`InvalidClientError` when unknown."""
        client_id = client_id or client_credentials(request)[0]
        self._bind_client(self._known_client(client_id, request), request)
        return True

    def validate_client_id(self, client_id: str, request: "Request", *args: Any,
                           **kwargs: Any) -> bool:
        """``/authorize``: an unknown client is 401 ``invalid_client`` as JSON (notes §8)."""
        self._bind_client(self._known_client(client_id, request), request)
        return True

    def validate_grant_type(self, client_id: str, grant_type: str, client: OAuthClient,
                            request: "Request", *args: Any, **kwargs: Any) -> bool:
        if grant_type not in client.grant_types:
            raise UnauthorizedClientError(
                description=f"client {client.client_id!r} may not use the {grant_type} grant; "
                            f"add it to the client's grantTypes", request=request)
        return True

    # ------------------------------------------------------------ /authorize
    def validate_redirect_uri(self, client_id: str, redirect_uri: str, request: "Request",
                              *args: Any, **kwargs: Any) -> bool:
        if redirect_uri not in request.client.redirect_uris:
            raise InvalidRequestFatalError(
                description=f"redirect_uri {redirect_uri!r} is not registered for client "
                            f"{client_id!r}; add it to the client's redirectUris",
                request=request)
        return True

    def get_default_redirect_uri(self, client_id: str, request: "Request", *args: Any,
                                 **kwargs: Any) -> str | None:
        # The exchange must repeat the redirect_uri of /authorize (SPEC grants table), so
        # there is no default to fall back on.
        return None

    def validate_response_type(self, client_id: str, response_type: str, client: OAuthClient,
                               request: "Request", *args: Any, **kwargs: Any) -> bool:
        allowed = {"code": ("authorization_code",),
                   "token": ("authorization_code", "implicit")}.get(response_type, ())
        if not any(grant in client.grant_types for grant in allowed):
            raise UnauthorizedClientError(
                description=f"client {client_id!r} may not use response_type={response_type}; "
                            f"add authorization_code to the client's grantTypes",
                request=request)
        return True

    def validate_scopes(self, client_id: str, scopes: list[str], client: OAuthClient,
                        request: "Request", *args: Any, **kwargs: Any) -> bool:
        for scope in scopes:
            if scope not in self.config.default_scopes:
                raise InvalidScopeError(description=f'scope "{scope}" is not supported',
                                        request=request)
        return True

    def get_default_scopes(self, client_id: str, request: "Request", *args: Any,
                           **kwargs: Any) -> list[str]:
        """No ``scope`` asked: every default scope (notes §8, client credentials)."""
        return list(self.config.default_scopes)

    def is_pkce_required(self, client_id: str, request: "Request") -> bool:
        # PKCE is optional, also for public clients: a mock should accept every flow a
        # client library may try (SPEC: "optional code_challenge").
        return False

    def save_authorization_code(self, client_id: str, code: dict[str, Any],
                                request: "Request", *args: Any, **kwargs: Any) -> None:
        user = request.user
        self.store.add_code(code["code"], AuthorizationCodeRecord(
            client_id=client_id, redirect_uri=request.redirect_uri,
            scopes=list(request.scopes or []), username=user.username if user else None,
            nonce=request.nonce, code_challenge=request.code_challenge,
            code_challenge_method=request.code_challenge_method if request.code_challenge
            else None,
            expires_at=self.store.now() + AUTHORIZATION_CODE_LIFETIME,
            grant_id=new_grant_id()))

    # --------------------------------------------------- /token: the code grant
    def _code_record(self, code: str, request: "Request") -> AuthorizationCodeRecord:
        record = self.store.codes.get(code)
        if record is None or record.expires_at <= self.store.now():
            raise InvalidGrantError(description="authorization code is invalid or expired "
                                                "(codes are valid 10 minutes)",
                                    request=request)
        return record

    def validate_code(self, client_id: str, code: str, client: OAuthClient,
                      request: "Request", *args: Any, **kwargs: Any) -> bool:
        """Single use, 10 minutes, same client; PKCE verified here for exact messages."""
        record = self._code_record(code, request)
        if record.used:
            # RFC 6749 §4.1.2: a reused code SHOULD revoke the tokens issued from it.
            self.store.revoke_grant(record.grant_id)
            raise InvalidGrantError(description="authorization code was already used; the "
                                                "tokens issued from it are now revoked",
                                    request=request)
        if record.client_id != client_id:
            raise InvalidGrantError(description="authorization code was issued to another "
                                                "client", request=request)
        if record.code_challenge is not None:
            if not request.code_verifier:
                raise InvalidGrantError(description="code_verifier is required: the code was "
                                                    "issued for a PKCE code_challenge",
                                        request=request)
            check = CODE_CHALLENGE_CHECKS[record.code_challenge_method or "plain"]
            if not check(request.code_verifier, record.code_challenge):
                raise InvalidGrantError(description="code_verifier does not match the "
                                                    "code_challenge", request=request)
        request.user = self.config.user(record.username)
        request.token_subject = request.user.subject if request.user else record.username
        request.scopes = list(record.scopes)
        request.nonce = record.nonce
        request.grant_id = record.grant_id
        return True

    def get_code_challenge(self, code: str, request: "Request") -> str | None:
        record = self.store.codes.get(code)
        return record.code_challenge if record else None

    def get_code_challenge_method(self, code: str, request: "Request") -> str | None:
        record = self.store.codes.get(code)
        return record.code_challenge_method if record else None

    def confirm_redirect_uri(self, client_id: str, code: str, redirect_uri: str,
                             client: OAuthClient, request: "Request", *args: Any,
                             **kwargs: Any) -> bool:
        record = self._code_record(code, request)
        if redirect_uri != record.redirect_uri:
            raise InvalidGrantError(description="redirect_uri does not match the one sent to "
                                                "/authorize", request=request)
        return True

    def invalidate_authorization_code(self, client_id: str, code: str, request: "Request",
                                      *args: Any, **kwargs: Any) -> None:
        # Kept (marked used) until it expires, so a second use is recognised as reuse.
        record = self.store.codes.get(code)
        if record is not None:
            record.used = True

    # --------------------------------------------------- /token: password grant
    def validate_user(self, username: str, password: str, client: OAuthClient,
                      request: "Request", *args: Any, **kwargs: Any) -> bool:
        user = self.config.user(username)
        if user is None or not hmac.compare_digest(password.encode(), user.password.encode()):
            raise InvalidUserCredentialsError(description="wrong username or password",
                                              request=request)
        request.user = user
        request.token_subject = user.subject
        return True

    # --------------------------------------------------- /token: refresh grant
    def _refresh_record(self, refresh_token: str, request: "Request") -> TokenRecord:
        record = self.store.refresh_tokens.get(refresh_token)
        if record is None:
            raise InvalidGrantError(description="refresh token is invalid", request=request)
        if record.revoked:
            raise InvalidGrantError(description="refresh token was revoked", request=request)
        if record.expires_at <= self.store.now():
            raise InvalidGrantError(description="refresh token has expired", request=request)
        return record

    def validate_refresh_token(self, refresh_token: str, client: OAuthClient,
                               request: "Request", *args: Any, **kwargs: Any) -> bool:
        record = self._refresh_record(refresh_token, request)
        if record.client_id != client.client_id:
            raise InvalidGrantError(description="refresh token was issued to another client",
                                    request=request)
        request.user = self.config.user(record.username)
        request.token_subject = record.subject
        request.grant_id = record.grant_id
        return True

    def get_original_scopes(self, refresh_token: str, request: "Request", *args: Any,
                            **kwargs: Any) -> list[str]:
        return list(self._refresh_record(refresh_token, request).scopes)

    def is_within_original_scope(self, request_scopes: list[str], refresh_token: str,
                                 request: "Request", *args: Any, **kwargs: Any) -> bool:
        original = self.get_original_scopes(refresh_token, request)
        extra = next(scope for scope in request_scopes if scope not in original)
        raise InvalidScopeError(description=f'scope "{extra}" was not granted to this '
                                            f'refresh token', request=request)

    def rotate_refresh_token(self, request: "Request") -> bool:
        # SPEC grants table: "the same refresh token (no rotation)".
        return False

    # ------------------------------------------------------------- storage
    def save_bearer_token(self, token: dict[str, Any], request: "Request", *args: Any,
                          **kwargs: Any) -> None:
        """Record the access token (by ``jti``) and a newly issued refresh token."""
        self.provider.tokens.record_issued(token, request)


class IntrospectionValidator(MockRequestValidator):
    """``/introspect``: client authentication is required (RFC 7662 §2.1; notes §8)."""

    def client_authentication_required(self, request: "Request", *args: Any,
                                       **kwargs: Any) -> bool:
        return True

    def introspect_token(self, token: str, token_type_hint: str | None, request: "Request",
                         *args: Any, **kwargs: Any) -> dict[str, Any] | None:
        return self.provider.tokens.introspect(token)


class RevocationValidator(MockRequestValidator):
    """``/revoke``: client authentication is optional (notes §8), but checked when sent."""

    def client_authentication_required(self, request: "Request", *args: Any,
                                       **kwargs: Any) -> bool:
        client_id, secret = client_credentials(request)
        client = self.config.client(client_id)
        return bool(secret) and (client is None or not client.is_public)

    def authenticate_client_id(self, client_id: str | None, request: "Request", *args: Any,
                               **kwargs: Any) -> bool:
        client_id = client_id or client_credentials(request)[0]
        if client_id is None:
            request.client = None  # anonymous revocation
            return True
        return super().authenticate_client_id(client_id, request)

    def revoke_token(self, token: str, token_type_hint: str | None, request: "Request",
                     *args: Any, **kwargs: Any) -> None:
        client = getattr(request, "client", None)
        self.provider.tokens.revoke(token, client.client_id if client else None)
