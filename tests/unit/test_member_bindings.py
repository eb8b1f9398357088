"""``extend`` entries that bind one member of a protocol mock to a table: a gRPC method
(``<id>.<package.Service>.<Method>``) or a SOAP operation (``<id>.<Operation>``), next to the
GraphQL resolvers (``<id>.Query.<field>``) of ``test_graphql_config.py``. In process: config
errors, reference forms, and a SOAP operation bound by ``extend`` writing an item a REST mock
reads (SPEC "Extend binding"; behavior notes §6)."""
from __future__ import annotations

import pytest

from mocks.core.errors import ConfigError
from mocks.engine.core import Engine
from mocks.loader import validate_config
from mocks.protocols.grpc.handler import HANDLER as GRPC
from mocks.protocols.soap.handler import HANDLER as SOAP
from tests.helpers import free_port, http_mock, make_config
from tests.unit.test_soap import SOAP11, post
from tests.unit.test_tables_binding import call

PROTO = """syntax = "proto3";
package demo.v1;
service Users { rpc GetUser (GetUserRequest) returns (User); }
message GetUserRequest { string id = 1; }
message User { string id = 1; string name = 2; }
"""


def grpc_mock(mock_id: str = "users.grpc") -> dict:
    return {"id": mock_id, "type": "grpc",
            "grpc": {"port": free_port(), "protoContent": PROTO}}


def soap_users_mock() -> dict:
    return {"id": "soap-users", "type": "soap", "soap": {"path": "/soap", "operations": {
        "CreateUser": {"response": "<CreateUserResponse><id>x</id><name>x</name>"
                                   "</CreateUserResponse>"},
        "DeleteUser": {"fault": {"code": "soap:Server", "string": "not bound yet"}}}}}


def load(*mocks: dict, extend: list[dict]) -> Engine:
    engine = Engine()
    engine.load(validate_config(make_config(*mocks, tables=[{"name": "users"}],
                                            extend=extend)))
    return engine


def load_error(*mocks: dict, extend: list[dict]) -> ConfigError:
    with pytest.raises(ConfigError) as raised:
        load(*mocks, extend=extend)
    return raised.value


@pytest.mark.parametrize(("text", "member"), [
    ("demo.v1.Users.GetUser", "/demo.v1.Users/GetUser"),
    ("demo.v1.Users/GetUser", "/demo.v1.Users/GetUser"),
    ("/demo.v1.Users/GetUser", "/demo.v1.Users/GetUser"),
    ("Users.GetUser", "/Users/GetUser"),
    ("GetUser", None),
    ("demo.v1.Users/", None),
    ("a/b/GetUser", None),
])
def test_grpc_reference_forms(text, member):
    assert GRPC.binding_member(text) == member


def test_soap_reference_is_one_operation_name():
    assert SOAP.binding_member("CreateUser") == "CreateUser"
    assert SOAP.binding_member("Users.CreateUser") is None
    assert SOAP.binding_member("") is None


def test_grpc_method_binding_compiles_and_its_errors_name_the_extend_key():
    engine = load(grpc_mock(), extend=[{"mock": "users.grpc.demo.v1.Users.GetUser",
                                        "table": "users", "action": "get"}])
    assert not engine.snapshot.compiled["users.grpc"].reusable
    unknown = load_error(grpc_mock(), extend=[{"mock": "users.grpc.demo.v1.Users.Nope",
                                               "table": "users", "action": "get"}])
    assert unknown.path == "extend[0].mock"
    assert "has no method 'demo.v1.Users/Nope' (methods: demo.v1.Users/GetUser)" in str(unknown)
    whole = load_error(grpc_mock(), extend=[{"mock": "users.grpc", "table": "users",
                                             "action": "get"}])
    assert whole.path == "extend[0].mock"
    assert "users.grpc.<package.Service>.<Method>" in str(whole)
    transformed = load_error(grpc_mock(), extend=[{
        "mock": "users.grpc.demo.v1.Users/GetUser",
        "table": "users", "action": "get", "response": {"fields": {"hide": ["name"]}}}])
    assert transformed.path == "extend[0].response"
    assert "response transforms apply to HTTP mocks" in str(transformed)
    load(grpc_mock(), extend=[{"mock": "users.grpc./demo.v1.Users/GetUser", "table": "users",
                               "action": "get", "response": {}}])  # {}: the raw data


def test_soap_operation_bound_by_extend_writes_the_table_a_rest_mock_reads():
    engine = load(soap_users_mock(), http_mock("rest-user", "GET", "/users/{id}"),
                  extend=[{"mock": "soap-users.CreateUser", "table": "users",
                           "action": "create"},
                          {"mock": "soap-users.DeleteUser", "table": "users",
                           "action": "delete"},
                          {"mock": "rest-user", "table": "users", "action": "get"}])
    envelope = (f'<e:Envelope xmlns:e="{SOAP11}"><e:Body><CreateUser><name>Ada</name>'
                f"</CreateUser></e:Body></e:Envelope>")
    created = post(engine, envelope)
    assert created.status_code == 200, created.text
    assert "<name>Ada</name>" in created.text
    item_id = created.text.split("<id>", 1)[1].split("</id>", 1)[0]
    assert item_id and item_id != "x"
    status, _, body = call(engine, "GET", f"/users/{item_id}")
    assert status == 200 and b'"name":"Ada"' in body.replace(b" ", b"")
    deleted = post(engine, envelope.replace("CreateUser", "DeleteUser").replace(
        "<name>Ada</name>", f"<id>{item_id}</id>"))
    assert deleted.status_code == 200 and "not bound yet" not in deleted.text
    assert call(engine, "GET", f"/users/{item_id}")[0] == 404


def test_soap_binding_errors_name_the_extend_key():
    unknown = load_error(soap_users_mock(), extend=[{"mock": "soap-users.Nope",
                                                     "table": "users", "action": "get"}])
    assert unknown.path == "extend[0].mock"
    assert "has no operation 'Nope' (operations: CreateUser, DeleteUser)" in str(unknown)
    whole = load_error(soap_users_mock(), extend=[{"mock": "soap-users", "table": "users",
                                                   "action": "get"}])
    assert whole.path == "extend[0].mock" and "soap-users.<Operation>" in str(whole)
    transformed = load_error(soap_users_mock(), extend=[{
        "mock": "soap-users.CreateUser", "table": "users", "action": "create",
        "response": {"fields": {"hide": ["name"]}}}])
    assert transformed.path == "extend[0].response"


def test_an_id_with_dots_is_matched_whole_before_a_member():
    # "users.grpc" is a mock of its own: a reference to it binds the whole mock (and the
    # gRPC handler says to name a method), not method "grpc" of a mock "users".
    error = load_error(grpc_mock("users"), grpc_mock("users.grpc"), extend=[
        {"mock": "users.grpc", "table": "users", "action": "get"}])
    assert "users.grpc.<package.Service>.<Method>" in str(error)
