"""Reading WSDL 1.1: the one reader behind the SOAP handler and the WSDL importer.

:func:`read_wsdl` parses a document safely (:func:`mocks.core.xmldoc.parse_xml`: no DTD, no
network, no entity expansion) into a :class:`WsdlDocument`, whose :meth:`~WsdlDocument.endpoints`
lists each SOAP endpoint path with its operations:

* each ``service/port`` whose binding is a SOAP binding gives the path of its ``soap:address``
  (or ``soap12:address``) location (``/`` + the service name when it has none); ports sharing
  a path (SOAP 1.1 and 1.2 bindings of one service) are merged, the first binding winning for
  each operation;
* each operation of the port type becomes an :class:`OperationInfo`: its ``soapAction``, and a
  sample XML body of its output element generated from the ``<types>`` schema (``sample``
  strings, ``0`` numbers, ``true`` booleans, fixed dates; nested complex types expanded,
  cycle-safe). Document style: the output element in its schema's namespace (a default
  ``xmlns`` when the schema qualifies local elements, a ``tns:`` prefix when it does not, so
  namespace-aware clients such as zeep read it). RPC style: a wrapper
  ``<tns:<Operation>Response>`` in the ``soap:body`` namespace holding one unqualified
  element per part.

:func:`with_address_placeholder` gives the document with every SOAP address replaced by a
placeholder, so the handler can serve ``?wsdl`` pointing at the mock server itself.

Errors: :class:`WsdlError` with ``location`` (``definitions``, ``binding[B]``) and ``message``
(``not well-formed XML at line 3: ...``, ``expected a WSDL 1.1 <definitions> root, got
<description>``) and ``line`` when known. Django-free.

Source: SPEC "SOAP mock", "Import and export" (WSDL 1.1 row); behavior notes §10, §13.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from mocks.core.xmldoc import XmlRefused, local_name, parse_xml

WSDL_NAMESPACE = "http://schemas.xmlsoap.org/wsdl/"
WSDL2_NAMESPACE = "http://www.w3.org/ns/wsdl"
SOAP_NAMESPACES = ("http://schemas.xmlsoap.org/wsdl/soap/",
                   "http://schemas.xmlsoap.org/wsdl/soap12/")
#: Sample text by XSD built-in type (local name).
XSD_SAMPLES = {
    "string": "sample", "normalizedString": "sample", "token": "sample", "anyURI":
    "https://example.com", "int": "0", "integer": "0", "long": "0", "short": "0", "byte": "0",
    "nonNegativeInteger": "0", "positiveInteger": "1", "unsignedInt": "0", "unsignedLong": "0",
    "float": "0.0", "double": "0.0", "decimal": "0.0", "boolean": "true",
    "date": "2024-01-15", "dateTime": "2024-01-15T10:30:00Z", "time": "10:30:00",
    "base64Binary": "c2FtcGxl", "hexBinary": "00",
}
#: Deepest nesting expanded in a sample response.
MAX_DEPTH = 8
#: Largest WSDL document read, in bytes (16 MiB).
MAX_WSDL_BYTES = 16 * 1024 * 1024
#: What :func:`with_address_placeholder` puts where each SOAP address location was.
ADDRESS_PLACEHOLDER = "urn:mockd:soap-address"


class WsdlError(ValueError):
    """A WSDL document that cannot be used.

    Attributes:
        location: where in the document (``definitions``, ``binding[B]``; ``""`` for the
            document as a whole).
        message: what is wrong (``not well-formed XML at line 3: ...``).
        line: the line of a syntax error, when known.
    """

    def __init__(self, location: str, message: str, line: int | None = None):
        super().__init__(f"{location}: {message}" if location else message)
        self.location = location
        self.message = message
        self.line = line


@dataclass(slots=True)
class OperationInfo:
    """One operation of a SOAP endpoint.

    Attributes:
        name: the operation name (``GetUser``).
        soap_action: the binding's ``soapAction`` (``""`` when none).
        response: sample XML of the SOAP body content of the answer.
        style: ``document`` or ``rpc``.
    """

    name: str
    soap_action: str
    response: str
    style: str = "document"


@dataclass(slots=True)
class Endpoint:
    """One SOAP endpoint path of a WSDL: ``path``, the service and port that first named it,
    and ``operations`` by name (first binding wins)."""

    path: str
    service: str
    port: str
    operations: dict[str, OperationInfo] = field(default_factory=dict)


def _local_ref(qualified: str | None) -> str:
    """``tns:GetUser`` -> ``GetUser``."""
    return (qualified or "").rsplit(":", 1)[-1]


def _is_wsdl_child(child: Any, name: str) -> bool:
    tag = child.tag
    return tag == f"{{{WSDL_NAMESPACE}}}{name}" or (
        isinstance(tag, str) and local_name(tag) == name and not tag.startswith("{"))


def _children(element: Any, name: str) -> list[Any]:
    return [child for child in element if _is_wsdl_child(child, name)]


def read_wsdl(text: str | bytes) -> WsdlDocument:
    """The :class:`WsdlDocument` of ``text``. Raises :class:`WsdlError` for XML that is not
    well-formed or refused (a DTD), a WSDL 2.0 document, or another root element."""
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
    return WsdlDocument(root)


def with_address_placeholder(root: Any) -> bytes:
    """The document of ``root`` (serialized with an XML declaration, UTF-8) with the
    ``location`` of every ``soap:address``/``soap12:address`` set to
    :data:`ADDRESS_PLACEHOLDER`. ``root`` itself is not changed."""
    from copy import deepcopy

    from lxml import etree

    copy = deepcopy(root)
    for element in copy.iter():
        if (isinstance(element.tag, str) and local_name(element.tag) == "address"
                and element.tag.startswith(tuple(f"{{{ns}}}" for ns in SOAP_NAMESPACES))):
            element.set("location", ADDRESS_PLACEHOLDER)
    return etree.tostring(copy, xml_declaration=True, encoding="UTF-8")


def _wrap(name: str, inner: str, namespace: str, qualified: bool) -> str:
    """``<name>inner</name>`` in ``namespace``: as the default namespace when local elements
    are qualified too, else through a ``tns`` prefix on this element only."""
    if not namespace:
        return f"<{name}>{inner}</{name}>"
    if qualified:
        return f'<{name} xmlns="{namespace}">{inner}</{name}>'
    return f'<tns:{name} xmlns:tns="{namespace}">{inner}</tns:{name}>'


class WsdlDocument:
    """One parsed ``<definitions>`` (see the module docstring).

    Attributes:
        root: the lxml root element.
        name: the ``name`` attribute of ``<definitions>`` (None when absent).
        target_namespace: its ``targetNamespace`` (``""`` when absent).
    """

    def __init__(self, root: Any):
        self.root = root
        self.name: str | None = root.get("name")
        self.messages = {element.get("name"): element for element in _children(root, "message")}
        self.port_types = {element.get("name"): element
                           for element in _children(root, "portType")}
        self.bindings = {element.get("name"): element for element in _children(root, "binding")}
        self.target_namespace = root.get("targetNamespace") or ""
        self.elements: dict[str, Any] = {}
        self.types: dict[str, Any] = {}
        #: top-level element name -> (its schema's targetNamespace, elementFormDefault qualified)
        self.element_forms: dict[str, tuple[str, bool]] = {}
        for types in _children(root, "types"):
            for schema in types:
                if local_name(schema.tag) != "schema":
                    continue
                form = (schema.get("targetNamespace") or self.target_namespace,
                        schema.get("elementFormDefault") == "qualified")
                for child in schema:
                    if local_name(child.tag) == "element" and child.get("name"):
                        self.elements[child.get("name")] = child
                        self.element_forms[child.get("name")] = form
                    elif local_name(child.tag) in ("complexType", "simpleType") and \
                            child.get("name"):
                        self.types[child.get("name")] = child

    def endpoints(self) -> list[Endpoint]:
        """Every SOAP endpoint path, in document order. Raises :class:`WsdlError` when there
        is no ``<service>``, no port with a SOAP binding, or a binding names an unknown
        port type."""
        by_path: dict[str, Endpoint] = {}
        services = _children(self.root, "service")
        if not services:
            raise WsdlError("definitions", "no <service> element: nothing to mock")
        for service in services:
            service_name = service.get("name") or "Service"
            for port in _children(service, "port"):
                binding = self.bindings.get(_local_ref(port.get("binding")))
                if binding is None or not self._is_soap(binding):
                    continue
                port_type = self.port_types.get(_local_ref(binding.get("type")))
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
                    endpoint.operations[name] = OperationInfo(
                        name, actions.get(name, ""), self._response(operation, binding, style),
                        style)
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

    def _binding_operations(self, binding: Any) -> tuple[dict[str, str], dict[str, str]]:
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

    def _response(self, operation: Any, binding: Any, style: str) -> str:
        """Sample XML of the operation's output (the SOAP body content)."""
        name = operation.get("name")
        output = next((child for child in operation if local_name(child.tag) == "output"), None)
        message = self.messages.get(_local_ref(output.get("message"))) if output is not None \
            else None
        parts = [child for child in message if local_name(child.tag) == "part"] \
            if message is not None else []
        for part in parts:
            if part.get("element"):
                element_name = _local_ref(part.get("element"))
                element = self.elements.get(element_name)
                namespace, qualified = self.element_forms.get(
                    element_name, (self.target_namespace, False))
                if element is None:
                    inner = "<result>ok</result>"
                else:
                    inner = self._element_content(element, 0, ())
                return _wrap(element_name, inner, namespace, qualified)
        # rpc style: a wrapper named after the operation holding one element per part
        inner = "".join(f"<{part.get('name')}>{self._type_sample(part.get('type'), 0, ())}"
                        f"</{part.get('name')}>" for part in parts if part.get("name"))
        return _wrap(f"{name}Response", inner or "<result>ok</result>",
                     self._rpc_namespace(binding, name), False)

    def _rpc_namespace(self, binding: Any, operation_name: str) -> str:
        for operation in _children(binding, "operation"):
            if operation.get("name") != operation_name:
                continue
            for output in operation:
                if local_name(output.tag) == "output":
                    for body in output:
                        if local_name(body.tag) == "body" and body.get("namespace"):
                            return body.get("namespace")
        return self.target_namespace

    def _element_xml(self, element: Any, depth: int, stack: tuple[str, ...]) -> str:
        name = element.get("name") or _local_ref(element.get("ref"))
        if element.get("ref") and not element.get("name"):
            target = self.elements.get(_local_ref(element.get("ref")))
            if target is not None and name not in stack:
                return self._element_xml(target, depth, (*stack, name))
            return f"<{name}/>"
        if _local_ref(element.get("type")) in stack:
            return ""  # a recursive member (an item's replacement item): left out
        content = self._element_content(element, depth, stack)
        return f"<{name}>{content}</{name}>" if content else f"<{name}/>"

    def _element_content(self, element: Any, depth: int, stack: tuple[str, ...]) -> str:
        inline = next((child for child in element if local_name(child.tag) == "complexType"),
                      None)
        if inline is not None:
            return self._complex_content(inline, depth + 1, stack)
        return self._type_sample(element.get("type"), depth + 1, stack)

    def _type_sample(self, type_name: str | None, depth: int, stack: tuple[str, ...]) -> str:
        local = _local_ref(type_name) or "string"
        named = self.types.get(local)
        if named is not None and local_name(named.tag) == "complexType":
            if local in stack or depth > MAX_DEPTH:
                return ""  # a recursive type: stop here
            return self._complex_content(named, depth, (*stack, local))
        if named is not None:  # simpleType: the first enumeration value, else its base
            for facet in named.iter():
                if local_name(facet.tag) == "enumeration" and facet.get("value") is not None:
                    return facet.get("value")
            for facet in named.iter():
                if local_name(facet.tag) == "restriction" and facet.get("base"):
                    return XSD_SAMPLES.get(_local_ref(facet.get("base")), "sample")
        return XSD_SAMPLES.get(local, "sample")

    def _complex_content(self, complex_type: Any, depth: int, stack: tuple[str, ...]) -> str:
        if depth > MAX_DEPTH:
            return ""
        out = []
        for child in complex_type.iter():
            if child is complex_type:
                continue
            if local_name(child.tag) in ("extension", "restriction") and child.get("base"):
                base = _local_ref(child.get("base"))
                if base in self.types and base not in stack:
                    out.append(self._complex_content(self.types[base], depth, (*stack, base)))
            if local_name(child.tag) == "element" and child.getparent() is not None and \
                    local_name(child.getparent().tag) in ("sequence", "all", "choice"):
                # only direct members of this type's own groups; nested inline types are
                # expanded by _element_xml
                if self._owner(child) is complex_type:
                    out.append(self._element_xml(child, depth, stack))
        return "".join(out)

    @staticmethod
    def _owner(element: Any) -> Any:
        parent = element.getparent()
        while parent is not None and local_name(parent.tag) != "complexType":
            parent = parent.getparent()
        return parent
