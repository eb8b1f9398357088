"""Identity-provider state on the Redis state store (issue #32 item 2): records with TTLs equal
to their lifetimes, secrets hashed in key names, grant revocation, the signing key shared by
set-if-absent, and a Redis that cannot be reached (503 ``temporarily_unavailable``, the
engine's own key, nothing secret logged). Across real engines:
``tests/integration/test_state_store_protocols.py``.
"""
from __future__ import annotations

import json
import logging

import pytest

import oidc.keys
from oidc.config import validate_oauth_config
from oidc.keys import SigningKey, process_signing_key
from oidc.provider import ENDPOINTS, IdentityProvider
from oidc.store import (AUTHORIZATION_CODE_LIFETIME, RedisTokenStore, TokenStore,
                        install_shared_tokens, shared_tokens, uninstall_shared_tokens)
from tests.oidc_presets import CALLBACK, basic, form_request, oauth_block
from tests.redis_server import redis_server  # noqa: F401 - module fixture

ENDPOINT = {endpoint.handler: endpoint for endpoint in ENDPOINTS}
DOWN = "redis://:hunter2@127.0.0.1:1/0"  # nothing listens on port 1


@pytest.fixture
def shared(redis_server):  # noqa: F811
    """The shared token state on an emptied Redis; the process key is restored after."""
    redis_server.flush()
    saved = oidc.keys._process_key, oidc.keys._process_pem, oidc.keys._warned
    oidc.keys._warned = False
    install_shared_tokens(redis_server.url, "unit", redis_server.url)
    yield shared_tokens()
    uninstall_shared_tokens()
    oidc.keys._process_key, oidc.keys._process_pem, oidc.keys._warned = saved


def provider(**overrides) -> IdentityProvider:
    config = validate_oauth_config(oauth_block(**overrides), "mocks[0]")
    return IdentityProvider("idp", config, TokenStore(), process_signing_key())


def token_call(idp: IdentityProvider, data: dict) -> tuple[int, dict]:
    response = idp.handle(ENDPOINT["token"], form_request(
        "/auth/token", data, headers={"authorization": basic("web-app", "web-secret")}))
    return response.status, json.loads(response.body)


def introspect(idp: IdentityProvider, token: str) -> dict:
    response = idp.handle(ENDPOINT["introspect"], form_request(
        "/auth/introspect", {"token": token},
        headers={"authorization": basic("web-app", "web-secret")}))
    return json.loads(response.body)


def test_records_live_in_redis_with_their_lifetimes_and_hashed_secrets(shared):
    idp = provider(tokenExpiry="5m", refreshExpiry="1h")
    assert isinstance(idp.store, RedisTokenStore)
    status, token = token_call(idp, {"grant_type": "password", "username": "alice",
                                     "password": "wonderland", "scope": "openid"})
    assert status == 200
    client = shared.client
    names = {name.decode(): client.ttl(name) for name in client.keys("unit:oidc:idp:*")}
    assert len(names) == 2
    ttls = {name.split(":")[3]: ttl for name, ttl in names.items()}
    assert 295 <= ttls["at"] <= 300 and 3595 <= ttls["rt"] <= 3600
    assert not any(token["refresh_token"] in name for name in names)
    # A second provider object (another engine, or a recompile) reads the same records.
    other = provider(tokenExpiry="5m", refreshExpiry="1h")
    assert introspect(other, token["access_token"])["active"] is True
    assert introspect(other, token["refresh_token"])["active"] is True


def test_a_code_is_stored_for_ten_minutes_and_marked_used_once_exchanged(shared):
    idp = provider()
    redirect = idp.handle(ENDPOINT["authorize"], form_request(
        "/auth/authorize", method="GET", query={
            "client_id": "web-app", "redirect_uri": CALLBACK, "response_type": "code"}))
    code = redirect.headers[[name for name, _ in redirect.headers].index("location")][1]
    code = code.split("code=")[1].split("&")[0]
    (name,) = shared.client.keys("unit:oidc:idp:code:*")
    assert AUTHORIZATION_CODE_LIFETIME - 5 <= shared.client.ttl(name) <= 600
    exchange = {"grant_type": "authorization_code", "code": code, "redirect_uri": CALLBACK}
    assert token_call(provider(), exchange)[0] == 200
    assert json.loads(shared.client.get(name))["used"] is True
    assert shared.client.ttl(name) > AUTHORIZATION_CODE_LIFETIME - 5  # TTL kept
    status, error = token_call(idp, exchange)
    assert status == 400 and "already used" in error["error_description"]


def test_the_first_engines_key_wins_and_is_used_by_the_next(shared):
    first = SigningKey.generate()
    oidc.keys._process_key, oidc.keys._process_pem = first, None
    assert process_signing_key().kid == first.kid
    assert shared.client.get(shared.key_name) == first.pem()
    oidc.keys._process_key = None  # another engine process: no key of its own yet
    assert process_signing_key().kid == first.kid


def test_redis_down_answers_503_and_signs_with_the_engines_own_key(caplog):
    saved = oidc.keys._process_key, oidc.keys._process_pem, oidc.keys._warned
    install_shared_tokens(DOWN, "unit", "redis://:***@127.0.0.1:1/0")
    try:
        with caplog.at_level(logging.WARNING):
            key = process_signing_key()
            assert process_signing_key() is key
            idp = provider()
        status, body = token_call(idp, {"grant_type": "client_credentials"})
        assert status == 503 and body["error"] == "temporarily_unavailable"
        assert "redis://:***@127.0.0.1:1/0" in body["error_description"]
        assert len([record for record in caplog.records
                    if "own key" in record.getMessage()]) == 1
        assert "hunter2" not in caplog.text and "PRIVATE KEY" not in caplog.text
    finally:
        uninstall_shared_tokens()
        oidc.keys._process_key, oidc.keys._process_pem, oidc.keys._warned = saved


def test_a_stored_value_that_is_no_key_leaves_the_engine_its_own(shared, caplog):
    shared.client.set(shared.key_name, b"not a key")
    with caplog.at_level(logging.WARNING):
        key = process_signing_key()
    assert isinstance(key, SigningKey) and "not an RSA private key" in caplog.text
