"""Signing key, JWKS, token claims, the token store and introspection/revocation logic
(SPEC "Identity-provider endpoints", "States and transitions", "Limits"; issue 8 item 2).
"""
from __future__ import annotations

import base64
import hashlib
import json

import jwt
import pytest

from mocks.protocols import CompileContext
from oidc.engine import HANDLER
from oidc.keys import RSA_KEY_BITS, SigningKey, process_signing_key
from oidc.store import SWEEP_EVERY, TokenRecord, TokenStore
from mocks.config import Mock
from tests.oidc_presets import (ALICE_CLAIMS, AUDIENCE, Clock, basic, form_request,
                                make_provider, oauth_mock)


def _token(provider, data, client=("web-app", "web-secret")):
    response = provider.token(form_request("/auth/token", data,
                                           headers={"authorization": basic(*client)}))
    assert response.status == 200, response.body
    return json.loads(response.body)


def _decode(provider, token, audience=None):
    return jwt.decode(token, provider.key.private_key.public_key(), algorithms=["RS256"],
                      audience=audience, options={"verify_aud": audience is not None})


def test_signing_key_is_2048_bit_rsa_with_a_thumbprint_kid():
    key = process_signing_key()
    assert key is process_signing_key()  # one key per engine process
    assert key.private_key.key_size == RSA_KEY_BITS == 2048
    jwk = key.public_jwk
    assert set(jwk) == {"kty", "use", "kid", "alg", "n", "e"}
    assert (jwk["kty"], jwk["use"], jwk["alg"]) == ("RSA", "sig", "RS256")
    canonical = json.dumps({"e": jwk["e"], "kty": "RSA", "n": jwk["n"]}, separators=(",", ":"))
    thumbprint = base64.urlsafe_b64encode(hashlib.sha256(canonical.encode()).digest())
    assert jwk["kid"] == thumbprint.rstrip(b"=").decode()


def test_signing_key_verify_rejects_a_foreign_key_and_a_foreign_issuer():
    key, other = process_signing_key(), SigningKey.generate()
    claims = {"iss": "http://a", "jti": "1", "exp": 1}
    assert key.verify(key.sign(claims), "http://a")["jti"] == "1"
    assert key.verify(other.sign(claims), "http://a") is None
    assert key.verify(key.sign(claims), "http://b") is None
    assert key.verify("not.a.jwt", "http://a") is None


def test_jwks_document_lists_the_signing_key():
    provider = make_provider()
    assert provider.jwks == {"keys": [provider.key.public_jwk]}


def test_access_token_claims_for_client_credentials():
    provider = make_provider()
    answer = _token(provider, {"grant_type": "client_credentials"})
    assert answer["token_type"] == "Bearer" and answer["expires_in"] == 3600
    assert answer["scope"] == "openid profile email"  # no scope asked: all defaults (notes §8)
    assert "refresh_token" not in answer and "id_token" not in answer
    header = jwt.get_unverified_header(answer["access_token"])
    assert header["alg"] == "RS256" and header["kid"] == provider.key.kid
    claims = _decode(provider, answer["access_token"], audience=AUDIENCE)
    assert claims["iss"] == "http://localhost:4280/auth"
    assert claims["sub"] == claims["client_id"] == "web-app"
    assert claims["aud"] == AUDIENCE and claims["scope"] == "openid profile email"
    assert claims["exp"] - claims["iat"] == 3600 and claims["jti"]


def test_default_claims_never_override_registered_claims():
    provider = make_provider(defaultClaims={"aud": ["a", "b"], "sub": "spoof", "iss": "x",
                                            "tenant": "t1"})
    claims = _decode(provider, _token(provider, {"grant_type": "client_credentials"})[
        "access_token"], audience="a")
    assert claims["sub"] == "web-app" and claims["iss"] == "http://localhost:4280/auth"
    assert claims["aud"] == ["a", "b"] and claims["tenant"] == "t1"


def test_password_grant_id_token_carries_the_users_claims():
    provider = make_provider()
    answer = _token(provider, {"grant_type": "password", "username": "alice",
                               "password": "wonderland", "scope": "openid email"})
    assert answer["scope"] == "openid email" and answer["refresh_token"]
    access = _decode(provider, answer["access_token"], audience=AUDIENCE)
    assert access["sub"] == "user-alice"
    identity = _decode(provider, answer["id_token"], audience="web-app")
    assert identity["iss"] == "http://localhost:4280/auth" and identity["aud"] == "web-app"
    for name, value in ALICE_CLAIMS.items():
        assert identity[name] == value
    assert "nonce" not in identity


def test_no_id_token_without_openid_scope_and_sub_falls_back_to_username():
    provider = make_provider()
    answer = _token(provider, {"grant_type": "password", "username": "bob",
                               "password": "builder", "scope": "email"})
    assert "id_token" not in answer
    assert _decode(provider, answer["access_token"])["sub"] == "bob"


def test_token_lifetimes_follow_the_config():
    provider = make_provider(tokenExpiry="5m", refreshExpiry="2h")
    answer = _token(provider, {"grant_type": "password", "username": "bob",
                               "password": "builder"})
    assert answer["expires_in"] == 300
    refresh = provider.store.refresh_tokens[answer["refresh_token"]]
    assert refresh.expires_at - refresh.issued_at == 7200


def test_introspection_fields_of_access_and_refresh_tokens():
    provider = make_provider()
    answer = _token(provider, {"grant_type": "password", "username": "alice",
                               "password": "wonderland", "scope": "openid"})
    access = provider.tokens.introspect(answer["access_token"])
    assert access == {"scope": "openid", "client_id": "web-app", "sub": "user-alice",
                      "token_type": "Bearer", "exp": access["iat"] + 3600,
                      "iat": access["iat"], "iss": "http://localhost:4280/auth",
                      "username": "alice", "aud": AUDIENCE}
    refresh = provider.tokens.introspect(answer["refresh_token"])
    assert refresh["token_type"] == "refresh_token" and refresh["sub"] == "user-alice"
    assert provider.tokens.introspect("garbage") is None
    assert provider.tokens.introspect(answer["id_token"]) is None  # ID tokens are no grants


def test_expired_and_revoked_tokens_are_inactive():
    clock = Clock()
    provider = make_provider(clock, tokenExpiry="2s")
    first = _token(provider, {"grant_type": "client_credentials"})["access_token"]
    second = _token(provider, {"grant_type": "client_credentials"})["access_token"]
    assert provider.tokens.introspect(first) is not None
    provider.tokens.revoke(first, "web-app")
    assert provider.tokens.introspect(first) is None
    assert provider.tokens.introspect(second) is not None
    clock.advance(2)
    assert provider.tokens.introspect(second) is None


def test_revoke_ignores_tokens_of_other_clients():
    provider = make_provider()
    token = _token(provider, {"grant_type": "client_credentials"})["access_token"]
    provider.tokens.revoke(token, "service")
    assert provider.tokens.introspect(token) is not None
    provider.tokens.revoke(token, None)  # anonymous revocation (client auth optional)
    assert provider.tokens.introspect(token) is None


def test_revoking_a_refresh_token_revokes_its_grant():
    provider = make_provider()
    answer = _token(provider, {"grant_type": "password", "username": "bob",
                               "password": "builder"})
    refreshed = _token(provider, {"grant_type": "refresh_token",
                                  "refresh_token": answer["refresh_token"]})
    other = _token(provider, {"grant_type": "password", "username": "bob",
                              "password": "builder"})
    provider.tokens.revoke(answer["refresh_token"], "web-app")
    for revoked in (answer["access_token"], refreshed["access_token"],
                    answer["refresh_token"]):
        assert provider.tokens.introspect(revoked) is None
    assert provider.tokens.introspect(other["access_token"]) is not None


def test_store_sweep_forgets_expired_entries():
    clock = Clock(1000.0)
    store = TokenStore(clock=clock)
    for number in range(SWEEP_EVERY - 1):
        store.add_access_token(f"old{number}", TokenRecord(
            "access_token", "c", "s", None, [], 1000, 1001, "g"))
    clock.advance(5)
    store.add_access_token("live", TokenRecord("access_token", "c", "s", None, [], 1005,
                                               2000, "g"))
    assert list(store.access_tokens) == ["live"]


def test_tokens_survive_a_recompile_of_the_mock():
    definition = Mock.model_validate(oauth_mock(mock_id="recompiled"))
    state: dict = {}  # what the engine hands every compile of this mock
    routes = {route.path: route
              for route in HANDLER.compile(definition, CompileContext("mocks[0]", state=state)).routes}
    provider = routes["/auth/token"].action.provider
    token = _token(provider, {"grant_type": "client_credentials"})["access_token"]
    again = {route.path: route
             for route in HANDLER.compile(definition, CompileContext("mocks[0]", state=state)).routes}
    recompiled = again["/auth/introspect"].action.provider
    assert recompiled is not provider and recompiled.store is provider.store
    assert recompiled.tokens.introspect(token) is not None


def test_engine_keeps_tokens_across_reloads_and_frees_them_with_the_mock():
    from mocks.engine.core import Engine
    from mocks.loader import validate_config

    engine = Engine()
    idp = oauth_mock(mock_id="idp")
    other = {"id": "plain", "type": "http",
             "http": {"matcher": {"path": "/x"}, "response": {"body": "x"}}}
    engine.load(validate_config({"version": "1.0", "mocks": [idp, other]}))
    provider = engine.snapshot.routes["/auth/token"].action.provider
    token = _token(provider, {"grant_type": "client_credentials"})["access_token"]
    engine.load(validate_config({"version": "1.0", "mocks": [other, idp]}))  # an edit
    reloaded = engine.snapshot.routes["/auth/introspect"].action.provider
    assert reloaded.tokens.introspect(token) is not None
    engine.load(validate_config({"version": "1.0", "mocks": [other]}))       # idp deleted
    assert "idp" not in engine.protocol_state
    engine.load(validate_config({"version": "1.0", "mocks": [other, idp]}))  # and back
    fresh = engine.snapshot.routes["/auth/introspect"].action.provider
    assert fresh.tokens.introspect(token) is None


@pytest.mark.parametrize("scope", ["openid", "openid profile email"])
def test_refresh_keeps_the_refresh_token(scope):
    provider = make_provider()
    answer = _token(provider, {"grant_type": "password", "username": "alice",
                               "password": "wonderland", "scope": scope})
    refreshed = _token(provider, {"grant_type": "refresh_token",
                                  "refresh_token": answer["refresh_token"]})
    assert refreshed["refresh_token"] == answer["refresh_token"]  # no rotation (SPEC)
    assert refreshed["scope"] == scope and refreshed["id_token"]
