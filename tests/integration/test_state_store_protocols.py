"""SOAP, GraphQL, gRPC and MQTT tables and identity-provider tokens on the Redis state store
(issue #32 item 2).

One ``redis-server`` and two ``mockd engine --state-store`` processes on one namespace, for the
whole module. Engine ``a`` serves one table (``users``) bound from a SOAP operation, a GraphQL
mutation, a gRPC method, an MQTT topic and an HTTP list, plus an identity provider; engine ``b``
serves the same identity provider (same mock id and issuer) and the HTTP binding of ``users``.
A write through each protocol is read back through HTTP on the other engine and with redis-py
in Redis; a token issued by one engine is active in the other's introspection and userinfo, a
refresh works on the other, a revocation on one is seen by the other, and both serve one key.
"""
from __future__ import annotations

import shutil
import socket
import time
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import orjson
import pytest

from tests.helpers import MOCKD, MockdProcess, free_port, isolated_env, write_config
from tests.redis_server import redis_server  # noqa: F401 - module fixture
from tests.oidc_presets import ALICE_CLAIMS, CALLBACK, oauth_mock

pytestmark = pytest.mark.integration

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
NAMESPACE = "protocols"
ISSUER = "http://idp.mock.test/auth"  # what a load balancer in front of both would be
TIMEOUT = 10
SOAP_NS = "urn:example:users"
SDL = ("type User { id: ID name: String email: String }\n"
       "type Query { users: [User] slowUsers: [User] }\n"
       "type Mutation { createUser(name: String!, email: String!): User }")


def http_list(mock_id: str) -> dict:
    return {"id": mock_id, "type": "http", "http": {"matcher": {"method": "GET",
                                                                "path": "/users"}}}


def engine_a_config(grpc_port: int, mqtt_port: int) -> dict:
    return {
        "version": "1.0",
        "tables": [{"name": "users", "idStrategy": "uuid"}],
        "mocks": [
            {"id": "users-soap", "type": "soap", "soap": {
                "path": "/soap/users", "wsdlFile": "users.wsdl",
                "operations": {"CreateUser": {"statefulResource": "users",
                                              "statefulAction": "create"}}}},
            {"id": "users-graphql", "type": "graphql", "graphql": {
                "path": "/graphql", "schema": SDL,
                "resolvers": {"Mutation.createUser": {"table": "users", "action": "create"},
                              "Query.users": {"table": "users", "action": "list"},
                              "Query.slowUsers": {"table": "users", "action": "list",
                                                  "delay": "10ms"}}}},
            {"id": "users-grpc", "type": "grpc", "grpc": {
                "port": grpc_port, "protoFile": "users.proto",
                "services": {"demo.v1.Users": {"methods": {
                    "CreateUser": {"statefulResource": "users", "statefulAction": "create"}}}}}},
            {"id": "users-mqtt", "type": "mqtt", "mqtt": {"port": mqtt_port, "topics": [
                {"topic": "users/in", "onPublish": {"statefulResource": "users",
                                                    "statefulAction": "create"}}]}},
            http_list("users-rest"),
            oauth_mock("idp", issuer=ISSUER),
        ],
        "extend": [{"mock": "users-rest", "table": "users", "action": "list"}],
    }


def engine_b_config() -> dict:
    return {"version": "1.0", "tables": [{"name": "users", "idStrategy": "uuid"}],
            "mocks": [http_list("users-rest"), oauth_mock("idp", issuer=ISSUER)],
            "extend": [{"mock": "users-rest", "table": "users", "action": "list"}]}


@pytest.fixture(scope="module")
def engines(tmp_path_factory, redis_server):  # noqa: F811
    """``(a, b)``: the two engines (``a.grpc_port``, ``a.mqtt_port``)."""
    folder_a, folder_b = tmp_path_factory.mktemp("a"), tmp_path_factory.mktemp("b")
    shutil.copy(FIXTURES / "soap" / "users.wsdl", folder_a / "users.wsdl")
    shutil.copy(FIXTURES / "grpc" / "users.proto", folder_a / "users.proto")
    grpc_port, mqtt_port = free_port(), free_port()
    processes = []
    try:
        for folder, config in ((folder_a, engine_a_config(grpc_port, mqtt_port)),
                               (folder_b, engine_b_config())):  # started side by side
            processes.append(MockdProcess(
                [MOCKD, "engine", "-c", str(write_config(folder / "mocks.yaml", config)),
                 "--port", "0", "--print-url", "--state-store", redis_server.url,
                 "--state-namespace", NAMESPACE],
                isolated_env(folder), folder, folder / "engine.log"))
        for process in processes:
            process.base = process.wait_url_line()
            process.wait_healthy(process.base + "/health")
        a, b = processes
        a.grpc_port, a.mqtt_port = grpc_port, mqtt_port
        yield a, b
    finally:
        for process in processes:  # both told first, then waited for
            if process.proc.poll() is None:
                process.proc.terminate()
        for process in processes:
            process.stop()


@pytest.fixture(scope="module")
def redis_client(redis_server):  # noqa: F811
    import redis

    client = redis.Redis.from_url(redis_server.url)
    yield client
    client.close()


def stored_users(redis_client) -> dict[str, dict]:
    """The items of table ``users`` as stored in Redis (``{id: item}``)."""
    raw = redis_client.hgetall(f"{NAMESPACE}:table:users:items")
    return {key.decode(): orjson.loads(value.partition(b"|")[2]) for key, value in raw.items()}


def users_by_name(engine) -> dict[str, dict]:
    with engine.client() as client:
        answer = client.get("/users", params={"limit": 100})
    assert answer.status_code == 200, answer.text
    return {item["name"]: item for item in answer.json()["data"]}


# ---------------------------------------------------------------- tables


def test_soap_create_is_stored_in_redis(engines, redis_client):
    a, b = engines
    envelope = (f'<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/">'
                f'<soap:Body><CreateUser xmlns="{SOAP_NS}"><name>Soap Sam</name>'
                f'<email>sam@example.com</email></CreateUser></soap:Body></soap:Envelope>')
    with a.client() as client:
        answer = client.post("/soap/users", content=envelope, headers={
            "content-type": "text/xml; charset=utf-8",
            "soapaction": f'"{SOAP_NS}/CreateUser"'})
    assert answer.status_code == 200, answer.text
    assert b"Soap Sam" in answer.content and b"Fault" not in answer.content
    made = users_by_name(b)["Soap Sam"]
    assert stored_users(redis_client)[made["id"]]["email"] == "sam@example.com"


def test_graphql_create_and_list_go_through_redis(engines, redis_client):
    a, b = engines
    with a.client() as client:
        created = client.post("/graphql", json={
            "query": 'mutation { createUser(name: "Graph Gail", email: "gail@example.com") '
                     "{ id name } }"}).json()
        assert "errors" not in created, created
        made = created["data"]["createUser"]
        listed = client.post("/graphql", json={
            "query": "{ users { id name } slowUsers { id name } }"}).json()
    assert made in listed["data"]["users"] and made in listed["data"]["slowUsers"]
    assert users_by_name(b)["Graph Gail"]["id"] == made["id"]
    assert stored_users(redis_client)[made["id"]]["email"] == "gail@example.com"


def _field(number: int, value: bytes) -> bytes:
    """One length-delimited protobuf field (the test's messages have short fields only)."""
    assert len(value) < 128
    return bytes([number << 3 | 2, len(value)]) + value


def test_grpc_create_is_stored_in_redis(engines, redis_client):
    grpc = pytest.importorskip("grpc")
    a, b = engines
    user = _field(2, b"Grpc Greta") + _field(3, b"greta@example.com")
    with grpc.insecure_channel(f"127.0.0.1:{a.grpc_port}") as channel:
        call = channel.unary_unary("/demo.v1.Users/CreateUser")  # raw bytes both ways
        reply = call(_field(1, user), timeout=TIMEOUT)
    made = users_by_name(b)["Grpc Greta"]
    assert _field(1, made["id"].encode()) in reply and b"greta@example.com" in reply
    assert stored_users(redis_client)[made["id"]]["email"] == "greta@example.com"


def test_mqtt_publish_is_stored_in_redis(engines, redis_client):
    a, b = engines
    packet = _mqtt_connect(b"redis-test") + _mqtt_publish_qos1(
        b"users/in", orjson.dumps({"name": "Mqtt Max", "email": "max@example.com"}))
    with socket.create_connection(("127.0.0.1", a.mqtt_port), timeout=TIMEOUT) as sock:
        sock.sendall(packet)
        assert _read_until(sock, b"\x40\x02\x00\x01")  # PUBACK of packet id 1
    deadline = time.monotonic() + TIMEOUT
    while "Mqtt Max" not in (found := users_by_name(b)) and time.monotonic() < deadline:
        time.sleep(0.02)
    made = found["Mqtt Max"]
    assert stored_users(redis_client)[made["id"]]["email"] == "max@example.com"


def _mqtt_connect(client_id: bytes) -> bytes:
    body = b"\x00\x04MQTT\x04\x02\x00\x1e" + len(client_id).to_bytes(2, "big") + client_id
    return bytes([0x10, len(body)]) + body


def _mqtt_publish_qos1(topic: bytes, payload: bytes) -> bytes:
    body = len(topic).to_bytes(2, "big") + topic + b"\x00\x01" + payload
    assert len(body) < 128
    return bytes([0x32, len(body)]) + body


def _read_until(sock: socket.socket, wanted: bytes) -> bool:
    seen = b""
    deadline = time.monotonic() + TIMEOUT
    while wanted not in seen and time.monotonic() < deadline and len(seen) < 4096:
        chunk = sock.recv(256)
        if not chunk:
            break
        seen += chunk
    return wanted in seen


# ---------------------------------------------------------------- identity provider

WEB_APP = ("web-app", "web-secret")


def _introspect(engine, token: str) -> dict:
    with engine.client() as client:
        answer = client.post("/auth/introspect", auth=WEB_APP, data={"token": token})
    assert answer.status_code == 200, answer.text
    return answer.json()


def test_both_engines_sign_with_the_namespace_key(engines, redis_client):
    a, b = engines
    with a.client() as one, b.client() as other:
        keys = [client.get("/auth/.well-known/jwks.json").json() for client in (one, other)]
    assert keys[0] == keys[1] and len(keys[0]["keys"]) == 1
    assert redis_client.get(f"{NAMESPACE}:oidc:signing-key").startswith(b"-----BEGIN")
    for process in engines:
        assert b"PRIVATE KEY" not in process.log_path.read_bytes()


def test_a_token_from_one_engine_is_known_refreshed_and_revoked_on_the_other(engines):
    a, b = engines
    with a.client() as one:
        issued = one.post("/auth/token", auth=WEB_APP, data={
            "grant_type": "password", "username": "alice", "password": "wonderland",
            "scope": "openid profile email"})
    assert issued.status_code == 200, issued.text
    token = issued.json()
    active = _introspect(b, token["access_token"])
    assert active["active"] is True and active["sub"] == "user-alice"
    assert active["iss"] == ISSUER and active["client_id"] == "web-app"
    with b.client() as other:
        userinfo = other.get("/auth/userinfo",
                             headers={"Authorization": f"Bearer {token['access_token']}"})
        assert userinfo.status_code == 200 and userinfo.json() == ALICE_CLAIMS
        refreshed = other.post("/auth/token", auth=WEB_APP, data={
            "grant_type": "refresh_token", "refresh_token": token["refresh_token"]})
    assert refreshed.status_code == 200, refreshed.text
    second = refreshed.json()["access_token"]
    assert second != token["access_token"]
    assert _introspect(a, second)["active"] is True
    # An access token revoked on A is inactive on B; the refresh token revoked on A revokes
    # its whole grant on B (RFC 7009 §2.1), the token refreshed on B included.
    with a.client() as one:
        assert one.post("/auth/revoke", auth=WEB_APP,
                        data={"token": token["access_token"]}).status_code == 200
        assert _introspect(b, token["access_token"]) == {"active": False}
        assert _introspect(b, second)["active"] is True
        assert one.post("/auth/revoke", auth=WEB_APP,
                        data={"token": token["refresh_token"]}).status_code == 200
    assert _introspect(b, token["refresh_token"]) == {"active": False}
    assert _introspect(b, second) == {"active": False}
    with b.client() as other:
        again = other.post("/auth/token", auth=WEB_APP, data={
            "grant_type": "refresh_token", "refresh_token": token["refresh_token"]})
        assert again.status_code == 400 and again.json()["error"] == "invalid_grant"
        rejected = other.get("/auth/userinfo", headers={"Authorization": f"Bearer {second}"})
        assert rejected.status_code == 401


def test_an_authorization_code_is_single_use_across_engines(engines):
    a, b = engines
    with a.client() as one:
        redirect = one.get("/auth/authorize", params={
            "client_id": "web-app", "redirect_uri": CALLBACK, "response_type": "code",
            "scope": "openid", "state": "s1"})
    assert redirect.status_code == 302
    code = parse_qs(urlsplit(redirect.headers["location"]).query)["code"][0]
    exchange = {"grant_type": "authorization_code", "code": code, "redirect_uri": CALLBACK}
    with b.client() as other:
        first = other.post("/auth/token", auth=WEB_APP, data=exchange)
    assert first.status_code == 200, first.text
    with a.client() as one:
        reused = one.post("/auth/token", auth=WEB_APP, data=exchange)
    assert reused.status_code == 400 and "already used" in reused.json()["error_description"]
    # Reuse revokes what the code gave (RFC 6749 §4.1.2), on every engine.
    assert _introspect(b, first.json()["access_token"]) == {"active": False}


# ---------------------------------------------------------------- Redis away (last: empties it)


def test_redis_away_each_protocol_answers_its_own_error_then_recovers(
        engines, redis_server):  # noqa: F811
    grpc = pytest.importorskip("grpc")
    a, b = engines
    redis_server.kill()
    try:
        with a.client() as client:
            fault = client.post("/soap/users", headers={
                "content-type": "text/xml; charset=utf-8",
                "soapaction": f'"{SOAP_NS}/CreateUser"'}, content=(
                f'<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/">'
                f'<soap:Body><CreateUser xmlns="{SOAP_NS}"><name>x</name><email>y</email>'
                f'</CreateUser></soap:Body></soap:Envelope>'))
            assert fault.status_code == 500
            assert b"<code>STATE_STORE_UNAVAILABLE</code>" in fault.content
            answer = client.post("/graphql", json={"query": "{ users { id } }"}).json()
            assert answer["errors"][0]["extensions"] == {"code": "STATE_STORE_UNAVAILABLE",
                                                         "status": 503}
            token = client.post("/auth/token", auth=WEB_APP,
                                data={"grant_type": "client_credentials"})
            assert token.status_code == 503
            assert token.json()["error"] == "temporarily_unavailable"
            assert redis_server.url in token.json()["error_description"]
        with grpc.insecure_channel(f"127.0.0.1:{a.grpc_port}") as channel:
            with pytest.raises(grpc.RpcError) as raised:
                channel.unary_unary("/demo.v1.Users/CreateUser")(b"", timeout=TIMEOUT)
        assert raised.value.code() == grpc.StatusCode.UNAVAILABLE
        assert "not reachable" in raised.value.details()
    finally:
        redis_server.start()
    with b.client() as client:  # the next request reconnects, to an empty Redis (seeded)
        deadline = time.monotonic() + TIMEOUT
        while (listed := client.get("/users")).status_code != 200 \
                and time.monotonic() < deadline:
            time.sleep(0.02)
        assert listed.status_code == 200 and listed.json()["data"] == []
        token = client.post("/auth/token", auth=WEB_APP,
                            data={"grant_type": "client_credentials"})
        assert token.status_code == 200
        assert _introspect(b, token.json()["access_token"])["active"] is True
