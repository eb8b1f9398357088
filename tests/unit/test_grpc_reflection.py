"""The reflection index of a gRPC port (:mod:`mocks.protocols.grpc.reflection`) without a
server: what each request kind answers, the v1 descriptor made from v1alpha's, and files
of one name in two mocks.

Source: behavior notes §10 (``reflection``); docs/grpc.md "Reflection and health".
"""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

pytest.importorskip("grpc_tools")
from google.protobuf import descriptor_pb2  # noqa: E402
from grpc_reflection.v1alpha import reflection_pb2  # noqa: E402

from mocks.protocols.grpc.protos import load_protos  # noqa: E402
from mocks.protocols.grpc.reflection import ReflectionIndex, builtin_files  # noqa: E402

PROTO = """syntax = "proto3";
package demo;
import "google/protobuf/empty.proto";
service Pinger { rpc Ping (google.protobuf.Empty) returns (Pong); }
message Pong { string text = 1; }
"""


def proto_set(text: str, mock_id: str):
    config = SimpleNamespace(proto_file=None, proto_files=[], proto_content=text,
                             proto_sources={}, import_paths=[])
    return load_protos(config, "mocks[0].grpc", Path("."), (), mock_id)


def names(response) -> list[str]:
    return [descriptor_pb2.FileDescriptorProto.FromString(item).name
            for item in response.file_descriptor_response.file_descriptor_proto]


def test_builtin_v1_file_is_v1alpha_renamed_with_every_reference_moved():
    health, v1, v1alpha = (descriptor_pb2.FileDescriptorProto.FromString(item)
                           for item in builtin_files())
    assert (health.name, v1.name, v1alpha.name) == (
        "grpc/health/v1/health.proto", "grpc/reflection/v1/reflection.proto",
        "grpc/reflection/v1alpha/reflection.proto")
    assert v1.package == "grpc.reflection.v1" and v1.options.java_package == \
        "io.grpc.reflection.v1"
    references = [field.type_name for message in v1.message_type for field in message.field
                  if field.type_name]
    references += [v1.service[0].method[0].input_type, v1.service[0].method[0].output_type]
    assert references and all(name.startswith(".grpc.reflection.v1.") for name in references)
    assert [message.name for message in v1.message_type] == \
        [message.name for message in v1alpha.message_type]


def test_request_without_a_kind_is_invalid_argument():
    index = ReflectionIndex(proto_set(PROTO, "ping").files, ["demo.Pinger"])
    answer = index.answer(reflection_pb2.ServerReflectionRequest(host="h"), set())
    assert answer.error_response.error_code == 3 and answer.valid_host == "h"


def test_first_file_of_a_name_wins_and_later_symbols_do_not_replace_earlier_ones():
    first = proto_set(PROTO, "same")
    second = proto_set(PROTO.replace("Pong", "Pang"), "same")
    index = ReflectionIndex(first.files + second.files, ["demo.Pinger"])
    assert "demo.Pang" not in index.symbols and index.symbols["demo.Pong"] == "same.proto"
    answer = index.answer(reflection_pb2.ServerReflectionRequest(
        file_containing_symbol="demo.Pinger.Ping"), set())
    assert names(answer) == ["same.proto", "google/protobuf/empty.proto"]


def test_a_dependency_the_port_lacks_is_left_out():
    own = [item for item in proto_set(PROTO, "lonely").files
           if descriptor_pb2.FileDescriptorProto.FromString(item).name == "lonely.proto"]
    index = ReflectionIndex(own, ["demo.Pinger"])
    answer = index.answer(reflection_pb2.ServerReflectionRequest(
        file_by_filename="lonely.proto"), set())
    assert names(answer) == ["lonely.proto"]


def test_extension_numbers_of_a_message_without_extensions_is_an_empty_list():
    index = ReflectionIndex(proto_set(PROTO, "ping").files, ["demo.Pinger"])
    answer = index.answer(reflection_pb2.ServerReflectionRequest(
        all_extension_numbers_of_type="demo.Pong"), set())
    assert answer.all_extension_numbers_response.base_type_name == "demo.Pong"
    assert list(answer.all_extension_numbers_response.extension_number) == []
