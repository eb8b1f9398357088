"""Server reflection of a gRPC mock, read by real clients against ``mockd start``: the
grpcio-reflection client (``ProtoReflectionDescriptorDatabase`` under a ``DescriptorPool``)
over ``grpc.reflection.v1alpha`` and, with its stub pointed at the v1 path, over
``grpc.reflection.v1``; raw reflection streams for what that client does not ask itself
(method symbols, ``file_by_filename`` dependencies, extensions, errors). Calls are then made
with messages built from reflection alone (``message_factory``) on a generic channel method,
as grpcurl and grpcui do.

Source: behavior notes §10 (``reflection``); docs/grpc.md "Reflection and health".
"""
from __future__ import annotations

import pytest

grpc = pytest.importorskip("grpc")
from grpc_reflection.v1alpha import reflection_pb2  # noqa: E402

from tests.grpc_reflection_client import (VERSIONS, ask, dynamic_call,  # noqa: E402
                                          file_names, open_channel, reflected_pool,
                                          reflection_database)
from tests.helpers import free_port, start_server  # noqa: E402

SHOP_PROTO = """\
syntax = "proto3";
package shop.v1;

import "google/protobuf/descriptor.proto";
import "google/protobuf/timestamp.proto";

extend google.protobuf.MethodOptions {
  string audit = 50001;
}

service Orders {
  rpc GetOrder (GetOrderRequest) returns (Order) { option (audit) = "read"; }
  rpc WatchOrders (GetOrderRequest) returns (stream Order);
}

message GetOrderRequest {
  string id = 1;
}

message Order {
  enum State {
    STATE_UNSPECIFIED = 0;
    OPEN = 1;
    SHIPPED = 2;
  }
  message Line {
    string sku = 1;
    int32 quantity = 2;
  }
  string id = 1;
  State state = 2;
  repeated Line lines = 3;
  google.protobuf.Timestamp created = 4;
  oneof payment {
    string card = 5;
    string invoice = 6;
  }
}
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    folder = tmp_path_factory.mktemp("grpc-reflection")
    (folder / "shop.proto").write_text(SHOP_PROTO)
    port, plain_port = free_port(), free_port()
    config = {"version": "1.0", "mocks": [
        {"id": "shop", "type": "grpc", "grpc": {
            "port": port, "protoFile": "shop.proto", "reflection": True,
            "services": {"shop.v1.Orders": {"methods": {
                "GetOrder": {"response": {"id": "{{request.id}}", "state": "SHIPPED",
                                          "lines": [{"sku": "A-1", "quantity": 2}],
                                          "card": "visa"}},
                "WatchOrders": {"responses": [{"id": "1", "state": "OPEN"},
                                              {"id": "2", "state": "SHIPPED"}]}}}}}},
        {"id": "shop-plain", "type": "grpc", "grpc": {
            "port": plain_port, "protoFile": "shop.proto"}}]}
    with start_server(folder, config) as process:
        process.port, process.plain_port = port, plain_port
        yield process


@pytest.fixture(scope="module")
def channel(server):
    opened = open_channel(server.port)
    yield opened
    opened.close()


@pytest.mark.parametrize("version", VERSIONS)
def test_every_listed_service_resolves_with_the_reflection_client(channel, version):
    database = reflection_database(channel, version)
    services = database.get_services()
    assert services == sorted(services)
    assert set(services) == {"shop.v1.Orders", "grpc.health.v1.Health",
                             "grpc.reflection.v1.ServerReflection",
                             "grpc.reflection.v1alpha.ServerReflection"}
    pool = reflected_pool(channel, version)
    for name in services:
        service = pool.FindServiceByName(name)
        assert service.methods and all(method.input_type for method in service.methods), name
    assert pool.FindServiceByName("grpc.reflection.v1.ServerReflection").file.name == \
        "grpc/reflection/v1/reflection.proto"
    assert pool.FindMessageTypeByName(
        "grpc.reflection.v1.ServerReflectionRequest").fields_by_name["list_services"]


@pytest.mark.parametrize("version", VERSIONS)
def test_messages_built_from_reflection_alone_call_the_mock(channel, version):
    pool = reflected_pool(channel, version)
    reply = dynamic_call(channel, pool, "shop.v1.Orders.GetOrder", id="42")
    assert (reply.id, reply.lines[0].sku, reply.lines[0].quantity, reply.card) == (
        "42", "A-1", 2, "visa")
    state = pool.FindEnumTypeByName("shop.v1.Order.State")
    assert state.values_by_number[reply.state].name == "SHIPPED"
    stream = dynamic_call(channel, pool, "shop.v1.Orders.WatchOrders", streaming=True, id="1")
    assert [item.id for item in stream] == ["1", "2"]
    health = dynamic_call(channel, pool, "grpc.health.v1.Health.Check",
                          service="shop.v1.Orders")
    assert health.DESCRIPTOR.fields_by_name["status"].enum_type.values_by_number[
        health.status].name == "SERVING"
    extension = pool.FindExtensionByName("shop.v1.audit")
    assert (extension.number, extension.containing_type.full_name) == (
        50001, "google.protobuf.MethodOptions")


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("symbol", [
    pytest.param("shop.v1.Orders", id="service"),
    pytest.param("shop.v1.Orders.GetOrder", id="method"),
    pytest.param("shop.v1.Order", id="message"),
    pytest.param("shop.v1.Order.Line", id="nested message"),
    pytest.param("shop.v1.Order.State", id="nested enum"),
    pytest.param("shop.v1.Order.SHIPPED", id="enum value"),
    pytest.param("shop.v1.Order.lines", id="field"),
    pytest.param("shop.v1.Order.payment", id="oneof"),
    pytest.param("shop.v1.audit", id="extension"),
])
def test_file_containing_symbol_finds_each_kind_of_symbol(channel, version, symbol):
    [response] = ask(channel, version,
                     reflection_pb2.ServerReflectionRequest(file_containing_symbol=symbol))
    assert response.WhichOneof("message_response") == "file_descriptor_response"
    names = file_names(response)
    assert names[0] == "shop.proto"
    assert set(names) == {"shop.proto", "google/protobuf/descriptor.proto",
                          "google/protobuf/timestamp.proto"}


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("symbol, file_name", [
    ("grpc.health.v1.Health", "grpc/health/v1/health.proto"),
    ("grpc.health.v1.Health.Watch", "grpc/health/v1/health.proto"),
    ("grpc.reflection.v1.ServerReflection", "grpc/reflection/v1/reflection.proto"),
    ("grpc.reflection.v1.ServerReflection.ServerReflectionInfo",
     "grpc/reflection/v1/reflection.proto"),
    ("grpc.reflection.v1alpha.ServerReflection", "grpc/reflection/v1alpha/reflection.proto"),
    ("google.protobuf.Timestamp", "google/protobuf/timestamp.proto"),
])
def test_health_and_reflection_services_resolve_like_the_mocks_own(channel, version, symbol,
                                                                   file_name):
    [response] = ask(channel, version,
                     reflection_pb2.ServerReflectionRequest(file_containing_symbol=symbol))
    assert file_names(response) == [file_name]


@pytest.mark.parametrize("version", VERSIONS)
def test_file_by_filename_sends_dependencies_once_per_stream(channel, version):
    first, again, dependency = ask(
        channel, version,
        reflection_pb2.ServerReflectionRequest(file_by_filename="shop.proto"),
        reflection_pb2.ServerReflectionRequest(file_by_filename="shop.proto"),
        reflection_pb2.ServerReflectionRequest(
            file_by_filename="google/protobuf/timestamp.proto"))
    assert file_names(first) == ["shop.proto", "google/protobuf/descriptor.proto",
                                 "google/protobuf/timestamp.proto"]
    assert file_names(again) == ["shop.proto"]  # the file asked for is always sent
    assert file_names(dependency) == ["google/protobuf/timestamp.proto"]
    assert first.original_request.file_by_filename == "shop.proto"


@pytest.mark.parametrize("version", VERSIONS)
def test_extensions_answer_numbers_and_their_file(channel, version):
    numbers, found, unknown_number, unknown_type = ask(
        channel, version,
        reflection_pb2.ServerReflectionRequest(
            all_extension_numbers_of_type="google.protobuf.MethodOptions"),
        reflection_pb2.ServerReflectionRequest(file_containing_extension=reflection_pb2.
                                               ExtensionRequest(
            containing_type="google.protobuf.MethodOptions", extension_number=50001)),
        reflection_pb2.ServerReflectionRequest(file_containing_extension=reflection_pb2.
                                               ExtensionRequest(
            containing_type="google.protobuf.MethodOptions", extension_number=7)),
        reflection_pb2.ServerReflectionRequest(all_extension_numbers_of_type="shop.v1.Nope"))
    assert numbers.all_extension_numbers_response.base_type_name == \
        "google.protobuf.MethodOptions"
    assert list(numbers.all_extension_numbers_response.extension_number) == [50001]
    assert file_names(found)[0] == "shop.proto"
    assert unknown_number.error_response.error_code == grpc.StatusCode.NOT_FOUND.value[0]
    assert unknown_type.error_response.error_code == grpc.StatusCode.NOT_FOUND.value[0]
    assert "shop.v1.Nope" in unknown_type.error_response.error_message


@pytest.mark.parametrize("version", VERSIONS)
def test_unknown_symbol_or_file_is_not_found_and_the_stream_goes_on(channel, version):
    missing_symbol, missing_file, listed = ask(
        channel, version,
        reflection_pb2.ServerReflectionRequest(file_containing_symbol="shop.v1.Orders.Nope"),
        reflection_pb2.ServerReflectionRequest(file_by_filename="nope.proto"),
        reflection_pb2.ServerReflectionRequest(list_services="*"))
    assert missing_symbol.error_response.error_code == grpc.StatusCode.NOT_FOUND.value[0]
    assert missing_symbol.error_response.error_message == \
        "symbol not found: shop.v1.Orders.Nope"
    assert missing_file.error_response.error_code == grpc.StatusCode.NOT_FOUND.value[0]
    assert "shop.v1.Orders" in [item.name for item in listed.list_services_response.service]


def test_a_port_without_reflection_does_not_serve_it(server):
    with open_channel(server.plain_port) as opened:
        for version in VERSIONS:
            with pytest.raises(grpc.RpcError) as raised:
                ask(opened, version, reflection_pb2.ServerReflectionRequest(list_services=""))
            assert raised.value.code() == grpc.StatusCode.UNIMPLEMENTED
