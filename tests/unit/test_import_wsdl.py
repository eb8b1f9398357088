"""WSDL 1.1 import -> SOAP mocks (SPEC "SOAP mock"; behavior notes §13)."""
from __future__ import annotations

import pytest

from mocks.portability.importers import ImportDocumentError, detect_format, import_document
from tests.import_golden import assert_matches_golden, case_name, cases


@pytest.mark.parametrize("source", cases("wsdl"), ids=case_name)
def test_wsdl_golden_file_converts_to_expected_config(source):
    assert_matches_golden(source)


@pytest.mark.parametrize(("text", "filename", "detected"), [
    ('<?xml version="1.0"?>\n<!-- c -->\n<wsdl:definitions xmlns:wsdl="x"/>', "", "wsdl"),
    ("<definitions/>", "service.xml", "wsdl"),
    ("anything", "service.wsdl", "wsdl"),
    ("<description xmlns='http://www.w3.org/ns/wsdl'/>", "", None),
    ("<html><body>definitions</body></html>", "", None),
])
def test_wsdl_detection_by_root_element_or_extension(text, filename, detected):
    assert detect_format(text, filename) == detected


def test_wsdl_soap_mock_keeps_the_document_for_the_handler():
    text = (FIXTURE := cases("wsdl")[0]).read_text()
    mock = import_document(text, filename=FIXTURE.name).mocks[0]
    assert mock["type"] == "soap" and mock["soap"]["wsdl"] == text


@pytest.mark.parametrize(("text", "message"), [
    pytest.param("<definitions><unclosed></definitions>", "wsdl: not well-formed XML at line 1:",
                 id="not well formed"),
    pytest.param("<description xmlns='http://www.w3.org/ns/wsdl'/>",
                 "wsdl: description: WSDL 2.0 is not supported", id="wsdl 2.0"),
    pytest.param("<schema/>", "wsdl: schema: expected a WSDL 1.1 <definitions> root, got "
                 "<schema>", id="other root"),
    pytest.param("<definitions xmlns='http://schemas.xmlsoap.org/wsdl/'/>",
                 "wsdl: definitions: no <service> element: nothing to mock", id="no service"),
    pytest.param("<!DOCTYPE d [<!ENTITY e SYSTEM 'file:///etc/passwd'>]><definitions "
                 "xmlns='http://schemas.xmlsoap.org/wsdl/'>&e;</definitions>",
                 "wsdl: DTDs and entity declarations are not allowed",
                 id="external entity refused"),
])
def test_wsdl_malformed_document_is_one_line_error(text, message):
    with pytest.raises(ImportDocumentError) as caught:
        import_document(text, format="wsdl")
    assert str(caught.value).startswith(message)
    assert "\n" not in str(caught.value)
