"""SOAP envelopes on the wire: versions, actions, answers and faults (1.1 and 1.2 shapes).

* version of a request: the namespace of its ``Envelope`` (1.1
  ``http://schemas.xmlsoap.org/soap/envelope/``, 1.2 ``http://www.w3.org/2003/05/soap-envelope``);
  before the body is read (a body that is not XML): ``application/soap+xml`` means 1.2;
* action: the ``action`` parameter of a SOAP 1.2 content type, else the ``SOAPAction`` header
  (quotes removed);
* answers: ``<soap:Envelope><soap:Body>…</soap:Body></soap:Envelope>`` with content type
  ``text/xml; charset=utf-8`` (1.1) or ``application/soap+xml; charset=utf-8`` (1.2);
* faults (HTTP 500): 1.1 ``<soap:Fault><faultcode/><faultstring/><detail/>``; 1.2
  ``<soap:Fault><soap:Code><soap:Value/>[<soap:Subcode>]</soap:Code><soap:Reason><soap:Text
  xml:lang="en"/></soap:Reason><soap:Detail/>``, where ``Client``/``Server`` become
  ``Sender``/``Receiver`` and any other code is a subcode of ``Receiver``.

Source: SPEC "SOAP mock" ("the result is serialized back as an XML SOAP response"); behavior
notes §10 (``fault: {code, string, detail?}``). Django-free.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from xml.sax.saxutils import escape as _escape

from mocks.core.request import MockRequest

SOAP11_NS = "http://schemas.xmlsoap.org/soap/envelope/"
SOAP12_NS = "http://www.w3.org/2003/05/soap-envelope"
SOAP11_TYPE = b"text/xml; charset=utf-8"
SOAP12_TYPE = b"application/soap+xml; charset=utf-8"
VERSIONS = {SOAP11_NS: "1.1", SOAP12_NS: "1.2"}
#: ``{<namespace>}Envelope`` -> version, and the ``Body`` tag of each version.
ENVELOPE_TAGS = {f"{{{namespace}}}Envelope": version for namespace, version in VERSIONS.items()}
BODY_TAGS = {version: f"{{{namespace}}}Body" for namespace, version in VERSIONS.items()}

_DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>'
#: ``(envelope start, envelope end)`` around the body content, by version.
WRAPPERS = {
    version: ((f'{_DECLARATION}<soap:Envelope xmlns:soap="{namespace}"><soap:Body>').encode(),
              b"</soap:Body></soap:Envelope>")
    for namespace, version in VERSIONS.items()}
CONTENT_TYPES = {"1.1": SOAP11_TYPE, "1.2": SOAP12_TYPE}
_SOAP12_CODES = {"client": "Sender", "sender": "Sender", "server": "Receiver",
                 "receiver": "Receiver", "versionmismatch": "VersionMismatch",
                 "mustunderstand": "MustUnderstand",
                 "dataencodingunknown": "DataEncodingUnknown"}
_SOAP11_CODES = {"client": "Client", "sender": "Client", "server": "Server",
                 "receiver": "Server", "versionmismatch": "VersionMismatch",
                 "mustunderstand": "MustUnderstand"}


_SPECIAL = re.compile(r"[&<>\"']")
_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;"}


def xml_escape(text: str) -> str:
    """``text`` safe inside XML text and attribute values (``& < > " '``)."""
    if _SPECIAL.search(text) is None:
        return text  # the common case: nothing to replace
    return _SPECIAL.sub(lambda found: _ENTITIES[found.group()], text)


def text_escape(text: str) -> str:
    """``text`` safe inside XML element text (``& < >``)."""
    return _escape(text)


def request_action_and_version(request: MockRequest) -> tuple[str, str]:
    """``(action, version guess)`` of a request, from its headers.

    The action the client names: the ``action`` parameter of the content type (SOAP 1.2),
    else the ``SOAPAction`` header; quotes and spaces removed; ``""`` when none. The version
    guess (used before the envelope is read): ``1.2`` when the content type is
    ``application/soap+xml``, else ``1.1``.
    """
    content_type = request.header("content-type", b"content-type") or ""
    lowered = content_type.lower()
    version = "1.2" if "application/soap+xml" in lowered else "1.1"
    if "action" in lowered:  # most content types carry only a charset: no parameter walk
        for parameter in content_type.split(";")[1:]:
            name, _, value = parameter.strip().partition("=")
            if name.strip().lower() == "action" and value.strip().strip('"'):
                return value.strip().strip('"').strip(), version
    header = request.header("soapaction", b"soapaction")
    return (header.strip().strip('"').strip() if header else ""), version


def envelope(version: str, body: bytes) -> bytes:
    """``body`` (the SOAP body's content) inside an envelope of ``version``."""
    start, end = WRAPPERS[version]
    return b"".join((start, body, end))


@dataclass(frozen=True, slots=True)
class Fault:
    """One fault to send: ``code`` (as configured: ``soap:Client``, ``Server``, a QName),
    ``string`` (the reason, plain text), ``detail`` (XML placed inside the detail element,
    or None)."""

    code: str
    string: str
    detail: str | None = None

    @property
    def is_client(self) -> bool:
        """Whether the code blames the client (``Client``/``Sender``)."""
        return _bare(self.code).lower() in ("client", "sender")


def _bare(code: str) -> str:
    return code.rsplit(":", 1)[-1].strip()


def fault_body(fault: Fault, version: str) -> bytes:
    """The whole fault envelope of ``version`` (see the module docstring)."""
    bare = _bare(fault.code)
    reason = text_escape(fault.string)
    if version == "1.2":
        value = _SOAP12_CODES.get(bare.lower())
        code = f"<soap:Value>soap:{value}</soap:Value>" if value else (
            "<soap:Value>soap:Receiver</soap:Value><soap:Subcode><soap:Value>"
            f"{xml_escape(fault.code)}</soap:Value></soap:Subcode>")
        detail = f"<soap:Detail>{fault.detail}</soap:Detail>" if fault.detail else ""
        inner = (f"<soap:Fault><soap:Code>{code}</soap:Code><soap:Reason>"
                 f'<soap:Text xml:lang="en">{reason}</soap:Text></soap:Reason>{detail}'
                 f"</soap:Fault>")
    else:
        known = _SOAP11_CODES.get(bare.lower())
        if known is not None:
            code = f"soap:{known}"
        elif ":" in fault.code and not fault.code.startswith(("soap:", "SOAP-ENV:")):
            code = bare  # an undeclared prefix would make the QName unreadable
        else:
            code = fault.code if ":" in fault.code else f"soap:{bare}"
        detail = f"<detail>{fault.detail}</detail>" if fault.detail else ""
        inner = (f"<soap:Fault><faultcode>{xml_escape(code)}</faultcode>"
                 f"<faultstring>{reason}</faultstring>{detail}</soap:Fault>")
    return envelope(version, inner.encode())


def client_fault(message: str, detail: str | None = None) -> Fault:
    """A fault blaming the request (``soap:Client`` / ``Sender``)."""
    return Fault("soap:Client", message, detail)
