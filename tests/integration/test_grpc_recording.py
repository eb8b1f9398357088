"""gRPC through the recording proxy: a grpcio client reaches a grpcio upstream (with server
reflection) through ``mockd start``'s proxy via CONNECT (h2c on an insecure channel, TLS
with the proxy CA as root); each call is answered as the upstream does and recorded; the
recordings convert to ``grpc`` mocks that a second ``mockd start -c`` serves with the same
messages."""
from __future__ import annotations

import base64
import importlib
import os
import sys
from concurrent import futures
from pathlib import Path

import grpc
import httpx
import pytest
import trustme
from grpc_reflection.v1alpha import reflection

from tests.helpers import free_port, start_engine, start_server, write_config

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "grpc"
TIMEOUT = 10
PROXY_ENV = ("no_proxy", "NO_PROXY", "no_grpc_proxy", "grpc_proxy", "http_proxy", "https_proxy",
             "HTTP_PROXY", "HTTPS_PROXY")


@pytest.fixture(scope="module")
def stubs(tmp_path_factory):
    """users_pb2 / users_pb2_grpc compiled from the fixture proto."""
    from grpc_tools import protoc

    out = tmp_path_factory.mktemp("stubs")
    assert protoc.main(["protoc", f"-I{FIXTURES}", f"--python_out={out}",
                        f"--grpc_python_out={out}", str(FIXTURES / "users.proto")]) == 0
    sys.path.insert(0, str(out))
    try:
        yield importlib.import_module("users_pb2"), importlib.import_module("users_pb2_grpc")
    finally:
        sys.path.remove(str(out))


@pytest.fixture(scope="module")
def upstream_ca():
    return trustme.CA()


@pytest.fixture(scope="module")
def upstream(stubs, upstream_ca):
    """A grpcio server (GetUser, ListUsers, reflection) on an insecure and a TLS port."""
    pb2, pb2_grpc = stubs

    class Users(pb2_grpc.UsersServicer):
        def GetUser(self, request, context):
            if request.id == "missing":
                context.abort(grpc.StatusCode.NOT_FOUND, f"no user {request.id}")
            context.set_trailing_metadata((("x-served-by", "upstream"),))
            return pb2.User(id=request.id, name=f"User {request.id}", age=len(request.id) + 30,
                            active=True)

        def ListUsers(self, request, context):
            for index in range(request.page_size):
                yield pb2.User(id=str(index), name=f"listed {index}")

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    pb2_grpc.add_UsersServicer_to_server(Users(), server)
    reflection.enable_server_reflection(
        (pb2.DESCRIPTOR.services_by_name["Users"].full_name, reflection.SERVICE_NAME), server)
    plain = server.add_insecure_port("127.0.0.1:0")
    leaf = upstream_ca.issue_cert("127.0.0.1", "localhost")
    secure = server.add_secure_port("127.0.0.1:0", grpc.ssl_server_credentials(
        [(leaf.private_key_pem.bytes(), leaf.cert_chain_pems[0].bytes())]))
    server.start()
    yield {"plain": plain, "secure": secure}
    server.stop(None)


@pytest.fixture(scope="module")
def mockd(tmp_path_factory, upstream_ca):
    tmp = tmp_path_factory.mktemp("grpc-recording")
    ca_file = tmp / "upstream-ca.pem"
    upstream_ca.cert_pem.write_to_path(str(ca_file))
    process = start_server(tmp)
    admin = httpx.Client(base_url=process.admin, timeout=30, trust_env=False)
    proxy_port = free_port()
    assert admin.post("/proxy/ca", json={}).status_code == 201
    started = admin.post("/proxy/start", json={"port": proxy_port, "mode": "record",
                                               "sessionName": "grpc",
                                               "upstreamCa": str(ca_file)})
    assert started.status_code == 200, started.text
    ca_pem = admin.get("/proxy/ca/download")
    saved = {name: os.environ.pop(name) for name in PROXY_ENV if name in os.environ}
    try:
        yield {"process": process, "admin": admin, "port": proxy_port,
               "session": started.json()["sessionId"], "tmp": tmp,
               "ca": ca_pem.content if ca_pem.status_code == 200 else None}
    finally:
        os.environ.update(saved)
        admin.close()
        process.stop()


def _through_proxy(mockd, target: str, credentials=None) -> grpc.Channel:
    options = [("grpc.http_proxy", f"http://127.0.0.1:{mockd['port']}")]
    if credentials is None:
        channel = grpc.insecure_channel(target, options=options)
    else:
        channel = grpc.secure_channel(target, credentials, options=options)
    grpc.channel_ready_future(channel).result(timeout=TIMEOUT)
    return channel


def _recordings(mockd) -> list[dict]:
    answer = mockd["admin"].get("/recordings/grpc", params={"sessionId": mockd["session"]})
    assert answer.status_code == 200, answer.text
    return answer.json()["recordings"]


@pytest.fixture(scope="module")
def calls(mockd, upstream, stubs):
    """Three calls through the proxy on an insecure channel: their answers as seen."""
    pb2, pb2_grpc = stubs
    with _through_proxy(mockd, f"127.0.0.1:{upstream['plain']}") as channel:
        client = pb2_grpc.UsersStub(channel)
        reply, call = client.GetUser.with_call(pb2.GetUserRequest(id="7"), timeout=TIMEOUT,
                                               metadata=(("authorization", "Bearer s3cret"),
                                                         ("x-tenant", "acme")))
        listed = list(client.ListUsers(pb2.ListUsersRequest(page_size=3), timeout=TIMEOUT))
        with pytest.raises(grpc.RpcError) as failure:
            client.GetUser(pb2.GetUserRequest(id="missing"), timeout=TIMEOUT)
    return {"reply": reply, "trailers": call.trailing_metadata(), "listed": listed,
            "failure": failure.value}


def test_insecure_calls_through_the_proxy_are_answered_and_recorded(mockd, upstream, stubs,
                                                                    calls):
    pb2, _ = stubs
    reply = calls["reply"]
    assert (reply.id, reply.name, reply.age, reply.active) == ("7", "User 7", 31, True)
    assert ("x-served-by", "upstream") in calls["trailers"]
    assert [user.name for user in calls["listed"]] == ["listed 0", "listed 1", "listed 2"]
    assert calls["failure"].code() is grpc.StatusCode.NOT_FOUND
    assert calls["failure"].details() == "no user missing"
    found = [r for r in _recordings(mockd) if r["port"] == upstream["plain"]]
    by_method = {(r["method"], r["status"]["code"]): r for r in found}
    assert set(by_method) == {("GetUser", 0), ("ListUsers", 0), ("GetUser", 5)}
    ok = by_method[("GetUser", 0)]
    assert ok["service"] == "demo.v1.Users" and ok["scheme"] == "http"
    request = pb2.GetUserRequest.FromString(base64.b64decode(ok["requestMessages"][0]))
    assert request.id == "7"
    user = pb2.User.FromString(base64.b64decode(ok["responseMessages"][0]))
    assert user.name == "User 7"
    assert ok["requestMetadata"]["x-tenant"] == ["acme"]
    assert "s3cret" not in str(ok["requestMetadata"]["authorization"])
    assert ok["trailers"]["x-served-by"] == ["upstream"] and ok["duration"] > 0
    assert len(by_method[("ListUsers", 0)]["responseMessages"]) == 3
    assert by_method[("GetUser", 5)]["status"]["message"] == "no user missing"


def test_tls_calls_with_the_proxy_ca_are_intercepted_and_recorded(mockd, upstream, stubs):
    if mockd["ca"] is None:
        pytest.skip("the proxy has no CA")
    pb2, pb2_grpc = stubs
    credentials = grpc.ssl_channel_credentials(root_certificates=mockd["ca"])
    with _through_proxy(mockd, f"localhost:{upstream['secure']}", credentials) as channel:
        reply = pb2_grpc.UsersStub(channel).GetUser(pb2.GetUserRequest(id="tls"),
                                                    timeout=TIMEOUT)
        assert reply.name == "User tls"
    found = [r for r in _recordings(mockd) if r["port"] == upstream["secure"]]
    assert [(r["method"], r["scheme"], r["status"]["code"]) for r in found] == \
        [("GetUser", "https", 0)]


def test_convert_validates_its_body(mockd):
    admin = mockd["admin"]
    assert admin.post("/recordings/grpc/convert", json={"port": "x"}).json()["error"] == \
        "validation_error"
    bad = admin.post("/recordings/grpc/convert", json={"sessions": 1})
    assert bad.status_code == 400 and "sessions" in bad.json()["message"]
    assert admin.post("/recordings/grpc/convert",
                      json={"sessionId": "sess_unknown"}).status_code == 404
    assert admin.post("/recordings/grpc/convert",
                      json={"recordingIds": ["nope"]}).json()["error"] == "no_recordings"
    assert admin.get("/recordings/grpc", params={"limit": "many"}).status_code == 400


def test_converted_mocks_answer_the_recorded_messages(mockd, upstream, stubs, calls,
                                                     tmp_path):
    pb2, pb2_grpc = stubs
    plain = [r["id"] for r in _recordings(mockd) if r["port"] == upstream["plain"]]
    assert len(plain) == 3
    port = free_port()
    answer = mockd["admin"].post("/recordings/grpc/convert",
                                 json={"recordingIds": plain, "port": port})
    assert answer.status_code == 200, answer.text
    document = answer.json()
    assert document["count"] == 1
    mock = document["config"]["mocks"][0]
    assert mock["type"] == "grpc" and mock["grpc"]["port"] == port
    assert "users.proto" in mock["grpc"]["protoSources"]
    # The document's config as a file, served by a headless engine (only the gRPC port of the
    # converted mock is under test here).
    served = start_engine(tmp_path, {"version": "1.0", **document["config"]})
    try:
        channel = grpc.insecure_channel(f"127.0.0.1:{port}",
                                        options=[("grpc.enable_http_proxy", 0)])
        grpc.channel_ready_future(channel).result(timeout=TIMEOUT)
        with channel:
            client = pb2_grpc.UsersStub(channel)
            reply = client.GetUser(pb2.GetUserRequest(id="7"), timeout=TIMEOUT)
            assert (reply.id, reply.name, reply.age, reply.active) == ("7", "User 7", 31, True)
            listed = list(client.ListUsers(pb2.ListUsersRequest(page_size=3), timeout=TIMEOUT))
            assert [user.name for user in listed] == ["listed 0", "listed 1", "listed 2"]
            with pytest.raises(grpc.RpcError) as failure:
                client.GetUser(pb2.GetUserRequest(id="missing"), timeout=TIMEOUT)
            assert failure.value.code() is grpc.StatusCode.NOT_FOUND
            assert failure.value.details() == "no user missing"
    finally:
        served.stop()
