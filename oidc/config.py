"""The ``oauth`` block of a mock: pydantic models, durations, and the one validation entry point.

Keys stay camelCase through aliases (STYLE §13); Python attributes are snake_case. The engine's
``Mock.oauth`` is typed by :class:`OAuthConfig` (this model is the handler's config model), so a bad
block fails config validation; :func:`validate_oauth_config` turns a raw mapping
into a :class:`~mocks.core.errors.ConfigError` naming ``mocks[N].oauth.<field>``.

Source: SPEC "Identity-provider mock (`oauth`)" (fields and defaults) and "Limits" (1h access,
7d refresh); behavior notes §8 (default issuer ``https://mock-oauth.local``; an ``oauth`` mock
needs ≥1 client).

Django-free: imported by the engine.
"""
from __future__ import annotations

import math
import re
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from mocks.core.errors import ConfigError

#: Behavior notes §8: the issuer used when a mock gives none.
DEFAULT_ISSUER = "https://mock-oauth.local"
#: SPEC "Identity-provider mock": ``defaultScopes`` when none are given.
DEFAULT_SCOPES = ("openid", "profile", "email")
#: The grant types a client may list (SPEC "Identity-provider mock", ``clients[].grantTypes``).
GRANT_TYPES = ("authorization_code", "client_credentials", "refresh_token", "password")

GrantType = Literal["authorization_code", "client_credentials", "refresh_token", "password",
                    "implicit"]

_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h|d)")
_UNIT_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


def parse_duration(value: Any) -> int:
    """A lifetime as whole seconds (rounded up, at least 1).

    Accepts ``"5s"``, ``"1h"``, ``"7d"``, compound ``"1h30m"``, ``"500ms"``, and a bare number
    of seconds (``3600`` or ``"3600"``).

    Raises ValueError with the accepted forms when ``value`` is none of those or is not
    positive.
    """
    if isinstance(value, bool):
        raise ValueError(f"expected a duration such as '5s', '1h' or '7d', got {value!r}")
    if isinstance(value, (int, float)):
        seconds = float(value)
    elif isinstance(value, str):
        text = value.strip()
        if re.fullmatch(r"\d+(?:\.\d+)?", text):
            seconds = float(text)
        else:
            position = 0
            seconds = 0.0
            for match in _DURATION_PART.finditer(text):
                if match.start() != position:
                    break
                seconds += float(match.group(1)) * _UNIT_SECONDS[match.group(2)]
                position = match.end()
            if position != len(text) or not text:
                raise ValueError(f"expected a duration such as '5s', '1h', '90m' or '7d', "
                                 f"got {value!r}")
    else:
        raise ValueError(f"expected a duration such as '5s', '1h' or '7d', got {value!r}")
    if seconds <= 0:
        raise ValueError(f"a lifetime must be positive, got {value!r}")
    return max(1, math.ceil(seconds))


def _absolute_url(value: str, what: str) -> str:
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"{what} must be an absolute http(s) URL such as "
                         f"'http://localhost:4280/auth', got {value!r}")
    if parts.query or parts.fragment:
        raise ValueError(f"{what} must not carry a query or fragment, got {value!r}")
    return value


class _Block(BaseModel):
    """Base of the ``oauth`` objects: unknown keys are errors, camelCase aliases accepted."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class OAuthClient(_Block):
    """One registered client (SPEC ``clients[]``).

    Attributes:
        client_id: ``clientId``; unique within the mock.
        client_secret: ``clientSecret``; ``""`` makes a public client (no secret; PKCE).
        redirect_uris: ``redirectUris``; exact absolute URIs ``/authorize`` may redirect to.
        grant_types: ``grantTypes``; the grants ``/token`` allows this client. Omitted = the
            four grants of the SPEC. ``authorization_code`` (or ``implicit``) also allows the
            implicit flow at ``/authorize``.
    """

    client_id: str = Field(alias="clientId", min_length=1)
    client_secret: str = Field("", alias="clientSecret")
    redirect_uris: list[str] = Field(default_factory=list, alias="redirectUris")
    grant_types: list[GrantType] = Field(default_factory=lambda: list(GRANT_TYPES),
                                         alias="grantTypes")
    name: str | None = None

    @field_validator("redirect_uris")
    @classmethod
    def _redirects_absolute(cls, values: list[str]) -> list[str]:
        for value in values:
            parts = urlsplit(value)
            if not parts.scheme or (parts.scheme in ("http", "https") and not parts.netloc):
                raise ValueError(f"redirect URI must be absolute (for example "
                                 f"'http://localhost:3000/callback'), got {value!r}")
            if parts.fragment:
                raise ValueError(f"redirect URI must not carry a fragment, got {value!r}")
        return values

    @property
    def is_public(self) -> bool:
        """A client without a secret (authenticates by ``client_id`` only, uses PKCE)."""
        return self.client_secret == ""


class OAuthUser(_Block):
    """One user (SPEC ``users[]``).

    Attributes:
        username, password: what the password grant checks.
        claims: the user's claims (``sub``, ``email``, ``name``, ...; custom keys allowed);
            carried by ID tokens and ``/userinfo``.
    """

    username: str = Field(min_length=1)
    password: str = ""
    claims: dict[str, Any] = Field(default_factory=dict)

    @property
    def subject(self) -> str:
        """The ``sub`` of this user's tokens: ``claims.sub``, else the username (notes §8)."""
        sub = self.claims.get("sub")
        return str(sub) if sub not in (None, "") else self.username


class OAuthConfig(_Block):
    """The ``oauth`` block of a mock (SPEC "Identity-provider mock (`oauth`)").

    Attributes:
        issuer: the ``iss`` claim and discovery ``issuer``; its path part is where the endpoints
            are mounted on the mock port (notes §8). Stored without a trailing ``/``.
        token_expiry: ``tokenExpiry``, access- and ID-token lifetime in whole seconds (``1h``).
        refresh_expiry: ``refreshExpiry``, refresh-token lifetime in whole seconds (``7d``).
        default_scopes: ``defaultScopes``, the allowed scopes; others are ``invalid_scope``.
        default_claims: ``defaultClaims``, claims added to every access token (``aud``).
        clients: ≥1 :class:`OAuthClient`.
        users: :class:`OAuthUser` list; the first one approves ``/authorize`` requests.
    """

    issuer: str = DEFAULT_ISSUER
    token_expiry: int = Field(3600, alias="tokenExpiry")
    refresh_expiry: int = Field(7 * 86400, alias="refreshExpiry")
    default_scopes: list[str] = Field(default_factory=lambda: list(DEFAULT_SCOPES),
                                      alias="defaultScopes")
    default_claims: dict[str, Any] = Field(default_factory=dict, alias="defaultClaims")
    clients: list[OAuthClient]
    users: list[OAuthUser] = Field(default_factory=list)
    #: Accepted for configs exported by the original tool, which repeats these in the block;
    #: the mock's own ``id`` and ``enabled`` govern.
    id: str | None = None
    enabled: bool | None = None

    @field_validator("issuer")
    @classmethod
    def _issuer_url(cls, value: str) -> str:
        return _absolute_url(value, "issuer").rstrip("/")

    @field_validator("token_expiry", "refresh_expiry", mode="before")
    @classmethod
    def _duration(cls, value: Any) -> int:
        return parse_duration(value)

    @field_validator("default_scopes")
    @classmethod
    def _scopes_are_words(cls, values: list[str]) -> list[str]:
        for value in values:
            if not value or any(character.isspace() for character in value):
                raise ValueError(f"a scope is one non-empty word without spaces, got {value!r}")
        return values

    @field_validator("clients")
    @classmethod
    def _clients_unique(cls, values: list[OAuthClient]) -> list[OAuthClient]:
        if not values:
            raise ValueError("an oauth mock needs at least one client, for example "
                             "{clientId: test-client, clientSecret: test-secret}")
        seen: set[str] = set()
        for value in values:
            if value.client_id in seen:
                raise ValueError(f"duplicate clientId {value.client_id!r}")
            seen.add(value.client_id)
        return values

    @field_validator("users")
    @classmethod
    def _users_unique(cls, values: list[OAuthUser]) -> list[OAuthUser]:
        seen: set[str] = set()
        for value in values:
            if value.username in seen:
                raise ValueError(f"duplicate username {value.username!r}")
            seen.add(value.username)
        return values

    @property
    def issuer_path(self) -> str:
        """The path part of the issuer without a trailing ``/`` (``""`` for the root)."""
        return urlsplit(self.issuer).path.rstrip("/")

    def client(self, client_id: str | None) -> OAuthClient | None:
        """The client with ``client_id``, or None."""
        if not client_id:
            return None
        return next((client for client in self.clients if client.client_id == client_id), None)

    def user(self, username: str | None) -> OAuthUser | None:
        """The user with ``username``, or None."""
        if not username:
            return None
        return next((user for user in self.users if user.username == username), None)

    def user_by_subject(self, subject: str | None) -> OAuthUser | None:
        """The user whose token ``sub`` is ``subject`` (``claims.sub``, else username)."""
        if not subject:
            return None
        return next((user for user in self.users if user.subject == subject), None)


def _location(location: tuple[Any, ...]) -> str:
    out = ""
    for part in location:
        if isinstance(part, int):
            out += f"[{part}]"
        elif str(part).startswith(("function-", "literal[", "union[")):
            continue  # pydantic's internal validator steps mean nothing to a user
        else:
            out += f".{part}"
    return out


def validate_oauth_config(data: Any, key_path: str) -> OAuthConfig:
    """Validate the ``oauth`` dict of the mock at ``key_path`` (``mocks[3]``).

    Raises :class:`ConfigError` whose path names the field, e.g.
    ``mocks[3].oauth.clients[0].redirectUris: redirect URI must be absolute ...``.
    """
    if not isinstance(data, dict):
        raise ConfigError(f"{key_path}.oauth", "must be a mapping with issuer and clients")
    try:
        return OAuthConfig.model_validate(data)
    except ValidationError as error:
        first = error.errors(include_url=False)[0]
        message = str(first.get("msg", "invalid value")).removeprefix("Value error, ")
        if first.get("type") == "extra_forbidden":
            message = "unknown key"
        elif first.get("type") == "missing":
            message = "required field is missing"
        raise ConfigError(f"{key_path}.oauth{_location(tuple(first.get('loc', ())))}",
                          message) from None
