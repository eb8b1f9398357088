"""Real googleapis ``.proto`` files served by gRPC mocks: Pub/Sub, Firestore and Datastore
Admin from the npm package ``google-proto-files`` (fetched at test time through
:mod:`tests.thirdparty`, never committed), loaded through ``mockd import -I`` and through a
config file with ``importPaths``, then described and called by a client that knows them only
from reflection (:mod:`tests.grpc_reflection_client`). Also ``mockd grpc add`` onto a port
``mockd import`` made, which merges (with ``-I`` files, and with two different inline
``protoContent`` files).

Source: behavior notes §10 (``grpc``: ``importPaths[]``, ``reflection``); SPEC "Mocks" (port
merging); docs/grpc.md "Protos from the wild", "Several mocks on one port".
"""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

grpc = pytest.importorskip("grpc")
from grpc_reflection.v1alpha import reflection_pb2  # noqa: E402

from tests.grpc_reflection_client import (ask, dynamic_call, file_names,  # noqa: E402
                                          open_channel, reflected_pool,
                                          reflection_database, until_served)
from tests.helpers import free_port, run_mockd, start_server  # noqa: E402
from tests.thirdparty import package_root  # noqa: E402

GOOGLE_PROTO_FILES = "google-proto-files@6.0.1"
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "grpc"
PUBSUB = "google/pubsub/v1/pubsub.proto"
FIRESTORE = "google/firestore/v1/firestore.proto"
DATASTORE_ADMIN = "google/datastore/admin/v1/datastore_admin.proto"


@pytest.fixture(scope="module")
def googleapis() -> Path:
    """The root of google-proto-files: ``google/...`` as googleapis lays it out."""
    return package_root(GOOGLE_PROTO_FILES)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    folder = tmp_path_factory.mktemp("grpc-wild")
    with start_server(folder) as process:
        process.folder = folder
        yield process


def mockd(server, *args: str):
    result = run_mockd([*args, "--admin-url", server.admin], server.folder, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


@pytest.fixture(scope="module")
def pubsub_import(server, googleapis) -> tuple[int, str]:
    """``(gRPC port, output)`` of one ``mockd import`` of Pub/Sub with ``-I``: checked by the
    first test below, then merged into by ``mockd grpc add`` (one import and one gRPC
    server fewer than an import per test)."""
    port = free_port()
    return port, mockd(server, "import", str(googleapis / PUBSUB), "-I", str(googleapis),
                       "--grpc-port", str(port))


def test_import_with_import_path_serves_pubsub_to_a_reflection_client(server, pubsub_import):
    port, output = pubsub_import
    assert "Imported 2 mocks" in output and "(format: proto)" in output
    with server.admin_client() as admin:
        stored = admin.get("/mocks/grpc-google.pubsub.v1.Publisher").json()["grpc"]
    # Everything the server compiles travels in the mock: it reads no file of the user's.
    assert stored["protoFile"] == PUBSUB and "importPaths" not in stored
    assert {PUBSUB, "google/pubsub/v1/schema.proto",
            "google/api/annotations.proto"} <= set(stored["protoSources"])
    with open_channel(port) as channel:
        pool = reflected_pool(channel)
        publisher = pool.FindServiceByName("google.pubsub.v1.Publisher")
        assert "Publish" in publisher.methods_by_name
        [described] = ask(channel, "v1", reflection_pb2.ServerReflectionRequest(
            file_containing_symbol="google.pubsub.v1.Publisher.Publish"))
        assert file_names(described)[0] == PUBSUB
        assert "google/pubsub/v1/schema.proto" in file_names(described)
        reply = dynamic_call(channel, pool, "google.pubsub.v1.Publisher.Publish",
                             topic="projects/p/topics/t", messages=[{"data": b"hello"}])
        assert len(reply.message_ids) == 2 and all(reply.message_ids)
        subscription = dynamic_call(channel, pool, "google.pubsub.v1.Subscriber.GetSubscription",
                                    subscription="projects/p/subscriptions/s")
        assert subscription.DESCRIPTOR.full_name == "google.pubsub.v1.Subscription"


def test_import_of_firestore_with_import_path_answers_documents(server, googleapis):
    port = free_port()
    mockd(server, "import", str(googleapis / FIRESTORE), "--import-path", str(googleapis),
          "--grpc-port", str(port))
    with open_channel(port) as channel:
        pool = reflected_pool(channel, "v1alpha")
        document = dynamic_call(channel, pool, "google.firestore.v1.Firestore.GetDocument",
                                name="projects/p/databases/(default)/documents/users/ada")
        assert document.DESCRIPTOR.full_name == "google.firestore.v1.Document"
        assert "google.firestore.v1.Firestore" in reflection_database(channel).get_services()
        for name in reflection_database(channel).get_services():
            assert pool.FindServiceByName(name).methods


def test_import_without_the_include_folder_names_it(server, googleapis):
    result = run_mockd(["import", str(googleapis / PUBSUB), "--dry-run",
                        "--admin-url", server.admin], server.folder, timeout=120)
    assert result.returncode == 2
    assert "google/pubsub/v1/schema.proto: File not found." in result.stderr
    assert f"--import-path {googleapis}" in result.stderr


def test_config_with_import_paths_uses_builtin_google_api_rpc_type_and_longrunning(
        googleapis, tmp_path):
    """Only the services' own folders are copied next to the config: ``google/api``,
    ``google/rpc``, ``google/type`` and ``google/longrunning/operations.proto`` resolve from
    the built-in includes."""
    for folder in ("google/pubsub/v1", "google/firestore/v1", "google/datastore/admin/v1"):
        shutil.copytree(googleapis / folder, tmp_path / "protos" / folder)
    assert not (tmp_path / "protos" / "google" / "api").exists()
    ports = {name: free_port() for name in ("pubsub", "firestore", "datastore")}

    def grpc_mock(name: str, proto: str, services: dict) -> dict:
        return {"id": name, "type": "grpc", "grpc": {
            "port": ports[name], "protoFile": f"protos/{proto}", "importPaths": ["protos"],
            "reflection": True, "services": services}}

    config = {"version": "1.0", "mocks": [
        grpc_mock("pubsub", PUBSUB, {"google.pubsub.v1.Publisher": {"methods": {
            "Publish": {"response": {"messageIds": ["m-{{request.topic}}"]}}}}}),
        grpc_mock("firestore", FIRESTORE, {"google.firestore.v1.Firestore": {"methods": {
            "GetDocument": {"response": {"name": "{{request.name}}",
                                         "fields": {"who": {"stringValue": "Ada"}}}}}}}),
        grpc_mock("datastore", DATASTORE_ADMIN, {"google.datastore.admin.v1.DatastoreAdmin": {
            "methods": {"ExportEntities": {"response": {"name": "operations/export-1",
                                                        "done": True}}}}}),
    ]}
    with start_server(tmp_path, config):
        with open_channel(ports["pubsub"]) as channel:
            reply = dynamic_call(channel, reflected_pool(channel),
                                 "google.pubsub.v1.Publisher.Publish", topic="t1")
            assert list(reply.message_ids) == ["m-t1"]
        with open_channel(ports["firestore"]) as channel:
            document = dynamic_call(channel, reflected_pool(channel),
                                    "google.firestore.v1.Firestore.GetDocument", name="d/1")
            assert document.name == "d/1" and document.fields["who"].string_value == "Ada"
        with open_channel(ports["datastore"]) as channel:
            pool = reflected_pool(channel, "v1alpha")
            operation = dynamic_call(channel, pool,
                                     "google.datastore.admin.v1.DatastoreAdmin.ExportEntities",
                                     project_id="p")
            assert (operation.name, operation.done) == ("operations/export-1", True)
            assert operation.DESCRIPTOR.full_name == "google.longrunning.Operation"
            [found] = ask(channel, "v1", reflection_pb2.ServerReflectionRequest(
                file_by_filename="google/longrunning/operations.proto"))
            assert "google/rpc/status.proto" in file_names(found)


def test_grpc_add_with_import_path_onto_an_imported_port_merges(server, googleapis,
                                                                 pubsub_import):
    # After the import test above (file order): the merge replaces its Publish answer.
    port, _ = pubsub_import
    output = mockd(server, "grpc", "add", "--proto", str(googleapis / PUBSUB), "-I",
                   str(googleapis), "--service", "google.pubsub.v1.Publisher", "--method",
                   "Publish", "--response", '{"messageIds": ["added-{{request.topic}}"]}',
                   "--port", str(port))
    assert f"Merged into gRPC mock grpc-google.pubsub.v1.Publisher on port {port}" in output
    with open_channel(port) as channel:
        def publish():
            return dynamic_call(channel, reflected_pool(channel),
                                "google.pubsub.v1.Publisher.Publish", topic="t9")
        reply = until_served(publish, lambda reply: list(reply.message_ids) == ["added-t9"])
        assert list(reply.message_ids) == ["added-t9"]


def test_grpc_add_of_another_proto_onto_an_imported_port_merges_both_inline_files(server):
    port = free_port()
    mockd(server, "import", str(FIXTURES / "users.proto"), "--grpc-port", str(port))
    output = mockd(server, "grpc", "add", "--proto", str(FIXTURES / "greeter.proto"),
                   "--service", "helloworld.Greeter", "--method", "SayHello", "--response",
                   '{"message": "merged {{request.name}}"}', "--port", str(port))
    assert f"Merged into gRPC mock grpc-demo.v1.Users on port {port}" in output
    assert "demo.v1.Users, helloworld.Greeter" in output
    with server.admin_client() as admin:
        stored = admin.get("/mocks/grpc-demo.v1.Users").json()["grpc"]
    assert "service Users" in stored["protoContent"]
    [(name, text)] = stored["protoSources"].items()
    assert "service Greeter" in text and stored["protoFile"] == name
    with open_channel(port) as channel:
        pool = reflected_pool(channel)

        def say_hello():
            return dynamic_call(channel, reflected_pool(channel),
                                "helloworld.Greeter.SayHello", name="Ada")
        reply = until_served(say_hello, lambda reply: reply.message == "merged Ada")
        assert reply.message == "merged Ada"
        user = dynamic_call(channel, pool, "demo.v1.Users.GetUser", id="7")
        assert user.DESCRIPTOR.full_name == "demo.v1.User"
