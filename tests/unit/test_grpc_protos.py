"""Compiling ``.proto`` files (:mod:`mocks.protocols.grpc.protos`): inline ``protoSources``,
what :func:`inline_protos` gives the command line, the built-in googleapis includes
(``google/longrunning/operations.proto`` included), the hint naming the folder to add, the
cache noticing a changed import, and files that cannot be loaded together. A small
buf-style tree (``proto/acme/v1/*.proto``) stands in for a real one; the real googleapis
files are in tests/integration/test_grpc_wild_protos.py.

Source: behavior notes §10 (``grpc``: ``protoFile | protoFiles[] | protoContent``,
``importPaths[]``); docs/grpc.md "Protos from the wild".
"""
from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace

import pytest

pytest.importorskip("grpc_tools")
from pydantic import ValidationError  # noqa: E402

from mocks.core.errors import ConfigError  # noqa: E402
from mocks.protocols.grpc.config import GrpcMock  # noqa: E402
from mocks.protocols.grpc.protos import inline_protos, load_protos  # noqa: E402

ORDERS = """syntax = "proto3";
package acme.v1;
import "acme/v1/types.proto";
import "google/api/annotations.proto";
import "google/type/money.proto";
service Orders {
  rpc GetOrder (GetOrderRequest) returns (Order) {
    option (google.api.http) = {get: "/v1/orders/{id}"};
  }
}
message GetOrderRequest { string id = 1; }
message Order { string id = 1; Status status = 2; google.type.Money total = 3; }
"""
TYPES = """syntax = "proto3";
package acme.v1;
enum Status { STATUS_UNSPECIFIED = 0; OPEN = 1; }
"""
OPERATIONS = """syntax = "proto3";
package acme.v1;
import "google/longrunning/operations.proto";
service Jobs { rpc Run (RunRequest) returns (google.longrunning.Operation); }
message RunRequest { string name = 1; }
"""


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """``proto/acme/v1/{orders,types}.proto``: a buf layout rooted at ``proto``."""
    folder = tmp_path / "proto" / "acme" / "v1"
    folder.mkdir(parents=True)
    (folder / "orders.proto").write_text(ORDERS)
    (folder / "types.proto").write_text(TYPES)
    return tmp_path / "proto"


def config(**keys):
    values = {"proto_file": None, "proto_files": [], "proto_content": None,
              "proto_sources": {}, "import_paths": []}
    values.update(keys)
    return SimpleNamespace(**values)


def test_inline_protos_carries_the_file_and_its_own_imports_but_not_builtin_ones(tree):
    keys, protos = inline_protos(tree / "acme/v1/orders.proto", [tree])
    assert keys["protoFile"] == "acme/v1/orders.proto"
    assert set(keys["protoSources"]) == {"acme/v1/orders.proto", "acme/v1/types.proto"}
    assert keys["protoSources"]["acme/v1/types.proto"] == TYPES
    assert protos.services == ["acme.v1.Orders"]
    # Served from the keys alone, anywhere: the same descriptors.
    served = load_protos(config(proto_file=keys["protoFile"],
                                proto_sources=keys["protoSources"]),
                         "mocks[0].grpc", Path("/nonexistent"), (), "orders")
    assert served.digest == protos.digest


def test_inline_protos_of_a_self_contained_file_is_its_content(tree):
    keys, protos = inline_protos(tree / "acme/v1/types.proto", [tree])
    assert keys == {"protoContent": TYPES} and protos.services == []


def test_inline_protos_of_text_adds_its_imports_as_sources(tree):
    keys, _ = inline_protos(None, [tree], text=ORDERS)
    assert keys["protoContent"] == ORDERS
    assert set(keys["protoSources"]) == {"acme/v1/types.proto"}


def test_missing_import_names_the_folder_above_that_holds_it(tree):
    with pytest.raises(ConfigError) as raised:
        inline_protos(tree / "acme/v1/orders.proto", [])
    message = str(raised.value)
    assert "acme/v1/types.proto: File not found." in message
    assert f"--import-path {tree}" in message


def test_longrunning_operations_resolves_from_the_builtin_includes(tmp_path):
    (tmp_path / "jobs.proto").write_text(OPERATIONS)
    protos = load_protos(config(proto_file="jobs.proto"), "mocks[0].grpc", tmp_path, (),
                         "jobs")
    assert protos.methods["/acme.v1.Jobs/Run"].output.full_name == \
        "google.longrunning.Operation"
    assert protos.read_from == {"jobs.proto": tmp_path / "jobs.proto"}


def test_user_copy_of_a_builtin_file_wins_over_the_builtin_one(tmp_path):
    own = tmp_path / "google" / "longrunning"
    own.mkdir(parents=True)
    (own / "operations.proto").write_text(
        'syntax = "proto3";\npackage google.longrunning;\nmessage Operation { string id = 1; }\n')
    (tmp_path / "jobs.proto").write_text(OPERATIONS)
    protos = load_protos(config(proto_file="jobs.proto", import_paths=["."]),
                         "mocks[0].grpc", tmp_path, (), "jobs")
    assert [field.name for field in protos.methods["/acme.v1.Jobs/Run"].output.fields] == ["id"]


def test_cache_compiles_again_when_an_imported_file_changes(tree):
    entry = config(proto_file="proto/acme/v1/orders.proto", import_paths=["proto"])
    first = load_protos(entry, "mocks[0].grpc", tree.parent, (), "orders")
    assert load_protos(entry, "mocks[0].grpc", tree.parent, (), "orders") is first
    types = tree / "acme/v1/types.proto"
    types.write_text(TYPES.replace("OPEN = 1;", "OPEN = 1; CLOSED = 2;"))
    os.utime(types, ns=(types.stat().st_mtime_ns + 10**9,) * 2)
    again = load_protos(entry, "mocks[0].grpc", tree.parent, (), "orders")
    assert again is not first and again.digest != first.digest


def test_protofile_naming_an_inline_source_compiles_it_and_a_bad_one_names_the_key():
    sources = {"acme/v1/types.proto": TYPES, "acme/v1/orders.proto": ORDERS}
    protos = load_protos(config(proto_file="acme/v1/orders.proto", proto_sources=sources),
                         "mocks[0].grpc", Path("."), (), "m")
    assert protos.own_files == ("acme/v1/orders.proto",) and protos.read_from == {}
    broken = {**sources, "acme/v1/types.proto": "syntax = \"proto3\";\nmessage {"}
    with pytest.raises(ConfigError) as raised:
        load_protos(config(proto_file="acme/v1/orders.proto", proto_sources=broken),
                    "mocks[0].grpc", Path("."), (), "m")
    assert raised.value.path == "mocks[0].grpc.protoFile"
    assert "acme/v1/types.proto line 2" in str(raised.value)


def test_two_files_declaring_one_symbol_is_a_config_error():
    sources = {"a.proto": 'syntax = "proto3";\npackage p;\nmessage M {}\n',
               "b.proto": 'syntax = "proto3";\npackage p;\nmessage M {}\n'
                          "service S { rpc Go (M) returns (M); }\n"}
    with pytest.raises(ConfigError) as raised:
        load_protos(config(proto_file="a.proto", proto_files=["b.proto"],
                           proto_sources=sources), "mocks[0].grpc", Path("."), (), "m")
    assert raised.value.path == "mocks[0].grpc" and "p.M" in str(raised.value)


@pytest.mark.parametrize("name", [
    pytest.param("../escape.proto", id="parent segment"),
    pytest.param("/etc/x.proto", id="absolute"),
    pytest.param("a/./b.proto", id="dot segment"),
    pytest.param("a//b.proto", id="empty segment"),
    pytest.param("a\\b.proto", id="backslash"),
    pytest.param("notes.txt", id="not a proto"),
])
def test_proto_source_names_must_be_import_names(name):
    with pytest.raises(ValidationError) as raised:
        GrpcMock.model_validate({"port": 1, "protoContent": "syntax = \"proto3\";",
                                 "protoSources": {name: ""}})
    assert "is not an import name" in str(raised.value)


def test_proto_sources_alone_are_not_an_entry():
    with pytest.raises(ValidationError) as raised:
        GrpcMock.model_validate({"port": 1, "protoSources": {"a.proto": TYPES}})
    assert "protoSources only holds files they import or name" in str(raised.value)
