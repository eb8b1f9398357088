"""WSDL 1.1 -> SOAP mocks (``type: soap``), one per service endpoint path.

Each ``service/port`` whose binding is a SOAP binding gives the path of its
``soap:address`` (or ``soap12:address``) location (``/`` + the service name when it has
none); ports sharing a path (SOAP 1.1 and 1.2 bindings of one service) are merged into one
mock, the first binding winning for each operation. Each operation of the port type becomes
``operations.<name>: {soapAction, response}``, where ``response`` is a sample XML body of the
operation's output generated from the schemas and valid against them
(:mod:`mocks.protocols.soap.samples`); a one-way operation (no output) gets no ``response``
and answers ``202`` without a body.

A WSDL read from a file may import others (``wsdl:import``, ``xs:import``, ``xs:include``):
they are read from the WSDL's folder and below only (``..`` escapes, absolute paths and
symbolic links leading out are refused; remote locations are never downloaded, see
:mod:`mocks.protocols.soap.documents`) and written into the mock as ``soap.documents``
(``{name: text}``), so the mock needs no file to serve them. A WSDL given as text (stdin, a
URL) cannot import files: that is an error saying to import it from its file.

The mock document::

    {id, type: "soap", name: "<service> - <port>",
     soap: {path, wsdl: <the document text>, documents?: {name: text},
            operations: {Name: {soapAction, response?}}}}

The SOAP handler (:mod:`mocks.protocols.soap`) serves these documents as they are; the
WSDL is read by its reader (:mod:`mocks.protocols.soap.wsdl`), so import and serving agree.

Parsing uses lxml with entity resolution and network access off and refuses DTDs (a WSDL
is untrusted input). Errors: ``wsdl: not well-formed XML at line 3: ...``, ``wsdl: definitions: expected
a WSDL 1.1 <definitions> root, got <description>``, ``wsdl: users.wsdl: schemaLocation
'http://x/t.xsd' (xs:import in users.wsdl) is remote: ...``.

Source: SPEC "SOAP mock", "Import and export" (WSDL 1.1 row); behavior notes §13.
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING

from mocks.portability.importers.common import IdAllocator, safe_id
from mocks.portability.importers.result import DocumentProbe, ImportDocumentError, ImportOptions, ImportResult

if TYPE_CHECKING:
    from mocks.protocols.soap.wsdl import Endpoint, WsdlDocument

FORMAT = "wsdl"


def _local_name(qualified: str | None) -> str:
    """``tns:GetUser`` -> ``GetUser``."""
    return (qualified or "").rsplit(":", 1)[-1]


class WsdlImporter:
    """WSDL 1.1 documents."""

    format = FORMAT
    #: The format's name and its detection rule in words, for ``GET /formats``.
    title = "WSDL 1.1 service description"
    detection = "a .wsdl file, or an XML document whose root element is 'definitions'"

    def detects(self, probe: DocumentProbe) -> bool:
        """A ``.wsdl`` file, or XML whose root element is ``definitions`` (notes §13)."""
        if probe.extension == ".wsdl":
            return True
        if not probe.looks_like_xml():
            return False
        head = probe.stripped[:4096]
        # The root is the first element that is not a declaration, comment or DOCTYPE.
        index = 0
        while True:
            start = head.find("<", index)
            if start < 0:
                return False
            if head.startswith(("<?", "<!"), start):
                end = head.find("-->", start) + 3 if head.startswith("<!--", start) else \
                    head.find(">", start) + 1
                if end <= 0:
                    return False
                index = end
                continue
            name = re.match(r"[A-Za-z_][\w.:-]*", head[start + 1:])
            return name is not None and _local_name(name.group(0)) == "definitions"

    def convert(self, probe: DocumentProbe, options: ImportOptions) -> ImportResult:
        """See the module docstring. Raises :class:`ImportDocumentError`."""
        # The SOAP modules (lxml and the WSDL reader) only when a WSDL is converted: format
        # detection of every import asks detects() above, which reads the probe alone.
        from mocks.protocols.soap.documents import FolderSource, NoSource
        from mocks.protocols.soap.wsdl import WsdlError, read_wsdl

        text = (probe.text or "").lstrip("\ufeff")
        source = FolderSource(probe.base_dir) if probe.base_dir is not None else NoSource(
            "the WSDL was not read from a file, so no file beside it can be read; import "
            "it from its file")
        try:
            document = read_wsdl(text, source, probe.filename if probe.base_dir else "")
            endpoints = document.endpoints()
        except WsdlError as error:
            raise ImportDocumentError(FORMAT, error.location, error.message) from None
        return _mocks_of(document, endpoints, text)


def _mocks_of(document: WsdlDocument, endpoints: list[Endpoint], text: str) -> ImportResult:
    """One SOAP mock per endpoint path (see the module docstring)."""
    result = ImportResult(format=FORMAT, name=document.name)
    ids = IdAllocator()
    from lxml import etree

    # The imported files go with the inline WSDL, by the names it refers to them by.
    files = {item.name: etree.tostring(item.root, encoding="unicode")
             for item in document.documents.documents[1:]}
    for endpoint in endpoints:
        operations = {name: {"soapAction": info.soap_action} if info.one_way else
                      {"soapAction": info.soap_action, "response": info.response}
                      for name, info in endpoint.operations.items()}
        soap = {"path": endpoint.path, "wsdl": text}
        if files:
            soap["documents"] = files
        result.mocks.append({
            "id": ids.claim(safe_id(f"soap_{endpoint.service}"), result.warnings),
            "type": "soap", "name": f"{endpoint.service} - {endpoint.port}",
            "soap": {**soap, "operations": operations}})
    return result


#: Operation name prefixes that ``--stateful`` turns into table actions.
CRUD_PREFIXES = (("Get", "get"), ("List", "list"), ("Create", "create"),
                 ("Update", "update"), ("Delete", "delete"))
_NOUN_SUFFIXES = ("ByID", "ById", "Details", "Info")


def _snake(text: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", text).lower()


def _plural(singular: str) -> str:
    if singular.endswith("y") and singular[-2:-1] not in ("a", "e", "i", "o", "u"):
        return singular[:-1] + "ies"
    if singular.endswith(("s", "x", "z", "ch", "sh")):
        return singular + "es"
    return singular + "s"


def _singular(noun: str) -> str:
    if noun.endswith("ies"):
        return noun[:-3] + "y"
    if noun.endswith(("sses", "xes", "ches", "shes")):
        return noun[:-2]
    if noun.endswith("s") and not noun.endswith("ss"):
        return noun[:-1]
    return noun


def crud_action(operation: str) -> tuple[str, str] | None:
    """``(action, table)`` of a CRUD-shaped operation name, or None: ``GetUser`` ->
    ``("get", "users")``, ``ListOrderItems`` -> ``("list", "order_items")``,
    ``CreateCategory`` -> ``("create", "categories")``; ``GetUserById`` reads as
    ``GetUser``."""
    for prefix, action in CRUD_PREFIXES:
        noun = operation[len(prefix):]
        if operation.startswith(prefix) and noun[:1].isupper():
            for suffix in _NOUN_SUFFIXES:
                if noun.endswith(suffix) and len(noun) > len(suffix):
                    noun = noun[:-len(suffix)]
            return action, _plural(_snake(_singular(noun)))
    return None


def make_stateful(result: ImportResult) -> list[str]:
    """Turn the CRUD-shaped operations (``Get*``, ``List*``, ``Create*``, ``Update*``,
    ``Delete*``) of the SOAP mocks in ``result`` into table operations (``statefulResource``
    + ``statefulAction``; the sample ``response`` stays as the shape of the answer) and add
    one table per resource (``tables[]``, id field ``id``) unless ``result`` has it already.
    Returns the names of the tables added. Source: SPEC "Command-line surface" (``soap
    import --stateful`` "auto-detects CRUD patterns")."""
    known = {table.get("name") for table in result.tables}
    added: list[str] = []
    for mock in result.mocks:
        if mock.get("type") != "soap":
            continue
        for name, operation in (mock["soap"].get("operations") or {}).items():
            found = crud_action(name)
            if found is None:
                continue
            action, table = found
            operation["statefulResource"] = table
            operation["statefulAction"] = action
            if table not in known:
                known.add(table)
                added.append(table)
                result.tables.append({"name": table})
    if not added and not any(
            "statefulAction" in operation for mock in result.mocks if mock.get("type") == "soap"
            for operation in (mock["soap"].get("operations") or {}).values()):
        result.warnings.append("--stateful: no operation is named Get*, List*, Create*, "
                               "Update* or Delete*; nothing became stateful")
    return added
