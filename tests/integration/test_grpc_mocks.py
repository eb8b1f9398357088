"""gRPC mocks served to real clients: stubs generated from the test ``.proto`` files with
grpcio-tools (at test time, into a temporary folder), for all four call kinds; errors with
rich details read back with grpcio-status; reflection listed by a grpcio-reflection client;
health; metadata and request matching; fake answers; chaos faults on calls; tables shared with
REST (a method bound
on the method and one bound by an ``extend`` entry); port merging
(200 and each 409); two ports in one config; request log, verification, metrics and ``/ports``
(behavior notes §1, §10, §17; SPEC "Mocks", "Templating").

One ``mockd start`` serves the whole module (module-scoped fixture); every port is a free
loopback port.
"""
from __future__ import annotations

import importlib
import shutil
import sys
import time
from pathlib import Path

import pytest

grpc = pytest.importorskip("grpc")
from grpc_status import rpc_status  # noqa: E402
from google.rpc import error_details_pb2  # noqa: E402

from tests.helpers import free_port, run_mockd, start_server, write_config  # noqa: E402

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "grpc"
TIMEOUT = 10


@pytest.fixture(scope="module")
def stubs(tmp_path_factory):
    """``(users_pb2, users_pb2_grpc, greeter_pb2, greeter_pb2_grpc)`` generated now."""
    from grpc_tools import protoc

    out = tmp_path_factory.mktemp("grpc-stubs")
    for name in ("users.proto", "greeter.proto"):
        assert protoc.main(["protoc", f"-I{FIXTURES}", f"--python_out={out}",
                            f"--grpc_python_out={out}", str(FIXTURES / name)]) == 0
    sys.path.insert(0, str(out))
    try:
        return tuple(importlib.import_module(name) for name in
                     ("users_pb2", "users_pb2_grpc", "greeter_pb2", "greeter_pb2_grpc"))
    finally:
        sys.path.remove(str(out))


def users_config(users_port: int, greeter_port: int) -> dict:
    return {
        "version": "1.0",
        "tables": [{"name": "users", "idStrategy": "sequence",
                    "seedData": [{"id": "1", "name": "Seed", "email": "seed@example.com"}]}],
        "mocks": [
            {"id": "users-grpc", "type": "grpc", "grpc": {
                "port": users_port, "protoFile": "users.proto", "reflection": True,
                "services": {"demo.v1.Users": {"methods": {
                    "GetUser": {
                        "response": {"id": "{{request.id}}", "name": "User {{request.id}}",
                                     "age": "{{request.id}}", "active": "true"},
                        "variants": [
                            {"match": {"metadata": {"x-tenant": "vip"}},
                             "response": {"id": "{{request.id}}", "name": "VIP",
                                          "email": "{{request.metadata.x-tenant}}@example.com"}},
                            {"match": {"request": {"id": "404"}},
                             "error": {"code": "NOT_FOUND", "message": "no user {{request.id}}",
                                       "details": [{
                                           "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                                           "reason": "USER_MISSING", "domain": "example.com",
                                           "metadata": {"id": "{{request.id}}"}}]}}]},
                    "ListUsers": {"responses": [{"id": "a", "name": "Ann"},
                                                {"id": "b", "name": "Bob"},
                                                {"id": "c", "name": "{{faker.firstName}}"}],
                                  "streamDelay": "20ms"},
                    "UploadUsers": {"response": {"count": "{{request.count}}",
                                                 "last_name": "{{request.last.name}}"}},
                    "Chat": {"response": {"text": "echo {{request.text}}", "user": "bot"},
                             "variants": [{"match": {"request": {"text": "bye"}},
                                           "error": {"code": "UNAVAILABLE",
                                                     "message": "closing"}}]},
                    "CreateUser": {"statefulResource": "users", "statefulAction": "create"},
                    # FindUser is bound by an extend entry below.
                }}}}},
            {"id": "greeter-elsewhere", "type": "grpc", "grpc": {
                "port": greeter_port, "protoFile": "greeter.proto",
                "services": {"helloworld.Greeter": {"methods": {"SayHello": {
                    "response": {"message": "Hi {{request.name}}"}, "delay": "10ms"}}}}}},
            {"id": "rest-user", "type": "http", "http": {
                "matcher": {"method": "GET", "path": "/users/{id}"}}},
        ],
        "extend": [{"mock": "rest-user", "table": "users", "action": "get"},
                   {"mock": "users-grpc.demo.v1.Users.FindUser", "table": "users",
                    "action": "get"}],
    }


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    folder = tmp_path_factory.mktemp("grpc")
    for name in ("users.proto", "greeter.proto"):
        shutil.copy(FIXTURES / name, folder / name)
    users_port, greeter_port = free_port(), free_port()
    with start_server(folder, users_config(users_port, greeter_port)) as process:
        process.users_port, process.greeter_port, process.folder = (users_port, greeter_port,
                                                                    folder)
        yield process


def channel(port: int):
    """A ready channel to ``127.0.0.1:port`` (listeners start right after the HTTP ports)."""
    opened = grpc.insecure_channel(f"127.0.0.1:{port}")
    grpc.channel_ready_future(opened).result(timeout=TIMEOUT)
    return opened


@pytest.fixture(scope="module")
def users(server, stubs):
    with channel(server.users_port) as opened:
        yield stubs[1].UsersStub(opened), stubs[0]


def test_unary_call_renders_request_fields_into_typed_reply_fields(users):
    stub, pb2 = users
    reply = stub.GetUser(pb2.GetUserRequest(id="42"), timeout=TIMEOUT)
    assert (reply.id, reply.name, reply.age, reply.active) == ("42", "User 42", 42, True)


def test_metadata_match_selects_a_variant(users):
    stub, pb2 = users
    reply = stub.GetUser(pb2.GetUserRequest(id="7"), metadata=(("x-tenant", "vip"),),
                         timeout=TIMEOUT)
    assert (reply.name, reply.email) == ("VIP", "vip@example.com")


def test_error_variant_sends_status_with_rich_details(users):
    stub, pb2 = users
    with pytest.raises(grpc.RpcError) as raised:
        stub.GetUser(pb2.GetUserRequest(id="404"), timeout=TIMEOUT)
    error = raised.value
    assert error.code() == grpc.StatusCode.NOT_FOUND and error.details() == "no user 404"
    status = rpc_status.from_call(error)
    assert status is not None and len(status.details) == 1
    info = error_details_pb2.ErrorInfo()
    assert status.details[0].Unpack(info)
    assert (info.reason, info.domain, dict(info.metadata)) == ("USER_MISSING", "example.com",
                                                               {"id": "404"})


def test_server_stream_sends_every_response_in_order(users):
    stub, pb2 = users
    names = [user.name for user in stub.ListUsers(pb2.ListUsersRequest(page_size=3),
                                                  timeout=TIMEOUT)]
    assert names[:2] == ["Ann", "Bob"] and len(names) == 3 and names[2]


def test_client_stream_answers_after_half_close_with_every_message(users):
    stub, pb2 = users
    reply = stub.UploadUsers(iter([pb2.User(name="a"), pb2.User(name="b"),
                                   pb2.User(name="last one")]), timeout=TIMEOUT)
    assert (reply.count, reply.last_name) == (3, "last one")


def test_bidi_stream_replies_per_message_and_ends_on_a_matching_error(users):
    stub, pb2 = users
    replies = stub.Chat(iter([pb2.ChatMessage(text="hi"), pb2.ChatMessage(text="there"),
                              pb2.ChatMessage(text="bye")]), timeout=TIMEOUT)
    received = []
    with pytest.raises(grpc.RpcError) as raised:
        for reply in replies:
            received.append(reply.text)
    assert received == ["echo hi", "echo there"]
    assert raised.value.code() == grpc.StatusCode.UNAVAILABLE


def test_method_without_an_entry_answers_a_seeded_fake_message(users):
    stub, pb2 = users
    seeded = (("x-mockd-seed", "7"),)
    first = stub.Describe(pb2.GetUserRequest(id="1"), metadata=seeded, timeout=TIMEOUT)
    again = stub.Describe(pb2.GetUserRequest(id="1"), metadata=seeded, timeout=TIMEOUT)
    assert first == again and "@" in first.email and first.name and first.id


def test_unknown_method_is_unimplemented_and_malformed_message_is_internal(server):
    with channel(server.users_port) as opened:
        unknown = opened.unary_unary("/demo.v1.Users/Nope")
        with pytest.raises(grpc.RpcError) as raised:
            unknown(b"", timeout=TIMEOUT)
        assert raised.value.code() == grpc.StatusCode.UNIMPLEMENTED
        raw = opened.unary_unary("/demo.v1.Users/GetUser")
        with pytest.raises(grpc.RpcError) as raised:
            raw(b"\xff\xff\xff", timeout=TIMEOUT)
        assert raised.value.code() == grpc.StatusCode.INTERNAL
        assert "demo.v1.GetUserRequest" in raised.value.details()


def test_reflection_lists_the_services(server):
    from grpc_reflection.v1alpha.proto_reflection_descriptor_database import (
        ProtoReflectionDescriptorDatabase)

    with channel(server.users_port) as opened:
        database = ProtoReflectionDescriptorDatabase(opened)
        services = set(database.get_services())
        assert {"demo.v1.Users", "grpc.health.v1.Health"} <= services
        found = database.FindFileContainingSymbol("demo.v1.Users")
        assert found.package == "demo.v1"


def test_health_checking_answers_serving(server):
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    with channel(server.greeter_port) as opened:
        stub = health_pb2_grpc.HealthStub(opened)
        for service in ("", "helloworld.Greeter"):
            answer = stub.Check(health_pb2.HealthCheckRequest(service=service),
                                timeout=TIMEOUT)
            assert answer.status == health_pb2.HealthCheckResponse.SERVING


def test_second_port_of_the_config_serves_its_own_mock(server, stubs):
    with channel(server.greeter_port) as opened:
        reply = stubs[3].GreeterStub(opened).SayHello(stubs[2].HelloRequest(name="Eve"),
                                                      timeout=TIMEOUT)
    assert reply.message == "Hi Eve"


def test_created_over_grpc_is_read_over_rest_and_back(users, server):
    stub, pb2 = users
    created = stub.CreateUser(pb2.CreateUserRequest(user=pb2.User(name="Grace",
                                                                  email="g@example.com")),
                              timeout=TIMEOUT)
    assert created.id and created.name == "Grace"
    with server.client() as data:
        answer = data.get(f"/users/{created.id}")
    assert answer.status_code == 200 and answer.json()["email"] == "g@example.com"
    # FindUser answers from the table through its extend binding (method-level for Create).
    assert stub.FindUser(pb2.GetUserRequest(id="1"), timeout=TIMEOUT).name == "Seed"
    found = stub.FindUser(pb2.GetUserRequest(id=created.id), timeout=TIMEOUT)
    assert (found.name, found.email) == ("Grace", "g@example.com")
    with pytest.raises(grpc.RpcError) as raised:
        stub.FindUser(pb2.GetUserRequest(id="999"), timeout=TIMEOUT)
    assert raised.value.code() == grpc.StatusCode.NOT_FOUND


def test_chaos_faults_reach_grpc_calls(users, server):
    """A chaos rule on ``/demo.v1.Users/GetUser`` (the call seen as ``POST`` to its path):
    an injected 503 is ``UNAVAILABLE``, latency delays the reply, retry-after sends its
    ``retry-after`` as trailing metadata, an empty response is an empty message, a reset is
    ``UNAVAILABLE``; a method no rule names answers as configured."""
    stub, pb2 = users

    def rule(fault: dict) -> dict:
        return {"enabled": True, "rules": [{"pathPattern": "/demo\\.v1\\.Users/GetUser$",
                                            "methods": ["POST"], "faults": [fault]}]}

    def refused(request) -> grpc.RpcError:
        with pytest.raises(grpc.RpcError) as raised:
            stub.GetUser(request, timeout=TIMEOUT)
        return raised.value

    request = pb2.GetUserRequest(id="1")
    with server.admin_client() as admin:
        try:
            assert admin.post("/chaos/stats/reset").status_code == 200
            assert admin.put("/chaos", json=rule({"type": "error",
                                                  "statusCodes": [503]})).status_code == 200
            error = refused(request)
            assert error.code() == grpc.StatusCode.UNAVAILABLE
            assert error.details() == "chaos: 503 Service Unavailable"
            assert stub.FindUser(request, timeout=TIMEOUT).name == "Seed"

            admin.put("/chaos", json=rule({"type": "latency", "min": "300ms", "max": "300ms"}))
            started = time.monotonic()
            assert stub.GetUser(request, timeout=TIMEOUT).name == "User 1"
            assert time.monotonic() - started >= 0.25

            admin.put("/chaos", json=rule({"type": "retry_after", "statusCode": 429,
                                           "retryAfter": 5}))
            error = refused(request)
            assert error.code() == grpc.StatusCode.UNAVAILABLE
            assert dict(error.trailing_metadata())["retry-after"] == "5"

            admin.put("/chaos", json=rule({"type": "empty_response"}))
            assert stub.GetUser(request, timeout=TIMEOUT) == pb2.User()

            admin.put("/chaos", json=rule({"type": "connection_reset"}))
            assert refused(request).code() == grpc.StatusCode.UNAVAILABLE

            admin.put("/chaos", json={"enabled": True, "rules": [{
                "pathPattern": "ListUsers$", "faults": [{"type": "error",
                                                         "statusCodes": [404]}]}]})
            with pytest.raises(grpc.RpcError) as raised:
                list(stub.ListUsers(pb2.ListUsersRequest(page_size=3), timeout=TIMEOUT))
            assert raised.value.code() == grpc.StatusCode.UNIMPLEMENTED
            stats = admin.get("/chaos/stats").json()
            assert stats["totalRequests"] == 7 and stats["errorsInjected"] == 2
            assert stats["faultsByType"]["retry_after"] == 1
        finally:
            assert admin.put("/chaos", json={"enabled": False}).status_code == 200
    assert stub.GetUser(request, timeout=TIMEOUT).name == "User 1"


def test_calls_reach_request_log_verification_metrics_ports_and_admin_views(users, server):
    stub, pb2 = users
    stub.GetUser(pb2.GetUserRequest(id="5"), timeout=TIMEOUT)
    with server.admin_client() as admin:
        entries = admin.get("/requests", params={"grpcService": "demo.v1.Users"}).json()
        entry = next(item for item in entries["requests"]
                     if item["path"] == "/demo.v1.Users/GetUser")
        assert entry["method"] == "grpc" and entry["protocol"] == "grpc"
        assert entry["grpc"]["statusCode"] in ("OK", "NOT_FOUND")
        assert admin.get("/mocks/users-grpc/verify").json()["callCount"] >= 1
        metrics = admin.get("/metrics").text
        assert 'method="grpc",path="/demo.v1.Users/GetUser"' in metrics.replace(
            'path="/demo.v1.Users/GetUser",method="grpc"', 'method="grpc",path="/demo.v1.Users/GetUser"')
        ports = admin.get("/ports").json()["ports"]
        assert {"port": server.users_port, "protocol": "gRPC", "component": "gRPC Server",
                "status": "running"} in ports
        overview = admin.get("/grpc").json()
        assert overview["count"] == 2
        assert {(row["address"], row["running"]) for row in overview["servers"]} == {
            (f":{server.users_port}", True), (f":{server.greeter_port}", True)}
        status = admin.get("/grpc/users-grpc/status").json()
        assert status["running"] and status["requestCount"] >= 1
        assert admin.get("/grpc/stats").json()["totalCalls"] >= 1
        assert admin.get("/grpc/connections").json()["count"] == 0
        assert admin.get("/grpc/nope/status").status_code == 404


def _greeter_mock(port: int, **extra) -> dict:
    return {"type": "grpc", "grpc": {"port": port, "protoFile": str(FIXTURES / "greeter.proto"),
                                     "services": {"helloworld.Greeter": {"methods": {
                                         "SayHello": {"response": {"message": "merged"}}}}}},
            **extra}


def test_posting_a_grpc_mock_for_a_used_port_merges_it_and_each_conflict_is_409(server, stubs):
    port = server.users_port
    with server.admin_client() as admin:
        merged = admin.post("/mocks", json=_greeter_mock(port))
        assert merged.status_code == 200, merged.text
        body = merged.json()
        assert body["action"] == "merged" and body["targetMockId"] == "users-grpc"
        assert body["addedServices"] == ["helloworld.Greeter"]
        assert body["totalServices"] == ["demo.v1.Users", "helloworld.Greeter"]
        assert "helloworld.Greeter" in body["mock"]["grpc"]["services"]
        again = admin.post("/mocks", json=_greeter_mock(port))
        assert again.status_code == 409 and again.json()["error"] == "service_conflict"
        assert "helloworld.Greeter/SayHello" in again.json()["message"]
        team = admin.post("/workspaces", json={"name": "Team grpc"}).json()
        other = admin.post("/mocks", json=_greeter_mock(port, workspaceId=team["id"]))
        assert other.status_code == 409 and other.json()["error"] == "port_conflict"
        mqtt_port = free_port()
        assert admin.post("/mocks", json={"type": "mqtt", "mqtt": {"port": mqtt_port}}) \
            .status_code == 201
        clash = admin.post("/mocks", json=_greeter_mock(mqtt_port))
        assert clash.status_code == 409 and clash.json()["error"] == "port_conflict"
    # The merged service set restarts the port's server: both services answer on it.
    with channel(port) as opened:
        deadline_reply = None
        for _ in range(50):
            try:
                deadline_reply = stubs[3].GreeterStub(opened).SayHello(
                    stubs[2].HelloRequest(name="x"), timeout=TIMEOUT)
                break
            except grpc.RpcError as error:
                if error.code() != grpc.StatusCode.UNIMPLEMENTED and \
                        error.code() != grpc.StatusCode.UNAVAILABLE:
                    raise
                __import__("time").sleep(0.1)
        assert deadline_reply is not None and deadline_reply.message == "merged"


def test_bad_proto_is_a_config_error_naming_file_and_line(tmp_path):
    (tmp_path / "bad.proto").write_text('syntax = "proto3";\npackage x;\n'
                                        'message A {\n  strin name = 1;\n}\n')
    config = {"version": "1.0", "mocks": [{"id": "bad", "type": "grpc", "grpc": {
        "port": free_port(), "protoFile": "bad.proto"}}]}
    result = run_mockd(["engine", "-c", str(write_config(tmp_path / "mocks.yaml", config)),
                        "--port", "0"], tmp_path, timeout=30)
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert "mocks[0].grpc.protoFile" in output and "bad.proto line 4" in output
    assert '"strin" is not defined' in output


def test_cli_grpc_add_and_import_of_a_proto(server, stubs, tmp_path):
    port = free_port()
    added = run_mockd(["grpc", "add", "--proto", str(FIXTURES / "greeter.proto"),
                       "--service", "helloworld.Greeter", "--method", "SayHello",
                       "--response", '{"message": "cli {{request.name}}"}', "--port", str(port),
                       "--admin-url", server.admin], tmp_path)
    assert added.returncode == 0, added.stderr
    assert f"on port {port} (helloworld.Greeter/SayHello)" in added.stdout
    with channel(port) as opened:
        reply = stubs[3].GreeterStub(opened).SayHello(stubs[2].HelloRequest(name="Ada"),
                                                      timeout=TIMEOUT)
    assert reply.message == "cli Ada"
    imported = run_mockd(["import", str(FIXTURES / "users.proto"), "--dry-run", "--json",
                          "--admin-url", server.admin], tmp_path)
    assert imported.returncode == 0, imported.stderr
    assert '"format": "proto"' in imported.stdout and "grpc-demo.v1.Users" in imported.stdout
