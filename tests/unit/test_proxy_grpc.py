"""proxy/grpc.py (gRPC framing, call records) and mocks/portability/recordings_grpc.py
(descriptors printed back to .proto, recordings to grpc mocks)."""
from __future__ import annotations

import base64
import struct

import pytest
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from mocks.portability.recordings_grpc import (Reflected, convert_grpc_recordings,
                                               descriptor_to_proto)
from proxy.grpc import GrpcCall, _Messages, grpc_record
from proxy.recording import RecordingRedaction

RICH = """
syntax = "proto3";
package shop.v1;
import "google/protobuf/timestamp.proto";
option go_package = "example.com/shop/v1";

enum Kind { KIND_UNSPECIFIED = 0; BOOK = 1; }

message Item {
  message Price { int64 cents = 1; string currency = 2; }
  enum State { STATE_UNSPECIFIED = 0; LIVE = 1; }
  string id = 1;
  repeated string tags = 2;
  map<string, int32> counts = 3;
  oneof owner { string user = 4; int64 team = 5; }
  optional string note = 6;
  Price price = 7;
  State state = 8;
  Kind kind = 9;
  google.protobuf.Timestamp created = 10;
  bytes blob = 11;
  reserved 20 to 25;
  reserved "old";
}
message GetItem { string id = 1; }
service Items {
  rpc Get (GetItem) returns (Item);
  rpc Watch (GetItem) returns (stream Item);
  rpc Upload (stream Item) returns (GetItem);
}
"""


def _frame(payload: bytes, flag: int = 0) -> bytes:
    return struct.pack(">BI", flag, len(payload)) + payload


def _compile(tmp_path, name: str, text: str) -> descriptor_pb2.FileDescriptorSet:
    from grpc_tools import protoc

    (tmp_path / name).write_text(text)
    out = tmp_path / f"{name}.pb"
    assert protoc.main(["protoc", f"-I{tmp_path}", f"-I{_well_known()}",
                        f"--descriptor_set_out={out}", "--include_imports", name]) == 0
    return descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes())


def _well_known() -> str:
    import grpc_tools

    from pathlib import Path

    return str(Path(grpc_tools.__file__).parent / "_proto")


def _pool(files: descriptor_pb2.FileDescriptorSet) -> descriptor_pool.DescriptorPool:
    pool = descriptor_pool.DescriptorPool()
    for item in files.file:
        pool.Add(item)
    return pool


def test_messages_are_parsed_across_chunks_with_flags_and_bounds():
    parsed = _Messages(cap=100)
    stream = _frame(b"abc") + _frame(b"", 0) + _frame(b"zz", 1)
    for index in range(len(stream)):
        parsed.feed(stream[index:index + 1])
    assert parsed.messages == [b"abc", b"", b"zz"] and parsed.compressed
    assert not parsed.truncated
    small = _Messages(cap=4)
    small.feed(_frame(b"abc") + _frame(b"defgh") + _frame(b"i"))
    assert small.messages == [b"abc", b"i"] and small.truncated
    streaming = _Messages(cap=4)
    big = _frame(b"x" * 1000) + _frame(b"ok")
    for start in range(0, len(big), 7):
        streaming.feed(big[start:start + 7])
        assert len(streaming._buffer) <= 12  # never holds the large message
    assert streaming.messages == [b"ok"] and streaming.truncated


def test_call_record_takes_status_from_trailers_and_redacts_metadata():
    call = GrpcCall(1, [(b":method", b"POST"), (b":path", b"/shop.v1.Items/Get"),
                        (b":authority", b"shop:50051"), (b"content-type", b"application/grpc"),
                        (b"authorization", b"Bearer s3cret"), (b"x-tenant", b"acme")], 1024)
    call.requests.feed(_frame(b"\x0a\x01\x37"))
    call.response_headers = [(b":status", b"200"), (b"content-type", b"application/grpc")]
    call.responses.feed(_frame(b"\x0a\x01\x37"))
    call.trailers = [(b"grpc-status", b"5"), (b"grpc-message", b"no%20item")]
    record, columns = grpc_record(call, "http", "shop", 50051, RecordingRedaction())
    assert call.is_grpc
    assert (record["service"], record["method"], record["authority"]) == \
        ("shop.v1.Items", "Get", "shop:50051")
    assert record["status"] == {"code": 5, "message": "no item"}
    assert record["requestMessages"] == [base64.b64encode(b"\x0a\x01\x37").decode()]
    assert record["requestMetadata"]["x-tenant"] == ["acme"]
    assert "s3cret" not in str(record["requestMetadata"])
    assert ":path" not in record["requestMetadata"]
    assert columns == {"method": "Get", "path": "/shop.v1.Items/Get", "host": "shop",
                       "status": 5, "protocol": "grpc", "name": "shop.v1.Items"}
    # Trailers-only answer, then a reset stream with no status at all.
    only = GrpcCall(3, [(b":path", b"/a.B/C")], 10)
    only.response_headers = [(b":status", b"200"), (b"grpc-status", b"7")]
    assert grpc_record(only, "https", "h", 1, None)[0]["status"]["code"] == 7
    reset = GrpcCall(5, [(b":path", b"/a.B/C")], 10)
    reset.reset = 8
    assert grpc_record(reset, "http", "h", 1, None)[0]["status"]["code"] == 1


def test_descriptor_to_proto_compiles_back_to_the_same_descriptors(tmp_path):
    files = _compile(tmp_path, "shop.proto", RICH)
    original = next(item for item in files.file if item.name == "shop.proto")
    printed = descriptor_to_proto(original)
    assert "map<string, int32> counts = 3;" in printed and "oneof owner {" in printed
    assert "optional string note = 6;" in printed
    assert "rpc Watch (.shop.v1.GetItem) returns (stream .shop.v1.Item);" in printed
    again = _compile(tmp_path / ".." / tmp_path.name, "shop.proto", printed)
    copy = next(item for item in again.file if item.name == "shop.proto")
    for proto in (original, copy):
        proto.ClearField("source_code_info")
        for message in proto.message_type:
            # protoc places a map's entry type where the field is; order is not meaning.
            nested = sorted(message.nested_type, key=lambda item: item.name)
            del message.nested_type[:]
            message.nested_type.extend(nested)
    assert copy == original


def _recording(rid: str, method: str, requests: list[bytes], responses: list[bytes],
               code: int = 0, message: str = "", **extra) -> dict:
    return {"id": rid, "timestamp": f"2026-11-27T10:00:0{rid[-1]}.000Z",
            "service": "shop.v1.Items", "method": method, "host": "127.0.0.1", "port": 50051,
            "scheme": "http", "requestMessages": [base64.b64encode(r).decode() for r in requests],
            "responseMessages": [base64.b64encode(r).decode() for r in responses],
            "status": {"code": code, "message": message}, **extra}


def test_recordings_convert_to_grpc_mocks_with_variants_streams_and_errors(tmp_path):
    files = _compile(tmp_path, "shop.proto", RICH)
    pool = _pool(files)
    get_item = message_factory.GetMessageClass(pool.FindMessageTypeByName("shop.v1.GetItem"))
    item = message_factory.GetMessageClass(pool.FindMessageTypeByName("shop.v1.Item"))

    def ask(id_: str) -> bytes:
        return get_item(id=id_).SerializeToString()

    records = [
        _recording("r1", "Get", [ask("1")], [item(id="1", tags=["a"]).SerializeToString()]),
        _recording("r2", "Get", [ask("2")], [item(id="2", user="bob").SerializeToString()]),
        _recording("r3", "Get", [ask("9")], [], code=5, message="no item 9"),
        _recording("r4", "Watch", [ask("1")], [item(id="1").SerializeToString(),
                                               item(id="1", note="x").SerializeToString()]),
        _recording("r5", "Get", [ask("1")], [b"x"], compressed=True),
        _recording("r6", "Nope", [b""], []),
        {"id": "r7", "request": {}},
    ]
    seen: list[tuple[str, bool]] = []

    def reflector(target: str, secure: bool) -> Reflected:
        seen.append((target, secure))
        return Reflected(pool)

    config, warnings = convert_grpc_recordings(records, port=6000, reflector=reflector)
    assert seen == [("127.0.0.1:50051", False)]
    (mock,) = config["mocks"]
    block = mock["grpc"]
    assert mock["type"] == "grpc" and block["port"] == 6000 and block["reflection"] is True
    assert block["protoFile"] == "shop.proto"
    assert set(block["protoSources"]) == {"shop.proto"}  # well-known imports are built in
    methods = block["services"]["shop.v1.Items"]["methods"]
    get = methods["Get"]
    assert get["match"] == {"request": {"id": "1"}}
    assert get["response"] == {"id": "1", "tags": ["a"]}
    assert [v.get("match") for v in get["variants"]] == \
        [{"request": {"id": "2"}}, {"request": {"id": "9"}}, None]
    assert get["variants"][1]["error"] == {"code": "NOT_FOUND", "message": "no item 9"}
    assert get["variants"][0]["response"] == {"id": "2", "user": "bob"}
    assert methods["Watch"] == {"responses": [{"id": "1"}, {"id": "1", "note": "x"}]}
    assert len(warnings) == 3 and any("compressed" in w for w in warnings)
    assert any("Nope" in w for w in warnings) and any("r7" in w for w in warnings)


def test_conversion_skips_an_unreachable_upstream_and_refuses_bad_input():
    def reflector(target: str, secure: bool) -> Reflected:
        raise RuntimeError(f"the upstream {target} cannot be reached for reflection")

    config, warnings = convert_grpc_recordings(
        [_recording("r1", "Get", [], [])], reflector=reflector)
    assert config == {"mocks": []} and "cannot be reached" in warnings[0]
    with pytest.raises(ValueError):
        convert_grpc_recordings({"not": "a list"})
