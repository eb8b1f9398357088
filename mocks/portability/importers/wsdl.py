"""WSDL 1.1 -> SOAP mocks (``type: soap``), one per service endpoint path.

Each ``service/port`` whose binding is a SOAP binding gives the path of its
``soap:address`` (or ``soap12:address``) location (``/`` + the service name when it has
none); ports sharing a path (SOAP 1.1 and 1.2 bindings of one service) are merged into one
mock, the first binding winning for each operation. Each operation of the port type becomes
``operations.<name>: {soapAction, response}``, where ``response`` is a sample XML body of the
operation's output element generated from the ``<types>`` schema (``sample`` strings, ``0``
numbers, ``true`` booleans, fixed dates; nested complex types expanded, cycle-safe).

The mock document::

    {id, type: "soap", name: "<service> - <port>",
     soap: {path, wsdl: <the document text>, operations: {Name: {soapAction, response}}}}

The SOAP handler is a later issue; these documents validate against today's schema
(``soap`` is an open object) and carry what it needs.

Parsing uses lxml with entity resolution and network access off (a WSDL is untrusted
input). Errors: ``wsdl: not well-formed XML at line 3: ...``, ``wsdl: definitions: expected
a WSDL 1.1 <definitions> root, got <description>``.

Source: SPEC "SOAP mock", "Import and export" (WSDL 1.1 row); behavior notes §13.
"""
from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from mocks.portability.importers.common import IdAllocator, safe_id
from mocks.portability.importers.result import DocumentProbe, ImportDocumentError, ImportOptions, ImportResult

FORMAT = "wsdl"
WSDL_NAMESPACE = "http://schemas.xmlsoap.org/wsdl/"
WSDL2_NAMESPACE = "http://www.w3.org/ns/wsdl"
SOAP_NAMESPACES = ("http://schemas.xmlsoap.org/wsdl/soap/",
                   "http://schemas.xmlsoap.org/wsdl/soap12/")
XSD_NAMESPACE = "http://www.w3.org/2001/XMLSchema"
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


def _local(tag: Any) -> str:
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


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
        from lxml import etree

        text = probe.text or ""
        parser = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False,
                                 remove_comments=True)
        try:
            root = etree.fromstring(text.encode("utf-8"), parser)
        except etree.XMLSyntaxError as error:
            line = f" at line {error.lineno}" if getattr(error, "lineno", None) else ""
            raise ImportDocumentError(FORMAT, "", f"not well-formed XML{line}: "
                                      f"{error.msg if hasattr(error, 'msg') else error}") \
                from None
        if root.tag == f"{{{WSDL2_NAMESPACE}}}description" or _local(root.tag) == "description":
            raise ImportDocumentError(FORMAT, "description", "WSDL 2.0 is not supported; "
                                      "use a WSDL 1.1 document (<definitions> root)")
        if _local(root.tag) != "definitions":
            raise ImportDocumentError(FORMAT, _local(root.tag) or "root",
                                      f"expected a WSDL 1.1 <definitions> root, got "
                                      f"<{_local(root.tag)}>")
        return WsdlConversion(root, text.lstrip("\ufeff")).run()


def _wrap(name: str, inner: str, namespace: str, qualified: bool) -> str:
    """``<name>inner</name>`` in ``namespace``: as the default namespace when local elements
    are qualified too, else through a ``tns`` prefix on this element only."""
    if not namespace:
        return f"<{name}>{inner}</{name}>"
    if qualified:
        return f'<{name} xmlns="{namespace}">{inner}</{name}>'
    return f'<tns:{name} xmlns:tns="{namespace}">{inner}</tns:{name}>'


class WsdlConversion:
    """One parsed ``<definitions>`` being converted."""

    def __init__(self, root: Any, text: str):
        self.root = root
        self.text = text
        self.result = ImportResult(format=FORMAT, name=root.get("name"))
        self.warnings = self.result.warnings
        self.messages = {element.get("name"): element for element in self._children(
            root, "message")}
        self.port_types = {element.get("name"): element for element in self._children(
            root, "portType")}
        self.bindings = {element.get("name"): element for element in self._children(
            root, "binding")}
        self.target_namespace = root.get("targetNamespace") or ""
        self.elements: dict[str, Any] = {}
        self.types: dict[str, Any] = {}
        #: top-level element name -> (its schema's targetNamespace, elementFormDefault qualified)
        self.element_forms: dict[str, tuple[str, bool]] = {}
        for types in self._children(root, "types"):
            for schema in types:
                if _local(schema.tag) != "schema":
                    continue
                form = (schema.get("targetNamespace") or self.target_namespace,
                        schema.get("elementFormDefault") == "qualified")
                for child in schema:
                    if _local(child.tag) == "element" and child.get("name"):
                        self.elements[child.get("name")] = child
                        self.element_forms[child.get("name")] = form
                    elif _local(child.tag) in ("complexType", "simpleType") and child.get("name"):
                        self.types[child.get("name")] = child

    @staticmethod
    def _children(element: Any, name: str) -> list[Any]:
        return [child for child in element if child.tag == f"{{{WSDL_NAMESPACE}}}{name}"
                or (_local(child.tag) == name and not str(child.tag).startswith("{"))]

    def run(self) -> ImportResult:
        """One SOAP mock per endpoint path."""
        ids = IdAllocator()
        by_path: dict[str, dict[str, Any]] = {}
        services = self._children(self.root, "service")
        if not services:
            raise ImportDocumentError(FORMAT, "definitions", "no <service> element: nothing "
                                      "to mock")
        for service in services:
            service_name = service.get("name") or "Service"
            for port in self._children(service, "port"):
                binding = self.bindings.get(_local_name(port.get("binding")))
                if binding is None or not self._is_soap(binding):
                    continue
                port_type = self.port_types.get(_local_name(binding.get("type")))
                if port_type is None:
                    raise ImportDocumentError(FORMAT, f"binding[{binding.get('name')}]",
                                              f"portType {binding.get('type')!r} not found")
                path = self._path(port, service_name)
                mock = by_path.get(path)
                if mock is None:
                    mock = {"id": ids.claim(safe_id(f"soap_{service_name}"), self.warnings),
                            "type": "soap", "name": f"{service_name} - {port.get('name')}",
                            "soap": {"path": path, "wsdl": self.text, "operations": {}}}
                    by_path[path] = mock
                    self.result.mocks.append(mock)
                actions = self._soap_actions(binding)
                operations = mock["soap"]["operations"]
                for operation in self._children(port_type, "operation"):
                    name = operation.get("name")
                    if not name or name in operations:
                        continue  # the first binding of a shared path wins
                    operations[name] = {"soapAction": actions.get(name, ""),
                                        "response": self._response(operation, binding)}
        if not self.result.mocks:
            raise ImportDocumentError(FORMAT, "service", "no port with a SOAP binding: "
                                      "nothing to mock")
        return self.result

    @staticmethod
    def _is_soap(binding: Any) -> bool:
        return any(_local(child.tag) == "binding" and child.tag.startswith(
            tuple(f"{{{namespace}}}" for namespace in SOAP_NAMESPACES)) for child in binding)

    @staticmethod
    def _path(port: Any, service_name: str) -> str:
        for child in port:
            if _local(child.tag) == "address" and child.get("location"):
                path = urlsplit(child.get("location")).path
                if path:
                    return path if path.startswith("/") else "/" + path
        return "/" + service_name

    def _soap_actions(self, binding: Any) -> dict[str, str]:
        actions: dict[str, str] = {}
        for operation in self._children(binding, "operation"):
            for child in operation:
                if _local(child.tag) == "operation" and child.get("soapAction") is not None:
                    actions[operation.get("name")] = child.get("soapAction")
        return actions

    def _response(self, operation: Any, binding: Any) -> str:
        """Sample XML of the operation's output (the SOAP body content).

        Document style: the output element, in its schema's namespace (a default
        ``xmlns`` when the schema qualifies local elements, a ``tns:`` prefix when it does
        not, so namespace-aware clients such as zeep read it). RPC style: a wrapper
        ``<tns:<Operation>Response>`` in the ``soap:body`` namespace holding one
        unqualified element per part.
        """
        name = operation.get("name")
        output = next((child for child in operation if _local(child.tag) == "output"), None)
        message = self.messages.get(_local_name(output.get("message"))) if output is not None \
            else None
        parts = [child for child in message if _local(child.tag) == "part"] \
            if message is not None else []
        for part in parts:
            if part.get("element"):
                element_name = _local_name(part.get("element"))
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
        for operation in self._children(binding, "operation"):
            if operation.get("name") != operation_name:
                continue
            for output in operation:
                if _local(output.tag) == "output":
                    for body in output:
                        if _local(body.tag) == "body" and body.get("namespace"):
                            return body.get("namespace")
        return self.target_namespace

    def _element_xml(self, element: Any, depth: int, stack: tuple[str, ...]) -> str:
        name = element.get("name") or _local_name(element.get("ref"))
        if element.get("ref") and not element.get("name"):
            target = self.elements.get(_local_name(element.get("ref")))
            if target is not None and name not in stack:
                return self._element_xml(target, depth, (*stack, name))
            return f"<{name}/>"
        if _local_name(element.get("type")) in stack:
            return ""  # a recursive member (an item's replacement item): left out
        content = self._element_content(element, depth, stack)
        return f"<{name}>{content}</{name}>" if content else f"<{name}/>"

    def _element_content(self, element: Any, depth: int, stack: tuple[str, ...]) -> str:
        inline = next((child for child in element if _local(child.tag) == "complexType"), None)
        if inline is not None:
            return self._complex_content(inline, depth + 1, stack)
        return self._type_sample(element.get("type"), depth + 1, stack)

    def _type_sample(self, type_name: str | None, depth: int, stack: tuple[str, ...]) -> str:
        local = _local_name(type_name) or "string"
        named = self.types.get(local)
        if named is not None and _local(named.tag) == "complexType":
            if local in stack or depth > MAX_DEPTH:
                return ""  # a recursive type: stop here
            return self._complex_content(named, depth, (*stack, local))
        if named is not None:  # simpleType: the first enumeration value, else its base
            for facet in named.iter():
                if _local(facet.tag) == "enumeration" and facet.get("value") is not None:
                    return facet.get("value")
            for facet in named.iter():
                if _local(facet.tag) == "restriction" and facet.get("base"):
                    return XSD_SAMPLES.get(_local_name(facet.get("base")), "sample")
        return XSD_SAMPLES.get(local, "sample")

    def _complex_content(self, complex_type: Any, depth: int, stack: tuple[str, ...]) -> str:
        if depth > MAX_DEPTH:
            return ""
        out = []
        for child in complex_type.iter():
            if child is complex_type:
                continue
            if _local(child.tag) in ("extension", "restriction") and child.get("base"):
                base = _local_name(child.get("base"))
                if base in self.types and base not in stack:
                    out.append(self._complex_content(self.types[base], depth, (*stack, base)))
            if _local(child.tag) == "element" and child.getparent() is not None and _local(
                    child.getparent().tag) in ("sequence", "all", "choice"):
                # only direct members of this type's own groups; nested inline types are
                # expanded by _element_xml
                if self._owner(child) is complex_type:
                    out.append(self._element_xml(child, depth, stack))
        return "".join(out)

    @staticmethod
    def _owner(element: Any) -> Any:
        parent = element.getparent()
        while parent is not None and _local(parent.tag) != "complexType":
            parent = parent.getparent()
        return parent
