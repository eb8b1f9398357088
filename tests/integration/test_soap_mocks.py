"""SOAP mocks served to a real SOAP client (zeep, built from the served ``?wsdl``), SOAP 1.1
and 1.2: static and templated answers, XPath match variants, faults, stateful operations
shared with REST, refused XML bombs and external entities, admin views, request log, and
``mockd soap import --stateful`` end to end (SPEC "SOAP mock"; behavior notes §1, §10)."""
from __future__ import annotations

import shutil
from pathlib import Path

import httpx
import pytest

zeep = pytest.importorskip("zeep")
from zeep.exceptions import Fault  # noqa: E402
from zeep.transports import Transport  # noqa: E402

from tests.helpers import run_mockd, start_engine, start_server  # noqa: E402

WSDL = Path(__file__).resolve().parents[1] / "fixtures" / "soap" / "users.wsdl"
NS = "urn:example:users"
SOAP11 = "http://schemas.xmlsoap.org/soap/envelope/"


def users_config() -> dict:
    return {
        "version": "1.0",
        "tables": [{"name": "users", "idStrategy": "sequence"}],
        "mocks": [
            {"id": "users-soap", "type": "soap", "soap": {
                "path": "/soap/users", "wsdlFile": "users.wsdl",
                "operations": {
                    "Echo": {"response": f"<EchoResponse xmlns='{NS}'><text>"
                                         "{{xpath '/Envelope/Body/Echo/text'}}!</text>"
                                         "</EchoResponse>"},
                    "GetUser": {
                        "response": f"<GetUserResponse xmlns='{NS}'><user><id>"
                                    "{{request.body.GetUser.id}}</id><name>Templated</name>"
                                    "</user></GetUserResponse>",
                        "variants": [
                            {"match": {"xpath": {"//GetUser/id": "404"}},
                             "fault": {"code": "soap:Client", "string": "user 404 not found",
                                       "detail": "<missing>404</missing>"}},
                            {"match": {"xpath": {"//GetUser/id": "7"}},
                             "response": f"<GetUserResponse xmlns='{NS}'><user><id>7</id>"
                                         "<name>Static Seven</name></user></GetUserResponse>"},
                        ]},
                }}},
            {"id": "users-stateful", "type": "soap", "soap": {
                "path": "/soap/stateful", "wsdlFile": "users.wsdl",
                "operations": {
                    "CreateUser": {"statefulResource": "users", "statefulAction": "create"},
                    "GetUser": {"statefulResource": "users", "statefulAction": "get"}}}},
            {"id": "rest-get-user", "type": "http", "http": {
                "matcher": {"method": "GET", "path": "/users/{id}"}}},
        ],
        "extend": [{"mock": "rest-get-user", "table": "users", "action": "get"}],
    }


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    folder = tmp_path_factory.mktemp("soap")
    shutil.copy(WSDL, folder / "users.wsdl")
    with start_engine(folder, users_config()) as process:
        yield process


def soap_client(base: str, path: str, port: str = "UserSoap") -> object:
    session = __import__("requests").Session()
    session.trust_env = False  # never a proxy: only 127.0.0.1 is reached
    client = zeep.Client(f"{base}{path}?wsdl", transport=Transport(session=session, timeout=10))
    return client.bind("UserService", port)


@pytest.mark.parametrize("port", ["UserSoap", "UserSoap12"])
def test_zeep_calls_templated_static_and_matched_operations(engine, port):
    service = soap_client(engine.base, "/soap/users", port)
    assert service.Echo(text="hi <there>") == "hi <there>!"
    assert service.GetUser(id="42").name == "Templated"
    assert service.GetUser(id="42").id == "42"
    assert service.GetUser(id="7").name == "Static Seven"


@pytest.mark.parametrize(("port", "code"), [("UserSoap", "soap:Client"),
                                            ("UserSoap12", "soap:Sender")])
def test_zeep_sees_the_configured_fault_in_each_soap_version(engine, port, code):
    service = soap_client(engine.base, "/soap/users", port)
    with pytest.raises(Fault) as raised:
        service.GetUser(id="404")
    assert raised.value.message == "user 404 not found"
    assert raised.value.code == code
    assert raised.value.detail is not None


def test_served_wsdl_points_at_the_mock_server(engine):
    with httpx.Client(trust_env=False) as client:
        text = client.get(f"{engine.base}/soap/users?WSDL").text
    assert f'location="{engine.base}/soap/users"' in text
    assert "users.example.com" not in text


@pytest.mark.parametrize("port", ["UserSoap", "UserSoap12"])
def test_stateful_create_is_visible_to_rest_and_to_soap_get(engine, port):
    service = soap_client(engine.base, "/soap/stateful", port)
    created = service.CreateUser(name="Ada", email="ada@example.com")
    assert created.name == "Ada" and created.id
    with httpx.Client(trust_env=False) as client:
        answer = client.get(f"{engine.base}/users/{created.id}")
    assert answer.status_code == 200
    assert answer.json()["email"] == "ada@example.com"
    assert service.GetUser(id=created.id).email == "ada@example.com"


def test_stateful_get_of_a_missing_item_is_a_fault_naming_it(engine):
    service = soap_client(engine.base, "/soap/stateful")
    with pytest.raises(Fault) as raised:
        service.GetUser(id="nope-99")
    assert raised.value.message == 'resource "users" item "nope-99" not found'


def envelope(body: str) -> str:
    return (f'<soap:Envelope xmlns:soap="{SOAP11}"><soap:Body>{body}</soap:Body>'
            f"</soap:Envelope>")


@pytest.mark.parametrize(("content", "headers", "reason"), [
    pytest.param("<!DOCTYPE lolz [<!ENTITY lol \"lol\"><!ENTITY lol2 \"&lol;&lol;&lol;&lol;\">"
                 "]><soap:Envelope xmlns:soap=\"" + SOAP11 + "\"><soap:Body><Echo><text>"
                 "&lol2;</text></Echo></soap:Body></soap:Envelope>", {}, "DTDs",
                 id="billion laughs"),
    pytest.param('<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]>'
                 + envelope("<Echo><text>&e;</text></Echo>"), {}, "DTDs",
                 id="external entity"),
    pytest.param("{\"not\": \"xml\"}", {}, "not well-formed", id="not xml"),
    pytest.param("<a><b></a>", {}, "not well-formed", id="broken xml"),
    pytest.param("<Envelope/>", {}, "not a SOAP envelope", id="no soap namespace"),
    pytest.param(envelope("<Nope/>"), {}, "Unknown operation 'Nope'", id="unknown operation"),
    pytest.param(envelope("<Echo><text>x</text></Echo>"), {"SOAPAction": '"urn:nothing"'},
                 "names no operation", id="action names nothing"),
])
def test_bad_requests_are_soap_faults_500(engine, content, headers, reason):
    with httpx.Client(trust_env=False, timeout=10) as client:
        answer = client.post(f"{engine.base}/soap/users", content=content,
                             headers={"Content-Type": "text/xml", **headers})
    assert answer.status_code == 500
    assert answer.headers["content-type"].startswith("text/xml")
    assert "<faultcode>soap:Client</faultcode>" in answer.text
    assert reason in answer.text
    assert "root:" not in answer.text and "Traceback" not in answer.text


def test_soap12_content_type_action_chooses_the_operation(engine):
    body = (f'<env:Envelope xmlns:env="http://www.w3.org/2003/05/soap-envelope"><env:Body>'
            f'<u:Echo xmlns:u="{NS}"><u:text>v12</u:text></u:Echo></env:Body></env:Envelope>')
    with httpx.Client(trust_env=False, timeout=10) as client:
        answer = client.post(f"{engine.base}/soap/users", content=body, headers={
            "Content-Type": 'application/soap+xml; charset=utf-8; action="urn:example:users/Echo"'})
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("application/soap+xml")
    assert "<text>v12!</text>" in answer.text


def test_admin_lists_handlers_and_logs_soap_operations(tmp_path):
    shutil.copy(WSDL, tmp_path / "users.wsdl")
    with start_server(tmp_path, users_config()) as server:
        service = soap_client(server.base, "/soap/users")
        assert service.Echo(text="x") == "x!"
        with server.admin_client() as admin:
            handlers = admin.get("/soap").json()
            assert handlers["count"] == 2
            assert {"id": "users-soap", "path": "/soap/users", "recordingEnabled": False} \
                .items() <= handlers["handlers"][0].items()
            status = admin.get("/soap/users-soap/status").json()
            assert status["requestCount"] == 1 and status["running"] is True
            assert {operation["name"] for operation in status["operations"]} == {
                "GetUser", "CreateUser", "Echo"}
            assert admin.get("/soap/nope/status").status_code == 404
            logged = admin.get("/requests", params={"soapOperation": "Echo"}).json()
            assert logged["total"] == 1
            entry = logged["requests"][0]
            assert entry["protocol"] == "soap" and entry["soap"]["operation"] == "Echo"
            assert status["wsdlRequests"] == 1 and status["faultCount"] == 0
            # Verification counts every call of the mock: the ?wsdl GET and the envelope.
            assert admin.get("/mocks/users-soap/verify").json()["callCount"] == 2
            # Round trip: export, then POST /config replaces everything with it.
            exported = admin.get("/config").json()
            soap = next(mock for mock in exported["mocks"] if mock["id"] == "users-soap")
            assert soap["soap"]["operations"]["GetUser"]["variants"][0]["fault"]["string"] \
                == "user 404 not found"
            answer = admin.post("/config", json={"config": exported, "replace": True})
            assert answer.status_code == 200, answer.text
        assert soap_client(server.base, "/soap/users").Echo(text="again") == "again!"


@pytest.fixture(scope="module")
def importer(tmp_path_factory):
    """A ``mockd start`` with no config, shared by the two import tests."""
    with start_server(tmp_path_factory.mktemp("soap-import")) as process:
        yield process


@pytest.fixture
def empty_server(importer):
    """:func:`importer` emptied before each test (``POST /config`` with an empty config and
    ``replace``: no mocks, no tables), so each import starts from what a fresh server has."""
    with importer.admin_client() as admin:
        answer = admin.post("/config", json={"config": {"version": "1.0", "mocks": []},
                                             "replace": True})
        assert answer.status_code == 200, answer.text
        assert admin.get("/mocks").json()["mocks"] == []
        assert admin.get("/state").json()["resourceList"] == []
    return importer


def test_soap_import_stateful_end_to_end(empty_server, tmp_path):
    server = empty_server
    result = run_mockd(["soap", "import", str(WSDL), "--stateful", "--admin-url",
                        server.admin, "--json"], tmp_path)
    assert result.returncode == 0, result.stderr
    assert '"users"' in result.stdout
    service = soap_client(server.base, "/soap/users")
    created = service.CreateUser(name="Grace", email="grace@example.com")
    assert created.id and created.name == "Grace"
    assert service.GetUser(id=created.id).email == "grace@example.com"
    assert service.Echo(text="x") == "sample"  # not CRUD-shaped: its sample answer
    with server.admin_client() as admin:
        items = admin.get("/state/resources/users/items").json()
    assert [item["name"] for item in items["data"]] == ["Grace"]


def test_import_of_a_wsdl_serves_its_sample_answers(empty_server, tmp_path):
    server = empty_server
    result = run_mockd(["import", str(WSDL), "--admin-url", server.admin], tmp_path)
    assert result.returncode == 0, result.stderr
    service = soap_client(server.base, "/soap/users", "UserSoap12")
    assert service.GetUser(id="1").name == "sample"
