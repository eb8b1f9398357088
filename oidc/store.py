"""Runtime state of the identity-provider mocks: codes, access and refresh tokens, revocations.

The state is keyed by mock id and lives in this module, not in the compiled routes, because the
admin side recompiles the snapshot on every mock edit and issued tokens must survive that. By
default it is memory only: a restart forgets it (and the signing key), so old tokens stop
verifying.

With a state store (``--state-store``, issue #32 item 2) :func:`install_shared_tokens` makes
every identity-provider mock use a :class:`RedisTokenStore` instead: codes, tokens and
revocations live in Redis, with TTLs equal to their lifetimes, so a token issued by one engine
is known to every engine of the namespace (and the signing key is shared too:
:func:`oidc.keys.process_signing_key`). Keys (``N`` = the namespace, ``M`` = the mock id;
codes and refresh tokens are secrets, so their keys hold the SHA-256 of the value)::

    N:oidc:signing-key          the PKCS#8 PEM of the RS256 key (no TTL; first engine wins)
    N:oidc:M:code:<sha256>      an authorization code record (JSON), TTL its lifetime
    N:oidc:M:at:<jti>           an access token record, TTL until it expires
    N:oidc:M:rt:<sha256>        a refresh token record, TTL until it expires
    N:oidc:M:grant:<grant id>   "1" once the grant is revoked, TTL the longest lifetime

oauthlib calls the store synchronously, so the Redis store makes short blocking round trips
(one to four per endpoint call, about a tenth of a millisecond each on a nearby Redis) on a
sync client with bounded timeouts. The records one endpoint call reads are kept for that call
(:meth:`RedisTokenStore.begin` / :meth:`RedisTokenStore.commit`), so a record changed in place
(a code marked used, a token revoked) is written back once when the call ends. While Redis
cannot be reached the calls raise :class:`TokenStoreUnavailable` (the provider answers 503
``temporarily_unavailable``).

Source: SPEC "States and transitions" (authorization code: issued -> consumed, once, within 10
minutes; token: active -> revoked | expired), "Limits" (code lifetime 10 minutes).

Concurrency: single owner, the engine event loop; no locks. Every loop here is bounded by the
size of the store, and :meth:`TokenStore.sweep` keeps that size to live entries.
Django-free.
"""
from __future__ import annotations

import hashlib
import logging
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Callable

log = logging.getLogger("mockd.oidc.store")

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

    #: True for a store whose records live elsewhere (:class:`RedisTokenStore`).
    remote = False

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


# ---------------------------------------------------------------------------- shared (Redis)

#: Seconds to connect to Redis and to wait for one answer (the engine loop waits meanwhile).
REDIS_TIMEOUT_SECONDS = 1.0


#: A token record and whether its grant is revoked. KEYS: the record; ARGV: the prefix of
#: the grant keys. Returns ``{record JSON or false, 0 or 1}``.
READ_TOKEN_SCRIPT = """
local value = redis.call('GET', KEYS[1])
if not value then return {false, 0} end
local grant = cjson.decode(value).grant_id
return {value, redis.call('EXISTS', ARGV[1] .. grant)}
"""


class TokenStoreUnavailable(Exception):
    """Redis cannot be reached; the message names the URL (password redacted)."""


class SharedTokenState:
    """The Redis connection and namespace of every identity-provider mock of this engine
    process (set by :func:`install_shared_tokens`).

    Attributes:
        shown_url: the Redis URL with its password redacted (for messages).
        namespace: the key prefix (``--state-namespace``).
        stores: ``{mock id: RedisTokenStore}`` (the same object across recompiles).
    """

    def __init__(self, url: str, namespace: str, shown_url: str, client: Any = None):
        import redis

        self.shown_url = shown_url
        self.namespace = namespace
        self.client = client if client is not None else redis.Redis.from_url(
            url, socket_connect_timeout=REDIS_TIMEOUT_SECONDS,
            socket_timeout=REDIS_TIMEOUT_SECONDS)
        self.stores: dict[str, RedisTokenStore] = {}
        self._read_token: Any = None

    def call(self, function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """``function(*args, **kwargs)`` (a client or pipeline method); raises
        :class:`TokenStoreUnavailable` when Redis cannot be reached."""
        from redis.exceptions import RedisError

        try:
            return function(*args, **kwargs)
        except (RedisError, OSError) as error:
            raise TokenStoreUnavailable(
                f"the state store (Redis at {self.shown_url}) is not reachable: "
                f"{type(error).__name__}") from None

    def read_token(self, name: str, grant_prefix: str) -> tuple[bytes | None, bool]:
        """``(record JSON or None, whether its grant is revoked)`` in one round trip."""
        if self._read_token is None:
            self._read_token = self.client.register_script(READ_TOKEN_SCRIPT)
        value, revoked = self._read_token(keys=[name], args=[grant_prefix])
        return value or None, bool(revoked)

    def store_for(self, mock_id: str) -> "RedisTokenStore":
        """The token store of mock ``mock_id`` (made on first use)."""
        store = self.stores.get(mock_id)
        if store is None:
            store = self.stores[mock_id] = RedisTokenStore(self, mock_id)
        return store

    @property
    def key_name(self) -> str:
        """The Redis key of the shared signing key."""
        return f"{self.namespace}:oidc:signing-key"

    def signing_key_pem(self, candidate: Callable[[], bytes]) -> bytes:
        """The namespace's signing key (PEM); when there is none yet, ``candidate()`` is
        stored if still absent (``SET NX``: the first engine's key wins) and the winner
        returned. Raises :class:`TokenStoreUnavailable`."""
        stored = self.call(self.client.get, self.key_name)
        if stored is None:
            self.call(self.client.set, self.key_name, candidate(), nx=True)
            stored = self.call(self.client.get, self.key_name)
        return stored


_shared: SharedTokenState | None = None


def install_shared_tokens(url: str, namespace: str, shown_url: str) -> None:
    """Keep the identity-provider state of this engine process in Redis at ``url``
    (``shown_url``: the same, password redacted); called once at start with the state
    store."""
    global _shared
    _shared = SharedTokenState(url, namespace, shown_url)


def shared_tokens() -> SharedTokenState | None:
    """The shared token state of this process, or None (tokens in memory)."""
    return _shared


def uninstall_shared_tokens() -> None:
    """Back to tokens in memory (tests)."""
    global _shared
    _shared = None


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


class _Records:
    """A read-only mapping view of one kind of record in Redis: ``get(key)`` and ``in``."""

    __slots__ = ("store", "kind")

    def __init__(self, store: "RedisTokenStore", kind: str):
        self.store = store
        self.kind = kind

    def get(self, key: str, default: Any = None) -> Any:
        record = self.store.load(self.kind, key)
        return default if record is None else record

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self.store.load(self.kind, key) is not None


class RedisTokenStore(TokenStore):
    """The codes and tokens of one identity-provider mock in Redis, with the interface of
    :class:`TokenStore` (``codes``, ``access_tokens`` and ``refresh_tokens`` are read-only
    views; ``add_*`` write at once with a TTL; ``revoke_grant`` marks the grant). Records
    read during one endpoint call are kept until :meth:`commit`, which writes back the ones
    changed in place (``used``, ``revoked``) with their TTL kept. Raises
    :class:`TokenStoreUnavailable` when Redis cannot be reached.

    Attributes:
        max_lifetime: seconds a grant's revocation is kept (the longest token lifetime of
            the mock; set by the provider).
    """

    remote = True
    #: Record class of each kind.
    KINDS = {"code": AuthorizationCodeRecord, "at": TokenRecord, "rt": TokenRecord}

    def __init__(self, shared: SharedTokenState, mock_id: str):
        super().__init__()
        self.shared = shared
        self.prefix = f"{shared.namespace}:oidc:{mock_id}"
        self.max_lifetime = 7 * 24 * 3600
        self.codes = _Records(self, "code")  # type: ignore[assignment]
        self.access_tokens = _Records(self, "at")  # type: ignore[assignment]
        self.refresh_tokens = _Records(self, "rt")  # type: ignore[assignment]
        self._seen: dict[str, tuple[Any, dict[str, Any]]] = {}

    def _key(self, kind: str, key: str) -> str:
        return f"{self.prefix}:{kind}:{key if kind == 'at' else _digest(key)}"

    # ------------------------------------------------------------------ one endpoint call
    def begin(self) -> None:
        """Start an endpoint call: forget the records of the last one."""
        self._seen.clear()

    def commit(self) -> None:
        """Write back the records of this call that changed in place (TTL kept)."""
        changed = [(name, record) for name, (record, before) in self._seen.items()
                   if asdict(record) != before]
        self._seen.clear()
        if not changed:
            return
        import orjson

        pipe = self.shared.client.pipeline(transaction=False)
        for name, record in changed:
            # XX: a record that expired meanwhile stays gone.
            pipe.set(name, orjson.dumps(asdict(record)), keepttl=True, xx=True)
        self.shared.call(pipe.execute)

    # ------------------------------------------------------------------ reads and writes
    def load(self, kind: str, key: str) -> Any:
        """The record of ``kind`` (``code``, ``at``, ``rt``) for ``key``, or None; a token
        of a revoked grant reads as revoked."""
        import orjson

        name = self._key(kind, key)
        seen = self._seen.get(name)
        if seen is not None:
            return seen[0]
        revoked = False
        if kind == "code":
            value = self.shared.call(self.shared.client.get, name)
        else:
            value, revoked = self.shared.call(self.shared.read_token, name,
                                              f"{self.prefix}:grant:")
        if value is None:
            return None
        data = orjson.loads(value)
        record = self.KINDS[kind](**data)
        if revoked and kind != "code":
            record.revoked = True
        self._seen[name] = (record, asdict(record))
        return record

    def _put(self, kind: str, key: str, record: Any) -> None:
        import orjson

        ttl = max(1, int(record.expires_at - self.now() + 0.999))
        name = self._key(kind, key)
        self.shared.call(self.shared.client.set, name, orjson.dumps(asdict(record)), ex=ttl)
        self._seen[name] = (record, asdict(record))

    def add_code(self, code: str, record: AuthorizationCodeRecord) -> None:
        self._put("code", code, record)

    def add_access_token(self, token_id: str, record: TokenRecord) -> None:
        self._put("at", token_id, record)

    def add_refresh_token(self, token: str, record: TokenRecord) -> None:
        self._put("rt", token, record)

    def revoke_grant(self, grant_id: str) -> None:
        """Revoke every token of ``grant_id``, on every engine of the namespace."""
        self.shared.call(self.shared.client.set, f"{self.prefix}:grant:{grant_id}", b"1",
                         ex=max(1, int(self.max_lifetime)))
        for record, _ in self._seen.values():
            if getattr(record, "grant_id", None) == grant_id and hasattr(record, "revoked"):
                record.revoked = True

    def sweep(self) -> None:
        """Nothing to sweep: Redis expires the records."""
