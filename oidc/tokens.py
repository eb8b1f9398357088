"""Issuing and reading tokens: RS256 JWT access tokens, OpenID ID tokens, opaque refresh tokens.

:class:`JwtBearerToken` is the oauthlib token handler (it decides *which* tokens a response
carries); :class:`TokenIssuer` builds their claims, records them in the mock's
:class:`~oidc.store.TokenStore`, and answers introspection and revocation.

Access-token claims: ``defaultClaims`` (for example ``aud``), then ``iss``, ``sub``,
``client_id``, ``scope``, ``iat``, ``exp`` (epoch seconds) and ``jti``, which the registered
claims always win. ID-token claims: the user's ``claims``, then ``iss``, ``sub``, ``aud`` (the
client id), ``iat``, ``exp`` and ``nonce`` when ``/authorize`` sent one.

Source: SPEC "Identity-provider endpoints" (token response, ID tokens, introspection answer,
refresh without rotation, ``refresh_token`` only for clients listing it); issue 8 item 2.

Concurrency: engine loop only. Django-free.
"""
from __future__ import annotations

import secrets
from typing import TYPE_CHECKING, Any

from oauthlib.oauth2 import BearerToken

from oidc.config import OAuthConfig
from oidc.keys import SigningKey
from oidc.store import TokenRecord, TokenStore

if TYPE_CHECKING:
    from oauthlib.common import Request

#: Claims of ours that a user's ``claims`` or ``defaultClaims`` never override.
REGISTERED_CLAIMS = ("iss", "sub", "aud", "exp", "iat", "nbf", "jti", "nonce", "client_id",
                     "scope")


def new_grant_id() -> str:
    """An id tying together the tokens of one authorization (code, password login, ...)."""
    return secrets.token_hex(8)


def _subject(request: "Request") -> str:
    """``sub``: the user's (``claims.sub`` or username), else the client id (notes §8)."""
    if request.user is not None:
        return request.user.subject
    return getattr(request, "token_subject", None) or request.client_id


class TokenIssuer:
    """Token claims, storage and lookups for one identity-provider mock.

    Attributes:
        config: the mock's validated ``oauth`` block.
        store: the engine-owned store of the mock (survives recompiles).
        key: the process signing key.
    """

    def __init__(self, config: OAuthConfig, store: TokenStore, key: SigningKey):
        self.config = config
        self.store = store
        self.key = key

    # --------------------------------------------------------------- issuing
    def new_access_token(self, request: "Request") -> str:
        """oauthlib ``token_generator``: a signed access token for ``request``.

        The claims are left on ``request.issued_access_token`` for :meth:`record_issued`.
        """
        issued_at = int(self.store.now())
        claims = {key: value for key, value in self.config.default_claims.items()
                  if key not in REGISTERED_CLAIMS or key == "aud"}
        claims.update({"iss": self.config.issuer, "sub": _subject(request),
                       "client_id": request.client_id, "scope": " ".join(request.scopes or []),
                       "iat": issued_at, "exp": issued_at + self.config.token_expiry,
                       "jti": secrets.token_urlsafe(16)})
        request.issued_access_token = claims
        return self.key.sign(claims)

    def new_refresh_token(self, request: "Request") -> str:
        """oauthlib ``refresh_token_generator``: an opaque, unguessable token."""
        return secrets.token_urlsafe(32)

    def new_id_token(self, request: "Request") -> str:
        """An OpenID ID token for the user of ``request``, audience the client."""
        issued_at = int(self.store.now())
        user = request.user
        claims = {key: value for key, value in user.claims.items()
                  if key not in REGISTERED_CLAIMS}
        claims.update({"iss": self.config.issuer, "sub": user.subject,
                       "aud": request.client_id, "iat": issued_at,
                       "exp": issued_at + self.config.token_expiry})
        nonce = getattr(request, "nonce", None)
        if nonce:
            claims["nonce"] = nonce
        return self.key.sign(claims)

    def record_issued(self, token: dict[str, Any], request: "Request") -> None:
        """Store the access token just issued and, when new, its refresh token."""
        claims = request.issued_access_token
        grant_id = getattr(request, "grant_id", None) or new_grant_id()
        request.grant_id = grant_id
        username = request.user.username if request.user is not None else None
        scopes = list(request.scopes or [])
        self.store.add_access_token(claims["jti"], TokenRecord(
            kind="access_token", client_id=request.client_id, subject=claims["sub"],
            username=username, scopes=scopes, issued_at=claims["iat"],
            expires_at=claims["exp"], grant_id=grant_id))
        refresh_token = token.get("refresh_token")
        # A refresh grant answers with the same refresh token (no rotation): keep its record,
        # and so its original scopes and expiry (no lookup: a shared store would pay a round
        # trip for it).
        if refresh_token and refresh_token != getattr(request, "refresh_token", None):
            self.store.add_refresh_token(refresh_token, TokenRecord(
                kind="refresh_token", client_id=request.client_id, subject=claims["sub"],
                username=username, scopes=scopes, issued_at=claims["iat"],
                expires_at=claims["iat"] + self.config.refresh_expiry, grant_id=grant_id))

    # --------------------------------------------------------------- reading
    def access_token_record(self, token: str) -> tuple[TokenRecord, dict[str, Any]] | None:
        """The record and claims of an access token this mock issued (any state), or None."""
        claims = self.key.verify(token, self.config.issuer)
        if claims is None:
            return None
        record = self.store.access_tokens.get(str(claims["jti"]))
        return (record, claims) if record is not None else None

    def active_access_token(self, token: str) -> TokenRecord | None:
        """The record of an active (known, unrevoked, unexpired) access token, or None."""
        found = self.access_token_record(token)
        if found is None or not self.store.is_active(found[0]):
            return None
        return found[0]

    def introspect(self, token: str) -> dict[str, Any] | None:
        """RFC 7662 fields of an active access or refresh token, or None when inactive.

        ``{scope, client_id, sub, token_type, exp, iat, iss}`` (SPEC), plus ``username`` for
        user tokens and ``aud`` when the access token has one; oauthlib adds ``active``.
        """
        claims: dict[str, Any] = {}
        found = self.access_token_record(token)
        if found is not None:
            record, claims = found
        else:
            record = self.store.refresh_tokens.get(token)
        if not self.store.is_active(record):
            return None
        answer: dict[str, Any] = {
            "scope": " ".join(record.scopes), "client_id": record.client_id,
            "sub": record.subject,
            "token_type": "Bearer" if record.kind == "access_token" else "refresh_token",
            "exp": record.expires_at, "iat": record.issued_at, "iss": self.config.issuer}
        if record.username is not None:
            answer["username"] = record.username
        if "aud" in claims:
            answer["aud"] = claims["aud"]
        return answer

    def revoke(self, token: str, client_id: str | None) -> None:
        """Revoke ``token`` (RFC 7009); unknown tokens and other clients' tokens are ignored.

        Revoking a refresh token also revokes the access tokens of its grant (RFC 7009 §2.1).
        """
        found = self.access_token_record(token)
        if found is not None:
            record = found[0]
            if client_id is None or record.client_id == client_id:
                record.revoked = True
            return
        refresh = self.store.refresh_tokens.get(token)
        if refresh is not None and (client_id is None or refresh.client_id == client_id):
            self.store.revoke_grant(refresh.grant_id)


class JwtBearerToken(BearerToken):
    """oauthlib's Bearer token handler with our generators and the SPEC's token contents.

    ``refresh_token`` only for clients that list the ``refresh_token`` grant; ``id_token`` when
    ``openid`` is in scope and a user is behind the token, except in the implicit flow, whose
    fragment carries the access token only (SPEC grants table).
    """

    def __init__(self, issuer: TokenIssuer, request_validator: Any):
        super().__init__(request_validator=request_validator,
                         token_generator=issuer.new_access_token,
                         expires_in=issuer.config.token_expiry,
                         refresh_token_generator=issuer.new_refresh_token)
        self.issuer = issuer

    def create_token(self, request: "Request", refresh_token: bool = False,
                     **kwargs: Any) -> dict[str, Any]:
        client = request.client
        allow_refresh = bool(refresh_token) and client is not None and (
            "refresh_token" in client.grant_types)
        token = super().create_token(request, refresh_token=allow_refresh, **kwargs)
        if (request.response_type != "token" and request.user is not None
                and "openid" in (request.scopes or [])):
            token["id_token"] = self.issuer.new_id_token(request)
        return token
