"""Reading WSDL 1.1: the one reader behind the SOAP handler and the WSDL importer.

:func:`read_wsdl` parses a document safely (:func:`mocks.core.xmldoc.parse_xml`: no DTD, no
network, no entity expansion), brings in the files it imports
(:mod:`mocks.protocols.soap.documents`: ``wsdl:import``, ``xs:import``, ``xs:include``, read
only from the WSDL's folder or the texts given with it) and returns a :class:`WsdlDocument`,
whose :meth:`~WsdlDocument.endpoints` lists each SOAP endpoint path with its operations:

* messages, port types and bindings are found by qualified name across the WSDL and the
  WSDL files it imports (falling back to the local name for sloppy references);
* each ``service/port`` whose binding is a SOAP binding gives the path of its ``soap:address``
  (or ``soap12:address``) location (``/`` + the service name when it has none); ports sharing
  a path (SOAP 1.1 and 1.2 bindings of one service) are merged, the first binding winning for
  each operation;
* each operation of the port type becomes an :class:`OperationInfo`: its ``soapAction``,
  whether it is one-way (an input and no output: answered ``202`` without a body), and a
  sample XML body of its output generated from the schemas
  (:class:`~mocks.protocols.soap.samples.SampleWriter`: valid against them, elements found
  by qualified name). Document style: one sample per body part (the parts the binding's
  ``soap:body parts`` names, else all): an element part is that global element, a type part
  an unqualified element named after the part. RPC style: a wrapper
  ``<tns:<Operation>Response>`` in the ``soap:body`` namespace holding one unqualified
  element per part.

:meth:`WsdlDocument.served` gives every document as served, each address and import pointing
at a placeholder that the handler replaces with the mock's own URL.

Errors: :class:`WsdlError` with ``location`` (``definitions``, ``binding[B]``, an imported
file's name) and ``message`` (``not well-formed XML at line 3: ...``, ``expected a WSDL 1.1
<definitions> root, got <description>``) and ``line`` when known. Django-free.

Source: SPEC "SOAP mock", "Import and export" (WSDL 1.1 row); behavior notes §10, §13.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from mocks.core.xmldoc import XmlRefused, local_name, parse_xml
from mocks.protocols.soap.documents import (ADDRESS_PLACEHOLDER, MAX_DOCUMENT_BYTES,
                                            WSDL_NAMESPACE, DocumentSet, DocumentSource,
                                            NoSource, WsdlError, load_documents)
from mocks.protocols.soap.samples import Node, SampleWriter, to_xml
from mocks.protocols.soap.xsd import QName, SchemaContext, SchemaSet

__all__ = ["ADDRESS_PLACEHOLDER", "Endpoint", "OperationInfo", "WsdlDocument", "WsdlError",
           "read_wsdl"]

WSDL2_NAMESPACE = "http://www.w3.org/ns/wsdl"
SOAP_NAMESPACES = ("http://schemas.xmlsoap.org/wsdl/soap/",
                   "http://schemas.xmlsoap.org/wsdl/soap12/")
#: Largest WSDL document read, in bytes (16 MiB).
MAX_WSDL_BYTES = MAX_DOCUMENT_BYTES
#: What an inline WSDL that imports files without ``documents`` is told.
NO_FILES_HINT = ("the WSDL was given as text, so no file beside it can be read; give the "
                 "file's text under soap.documents (name: text), or use wsdlFile")
_QNAMES = SchemaContext("")


@dataclass(slots=True)
class OperationInfo:
    """One operation of a SOAP endpoint.

    Attributes:
        name: the operation name (``GetUser``).
        soap_action: the binding's ``soapAction`` (``""`` when none).
        response: sample XML of the SOAP body content of the answer (``""`` for a one-way
            operation).
        style: ``document`` or ``rpc``.
        one_way: an input and no output: answered ``202 Accepted`` without a body.
    """

    name: str
    soap_action: str
    response: str
    style: str = "document"
    one_way: bool = False


@dataclass(slots=True)
class Endpoint:
    """One SOAP endpoint path of a WSDL: ``path``, the service and port that first named it,
    and ``operations`` by name (first binding wins)."""

    path: str
    service: str
    port: str
    operations: dict[str, OperationInfo] = field(default_factory=dict)


def _is_wsdl_child(child: Any, name: str) -> bool:
    tag = child.tag
    return tag == f"{{{WSDL_NAMESPACE}}}{name}" or (
        isinstance(tag, str) and local_name(tag) == name and not tag.startswith("{"))


def _children(element: Any, name: str) -> list[Any]:
    return [child for child in element if _is_wsdl_child(child, name)]


def _first(element: Any, name: str) -> Any:
    return next((child for child in element if local_name(child.tag) == name), None)


def read_wsdl(text: str | bytes, source: DocumentSource | None = None,
              name: str = "") -> WsdlDocument:
    """The :class:`WsdlDocument` of ``text`` (named ``name`` relative to its folder), the
    files it imports read through ``source`` (None: none can be read, and an import is an
    error saying so).

    Raises :class:`WsdlError` for XML that is not well-formed or refused (a DTD), a WSDL 2.0
    document, another root element, or an import that cannot be followed
    (:func:`~mocks.protocols.soap.documents.load_documents`)."""
    try:
        root = parse_xml(text, MAX_WSDL_BYTES)
    except XmlRefused as error:
        raise WsdlError("", error.reason, error.line) from None
    tag = local_name(root.tag)
    if root.tag == f"{{{WSDL2_NAMESPACE}}}description" or tag == "description":
        raise WsdlError("description", "WSDL 2.0 is not supported; use a WSDL 1.1 document "
                                       "(<definitions> root)")
    if tag != "definitions":
        raise WsdlError(tag or "root", f"expected a WSDL 1.1 <definitions> root, got <{tag}>")
    return WsdlDocument(load_documents(root, source or NoSource(NO_FILES_HINT), name))


class _Table(dict):
    """WSDL components by QName, with a fallback by local name (first wins)."""

    def __init__(self) -> None:
        super().__init__()
        self.by_local: dict[str, QName] = {}

    def add(self, key: QName, element: Any) -> None:
        self.setdefault(key, element)
        self.by_local.setdefault(key[1], key)

    def find(self, holder: Any, value: str | None) -> Any:
        """The component the QName ``value`` (written on ``holder``) names, or None."""
        if not value:
            return None
        key = _QNAMES.resolve(holder, value)
        found = self.get(key)
        if found is None and key[1] in self.by_local:
            found = self[self.by_local[key[1]]]
        return found


class WsdlDocument:
    """One WSDL with the documents it brings in (see the module docstring).

    Attributes:
        documents: the :class:`~mocks.protocols.soap.documents.DocumentSet`.
        root: the lxml root element of the WSDL itself.
        name: the ``name`` attribute of ``<definitions>`` (None when absent).
        target_namespace: its ``targetNamespace`` (``""`` when absent).
        schemas: every schema component by QName (:class:`~.xsd.SchemaSet`).
    """

    def __init__(self, documents: DocumentSet):
        self.documents = documents
        self.root = documents.main.root
        self.name: str | None = self.root.get("name")
        self.target_namespace = self.root.get("targetNamespace") or ""
        self.messages = _Table()
        self.port_types = _Table()
        self.bindings = _Table()
        self.services: list[Any] = []
        for document in documents.documents:
            if document.kind != "wsdl":
                continue
            namespace = document.root.get("targetNamespace") or ""
            for kind, table in (("message", self.messages), ("portType", self.port_types),
                                ("binding", self.bindings)):
                for element in _children(document.root, kind):
                    if element.get("name"):
                        table.add((namespace, element.get("name")), element)
            self.services.extend(_children(document.root, "service"))
        self.schemas = SchemaSet(documents)
        self._endpoints: list[Endpoint] | None = None

    def served(self) -> list[bytes]:
        """Every document as served, by index (0: the WSDL; see
        :meth:`~mocks.protocols.soap.documents.DocumentSet.served`)."""
        return self.documents.served()

    def endpoints(self) -> list[Endpoint]:
        """Every SOAP endpoint path, in document order (worked out once: samples are
        written on the first call). Raises :class:`WsdlError` when there is no
        ``<service>``, no port with a SOAP binding, or a binding names an unknown port
        type."""
        if self._endpoints is None:
            self._endpoints = self._read_endpoints()
        return self._endpoints

    def _read_endpoints(self) -> list[Endpoint]:
        by_path: dict[str, Endpoint] = {}
        if not self.services:
            raise WsdlError("definitions", "no <service> element: nothing to mock")
        writer = SampleWriter(self.schemas)
        for service in self.services:
            service_name = service.get("name") or "Service"
            for port in _children(service, "port"):
                binding = self.bindings.find(port, port.get("binding"))
                if binding is None or not self._is_soap(binding):
                    continue
                port_type = self.port_types.find(binding, binding.get("type"))
                if port_type is None:
                    raise WsdlError(f"binding[{binding.get('name')}]",
                                    f"portType {binding.get('type')!r} not found")
                path = self._path(port, service_name)
                endpoint = by_path.get(path)
                if endpoint is None:
                    endpoint = by_path[path] = Endpoint(path, service_name,
                                                        port.get("name") or "")
                actions, styles = self._binding_operations(binding)
                for operation in _children(port_type, "operation"):
                    name = operation.get("name")
                    if not name or name in endpoint.operations:
                        continue  # the first binding of a shared path wins
                    style = styles.get(name, "document")
                    output = _first(operation, "output")
                    endpoint.operations[name] = OperationInfo(
                        name, actions.get(name, ""),
                        self._response(writer, operation, output, binding, style)
                        if output is not None else "",
                        style, one_way=output is None and _first(operation, "input") is not None)
        if not by_path:
            raise WsdlError("service", "no port with a SOAP binding: nothing to mock")
        return list(by_path.values())

    def operations(self) -> dict[str, OperationInfo]:
        """The operations of every endpoint, by name (the first endpoint naming one wins)."""
        merged: dict[str, OperationInfo] = {}
        for endpoint in self.endpoints():
            for name, info in endpoint.operations.items():
                merged.setdefault(name, info)
        return merged

    def soap_actions(self) -> dict[str, str]:
        """``{soapAction: operation name}`` over every SOAP binding (a SOAP 1.2 binding may
        name other actions than the 1.1 one; the first binding naming an action wins)."""
        actions: dict[str, str] = {}
        for binding in self.bindings.values():
            if self._is_soap(binding):
                for name, action in self._binding_operations(binding)[0].items():
                    if action:
                        actions.setdefault(action, name)
        return actions

    @staticmethod
    def _is_soap(binding: Any) -> bool:
        return any(local_name(child.tag) == "binding" and child.tag.startswith(
            tuple(f"{{{namespace}}}" for namespace in SOAP_NAMESPACES)) for child in binding)

    @staticmethod
    def _path(port: Any, service_name: str) -> str:
        for child in port:
            if local_name(child.tag) == "address" and child.get("location"):
                path = urlsplit(child.get("location")).path
                if path:
                    return path if path.startswith("/") else "/" + path
        return "/" + service_name

    @staticmethod
    def _binding_operations(binding: Any) -> tuple[dict[str, str], dict[str, str]]:
        """``({operation: soapAction}, {operation: style})`` of one binding."""
        default_style = "document"
        for child in binding:
            if local_name(child.tag) == "binding" and child.get("style"):
                default_style = child.get("style")
        actions: dict[str, str] = {}
        styles: dict[str, str] = {}
        for operation in _children(binding, "operation"):
            styles[operation.get("name")] = default_style
            for child in operation:
                if local_name(child.tag) == "operation":
                    if child.get("soapAction") is not None:
                        actions[operation.get("name")] = child.get("soapAction")
                    if child.get("style"):
                        styles[operation.get("name")] = child.get("style")
        return actions, styles

    @staticmethod
    def _output_body(binding: Any, operation_name: str) -> Any:
        """The ``soap:body`` of the binding operation's output, or None."""
        for operation in _children(binding, "operation"):
            if operation.get("name") == operation_name:
                output = _first(operation, "output")
                return _first(output, "body") if output is not None else None
        return None

    def _response(self, writer: SampleWriter, operation: Any, output: Any, binding: Any,
                  style: str) -> str:
        """Sample XML of the operation's output (the SOAP body content)."""
        name = operation.get("name")
        message = self.messages.find(output, output.get("message"))
        parts = _children(message, "part") if message is not None else []
        body = self._output_body(binding, name)
        if body is not None and body.get("parts") is not None:
            wanted = body.get("parts").split()
            parts = [part for part in parts if part.get("name") in wanted]
        nodes = [self._part(writer, part) for part in parts]
        if style == "rpc":
            namespace = (body.get("namespace") if body is not None else None) or \
                self.target_namespace
            wrapper = Node(namespace, f"{name}Response")
            wrapper.children = [node for node in nodes if node is not None]
            return to_xml(wrapper)
        return "".join(to_xml(node) for node in nodes if node is not None)

    @staticmethod
    def _part(writer: SampleWriter, part: Any) -> Node | None:
        """The sample of one message part: its element, or an unqualified element named
        after it holding a sample of its type."""
        if part.get("element"):
            key = _QNAMES.resolve(part, part.get("element"))
            return writer.element(key) or Node(*key)
        if part.get("type") and part.get("name"):
            return writer.typed("", part.get("name"), _QNAMES.resolve(part, part.get("type")))
        return None
