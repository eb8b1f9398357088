"""Presets and builders for identity-provider tests (STYLE §14: "IdP tests are grouped by grant,
with settings presets").

One preset ``oauth`` block with three clients and two users covers every grant:

- ``web-app`` / ``web-secret``: confidential, all four grants, redirect ``CALLBACK``.
- ``spa``: public (empty secret), ``authorization_code`` and ``refresh_token``.
- ``service`` / ``service-secret``: ``client_credentials`` only (no refresh tokens).
- ``alice`` / ``wonderland``: ``claims.sub`` ``user-alice`` plus profile and custom claims.
- ``bob`` / ``builder``: no claims, so his ``sub`` is the username.
"""
from __future__ import annotations

import base64
import hashlib
import secrets
import time
from typing import Any
from urllib.parse import urlencode

from mocks.core.request import MockRequest
from oidc.config import validate_oauth_config
from oidc.keys import process_signing_key
from oidc.provider import IdentityProvider
from oidc.store import TokenStore

CALLBACK = "http://localhost:3000/callback"
AUDIENCE = "mockd-api"
ALICE_CLAIMS = {"sub": "user-alice", "email": "alice@example.com", "email_verified": True,
                "name": "Alice Liddell", "given_name": "Alice", "family_name": "Liddell",
                "department": "research"}


def oauth_block(issuer: str = "http://localhost:4280/auth", **overrides: Any) -> dict[str, Any]:
    """The preset ``oauth`` block; keyword arguments replace top-level keys (camelCase)."""
    block: dict[str, Any] = {
        "issuer": issuer,
        "tokenExpiry": "1h",
        "refreshExpiry": "7d",
        "defaultScopes": ["openid", "profile", "email"],
        "defaultClaims": {"aud": AUDIENCE},
        "clients": [
            {"clientId": "web-app", "clientSecret": "web-secret", "redirectUris": [CALLBACK],
             "grantTypes": ["authorization_code", "client_credentials", "refresh_token",
                            "password"]},
            {"clientId": "spa", "clientSecret": "", "redirectUris": [CALLBACK],
             "grantTypes": ["authorization_code", "refresh_token"]},
            {"clientId": "service", "clientSecret": "service-secret",
             "grantTypes": ["client_credentials"]},
        ],
        "users": [
            {"username": "alice", "password": "wonderland", "claims": dict(ALICE_CLAIMS)},
            {"username": "bob", "password": "builder"},
        ],
    }
    block.update(overrides)
    return block


def oauth_mock(mock_id: str = "idp", issuer: str = "http://localhost:4280/auth",
               **overrides: Any) -> dict[str, Any]:
    """A ``type: oauth`` mock definition with the preset block."""
    return {"id": mock_id, "type": "oauth", "oauth": oauth_block(issuer, **overrides)}


class Clock:
    """A settable clock for :class:`TokenStore` (epoch seconds)."""

    def __init__(self, now: float | None = None):
        self.now = time.time() if now is None else now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def make_provider(clock: Clock | None = None, **overrides: Any) -> IdentityProvider:
    """An in-process :class:`IdentityProvider` over the preset, with its own store."""
    config = validate_oauth_config(oauth_block(**overrides), "mocks[0]")
    return IdentityProvider("idp", config, TokenStore(clock=clock or time.time),
                            process_signing_key())


def basic(client_id: str, secret: str) -> str:
    """An HTTP Basic ``Authorization`` value."""
    return "Basic " + base64.b64encode(f"{client_id}:{secret}".encode()).decode()


def form_request(path: str, data: dict[str, str] | None = None, *, method: str = "POST",
                 query: dict[str, str] | None = None,
                 headers: dict[str, str] | None = None) -> MockRequest:
    """A request as the data plane builds it, with a form body."""
    all_headers = {"content-type": "application/x-www-form-urlencoded", "host": "localhost:4280"}
    all_headers.update(headers or {})
    return MockRequest(method, path, urlencode(query or {}),
                       header_pairs=list(all_headers.items()),
                       body=urlencode(data or {}).encode())


def pkce_pair(method: str = "S256") -> tuple[str, str]:
    """``(code_verifier, code_challenge)`` for ``method`` (RFC 7636)."""
    verifier = secrets.token_urlsafe(48)
    if method == "plain":
        return verifier, verifier
    digest = hashlib.sha256(verifier.encode()).digest()
    return verifier, base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
