"""Grant logic and error answers of the identity provider, in process, grouped by grant
(SPEC grants table, "Errors"; behavior notes §8 statuses). Real clients over a real server are
in ``tests/integration/test_oidc.py``.
"""
from __future__ import annotations

import json
from urllib.parse import parse_qs, urlsplit

import jwt
import pytest

from oidc.provider import ENDPOINTS
from tests.oidc_presets import CALLBACK, Clock, basic, form_request, make_provider, pkce_pair

WEB = basic("web-app", "web-secret")
ENDPOINT = {endpoint.suffix: endpoint for endpoint in ENDPOINTS}


def call(provider, suffix, data=None, *, method="POST", query=None, headers=None):
    """``(status, headers dict, parsed body)`` of one endpoint call."""
    response = provider.handle(ENDPOINT[suffix], form_request(
        f"/auth{suffix}", data, method=method, query=query, headers=headers))
    body = json.loads(response.body) if response.body else None
    return response.status, dict(response.headers), body


def assert_error(result, status, code, description=None):
    got_status, headers, body = result
    assert (got_status, body["error"]) == (status, code), body
    assert set(body) == {"error", "error_description"} and body["error_description"]
    if description is not None:
        assert description in body["error_description"]
    assert headers["cache-control"] == "no-store" and headers["pragma"] == "no-cache"


@pytest.fixture
def provider():
    return make_provider()


# ----------------------------------------------------------- client authentication
@pytest.mark.parametrize("data, headers, description", [
    pytest.param({}, {"authorization": basic("web-app", "nope")}, "wrong client_secret",
                 id="wrong secret by Basic"),
    pytest.param({"client_id": "web-app", "client_secret": "nope"}, {}, "wrong client_secret",
                 id="wrong secret by form"),
    pytest.param({"client_id": "ghost", "client_secret": "x"}, {}, "unknown client",
                 id="unknown client"),
    pytest.param({"client_id": "web-app"}, {}, "client_secret is required", id="no secret"),
    pytest.param({}, {}, "client authentication is required", id="no client at all"),
    pytest.param({"client_id": "spa"}, {}, "public", id="public client"),
    pytest.param({}, {"authorization": "Basic !!!"}, "malformed", id="malformed Basic"),
])
def test_client_credentials_bad_client_is_401_invalid_client(provider, data, headers,
                                                            description):
    result = call(provider, "/token", {"grant_type": "client_credentials", **data},
                  headers=headers)
    assert_error(result, 401, "invalid_client", description)


def test_client_secret_post_and_basic_with_escaped_characters():
    provider = make_provider(clients=[{"clientId": "a b", "clientSecret": "p:w&d"}])
    status, _, _ = call(provider, "/token", {"grant_type": "client_credentials",
                                             "client_id": "a b", "client_secret": "p:w&d"})
    assert status == 200
    # RFC 6749 §2.3.1: Basic halves are form-urlencoded first.
    status, _, _ = call(provider, "/token", {"grant_type": "client_credentials"},
                        headers={"authorization": basic("a+b", "p%3Aw%26d")})
    assert status == 200


# ----------------------------------------------------------- token endpoint basics
def test_unknown_grant_type_is_400_unsupported_grant_type(provider):
    assert_error(call(provider, "/token", {"grant_type": "magic"}, headers={
        "authorization": WEB}), 400, "unsupported_grant_type", "'magic' is not supported")


def test_missing_grant_type_is_400_invalid_request(provider):
    assert_error(call(provider, "/token", {}, headers={"authorization": WEB}), 400,
                 "invalid_request", "grant_type is required")


def test_grant_not_listed_by_the_client_is_400_unauthorized_client(provider):
    result = call(provider, "/token", {"grant_type": "password", "username": "bob",
                                       "password": "builder"},
                  headers={"authorization": basic("service", "service-secret")})
    assert_error(result, 400, "unauthorized_client", "grantTypes")


def test_scope_outside_default_scopes_is_400_invalid_scope(provider):
    result = call(provider, "/token", {"grant_type": "client_credentials",
                                       "scope": "openid admin"}, headers={"authorization": WEB})
    assert_error(result, 400, "invalid_scope", 'scope "admin" is not supported')


def test_json_body_is_400_invalid_request(provider):
    result = call(provider, "/token", {"grant_type": "client_credentials"},
                  headers={"authorization": WEB, "content-type": "application/json"})
    assert_error(result, 400, "invalid_request", "application/x-www-form-urlencoded")


@pytest.mark.parametrize("suffix, method", [
    ("/token", "GET"), ("/introspect", "GET"), ("/revoke", "PUT"), ("/authorize", "DELETE"),
    ("/userinfo", "PATCH"), ("/.well-known/jwks.json", "POST"),
    ("/.well-known/openid-configuration", "DELETE")])
def test_wrong_method_is_405_invalid_request(provider, suffix, method):
    result = call(provider, suffix, method=method)
    assert_error(result, 405, "invalid_request", method)
    assert result[1]["allow"]


def test_client_credentials_for_a_service_client_has_no_refresh_token(provider):
    status, _, body = call(provider, "/token", {"grant_type": "client_credentials",
                                                "scope": "profile"},
                           headers={"authorization": basic("service", "service-secret")})
    assert status == 200 and body["scope"] == "profile" and "refresh_token" not in body


# ----------------------------------------------------------- password grant
def test_wrong_user_password_is_401_invalid_grant(provider):
    result = call(provider, "/token", {"grant_type": "password", "username": "alice",
                                       "password": "nope"}, headers={"authorization": WEB})
    assert_error(result, 401, "invalid_grant", "wrong username or password")


def test_unknown_user_is_401_invalid_grant(provider):
    result = call(provider, "/token", {"grant_type": "password", "username": "mallory",
                                       "password": "x"}, headers={"authorization": WEB})
    assert_error(result, 401, "invalid_grant")


def test_password_grant_without_username_is_400_invalid_request(provider):
    result = call(provider, "/token", {"grant_type": "password", "password": "x"},
                  headers={"authorization": WEB})
    assert_error(result, 400, "invalid_request", "username")


# ----------------------------------------------------------- authorization code grant
def authorize(provider, **params):
    query = {"client_id": "web-app", "redirect_uri": CALLBACK, "response_type": "code",
             "scope": "openid profile", "state": "st-1", **params}
    query = {name: value for name, value in query.items() if value is not None}
    return call(provider, "/authorize", method="GET", query=query)


def redirect_params(result):
    status, headers, _ = result
    assert status == 302, result
    location = urlsplit(headers["location"])
    assert f"{location.scheme}://{location.netloc}{location.path}" == CALLBACK
    return {name: values[0] for name, values in parse_qs(location.query).items()}, \
        {name: values[0] for name, values in parse_qs(location.fragment).items()}


def exchange(provider, code, *, client=WEB, **extra):
    data = {"grant_type": "authorization_code", "code": code, "redirect_uri": CALLBACK, **extra}
    data = {name: value for name, value in data.items() if value is not None}
    return call(provider, "/token", data, headers={"authorization": client} if client else {})


def test_authorize_redirects_with_code_and_state_and_auto_approves_the_first_user(provider):
    query, _ = redirect_params(authorize(provider, nonce="n-42"))
    assert query["state"] == "st-1" and query["code"]
    status, _, body = exchange(provider, query["code"])
    assert status == 200 and body["scope"] == "openid profile"
    record = provider.tokens.active_access_token(body["access_token"])
    assert record.username == "alice" and record.subject == "user-alice"
    identity = jwt.decode(body["id_token"], provider.key.private_key.public_key(),
                          algorithms=["RS256"], audience="web-app")
    assert identity["nonce"] == "n-42" and identity["sub"] == "user-alice"
    # An ID token is not an access token: it has no record and never verifies as one.
    assert provider.tokens.active_access_token(body["id_token"]) is None


@pytest.mark.parametrize("method", ["S256", "plain"])
def test_pkce_exchange_for_a_public_client(provider, method):
    verifier, challenge = pkce_pair(method)
    query, _ = redirect_params(authorize(provider, client_id="spa", code_challenge=challenge,
                                         code_challenge_method=method))
    status, _, body = exchange(provider, query["code"], client=None, client_id="spa",
                               code_verifier=verifier)
    assert status == 200 and body["refresh_token"] and body["id_token"]


def test_pkce_challenge_without_method_means_plain(provider):
    verifier, _ = pkce_pair("plain")
    query, _ = redirect_params(authorize(provider, code_challenge=verifier))
    assert exchange(provider, query["code"], code_verifier=verifier)[0] == 200


@pytest.mark.parametrize("verifier, description", [
    pytest.param(None, "code_verifier is required", id="missing verifier"),
    pytest.param("wrong-verifier-wrong-verifier-wrong-verifier", "does not match",
                 id="wrong verifier"),
])
def test_pkce_failures_are_400_invalid_grant(provider, verifier, description):
    _, challenge = pkce_pair()
    query, _ = redirect_params(authorize(provider, code_challenge=challenge,
                                         code_challenge_method="S256"))
    assert_error(exchange(provider, query["code"], code_verifier=verifier), 400,
                 "invalid_grant", description)


def test_code_reuse_is_refused_and_revokes_its_tokens(provider):
    query, _ = redirect_params(authorize(provider))
    status, _, first = exchange(provider, query["code"])
    assert status == 200
    assert_error(exchange(provider, query["code"]), 400, "invalid_grant", "already used")
    assert provider.tokens.introspect(first["access_token"]) is None
    assert provider.tokens.introspect(first["refresh_token"]) is None


def test_code_expires_after_ten_minutes():
    clock = Clock()
    provider = make_provider(clock)
    query, _ = redirect_params(authorize(provider))
    clock.advance(600)
    assert_error(exchange(provider, query["code"]), 400, "invalid_grant", "expired")


@pytest.mark.parametrize("extra, description", [
    pytest.param({"redirect_uri": "http://localhost:3000/other"}, "redirect_uri",
                 id="redirect mismatch"),
    pytest.param({"code": "not-a-code"}, "invalid or expired", id="unknown code"),
])
def test_bad_code_exchange_is_400_invalid_grant(provider, extra, description):
    query, _ = redirect_params(authorize(provider))
    assert_error(exchange(provider, **{"code": query["code"], **extra}), 400, "invalid_grant",
                 description)


def test_code_of_another_client_is_400_invalid_grant(provider):
    query, _ = redirect_params(authorize(provider, client_id="spa"))
    assert_error(exchange(provider, query["code"]), 400, "invalid_grant", "another client")


def test_confidential_client_must_still_send_its_secret(provider):
    query, _ = redirect_params(authorize(provider))
    assert_error(exchange(provider, query["code"], client=None, client_id="web-app"), 401,
                 "invalid_client", "client_secret is required")


@pytest.mark.parametrize("missing", ["client_id", "redirect_uri", "response_type"])
def test_authorize_missing_parameter_is_400_json(provider, missing):
    assert_error(authorize(provider, **{missing: None}), 400, "invalid_request",
                 f"{missing} is required")


def test_authorize_unknown_client_is_401_json(provider):
    assert_error(authorize(provider, client_id="ghost"), 401, "invalid_client")


def test_authorize_unregistered_redirect_is_400_json(provider):
    assert_error(authorize(provider, redirect_uri="http://evil.example/cb"), 400,
                 "invalid_request", "not registered")


@pytest.mark.parametrize("params, code", [
    pytest.param({"scope": "openid admin"}, "invalid_scope", id="bad scope"),
    pytest.param({"response_type": "id_token"}, "unsupported_response_type",
                 id="unsupported response type"),
    pytest.param({"code_challenge": "abc", "code_challenge_method": "S512"}, "invalid_request",
                 id="unknown PKCE method"),
])
def test_authorize_later_problems_redirect_with_error_and_state(provider, params, code):
    query, _ = redirect_params(authorize(provider, **params))
    assert query["error"] == code and query["error_description"] and query["state"] == "st-1"


def test_authorize_for_a_client_without_the_code_grant_redirects_unauthorized_client():
    provider = make_provider(clients=[{"clientId": "machine", "clientSecret": "s",
                                       "redirectUris": [CALLBACK],
                                       "grantTypes": ["client_credentials"]}])
    query, _ = redirect_params(authorize(provider, client_id="machine"))
    assert query["error"] == "unauthorized_client" and query["state"] == "st-1"


def test_authorize_without_users_is_access_denied():
    provider = make_provider(users=[])
    query, _ = redirect_params(authorize(provider))
    assert query["error"] == "access_denied" and "oauth.users" in query["error_description"]


def test_authorize_by_post_form(provider):
    result = call(provider, "/authorize", {"client_id": "web-app", "redirect_uri": CALLBACK,
                                           "response_type": "code", "state": "p"})
    query, _ = redirect_params(result)
    assert query["state"] == "p" and query["code"]


# ----------------------------------------------------------- implicit flow
def test_implicit_flow_answers_in_the_fragment(provider):
    query, fragment = redirect_params(authorize(provider, response_type="token",
                                                scope="openid email"))
    assert query == {}
    assert set(fragment) == {"access_token", "token_type", "expires_in", "state", "scope"}
    assert fragment["token_type"] == "Bearer" and fragment["state"] == "st-1"
    assert fragment["expires_in"] == "3600" and fragment["scope"] == "openid email"
    assert provider.tokens.active_access_token(fragment["access_token"]).subject == "user-alice"


def test_implicit_flow_errors_go_in_the_fragment(provider):
    _, fragment = redirect_params(authorize(provider, response_type="token", scope="nope"))
    assert fragment["error"] == "invalid_scope" and fragment["state"] == "st-1"


# ----------------------------------------------------------- refresh grant
def _login(provider, client=WEB, scope="openid profile email"):
    status, _, body = call(provider, "/token", {"grant_type": "password", "username": "alice",
                                                "password": "wonderland", "scope": scope},
                           headers={"authorization": client})
    assert status == 200
    return body


def test_refresh_with_narrower_scope(provider):
    body = _login(provider)
    status, _, refreshed = call(provider, "/token", {
        "grant_type": "refresh_token", "refresh_token": body["refresh_token"],
        "scope": "email"}, headers={"authorization": WEB})
    assert status == 200 and refreshed["scope"] == "email"
    assert refreshed["refresh_token"] == body["refresh_token"] and "id_token" not in refreshed


def test_refresh_with_wider_scope_is_400_invalid_scope():
    provider = make_provider()
    body = _login(provider, scope="email")
    result = call(provider, "/token", {"grant_type": "refresh_token",
                                       "refresh_token": body["refresh_token"],
                                       "scope": "email profile"},
                  headers={"authorization": WEB})
    assert_error(result, 400, "invalid_scope", '"profile" was not granted')


@pytest.mark.parametrize("case", ["unknown", "revoked", "expired", "other client"])
def test_bad_refresh_token_is_400_invalid_grant(case):
    clock = Clock()
    provider = make_provider(clock, refreshExpiry="1h")
    token = _login(provider)["refresh_token"]
    client = WEB
    if case == "unknown":
        token = "not-a-refresh-token"
    elif case == "revoked":
        provider.tokens.revoke(token, None)
    elif case == "expired":
        clock.advance(3600)
    else:
        client = basic("service", "service-secret")
        provider.config.client("service").grant_types.append("refresh_token")
    result = call(provider, "/token", {"grant_type": "refresh_token", "refresh_token": token},
                  headers={"authorization": client})
    assert_error(result, 400, "invalid_grant")


# ----------------------------------------------------------- userinfo, introspect, revoke
def test_userinfo_answers_sub_and_the_users_claims(provider):
    token = _login(provider)["access_token"]
    for method in ("GET", "POST"):
        status, headers, body = call(provider, "/userinfo", method=method,
                                     headers={"authorization": f"Bearer {token}"})
        assert status == 200 and headers["cache-control"] == "no-store"
        assert body == {"sub": "user-alice", "email": "alice@example.com",
                        "email_verified": True, "name": "Alice Liddell", "given_name": "Alice",
                        "family_name": "Liddell", "department": "research"}


def test_userinfo_for_a_client_token_is_just_sub(provider):
    status, _, body = call(provider, "/token", {"grant_type": "client_credentials"},
                           headers={"authorization": WEB})
    token = body["access_token"]
    assert call(provider, "/userinfo", method="GET",
                headers={"authorization": f"Bearer {token}"})[2] == {"sub": "web-app"}


@pytest.mark.parametrize("authorization", [None, "Basic abc", "Bearer", "bearer   "])
def test_userinfo_without_bearer_is_401_invalid_request(provider, authorization):
    headers = {"authorization": authorization} if authorization else {}
    result = call(provider, "/userinfo", method="GET", headers=headers)
    assert_error(result, 401, "invalid_request")
    assert result[1]["www-authenticate"] == "Bearer"


def test_userinfo_with_bad_revoked_or_expired_token_is_401_invalid_grant():
    clock = Clock()
    provider = make_provider(clock, tokenExpiry="10s")
    revoked, expired = _login(provider)["access_token"], _login(provider)["access_token"]
    provider.tokens.revoke(revoked, None)
    clock.advance(10)
    for token, description in (("garbage", "not valid"), (revoked, "revoked"),
                               (expired, "expired")):
        result = call(provider, "/userinfo", method="GET",
                      headers={"authorization": f"Bearer {token}"})
        assert_error(result, 401, "invalid_grant", description)


def test_introspect_needs_client_authentication(provider):
    token = _login(provider)["access_token"]
    assert_error(call(provider, "/introspect", {"token": token}), 401, "invalid_client")
    assert_error(call(provider, "/introspect", {"token": token, "client_id": "spa"}), 401,
                 "invalid_client")
    status, _, body = call(provider, "/introspect", {"token": token},
                           headers={"authorization": WEB})
    assert status == 200 and body["active"] is True and body["sub"] == "user-alice"


def test_introspect_unknown_token_is_inactive(provider):
    status, _, body = call(provider, "/introspect", {"token": "nope"},
                           headers={"authorization": WEB})
    assert (status, body) == (200, {"active": False})


def test_introspect_without_token_is_400_invalid_request(provider):
    assert_error(call(provider, "/introspect", {}, headers={"authorization": WEB}), 400,
                 "invalid_request")


@pytest.mark.parametrize("headers, data, revoked", [
    pytest.param({"authorization": WEB}, {}, True, id="Basic"),
    pytest.param({}, {"client_id": "web-app", "client_secret": "web-secret"}, True, id="form"),
    pytest.param({}, {}, True, id="anonymous"),
    pytest.param({}, {"client_id": "spa"}, False, id="another client's token is left alone"),
])
def test_revoke_answers_200(provider, headers, data, revoked):
    token = _login(provider)["access_token"]
    status, _, body = call(provider, "/revoke", {"token": token, **data}, headers=headers)
    assert status == 200 and body is None
    assert (provider.tokens.introspect(token) is None) is revoked
    assert call(provider, "/revoke", {"token": "unknown", **data}, headers=headers)[0] == 200


def test_revoke_with_wrong_client_secret_is_401(provider):
    token = _login(provider)["access_token"]
    assert_error(call(provider, "/revoke", {"token": token},
                      headers={"authorization": basic("web-app", "nope")}), 401,
                 "invalid_client")
    assert provider.tokens.introspect(token) is not None


def test_discovery_document_lists_the_spec_fields(provider):
    status, headers, body = call(provider, "/.well-known/openid-configuration", method="GET")
    assert status == 200 and headers["cache-control"] == "no-store"
    issuer = "http://localhost:4280/auth"
    assert body["issuer"] == issuer
    for field, suffix in (("authorization_endpoint", "/authorize"), ("token_endpoint", "/token"),
                          ("userinfo_endpoint", "/userinfo"),
                          ("jwks_uri", "/.well-known/jwks.json"),
                          ("revocation_endpoint", "/revoke"),
                          ("introspection_endpoint", "/introspect")):
        assert body[field] == issuer + suffix
    assert body["response_types_supported"] == ["code", "token"]
    assert body["subject_types_supported"] == ["public"]
    assert body["id_token_signing_alg_values_supported"] == ["RS256"]
    assert body["scopes_supported"] == ["openid", "profile", "email"]
    assert body["token_endpoint_auth_methods_supported"] == ["client_secret_basic",
                                                             "client_secret_post"]
    assert {"sub", "email", "department"} <= set(body["claims_supported"])
    assert {"authorization_code", "client_credentials", "refresh_token", "password"} <= set(
        body["grant_types_supported"])
    assert body["code_challenge_methods_supported"] == ["S256", "plain"]
