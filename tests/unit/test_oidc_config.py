"""The ``oauth`` block: defaults, durations, validation errors with their key paths, and how the
compiler mounts the endpoints under the issuer's path (SPEC "Identity-provider mock"; notes §8).
"""
from __future__ import annotations

import pytest

from mocks.core.errors import ConfigError
from mocks.loader import validate_config
from mocks.engine.snapshot import compile_snapshot
from oidc.config import (DEFAULT_ISSUER, DEFAULT_SCOPES, GRANT_TYPES, OAuthConfig,
                         parse_duration, validate_oauth_config)
from tests.oidc_presets import oauth_block, oauth_mock


def test_config_defaults_follow_the_spec():
    config = validate_oauth_config({"clients": [{"clientId": "c"}]}, "mocks[0]")
    assert config.issuer == DEFAULT_ISSUER == "https://mock-oauth.local"
    assert config.token_expiry == 3600 and config.refresh_expiry == 7 * 86400
    assert config.default_scopes == list(DEFAULT_SCOPES)
    assert config.default_claims == {} and config.users == []
    client = config.clients[0]
    assert client.client_secret == "" and client.is_public
    assert client.grant_types == list(GRANT_TYPES)


@pytest.mark.parametrize("value, seconds", [
    pytest.param("5s", 5, id="seconds"),
    pytest.param("2m", 120, id="minutes"),
    pytest.param("1h", 3600, id="hours"),
    pytest.param("7d", 604800, id="days"),
    pytest.param("1h30m", 5400, id="compound"),
    pytest.param("500ms", 1, id="milliseconds round up to one second"),
    pytest.param(90, 90, id="bare number of seconds"),
    pytest.param("90", 90, id="numeric text"),
    pytest.param(" 10s ", 10, id="surrounding spaces"),
])
def test_parse_duration_accepts_spec_forms(value, seconds):
    assert parse_duration(value) == seconds


@pytest.mark.parametrize("value", [
    pytest.param("abc", id="word"), pytest.param("5x", id="unknown unit"),
    pytest.param("", id="empty"), pytest.param("-5s", id="negative"),
    pytest.param(0, id="zero"), pytest.param(True, id="boolean"),
    pytest.param("5s 3", id="trailing garbage"), pytest.param(None, id="null"),
])
def test_parse_duration_rejects_other_values(value):
    with pytest.raises(ValueError):
        parse_duration(value)


@pytest.mark.parametrize("block, path, reason", [
    pytest.param({"issuer": "http://x"}, "mocks[2].oauth.clients", "required field is missing",
                 id="no clients"),
    pytest.param({"clients": []}, "mocks[2].oauth.clients", "at least one client",
                 id="empty clients"),
    pytest.param({"clients": [{"clientId": "c"}], "tokenExpiry": "soon"},
                 "mocks[2].oauth.tokenExpiry", "duration", id="bad duration"),
    pytest.param({"clients": [{"clientId": "c"}], "issuer": "localhost/auth"},
                 "mocks[2].oauth.issuer", "absolute http(s) URL", id="relative issuer"),
    pytest.param({"clients": [{"clientId": "c", "redirectUris": ["/callback"]}]},
                 "mocks[2].oauth.clients[0].redirectUris", "must be absolute",
                 id="relative redirect"),
    pytest.param({"clients": [{"clientId": "c", "clientSecrt": "s"}]},
                 "mocks[2].oauth.clients[0].clientSecrt", "unknown key", id="misspelled key"),
    pytest.param({"clients": [{"clientId": "c", "grantTypes": ["magic"]}]},
                 "mocks[2].oauth.clients[0].grantTypes[0]", "", id="unknown grant"),
    pytest.param({"clients": [{"clientId": "c"}, {"clientId": "c"}]},
                 "mocks[2].oauth.clients", "duplicate clientId", id="duplicate client"),
    pytest.param({"clients": [{"clientId": "c"}],
                  "users": [{"username": "u"}, {"username": "u"}]},
                 "mocks[2].oauth.users", "duplicate username", id="duplicate user"),
    pytest.param({"clients": [{"clientId": "c"}], "defaultScopes": ["open id"]},
                 "mocks[2].oauth.defaultScopes", "without spaces", id="scope with a space"),
    pytest.param("not a mapping", "mocks[2].oauth", "mapping", id="not a mapping"),
])
def test_validate_oauth_config_names_the_offending_key(block, path, reason):
    with pytest.raises(ConfigError) as caught:
        validate_oauth_config(block, "mocks[2]")
    assert caught.value.path.startswith(path), caught.value
    assert reason in caught.value.reason


def test_issuer_path_and_lookups():
    config = OAuthConfig.model_validate(oauth_block("http://localhost:4280/auth/"))
    assert config.issuer == "http://localhost:4280/auth"
    assert config.issuer_path == "/auth"
    assert OAuthConfig.model_validate(oauth_block("http://localhost:4280")).issuer_path == ""
    assert config.client("spa").is_public and config.client("nope") is None
    assert config.user("alice").subject == "user-alice"
    assert config.user("bob").subject == "bob"  # no claims.sub: the username (notes §8)
    assert config.user_by_subject("bob").username == "bob"


def _routes(*mocks):
    return compile_snapshot(validate_config({"version": "1.0", "mocks": list(mocks)})).routes


def test_compiler_mounts_endpoints_under_the_issuer_path():
    routes = _routes(oauth_mock(issuer="http://localhost:4280/auth"))
    assert sorted(routes) == ["/auth/.well-known/jwks.json",
                              "/auth/.well-known/openid-configuration", "/auth/authorize",
                              "/auth/introspect", "/auth/revoke", "/auth/token",
                              "/auth/userinfo"]
    route = routes["/auth/token"]
    assert route.mock_id == "idp"
    # OPTIONS stays with the engine (CORS preflight); other methods reach the endpoint's 405.
    assert "OPTIONS" not in route.methods and {"GET", "POST", "PUT"} <= route.methods


def test_compiler_mounts_a_pathless_issuer_at_the_root():
    assert "/token" in _routes(oauth_mock(issuer="http://localhost:4280"))


def test_compiler_skips_routes_of_a_disabled_mock():
    assert _routes({**oauth_mock(), "enabled": False}) == {}


def test_compile_error_names_the_mock_key_path():
    bad = oauth_mock(tokenExpiry="forever")
    with pytest.raises(ConfigError) as caught:
        compile_snapshot(validate_config({"version": "1.0", "mocks": [
            {"id": "h", "http": {"matcher": {"path": "/x"}}}, bad]}))
    assert caught.value.path == "mocks[1].oauth.tokenExpiry"
