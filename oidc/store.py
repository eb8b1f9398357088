"""Runtime state of the identity-provider mocks: codes, access and refresh tokens, revocations.

The state is keyed by mock id and lives in this module, not in the compiled routes, because the
admin side recompiles the snapshot on every mock edit and issued tokens must survive that. It is
memory only: a restart forgets it (and the signing key), so old tokens stop verifying.

Source: SPEC "States and transitions" (authorization code: issued -> consumed, once, within 10
minutes; token: active -> revoked | expired), "Limits" (code lifetime 10 minutes).

Concurrency: single owner, the engine event loop; no locks. Every loop here is bounded by the
size of the store, and :meth:`TokenStore.sweep` keeps that size to live entries.
Django-free.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

#: SPEC "Limits": authorization code lifetime in seconds.
AUTHORIZATION_CODE_LIFETIME = 600
#: Sweep expired entries after this many insertions, so memory follows live tokens.
SWEEP_EVERY = 256


@dataclass(slots=True)
class AuthorizationCodeRecord:
    """An issued authorization code (SPEC: single use, valid 10 minutes).

    Attributes:
        client_id, redirect_uri: what the exchange must repeat.
        scopes: the approved scopes.
        username: the approving user (the mock's first user).
        nonce: the OpenID ``nonce`` from ``/authorize``, copied into the ID token.
        code_challenge, code_challenge_method: PKCE (``S256`` or ``plain``), or None.
        expires_at: epoch seconds.
        grant_id: ties the tokens issued from this code together (revoked on code reuse).
        used: set on the first successful exchange; a second use is refused.
    """

    client_id: str
    redirect_uri: str
    scopes: list[str]
    username: str | None
    nonce: str | None
    code_challenge: str | None
    code_challenge_method: str | None
    expires_at: float
    grant_id: str
    used: bool = False


@dataclass(slots=True)
class TokenRecord:
    """An issued access or refresh token.

    Attributes:
        kind: ``"access_token"`` or ``"refresh_token"``.
        client_id: the client it was issued to.
        subject: the ``sub`` claim (user's ``claims.sub`` or username; client id for
            client credentials).
        username: the user behind it, or None for client credentials.
        scopes: granted scopes.
        issued_at, expires_at: epoch seconds (whole).
        grant_id: tokens of one grant share it (refresh-token revocation revokes them all).
        revoked: set by ``/revoke`` or by code reuse.
    """

    kind: str
    client_id: str
    subject: str
    username: str | None
    scopes: list[str]
    issued_at: int
    expires_at: int
    grant_id: str
    revoked: bool = False


@dataclass
class TokenStore:
    """Codes and tokens of one identity-provider mock.

    Attributes:
        codes: code -> :class:`AuthorizationCodeRecord`.
        access_tokens: JWT ``jti`` -> :class:`TokenRecord`.
        refresh_tokens: opaque refresh token -> :class:`TokenRecord`.
        clock: epoch seconds; injectable for tests.
    """

    codes: dict[str, AuthorizationCodeRecord] = field(default_factory=dict)
    access_tokens: dict[str, TokenRecord] = field(default_factory=dict)
    refresh_tokens: dict[str, TokenRecord] = field(default_factory=dict)
    clock: Callable[[], float] = time.time
    _insertions: int = 0

    def now(self) -> float:
        """The current time in epoch seconds."""
        return self.clock()

    def add_code(self, code: str, record: AuthorizationCodeRecord) -> None:
        self.codes[code] = record
        self._inserted()

    def add_access_token(self, token_id: str, record: TokenRecord) -> None:
        self.access_tokens[token_id] = record
        self._inserted()

    def add_refresh_token(self, token: str, record: TokenRecord) -> None:
        self.refresh_tokens[token] = record
        self._inserted()

    def is_active(self, record: TokenRecord | None) -> bool:
        """True for a known, unrevoked token whose lifetime has not elapsed."""
        return record is not None and not record.revoked and self.now() < record.expires_at

    def revoke_grant(self, grant_id: str) -> None:
        """Revoke every access and refresh token issued under ``grant_id``."""
        for records in (self.access_tokens.values(), self.refresh_tokens.values()):
            for record in records:
                if record.grant_id == grant_id:
                    record.revoked = True

    def _inserted(self) -> None:
        self._insertions += 1
        if self._insertions % SWEEP_EVERY == 0:
            self.sweep()

    def sweep(self) -> None:
        """Forget expired codes and tokens (an unknown token reads as inactive anyway)."""
        now = self.now()
        self.codes = {code: record for code, record in self.codes.items()
                      if record.expires_at > now}
        self.access_tokens = {key: record for key, record in self.access_tokens.items()
                              if record.expires_at > now}
        self.refresh_tokens = {key: record for key, record in self.refresh_tokens.items()
                               if record.expires_at > now}
