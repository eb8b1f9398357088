"""SOAP mocks: config errors name their keys (and the WSDL's line), safe XML reading,
the ``xpath`` template function, faults of both SOAP versions, operation choice, and the
stateful response shapes (SPEC "SOAP mock", "Templating"; behavior notes §10)."""
from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest

from mocks.core.errors import ConfigError
from mocks.core.templating import RenderContext, TemplateError, TemplateState, compile_template
from mocks.core.xmldoc import XmlRefused, compile_xpath, element_to_map, local_xpath, parse_xml
from mocks.engine.app import DataPlaneApp
from mocks.engine.snapshot import compile_snapshot
from mocks.loader import validate_config
from mocks.portability.importers.wsdl import crud_action
from mocks.protocols.soap.envelope import Fault, fault_body
from tests.helpers import engine_with, make_config, make_request

WSDL = (Path(__file__).resolve().parents[1] / "fixtures" / "soap" / "users.wsdl").read_text()
SOAP11 = "http://schemas.xmlsoap.org/soap/envelope/"


def soap_mock(**soap) -> dict:
    return {"id": "s", "type": "soap", "soap": {"path": "/soap", **soap}}


def compile_error(mock: dict, tmp_path: Path | None = None) -> ConfigError:
    with pytest.raises(ConfigError) as raised:
        compile_snapshot(validate_config(make_config(mock)), tmp_path or ".")
    return raised.value


@pytest.mark.parametrize(("soap", "key", "text"), [
    pytest.param({"wsdl": "<definitions>\n<unclosed>\n</definitions>"}, "mocks[0].soap.wsdl",
                 "not well-formed XML at line 3", id="wsdl that does not parse"),
    pytest.param({"wsdl": "<schema/>"}, "mocks[0].soap.wsdl",
                 "expected a WSDL 1.1 <definitions> root", id="not a wsdl"),
    pytest.param({"wsdl": "<!DOCTYPE d [<!ENTITY e SYSTEM 'file:///etc/passwd'>]><d>&e;</d>"},
                 "mocks[0].soap.wsdl", "DTDs", id="wsdl with entities"),
    pytest.param({"wsdlFile": "missing.wsdl"}, "mocks[0].soap.wsdlFile", "cannot read",
                 id="missing wsdl file"),
    pytest.param({"operations": {"A": {"response": "<a>{{nope}}</a>"}}},
                 "mocks[0].soap.operations.A.response", "unknown template expression",
                 id="bad template"),
    pytest.param({"operations": {"A": {"response": "<a><b></a>"}}},
                 "mocks[0].soap.operations.A.response", "not well-formed XML",
                 id="static response not xml"),
    pytest.param({"operations": {"A": {"variants": [{"match": {"xpath": {"//[": "1"}},
                                                     "response": "<a/>"}]}}},
                 "mocks[0].soap.operations.A.variants[0].match.xpath.//[", "invalid XPath",
                 id="bad variant xpath"),
    pytest.param({"operations": {"A": {"fault": {"string": "{{request.nope}}"}}}},
                 "mocks[0].soap.operations.A.fault.string", "unknown request field",
                 id="bad fault template"),
])
def test_compile_errors_name_the_key(soap, key, text, tmp_path):
    error = compile_error(soap_mock(**soap), tmp_path)
    assert error.path == key and text in str(error)


@pytest.mark.parametrize(("soap", "key", "text"), [
    pytest.param({}, "mocks[0].soap", "give operations, a wsdl or a wsdlFile", id="empty"),
    pytest.param({"path": "soap", "operations": {"A": {}}}, "mocks[0].soap.path",
                 "must start with '/'", id="relative path"),
    pytest.param({"wsdl": "<d/>", "wsdlFile": "x"}, "mocks[0].soap", "either wsdl or wsdlFile",
                 id="both wsdl keys"),
    pytest.param({"operations": {"A": {"response": "<a/>", "fault": {"string": "x"}}}},
                 "mocks[0].soap.operations.A", "either response or fault", id="two answers"),
    pytest.param({"operations": {"A": {"statefulResource": "users"}}},
                 "mocks[0].soap.operations.A", "needs a statefulAction", id="resource alone"),
    pytest.param({"operations": {"A": {"statefulAction": "get"}}},
                 "mocks[0].soap.operations.A", "needs a statefulResource", id="action alone"),
    pytest.param({"operations": {"A": {"statefulAction": "fly", "statefulResource": "u"}}},
                 "mocks[0].soap.operations.A.statefulAction", "", id="unknown action"),
    pytest.param({"operations": {"A": {"delay": "soon"}}}, "mocks[0].soap.operations.A.delay",
                 "expected a duration", id="bad delay"),
    pytest.param({"operations": {"A": {"match": {"xpath": {}}}}},
                 "mocks[0].soap.operations.A.match", "at least one XPath", id="empty match"),
])
def test_schema_errors_name_the_key(soap, key, text):
    mock = soap_mock(**soap)
    mock["soap"].update(soap)
    with pytest.raises(ConfigError) as raised:
        validate_config(make_config(mock))
    assert key in str(raised.value) and text in str(raised.value)


def test_parse_xml_refuses_bombs_entities_and_oversize():
    bomb = ('<?xml version="1.0"?><!DOCTYPE l [<!ENTITY a "aaaaaaaaaa">'
            '<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]><l>&b;</l>')
    for document, kind in ((bomb, "dtd"), ("<a>" + "x" * 50 + "</a>", "too_large"),
                           ("<a>", "malformed"),
                           ("<?xml version='1.0' encoding='UTF-16'?>".encode("utf-16")
                            + "<!DOCTYPE a []><a/>".encode("utf-16-le"), "malformed")):
        with pytest.raises(XmlRefused) as raised:
            parse_xml(document, limit=1000 if kind != "too_large" else 20)
        assert raised.value.kind in (kind, "dtd")


def test_xpath_ignores_namespaces_and_prefixes():
    root = (parse_xml(
        f'<s:Envelope xmlns:s="{SOAP11}"><s:Body><u:GetUser xmlns:u="urn:u" kind="a">'
        f"<u:id>42</u:id><u:tag>a</u:tag><u:tag>b</u:tag></u:GetUser></s:Body></s:Envelope>"))
    assert compile_xpath("/soap:Envelope/soap:Body/u:GetUser/u:id")(root) == "42"
    assert compile_xpath("//GetUser/@kind")(root) == "a"
    assert compile_xpath("count(//tag)")(root) == "2"
    assert compile_xpath("//missing")(root) == ""
    assert local_xpath("//a:b[@c='x:y' and d]/text()") == (
        "//*[local-name()='b'][@*[local-name()='c']='x:y' and *[local-name()='d']]/text()")
    assert element_to_map(root[0][0]) == {"id": "42", "tag": ["a", "b"]}
    with pytest.raises(ValueError, match="invalid XPath"):
        compile_xpath("//[")


def test_xpath_attributes_match_by_local_name_in_any_namespace():
    root = parse_xml(
        f'<s:Envelope xmlns:s="{SOAP11}" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">'
        f'<s:Header><Auth s:mustUnderstand="1" plain="p"/></s:Header><s:Body>'
        f'<Order><item xsi:type="Book" id="7">a</item><item xsi:type="Pen">b</item></Order>'
        f"</s:Body></s:Envelope>")
    assert compile_xpath("//Auth/@soap:mustUnderstand")(root) == "1"
    assert compile_xpath("//Auth/@mustUnderstand")(root) == "1"
    assert compile_xpath("//Auth/@plain")(root) == "p"
    assert compile_xpath("//item/@xsi:type")(root) == "Book"
    assert compile_xpath("//item[@type='Pen']")(root) == "b"
    assert compile_xpath("//item[attribute::type='Pen']/text()")(root) == "b"
    assert compile_xpath("count(//item/@*)")(root) == "3"
    assert compile_xpath("//item/@missing")(root) == ""


def test_xpath_template_function_reads_the_request_body_escaped_by_the_caller():
    request = make_request("POST", "/x", body=b"<r><name>A &amp; B</name></r>")
    context = RenderContext(request, {}, None, TemplateState())
    assert compile_template("{{xpath '/r/name'}}").render(context) == "A & B"
    assert compile_template("{{xpath:/r/name}}").render(context) == "A & B"
    escaped = compile_template("<n>{{xpath('//name')}}</n>", escape=lambda text: text.replace(
        "&", "&amp;"))
    assert escaped.render(context) == "<n>A &amp; B</n>"
    not_xml = RenderContext(make_request("POST", "/x", body=b"{}"), {}, None, TemplateState())
    assert compile_template("[{{xpath '//a'}}]").render(not_xml) == "[]"
    with pytest.raises(TemplateError, match="invalid XPath"):
        compile_template("{{xpath '//['}}")


@pytest.mark.parametrize(("code", "version", "expected"), [
    ("soap:Client", "1.1", "<faultcode>soap:Client</faultcode>"),
    ("Server", "1.1", "<faultcode>soap:Server</faultcode>"),
    ("tns:Custom", "1.1", "<faultcode>Custom</faultcode>"),
    ("soap:Client", "1.2", "<soap:Value>soap:Sender</soap:Value>"),
    ("Server", "1.2", "<soap:Value>soap:Receiver</soap:Value>"),
    ("tns:Custom", "1.2", "<soap:Subcode><soap:Value>tns:Custom</soap:Value>"),
])
def test_fault_shapes_of_each_version(code, version, expected):
    body = fault_body(Fault(code, "a < b", "<d>1</d>"), version).decode()
    assert expected in body and "a &lt; b" in body
    assert ("<detail><d>1</d></detail>" if version == "1.1" else
            "<soap:Detail><d>1</d></soap:Detail>") in body
    parse_xml(body)


@pytest.mark.parametrize(("name", "expected"), [
    ("GetUser", ("get", "users")), ("ListUsers", ("list", "users")),
    ("CreateOrderItem", ("create", "order_items")), ("UpdateCategory", ("update", "categories")),
    ("DeleteUserById", ("delete", "users")), ("Getaway", None), ("Echo", None),
])
def test_crud_shaped_operation_names(name, expected):
    assert crud_action(name) == expected


def post(engine, body: str, **headers: str) -> httpx.Response:
    async def call() -> httpx.Response:
        transport = httpx.ASGITransport(app=DataPlaneApp(engine))
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            return await client.post("/soap", content=body, headers=headers)
    return asyncio.run(call())


def envelope(inner: str) -> str:
    return f'<e:Envelope xmlns:e="{SOAP11}"><e:Body>{inner}</e:Body></e:Envelope>'


def test_wsdl_only_mock_answers_every_operation_with_its_sample():
    engine = engine_with(soap_mock(wsdl=WSDL))
    answer = post(engine, envelope('<GetUser xmlns="urn:example:users"><id>1</id></GetUser>'),
                  SOAPAction="urn:example:users/GetUser")
    assert answer.status_code == 200
    assert '<GetUserResponse xmlns="urn:example:users"><user><id>sample</id>' in answer.text


def test_operation_without_soap_action_is_found_by_action_tail_or_body_element():
    engine = engine_with(soap_mock(operations={"Ping": {"response": "<Pong/>"}}))
    assert "<Pong/>" in post(engine, envelope("<Ping/>"), SOAPAction='"urn:x#Ping"').text
    assert "<Pong/>" in post(engine, envelope("<Ping/>")).text


def test_stateful_list_fills_the_shape_and_a_missing_item_names_it():
    mock = soap_mock(operations={
        "ListUsers": {"statefulResource": "users", "statefulAction": "list",
                      "response": "<ListUsersResponse><total>0</total><users><user><id>x</id>"
                                  "<name>x</name></user></users></ListUsersResponse>"},
        "DeleteUser": {"statefulResource": "users", "statefulAction": "delete"}})
    config = make_config(mock, tables=[{"name": "users", "seedData": [
        {"id": "1", "name": "Ann"}, {"id": "2", "name": "Bob"}]}])
    from mocks.engine.core import Engine

    engine = Engine()
    engine.load(validate_config(config))
    text = post(engine, envelope("<ListUsers><sort>id</sort><order>asc</order></ListUsers>")).text
    assert ("<ListUsersResponse><total>2</total><users><user><id>1</id><name>Ann</name></user>"
            "<user><id>2</id><name>Bob</name></user></users></ListUsersResponse>") in text
    assert "<success>true</success>" in post(engine, envelope(
        "<DeleteUser><id>1</id></DeleteUser>")).text
    missing = post(engine, envelope("<DeleteUser><id>1</id></DeleteUser>"))
    assert missing.status_code == 500
    assert 'resource "users" item "1" not found' in missing.text
    assert "<code>NOT_FOUND</code>" in missing.text
