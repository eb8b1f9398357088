"""The identity-provider mock through real ``mockd`` processes, driven by real client libraries.

authlib's OAuth2Client runs client credentials, password, authorization code with PKCE (the
302 followed by hand) and refresh; PyJWT's ``PyJWKClient`` validates every access and ID token
against the mock's ``jwks_uri``. Also: discovery, introspection and revocation round trips, the
implicit fragment, the error statuses of behavior notes §8, code reuse, an expired token, a
resource-server mock that requires the bearer header, and ``mockd oauth add`` against a full
server (SPEC "Identity-provider endpoints", "Authentication", "Errors").
"""
from __future__ import annotations

import os
import time
import warnings
from urllib.parse import parse_qs, urlsplit

import httpx
import jwt
import pytest
from authlib.common.security import generate_token

with warnings.catch_warnings():
    # authlib prefers the `httpx2` package and notes its fallback to `httpx` at import; the
    # fallback is exactly what we use, so the notice says nothing about mockd.
    warnings.simplefilter("ignore")
    from authlib.integrations.httpx_client import OAuth2Client

from tests.helpers import free_port, http_mock, make_config, run_mockd, start_engine, start_server
from tests.oidc_presets import ALICE_CLAIMS, AUDIENCE, CALLBACK, oauth_mock

pytestmark = pytest.mark.integration

CLIENT_OPTIONS = {"trust_env": False, "timeout": 10.0}


@pytest.fixture(scope="module", autouse=True)
def loopback_without_proxy():
    """PyJWKClient fetches with urllib, which honours proxy variables: keep loopback direct."""
    saved = {name: os.environ.get(name) for name in ("NO_PROXY", "no_proxy")}
    os.environ["NO_PROXY"] = os.environ["no_proxy"] = "127.0.0.1,localhost"
    yield
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    """One engine: the preset IdP at ``/auth``, a 2-second IdP at ``/short``, and a protected
    resource-server mock with its 401 fallback."""
    tmp_path = tmp_path_factory.mktemp("oidc")
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    config = make_config(
        oauth_mock("idp", issuer=f"{base}/auth"),
        oauth_mock("short-idp", issuer=f"{base}/short", tokenExpiry="2s"),
        http_mock("profile-fallback", "GET", "/api/profile", status=401,
                  body={"error": "unauthorized"}),
        http_mock("profile", "GET", "/api/profile", body={"name": "protected"},
                  matcher={"headers": {"Authorization": "Bearer *"}}),
        http_mock("under-issuer", "GET", "/auth/custom/page", body="a mock under the issuer"),
    )
    with start_engine(tmp_path, config, extra_args=["--port", str(port)]) as process:
        yield process


@pytest.fixture(scope="module")
def discovery(engine):
    with engine.client() as client:
        response = client.get("/auth/.well-known/openid-configuration")
    assert response.status_code == 200
    return response.json()


@pytest.fixture(scope="module")
def jwks_client(discovery):
    return jwt.PyJWKClient(discovery["jwks_uri"], cache_jwk_set=False, timeout=10)


def validate(jwks_client, token, audience, issuer):
    """Claims of ``token`` after PyJWT checked signature (key from the JWKS), audience, issuer
    and expiry."""
    signing_key = jwks_client.get_signing_key_from_jwt(token)
    return jwt.decode(token, signing_key.key, algorithms=["RS256"], audience=audience,
                      issuer=issuer)


def follow_authorize(url):
    """GET the authorization URL without following redirects; returns the Location."""
    with httpx.Client(**CLIENT_OPTIONS) as client:
        response = client.get(url)
    assert response.status_code == 302, response.text
    return response.headers["location"]


# ---------------------------------------------------------------- discovery and keys
def test_discovery_document_and_jwks(engine, discovery):
    issuer = f"{engine.base}/auth"
    assert discovery["issuer"] == issuer
    assert discovery["token_endpoint"] == f"{issuer}/token"
    assert discovery["jwks_uri"] == f"{issuer}/.well-known/jwks.json"
    for field in ("authorization_endpoint", "userinfo_endpoint", "revocation_endpoint",
                  "introspection_endpoint", "response_types_supported",
                  "subject_types_supported", "id_token_signing_alg_values_supported",
                  "scopes_supported", "token_endpoint_auth_methods_supported",
                  "claims_supported", "grant_types_supported",
                  "code_challenge_methods_supported"):
        assert field in discovery
    with httpx.Client(**CLIENT_OPTIONS) as client:
        response = client.get(discovery["jwks_uri"])
    assert response.status_code == 200 and response.headers["cache-control"] == "no-store"
    (key,) = response.json()["keys"]
    assert (key["kty"], key["use"], key["alg"]) == ("RSA", "sig", "RS256")
    assert key["kid"] and key["n"] and key["e"]


# ---------------------------------------------------------------- grants with authlib
def test_client_credentials_grant(discovery, jwks_client):
    with OAuth2Client("web-app", "web-secret", scope="profile", **CLIENT_OPTIONS) as client:
        token = client.fetch_token(discovery["token_endpoint"], grant_type="client_credentials")
    assert token["token_type"] == "Bearer" and token["expires_in"] == 3600
    assert token["scope"] == "profile" and "refresh_token" not in token
    claims = validate(jwks_client, token["access_token"], AUDIENCE, discovery["issuer"])
    assert claims["sub"] == claims["client_id"] == "web-app" and claims["scope"] == "profile"


def test_client_credentials_with_client_secret_post(discovery, jwks_client):
    with OAuth2Client("service", "service-secret", token_endpoint_auth_method="client_secret_post",
                      **CLIENT_OPTIONS) as client:
        token = client.fetch_token(discovery["token_endpoint"], grant_type="client_credentials")
    assert validate(jwks_client, token["access_token"], AUDIENCE,
                    discovery["issuer"])["sub"] == "service"


def test_password_grant_then_refresh(discovery, jwks_client):
    with OAuth2Client("web-app", "web-secret", scope="openid profile email",
                      **CLIENT_OPTIONS) as client:
        token = client.fetch_token(discovery["token_endpoint"], username="alice",
                                   password="wonderland")
        access = validate(jwks_client, token["access_token"], AUDIENCE, discovery["issuer"])
        identity = validate(jwks_client, token["id_token"], "web-app", discovery["issuer"])
        assert access["sub"] == identity["sub"] == "user-alice"
        assert identity["email"] == ALICE_CLAIMS["email"]
        assert identity["department"] == "research"
        refreshed = client.refresh_token(discovery["token_endpoint"],
                                         refresh_token=token["refresh_token"])
    assert refreshed["refresh_token"] == token["refresh_token"]  # no rotation
    assert refreshed["access_token"] != token["access_token"]
    validate(jwks_client, refreshed["access_token"], AUDIENCE, discovery["issuer"])
    validate(jwks_client, refreshed["id_token"], "web-app", discovery["issuer"])


def test_authorization_code_with_pkce_for_a_public_client(discovery, jwks_client):
    verifier = generate_token(48)
    with OAuth2Client("spa", redirect_uri=CALLBACK, scope="openid email",
                      code_challenge_method="S256", token_endpoint_auth_method="none",
                      **CLIENT_OPTIONS) as client:
        url, state = client.create_authorization_url(discovery["authorization_endpoint"],
                                                     code_verifier=verifier, nonce="n-1")
        location = follow_authorize(url)
        assert location.startswith(CALLBACK + "?")
        assert parse_qs(urlsplit(location).query)["state"] == [state]
        token = client.fetch_token(discovery["token_endpoint"], authorization_response=location,
                                   code_verifier=verifier, state=state)
        identity = validate(jwks_client, token["id_token"], "spa", discovery["issuer"])
        assert identity["nonce"] == "n-1" and identity["sub"] == "user-alice"
        validate(jwks_client, token["access_token"], AUDIENCE, discovery["issuer"])
        refreshed = client.refresh_token(discovery["token_endpoint"],
                                         refresh_token=token["refresh_token"], scope="email")
    assert refreshed["scope"] == "email" and refreshed["refresh_token"] == token["refresh_token"]


def test_authorization_code_for_a_confidential_client_and_code_reuse(discovery):
    verifier = generate_token(48)
    with OAuth2Client("web-app", "web-secret", redirect_uri=CALLBACK, scope="openid",
                      code_challenge_method="S256", **CLIENT_OPTIONS) as client:
        url, state = client.create_authorization_url(discovery["authorization_endpoint"],
                                                     code_verifier=verifier)
        location = follow_authorize(url)
        token = client.fetch_token(discovery["token_endpoint"], authorization_response=location,
                                   code_verifier=verifier)
        assert token["access_token"]
    code = parse_qs(urlsplit(location).query)["code"][0]
    with httpx.Client(**CLIENT_OPTIONS) as http:
        reused = http.post(discovery["token_endpoint"], auth=("web-app", "web-secret"), data={
            "grant_type": "authorization_code", "code": code, "redirect_uri": CALLBACK,
            "code_verifier": verifier})
        assert reused.status_code == 400 and reused.json()["error"] == "invalid_grant"
        introspected = http.post(discovery["introspection_endpoint"],
                                 auth=("web-app", "web-secret"),
                                 data={"token": token["access_token"]})
    assert introspected.json() == {"active": False}  # reuse revoked what the code issued


def test_implicit_flow_fragment(discovery, jwks_client):
    with OAuth2Client("web-app", redirect_uri=CALLBACK, scope="openid profile",
                      **CLIENT_OPTIONS) as client:
        url, state = client.create_authorization_url(discovery["authorization_endpoint"],
                                                     response_type="token")
    fragment = {name: values[0] for name, values in
                parse_qs(urlsplit(follow_authorize(url)).fragment).items()}
    assert fragment["token_type"] == "Bearer" and fragment["state"] == state
    assert fragment["expires_in"] == "3600" and fragment["scope"] == "openid profile"
    assert validate(jwks_client, fragment["access_token"], AUDIENCE,
                    discovery["issuer"])["sub"] == "user-alice"


# ---------------------------------------------------------------- introspect, revoke, userinfo
def test_introspection_revocation_and_userinfo_round_trip(discovery):
    with OAuth2Client("web-app", "web-secret", scope="openid email", **CLIENT_OPTIONS) as client:
        token = client.fetch_token(discovery["token_endpoint"], username="alice",
                                   password="wonderland")
    access = token["access_token"]
    with httpx.Client(**CLIENT_OPTIONS) as http:
        userinfo = http.get(discovery["userinfo_endpoint"],
                            headers={"Authorization": f"Bearer {access}"})
        assert userinfo.status_code == 200 and userinfo.json() == ALICE_CLAIMS
        active = http.post(discovery["introspection_endpoint"], auth=("web-app", "web-secret"),
                           data={"token": access}).json()
        assert active["active"] is True and active["sub"] == "user-alice"
        assert active["client_id"] == "web-app" and active["iss"] == discovery["issuer"]
        assert active["token_type"] == "Bearer" and active["exp"] > active["iat"]
        refresh = http.post(discovery["introspection_endpoint"],
                            data={"token": token["refresh_token"], "client_id": "web-app",
                                  "client_secret": "web-secret"}).json()
        assert refresh["active"] is True
        revoked = http.post(discovery["revocation_endpoint"], auth=("web-app", "web-secret"),
                            data={"token": access, "token_type_hint": "access_token"})
        assert revoked.status_code == 200
        assert http.post(discovery["introspection_endpoint"], auth=("web-app", "web-secret"),
                         data={"token": access}).json() == {"active": False}
        rejected = http.get(discovery["userinfo_endpoint"],
                            headers={"Authorization": f"Bearer {access}"})
        assert rejected.status_code == 401 and rejected.json()["error"] == "invalid_grant"
        # Revocation answers 200 for tokens it does not know (RFC 7009).
        assert http.post(discovery["revocation_endpoint"],
                         data={"token": "never-issued"}).status_code == 200


# ---------------------------------------------------------------- errors (notes §8)
@pytest.mark.parametrize("path, method, data, auth, status, error", [
    pytest.param("/auth/token", "POST", {"grant_type": "client_credentials"},
                 ("web-app", "wrong"), 401, "invalid_client", id="wrong client secret"),
    pytest.param("/auth/token", "POST", {"grant_type": "client_credentials"},
                 ("nobody", "x"), 401, "invalid_client", id="unknown client"),
    pytest.param("/auth/token", "POST", {"grant_type": "password", "username": "alice",
                                         "password": "wrong"},
                 ("web-app", "web-secret"), 401, "invalid_grant", id="wrong user password"),
    pytest.param("/auth/token", "POST", {"grant_type": "client_credentials", "scope": "admin"},
                 ("web-app", "web-secret"), 400, "invalid_scope", id="unknown scope"),
    pytest.param("/auth/token", "POST", {"grant_type": "urn:magic"},
                 ("web-app", "web-secret"), 400, "unsupported_grant_type",
                 id="unsupported grant"),
    pytest.param("/auth/token", "POST", {"grant_type": "password", "username": "bob",
                                         "password": "builder"},
                 ("service", "service-secret"), 400, "unauthorized_client",
                 id="grant not allowed for the client"),
    pytest.param("/auth/token", "POST", {"grant_type": "authorization_code", "code": "nope",
                                         "redirect_uri": CALLBACK},
                 ("web-app", "web-secret"), 400, "invalid_grant", id="bad code"),
    pytest.param("/auth/token", "POST", {"grant_type": "refresh_token",
                                         "refresh_token": "nope"},
                 ("web-app", "web-secret"), 400, "invalid_grant", id="bad refresh token"),
    pytest.param("/auth/token", "POST", {"grant_type": "password"},
                 ("web-app", "web-secret"), 400, "invalid_request", id="missing parameters"),
    pytest.param("/auth/token", "GET", None, None, 405, "invalid_request", id="GET /token"),
    pytest.param("/auth/introspect", "POST", {"token": "x"}, None, 401, "invalid_client",
                 id="introspect without client"),
    pytest.param("/auth/userinfo", "GET", None, None, 401, "invalid_request",
                 id="userinfo without bearer"),
    pytest.param("/auth/authorize", "GET", None, None, 400, "invalid_request",
                 id="authorize without parameters"),
])
def test_error_answers(engine, path, method, data, auth, status, error):
    with engine.client() as client:
        response = client.request(method, path, data=data, auth=auth)
    assert response.status_code == status, response.text
    body = response.json()
    assert body["error"] == error and body["error_description"]
    assert set(body) == {"error", "error_description"}
    assert response.headers["cache-control"] == "no-store"
    assert response.headers["pragma"] == "no-cache"


def test_authorize_unknown_client_and_unregistered_redirect_are_json(engine):
    with engine.client() as client:
        unknown = client.get("/auth/authorize", params={
            "client_id": "nobody", "redirect_uri": CALLBACK, "response_type": "code"})
        unregistered = client.get("/auth/authorize", params={
            "client_id": "web-app", "redirect_uri": "http://evil.example/cb",
            "response_type": "code"})
        redirected = client.get("/auth/authorize", params={
            "client_id": "web-app", "redirect_uri": CALLBACK, "response_type": "code",
            "scope": "admin", "state": "s-9"})
    assert (unknown.status_code, unknown.json()["error"]) == (401, "invalid_client")
    assert (unregistered.status_code, unregistered.json()["error"]) == (400, "invalid_request")
    assert redirected.status_code == 302
    query = parse_qs(urlsplit(redirected.headers["location"]).query)
    assert query["error"] == ["invalid_scope"] and query["state"] == ["s-9"]


def test_expired_token_is_inactive_and_refused(engine, jwks_client):
    short = f"{engine.base}/short"
    asked = time.monotonic()
    with OAuth2Client("web-app", "web-secret", **CLIENT_OPTIONS) as client:
        token = client.fetch_token(f"{short}/token", grant_type="client_credentials")
    assert token["expires_in"] == 2
    access = token["access_token"]
    bearer = {"Authorization": f"Bearer {access}"}
    with httpx.Client(**CLIENT_OPTIONS) as http:
        assert http.get(f"{short}/userinfo", headers=bearer).status_code == 200
        # Poll until the 2 s lifetime is over (10 s at most): the token is refused from then
        # on, and not before about a second (its expiry is iat + 2, iat in whole seconds).
        deadline = asked + 10
        userinfo = http.get(f"{short}/userinfo", headers=bearer)
        while userinfo.status_code == 200 and time.monotonic() < deadline:
            time.sleep(0.1)
            userinfo = http.get(f"{short}/userinfo", headers=bearer)
        assert time.monotonic() - asked >= 0.9
        introspected = http.post(f"{short}/introspect", auth=("web-app", "web-secret"),
                                 data={"token": access})
    assert introspected.json() == {"active": False}
    assert userinfo.status_code == 401 and userinfo.json()["error"] == "invalid_grant"
    with pytest.raises(jwt.ExpiredSignatureError):
        validate(jwks_client, access, AUDIENCE, short)


# ---------------------------------------------------------------- resource server
def test_resource_server_mock_requires_the_bearer_header(engine, discovery, jwks_client):
    with OAuth2Client("service", "service-secret", **CLIENT_OPTIONS) as client:
        token = client.fetch_token(discovery["token_endpoint"], grant_type="client_credentials")
    # The API side validates the token through the key set, as a resource server would.
    validate(jwks_client, token["access_token"], AUDIENCE, discovery["issuer"])
    with engine.client() as http:
        granted = http.get("/api/profile",
                           headers={"Authorization": f"Bearer {token['access_token']}"})
        denied = http.get("/api/profile")
    assert granted.status_code == 200 and granted.json() == {"name": "protected"}
    assert denied.status_code == 401


def test_unknown_endpoint_under_the_issuer_is_404_but_mocks_there_still_answer(engine):
    with engine.client() as http:
        unknown = http.get("/auth/nope")
        mocked = http.get("/auth/custom/page")
        outside = http.get("/authority")
    assert unknown.status_code == 404
    assert unknown.json() == {"error": "not_found", "error_description": "unknown OAuth endpoint"}
    assert mocked.status_code == 200 and mocked.text == "a mock under the issuer"
    assert outside.status_code == 404 and outside.json()["error"] == "no_match"


# ---------------------------------------------------------------- full server and CLI
def test_oauth_add_cli_and_tokens_survive_admin_edits(tmp_path):
    with start_server(tmp_path) as server:
        admin_url = ["--admin-url", server.admin]
        defaults = run_mockd(["oauth", "add", *admin_url], tmp_path)
        assert defaults.returncode == 0, defaults.stderr
        assert "Created mock: oauth_" in defaults.stdout
        issuer = f"{server.base}/login"
        added = run_mockd(["oauth", "add", "--name", "cli-idp", "--issuer", issuer,
                           "--client-id", "cli-client", "--client-secret", "cli-secret",
                           "--oauth-user", "carol", "--oauth-password", "pw", *admin_url],
                          tmp_path)
        assert added.returncode == 0, added.stderr
        with server.admin_client() as admin:
            mocks = [mock for mock in admin.get("/mocks").json()["mocks"]
                     if mock["type"] == "oauth"]
        default_block = next(mock["oauth"] for mock in mocks if not mock.get("name"))
        assert default_block["issuer"] == "http://localhost:4280"
        assert default_block["clients"][0]["clientId"] == "test-client"
        assert default_block["clients"][0]["clientSecret"] == "test-secret"
        assert default_block["users"][0]["username"] == "testuser"
        with httpx.Client(**CLIENT_OPTIONS) as http:
            token = http.post(f"{issuer}/token", auth=("cli-client", "cli-secret"), data={
                "grant_type": "password", "username": "carol", "password": "pw"})
            assert token.status_code == 200, token.text
            access = token.json()["access_token"]
            # Any admin edit recompiles the snapshot; issued tokens must stay valid.
            edit = run_mockd(["http", "add", "--path", "/after-edit", "-b", "x", *admin_url],
                             tmp_path)
            assert edit.returncode == 0, edit.stderr
            assert http.get(f"{server.base}/after-edit").text == "x"
            userinfo = http.get(f"{issuer}/userinfo",
                                headers={"Authorization": f"Bearer {access}"})
        assert userinfo.status_code == 200
        assert userinfo.json() == {"sub": "carol", "email": "carol@example.com", "name": "carol"}
