"""WSDLs from the wild: the files a WSDL imports (``wsdl:import``, ``xs:import``,
``xs:include``, the ``?xsd=1`` layout) are read from its folder only and served back from the
mock with every reference and address rewritten; types are found by qualified name; samples
are valid against the schemas (checked with lxml's XMLSchema, built without mockd's reader);
one-way operations answer 202 without a body (SPEC "SOAP mock", "Import and export"; behavior
notes §10, §13). Real files: the example WSDLs of the npm package strong-soap."""
from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path

import httpx
import yaml
import pytest
from lxml import etree

from mocks.core.errors import ConfigError
from mocks.core.responses import FileRoots
from mocks.engine.app import DataPlaneApp
from mocks.portability.importers import ImportDocumentError, import_document, import_path
from mocks.protocols.soap.documents import FolderSource
from mocks.protocols.soap.samples import MAX_NODES, pattern_sample
from mocks.protocols.soap.wsdl import read_wsdl
from tests.helpers import engine_with
from tests.soap_files import assert_valid, wsdl_schema, xsd_query_layout
from tests.thirdparty import npm_file

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "soap"
STRONG_SOAP = "strong-soap@" + os.environ.get("MOCKD_TEST_STRONG_SOAP", "6.0.1")
SOAP11 = "http://schemas.xmlsoap.org/soap/envelope/"
WSDL_NS = "http://schemas.xmlsoap.org/wsdl/"
XSD_NS = "http://www.w3.org/2001/XMLSchema"
ORDERS_TYPES = "urn:example:orders:types"


def wsdl_path(case: str) -> Path:
    if case.startswith("strong-soap:"):
        return npm_file(STRONG_SOAP, f"example/wsdls/{case.split(':', 1)[1]}")
    return FIXTURES / case


def operations_of(path: Path) -> dict:
    return read_wsdl(path.read_bytes(), FolderSource(path.parent), path.name).operations()


def call(engine, method: str, target: str, body: str = "", **headers: str) -> httpx.Response:
    async def run() -> httpx.Response:
        transport = httpx.ASGITransport(app=DataPlaneApp(engine))
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            return await client.request(method, target, content=body, headers=headers)
    return asyncio.run(run())


def envelope(inner: str) -> str:
    return f'<e:Envelope xmlns:e="{SOAP11}"><e:Body>{inner}</e:Body></e:Envelope>'


def soap_mock(path: str = "/services/orders", **soap) -> dict:
    return {"id": "s", "type": "soap", "soap": {"path": path, **soap}}


@pytest.fixture
def orders(tmp_path) -> Path:
    """A copy of the split orders layout; returns the folder holding orders.wsdl."""
    folder = tmp_path / "orders"
    shutil.copytree(FIXTURES / "orders", folder)
    return folder


@pytest.mark.parametrize("case", [
    pytest.param("users.wsdl", id="one inline schema"),
    pytest.param("orders/orders.wsdl", id="wsdl:import, xs:import, chameleon xs:include"),
    pytest.param("eutils-like.wsdl", id="inline schemas with clashing local names"),
    pytest.param("strong-soap:weather.wsdl", id="strong-soap weather"),
    pytest.param("strong-soap:stockquote.wsdl", id="strong-soap stockquote"),
])
def test_every_sample_is_valid_against_the_wsdl_schemas(case, tmp_path):
    path = wsdl_path(case)
    schema = wsdl_schema(path, tmp_path)
    samples = {name: info.response for name, info in operations_of(path).items()
               if not info.one_way}
    assert samples
    for name, sample in samples.items():
        assert_valid(schema, sample)


def test_the_schema_check_itself_rejects_both_branches_of_a_choice(tmp_path):
    path = FIXTURES / "orders" / "orders.wsdl"
    sample = operations_of(path)["GetOrder"].response
    both = sample.replace("</tns:delivery>", "</tns:delivery><tns:pickupPoint>x</tns:pickupPoint>")
    with pytest.raises(AssertionError, match="pickupPoint"):
        assert_valid(wsdl_schema(path, tmp_path), both)


def test_sample_takes_one_choice_branch_min_occurs_copies_and_no_optional_recursion():
    root = etree.fromstring(operations_of(FIXTURES / "orders" / "orders.wsdl")["GetOrder"]
                            .response)
    order = root[0]
    names = [etree.QName(child).localname for child in order]
    assert names.count("line") == 2  # minOccurs="2"
    assert ("delivery" in names) != ("pickupPoint" in names)
    assert "replaces" not in names  # an optional Order inside Order
    assert order.get("version") == "1"  # required attribute, positiveInteger
    # Namespaces: qualified local elements in the types namespace, the money schema's
    # local elements unqualified, its required attribute written.
    assert root.tag == f"{{{ORDERS_TYPES}}}GetOrderResponse"
    total = order.find(f"{{{ORDERS_TYPES}}}total")
    assert [child.tag for child in total] == ["net", "tax"]
    assert total[0].get("currency") == "AAA"
    assert order.findtext(f"{{{ORDERS_TYPES}}}id") == "ORD-000000"


def test_clashing_local_names_are_resolved_by_namespace():
    samples = operations_of(FIXTURES / "eutils-like.wsdl")
    einfo = etree.fromstring(samples["run_eInfo"].response)
    assert [etree.QName(child).localname for child in einfo] == ["ERROR", "DbList", "Id"]
    assert einfo.findtext("{https://example.org/soap/eutils/einfo}Id") == "0"
    esearch = etree.fromstring(samples["run_eSearch"].response)
    assert esearch.findtext("{*}IdList/{https://example.org/soap/eutils/esearch}Id") == "PMC0"
    link = etree.fromstring(samples["run_eLink"].response)
    assert [child.tag for child in link] == ["{https://example.org/soap/eutils/einfo}Id",
                                             "{https://example.org/soap/eutils/esearch}Id"]


def served_references(text: bytes) -> list[str]:
    root = etree.fromstring(text)
    return [element.get("location") or element.get("schemaLocation")
            for element in root.iter(f"{{{WSDL_NS}}}import", f"{{{XSD_NS}}}import",
                                     f"{{{XSD_NS}}}include")]


def test_served_wsdl_and_its_files_point_at_the_mock_only(orders):
    engine = engine_with(soap_mock(wsdlFile="orders.wsdl"), base_dir=orders)
    base = "http://t/services/orders"
    main = call(engine, "GET", "/services/orders?wsdl")
    assert main.status_code == 200 and main.headers["content-type"].startswith("text/xml")
    root = etree.fromstring(main.content)
    addresses = [element.get("location") for element in root.iter("{*}address")]
    assert addresses == [base, base, base]  # soap, soap12 and http addresses
    assert served_references(main.content) == [f"{base}?wsdl=1"]
    seen, pending = set(), [f"{base}?wsdl=1"]
    while pending:
        url = pending.pop()
        if url in seen:
            continue
        seen.add(url)
        answer = call(engine, "GET", url.removeprefix("http://t"))
        assert answer.status_code == 200, url
        assert b"example.com" not in answer.content
        references = served_references(answer.content)
        assert all(reference.startswith(f"{base}?") for reference in references)
        pending.extend(references)
    assert len(seen) == 4  # the abstract WSDL, orders.xsd, order-common.xsd, money.xsd
    by_name = call(engine, "GET", "/services/orders?xsd=common/money.xsd")
    assert by_name.status_code == 200 and b'targetNamespace="urn:example:money"' in by_name.content
    missing = call(engine, "GET", "/services/orders?xsd=9")
    assert missing.status_code == 404 and "?xsd=4" in missing.text


def test_one_way_operation_answers_202_without_a_body(orders):
    engine = engine_with(soap_mock(wsdlFile="orders.wsdl"), base_dir=orders)
    answer = call(engine, "POST", "/services/orders", envelope(
        f'<CancelOrder xmlns="{ORDERS_TYPES}"><id>ORD-000001</id></CancelOrder>'),
        SOAPAction='"urn:example:orders/CancelOrder"', **{"Content-Type": "text/xml"})
    assert answer.status_code == 202 and answer.content == b""
    answered = call(engine, "POST", "/services/orders", envelope(
        f'<GetOrder xmlns="{ORDERS_TYPES}"><id>ORD-000001</id></GetOrder>'),
        SOAPAction="urn:example:orders/GetOrder")
    assert answered.status_code == 200 and "<tns:line>" in answered.text


def test_configured_response_of_a_one_way_operation_is_still_sent(orders):
    engine = engine_with(soap_mock(wsdlFile="orders.wsdl", operations={
        "CancelOrder": {"response": "<Cancelled/>"}}), base_dir=orders)
    answer = call(engine, "POST", "/services/orders", envelope("<CancelOrder/>"))
    assert answer.status_code == 200 and "<Cancelled/>" in answer.text


def test_xsd_query_layout_saved_by_wget_is_read_and_served(tmp_path):
    """A JAX-WS service saved with wget: ``schemaLocation="UserService?xsd=1"`` and a file
    of that name beside the WSDL."""
    xsd_query_layout(tmp_path)
    engine = engine_with(soap_mock("/soap/users", wsdlFile="UserService.wsdl"),
                         base_dir=tmp_path)
    answer = call(engine, "POST", "/soap/users", envelope(
        '<GetUser xmlns="urn:example:users"><id>1</id></GetUser>'),
        SOAPAction="urn:example:users/GetUser")
    assert '<GetUserResponse xmlns="urn:example:users"><user><id>sample</id>' in answer.text
    served = call(engine, "GET", "/soap/users?wsdl").content
    assert served_references(served) == ["http://t/soap/users?xsd=1"]
    assert b'name="GetUserResponse"' in call(engine, "GET", "/soap/users?xsd=1").content


def layout_with(tmp_path: Path, reference: str, files: dict[str, str] | None = None) -> Path:
    """users.wsdl whose schema also holds ``reference`` (an import or include element),
    with ``files`` beside it."""
    folder = tmp_path / "wsdl"
    folder.mkdir()
    text = (FIXTURES / "users.wsdl").read_text().replace(
        'elementFormDefault="qualified">', f'elementFormDefault="qualified">{reference}', 1)
    (folder / "users.wsdl").write_text(text)
    for name, content in (files or {}).items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(content)
    return folder


EMPTY_SCHEMA = '<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema"/>'


@pytest.mark.parametrize(("reference", "files", "message"), [
    pytest.param('<xs:include schemaLocation="../outside.xsd"/>', {}, "leads outside the "
                 "WSDL's folder", id="dot-dot escape"),
    pytest.param('<xs:include schemaLocation="/etc/hostname"/>', {}, "is an absolute path",
                 id="absolute path"),
    pytest.param('<xs:import namespace="urn:x" schemaLocation="https://example.com/x.xsd"/>',
                 {}, "'https://example.com/x.xsd' (xs:import in users.wsdl) is remote",
                 id="remote import"),
    pytest.param('<xs:include schemaLocation="file:///etc/passwd"/>', {}, "is remote",
                 id="file URI"),
    pytest.param('<xs:include schemaLocation="missing.xsd"/>', {}, "'missing.xsd' (xs:include "
                 "in users.wsdl) cannot be read", id="missing file"),
    pytest.param('<xs:include schemaLocation="bomb.xsd"/>',
                 {"bomb.xsd": '<!DOCTYPE s [<!ENTITY e SYSTEM "file:///etc/passwd">]>'
                              + EMPTY_SCHEMA}, "bomb.xsd: DTDs", id="DTD in a file"),
    pytest.param('<xs:include schemaLocation="page.xsd"/>', {"page.xsd": "<html/>"},
                 "is not an XML Schema document: its root is <html>", id="not a schema"),
    pytest.param('<xs:include schemaLocation="admin-api-key"/>',
                 {"admin-api-key": EMPTY_SCHEMA}, "secret", id="mockd secret file"),
])
def test_imports_that_cannot_be_followed_are_config_errors_naming_them(tmp_path, reference,
                                                                      files, message):
    folder = layout_with(tmp_path, reference, files)
    (tmp_path / "outside.xsd").write_text(EMPTY_SCHEMA)
    with pytest.raises(ConfigError) as raised:
        engine_with(soap_mock("/soap/users", wsdlFile="users.wsdl"), base_dir=folder)
    assert raised.value.path == "mocks[0].soap.wsdlFile"
    assert message in str(raised.value)


def test_symlink_leading_out_of_the_wsdl_folder_is_refused(tmp_path):
    folder = layout_with(tmp_path, '<xs:include schemaLocation="link.xsd"/>')
    (tmp_path / "outside.xsd").write_text(EMPTY_SCHEMA)
    (folder / "link.xsd").symlink_to(tmp_path / "outside.xsd")
    with pytest.raises(ConfigError, match="leads outside the WSDL's folder"):
        engine_with(soap_mock("/soap/users", wsdlFile="users.wsdl"), base_dir=folder)


def test_files_in_mockd_data_directory_are_never_read(tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "x.xsd").write_text(EMPTY_SCHEMA)
    source = FolderSource(tmp_path, FileRoots((tmp_path.resolve(),),
                                              denied=((tmp_path / "data").resolve(),)))
    with pytest.raises(LookupError, match="never served"):
        source.read("data/x.xsd")


def test_remote_import_of_a_well_known_namespace_is_served_without_its_location(tmp_path):
    folder = layout_with(tmp_path, '<xs:import namespace="http://schemas.xmlsoap.org/soap/'
                                   'encoding/" schemaLocation="http://schemas.xmlsoap.org/soap'
                                   '/encoding/"/>')
    engine = engine_with(soap_mock("/soap/users", wsdlFile="users.wsdl"), base_dir=folder)
    served = etree.fromstring(call(engine, "GET", "/soap/users?wsdl").content)
    imports = list(served.iter(f"{{{XSD_NS}}}import"))
    assert len(imports) == 1 and imports[0].get("schemaLocation") is None
    assert imports[0].get("namespace") == "http://schemas.xmlsoap.org/soap/encoding/"


def test_inline_wsdl_imports_come_from_soap_documents(orders):
    wsdl = (orders / "orders.wsdl").read_text()
    with pytest.raises(ConfigError) as raised:
        engine_with(soap_mock(wsdl=wsdl))
    assert raised.value.path == "mocks[0].soap.wsdl"
    assert "give the file's text under soap.documents" in str(raised.value)
    documents = {name: (orders / name).read_text() for name in (
        "orders-abstract.wsdl", "schemas/orders.xsd", "schemas/order-common.xsd",
        "common/money.xsd")}
    engine = engine_with(soap_mock(wsdl=wsdl, documents=documents))
    assert call(engine, "GET", "/services/orders?xsd=3").status_code == 200
    del documents["common/money.xsd"]
    with pytest.raises(ConfigError, match="soap.documents has no entry 'common/money.xsd'"):
        engine_with(soap_mock(wsdl=wsdl, documents=documents))


def test_documents_go_with_an_inline_wsdl_only():
    with pytest.raises(ConfigError, match="documents go with an inline wsdl"):
        engine_with(soap_mock(wsdlFile="x.wsdl", documents={"a.xsd": EMPTY_SCHEMA}))


def test_import_of_a_multi_file_wsdl_carries_its_files(orders):
    result = import_path(orders / "orders.wsdl")
    mock = result.mocks[0]
    assert sorted(mock["soap"]["documents"]) == ["common/money.xsd", "orders-abstract.wsdl",
                                                 "schemas/order-common.xsd",
                                                 "schemas/orders.xsd"]
    assert mock["soap"]["operations"]["CancelOrder"] == {
        "soapAction": "urn:example:orders/CancelOrder"}
    shutil.rmtree(orders)  # the imported mock needs none of the files any more
    engine = engine_with(mock)
    assert call(engine, "GET", "/services/orders?xsd=4").status_code == 200
    cancelled = call(engine, "POST", "/services/orders", envelope("<CancelOrder/>"),
                     SOAPAction="urn:example:orders/CancelOrder")
    assert cancelled.status_code == 202


def test_import_of_wsdl_text_that_imports_files_says_to_use_the_file(orders):
    with pytest.raises(ImportDocumentError, match="import it from its file"):
        import_document((orders / "orders.wsdl").read_text(), format="wsdl")


FEATURES = """<?xml version="1.0"?>
<wsdl:definitions xmlns:wsdl="http://schemas.xmlsoap.org/wsdl/"
    xmlns:soap="http://schemas.xmlsoap.org/wsdl/soap/" xmlns:xs="http://www.w3.org/2001/XMLSchema"
    xmlns:tns="urn:features" targetNamespace="urn:features">
  <wsdl:types>
    <xs:schema targetNamespace="urn:features" elementFormDefault="qualified">
      <xs:element name="Shape" type="tns:ShapeType" abstract="true"/>
      <xs:element name="Circle" type="tns:CircleType" substitutionGroup="tns:Shape"/>
      <xs:complexType name="ShapeType" abstract="true"><xs:sequence>
        <xs:element name="label" type="xs:string"/></xs:sequence></xs:complexType>
      <xs:complexType name="CircleType"><xs:complexContent><xs:extension base="tns:ShapeType">
        <xs:sequence><xs:element name="radius" type="tns:Radius"/></xs:sequence>
      </xs:extension></xs:complexContent></xs:complexType>
      <xs:simpleType name="Radius"><xs:restriction base="xs:decimal">
        <xs:minExclusive value="0"/><xs:maxInclusive value="10"/></xs:restriction></xs:simpleType>
      <xs:group name="Stamp"><xs:sequence>
        <xs:element name="at" type="xs:dateTime"/><xs:element name="by" type="xs:NCName"/>
      </xs:sequence></xs:group>
      <xs:attributeGroup name="Versioned">
        <xs:attribute name="rev" type="xs:int" use="required"/>
        <xs:attribute name="kind" type="xs:string" fixed="drawing" use="required"/>
      </xs:attributeGroup>
      <xs:element name="DrawResponse"><xs:complexType><xs:sequence>
        <xs:element ref="tns:Shape" maxOccurs="3"/>
        <xs:element name="anyShape" type="tns:ShapeType"/>
        <xs:group ref="tns:Stamp"/>
        <xs:element name="code" type="tns:Code"/>
        <xs:element name="tags"><xs:simpleType><xs:list itemType="xs:int"/></xs:simpleType></xs:element>
        <xs:element name="either"><xs:simpleType><xs:union memberTypes="xs:date xs:int"/></xs:simpleType></xs:element>
        <xs:any namespace="##other" processContents="lax"/>
      </xs:sequence><xs:attributeGroup ref="tns:Versioned"/></xs:complexType></xs:element>
      <xs:simpleType name="Code"><xs:restriction base="xs:string">
        <xs:pattern value="[A-Z]{2}-\\d{3}(-[a-z]+)?"/></xs:restriction></xs:simpleType>
    </xs:schema>
  </wsdl:types>
  <wsdl:message name="In"/>
  <wsdl:message name="Out"><wsdl:part name="parameters" element="tns:DrawResponse"/></wsdl:message>
  <wsdl:portType name="P"><wsdl:operation name="Draw"><wsdl:input message="tns:In"/>
    <wsdl:output message="tns:Out"/></wsdl:operation></wsdl:portType>
  <wsdl:binding name="B" type="tns:P"><soap:binding transport="http://schemas.xmlsoap.org/soap/http"/>
    <wsdl:operation name="Draw"><soap:operation soapAction="draw"/>
      <wsdl:input><soap:body use="literal"/></wsdl:input><wsdl:output><soap:body use="literal"/></wsdl:output>
    </wsdl:operation></wsdl:binding>
  <wsdl:service name="S"><wsdl:port name="B" binding="tns:B"><soap:address location="http://x/draw"/></wsdl:port></wsdl:service>
</wsdl:definitions>"""


def test_substitution_groups_abstract_types_groups_and_facets_give_a_valid_sample(tmp_path):
    path = tmp_path / "features.wsdl"
    path.write_text(FEATURES)
    sample = operations_of(path)["Draw"].response
    assert_valid(wsdl_schema(path, tmp_path), sample)
    root = etree.fromstring(sample)
    assert root[0].tag == "{urn:features}Circle"  # the abstract Shape's concrete member
    assert root.find("{urn:features}anyShape").get(
        "{http://www.w3.org/2001/XMLSchema-instance}type") == "CircleType"  # default xmlns
    assert root.get("kind") == "drawing" and root.get("rev") == "0"


@pytest.mark.parametrize(("pattern", "expected"), [
    ("ORD-[0-9]{6}", "ORD-000000"), ("[A-Z]{3}", "AAA"), ("\\d{5}(-\\d{4})?", "00000"),
    ("(ABC|DEF)+", "ABC"), ("[^0-9]x*", "a"), ("\\p{Lu}\\w+", "Aa"), ("a|b", "a"),
    ("[a-z-]{2,}", "aa"), ("[", None),
])
def test_pattern_samples_match_their_pattern(pattern, expected):
    assert pattern_sample(pattern) == expected


def test_soap_import_dry_run_prints_the_mock_with_its_files(orders):
    from click.testing import CliRunner

    from mocks.protocols.soap.cli import soap_group

    done = CliRunner().invoke(soap_group, ["import", str(orders / "orders.wsdl"), "--dry-run"])
    assert done.exit_code == 0, done.output
    soap = yaml.safe_load(done.stdout)["mocks"][0]["soap"]
    assert set(soap["documents"]) == {"orders-abstract.wsdl", "schemas/orders.xsd",
                                      "schemas/order-common.xsd", "common/money.xsd"}
    from_stdin = CliRunner().invoke(soap_group, ["import", "-", "--dry-run"],
                                    input=(orders / "orders.wsdl").read_text())
    assert from_stdin.exit_code == 2 and "import it from its file" in from_stdin.output


def test_samples_of_huge_required_structures_stay_bounded(tmp_path):
    """Ten required children of the next type, eight levels deep (10^8 elements), and four
    nested levels of minOccurs="50": the sample stops near MAX_NODES elements."""
    levels = "".join(
        f'<xs:complexType name="L{level}"><xs:sequence>'
        + "".join(f'<xs:element name="e{index}" type="tns:L{level + 1}"/>' for index in range(10))
        + "</xs:sequence></xs:complexType>" for level in range(8))
    repeats = "".join(
        f'<xs:complexType name="R{level}"><xs:sequence><xs:element name="r" type="tns:R'
        f'{level + 1}" minOccurs="50" maxOccurs="unbounded"/></xs:sequence></xs:complexType>'
        for level in range(4))
    text = FEATURES.replace(
        '<xs:element name="DrawResponse">',
        f'{levels}<xs:simpleType name="L8"><xs:restriction base="xs:string"/></xs:simpleType>'
        f'{repeats}<xs:simpleType name="R4"><xs:restriction base="xs:string"/></xs:simpleType>'
        '<xs:element name="Wide"><xs:complexType><xs:sequence><xs:element name="w" '
        'type="tns:L0"/><xs:element name="d" type="tns:R0"/></xs:sequence></xs:complexType>'
        '</xs:element><xs:element name="DrawResponse">').replace(
        'element="tns:DrawResponse"', 'element="tns:Wide"')
    path = tmp_path / "wide.wsdl"
    path.write_text(text)
    sample = operations_of(path)["Draw"].response
    assert MAX_NODES <= len(etree.fromstring(sample).xpath("//*")) < 2 * MAX_NODES
