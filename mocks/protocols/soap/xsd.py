"""The XML Schema components of a WSDL, found by qualified name.

:class:`SchemaSet` indexes every global component (elements, types, groups, attribute groups,
attributes) of every schema a WSDL brings in (its ``<types>`` schemas, imported and included
files: :class:`~mocks.protocols.soap.documents.DocumentSet`) by ``(namespace, local name)``.
Two schemas may both declare an ``Id`` element (NCBI eUtils has one per utility): each is
found under its own namespace, never mixed up by local name.

Each component keeps its :class:`SchemaContext`: the target namespace it belongs to, whether
its schema qualifies local elements and attributes (``elementFormDefault``,
``attributeFormDefault``), and whether it came in by a *chameleon* include (a schema without
``targetNamespace`` included into one that has it: its components take the includer's
namespace, and so do its unprefixed references). QName values (``type="tns:User"``) are
resolved with the namespace declarations in scope where they are written.

A reference that does not resolve by qualified name falls back to the first component of
that local name (sloppy WSDLs that name a part's element with the wrong prefix still get a
sample). Compile-time only; Django-free.

Source: SPEC "SOAP mock" (sample answers of a WSDL-only mock); behavior notes §10, §13.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mocks.core.xmldoc import local_name
from mocks.protocols.soap.documents import XSD_NAMESPACES, DocumentSet

XML_NAMESPACE = "http://www.w3.org/XML/1998/namespace"
#: ``(namespace, local name)``
QName = tuple[str, str]
#: The component tables of a :class:`SchemaSet`, by the schema element's local name.
TABLES = {"element": "elements", "complexType": "types", "simpleType": "types",
          "group": "groups", "attributeGroup": "attribute_groups", "attribute": "attributes"}


@dataclass(frozen=True, slots=True)
class SchemaContext:
    """Where a schema component was declared (see the module docstring).

    Attributes:
        namespace: the target namespace of its components (``""``: none).
        qualified_elements: ``elementFormDefault="qualified"``.
        qualified_attributes: ``attributeFormDefault="qualified"``.
        chameleon: included from a schema of another namespace while having none itself.
    """

    namespace: str
    qualified_elements: bool = False
    qualified_attributes: bool = False
    chameleon: bool = False

    def resolve(self, element: Any, value: str) -> QName:
        """The QName ``value`` (``tns:User``, ``User``) written on ``element``: its prefix
        looked up in the declarations in scope there; no prefix means the default namespace
        (for a chameleon include, the includer's namespace when there is none)."""
        prefix, _, local = value.strip().rpartition(":")
        if prefix == "xml":
            return XML_NAMESPACE, local
        namespaces = element.nsmap
        if prefix:
            return namespaces.get(prefix) or "", local
        namespace = namespaces.get(None) or ""
        if not namespace and self.chameleon:
            namespace = self.namespace
        return namespace, local


def context_of(schema: Any, includer: SchemaContext | None = None) -> SchemaContext:
    """The :class:`SchemaContext` of the ``schema`` element, included from ``includer``
    (None: imported or inline)."""
    namespace = schema.get("targetNamespace") or ""
    chameleon = False
    if includer is not None and not namespace and includer.namespace:
        namespace, chameleon = includer.namespace, True
    return SchemaContext(namespace, schema.get("elementFormDefault") == "qualified",
                         schema.get("attributeFormDefault") == "qualified", chameleon)


@dataclass(frozen=True, slots=True)
class Component:
    """One global schema component: its ``element`` (``xs:element``, ``xs:complexType``...)
    and the :class:`SchemaContext` it was declared in."""

    element: Any
    context: SchemaContext


def is_xsd(namespace: str) -> bool:
    """Whether ``namespace`` is XML Schema's own (built-in types such as ``xs:string``)."""
    return namespace in XSD_NAMESPACES


class SchemaSet:
    """Every global component of a WSDL's schemas by qualified name (see the module
    docstring).

    Attributes:
        elements, types, groups, attribute_groups, attributes: ``{QName: Component}``
            (``types`` holds complex and simple types: they share one symbol space).
        substitutes: head element -> the elements of its substitution group, in order.
        derived: type -> the complex types derived from it, in order.
    """

    def __init__(self, documents: DocumentSet | None):
        self.elements: dict[QName, Component] = {}
        self.types: dict[QName, Component] = {}
        self.groups: dict[QName, Component] = {}
        self.attribute_groups: dict[QName, Component] = {}
        self.attributes: dict[QName, Component] = {}
        self.substitutes: dict[QName, list[QName]] = {}
        self.derived: dict[QName, list[QName]] = {}
        self._by_local: dict[tuple[str, str], QName] = {}
        if documents is not None:
            self._load(documents)

    def _load(self, documents: DocumentSet) -> None:
        targets: dict[int, Any] = {}  # id(referring element) -> the document it reads
        imported: list[Any] = []
        for document in documents.documents:
            for reference in document.references:
                target = documents.target_of(reference)
                if target is not None and target.kind == "xsd":
                    targets[id(reference.element)] = target.root
                    if reference.kind in ("xs:import", "wsdl:import"):
                        imported.append(target.root)
        pending = [(schema, context_of(schema)) for schema in documents.inline_schemas()]
        pending += [(root, context_of(root)) for root in imported]
        seen: set[tuple[int, str]] = set()
        while pending:
            schema, context = pending.pop(0)
            key = (id(schema), context.namespace)
            if key in seen:
                continue
            seen.add(key)
            self._register(schema, context, replace=False)
            for child in schema:
                kind = local_name(child.tag)
                target = targets.get(id(child))
                if target is None:
                    continue
                if kind in ("include", "redefine"):
                    pending.append((target, context_of(target, context)))
                    if kind == "redefine":
                        self._register(child, context, replace=True)
                elif kind == "import":
                    pending.append((target, context_of(target)))

    def _register(self, schema: Any, context: SchemaContext, replace: bool) -> None:
        for child in schema:
            kind = local_name(child.tag)
            name = child.get("name")
            table = TABLES.get(kind)
            if table is None or not name:
                continue
            key = (context.namespace, name)
            components = getattr(self, table)
            if key in components and not replace:
                continue
            components[key] = Component(child, context)
            self._by_local.setdefault((table, name), key)
            if kind == "element" and child.get("substitutionGroup"):
                head = context.resolve(child, child.get("substitutionGroup"))
                self.substitutes.setdefault(head, []).append(key)
            elif kind == "complexType":
                for derivation in child.iter():
                    if local_name(derivation.tag) in ("extension", "restriction") and \
                            derivation.get("base"):
                        base = context.resolve(derivation, derivation.get("base"))
                        self.derived.setdefault(base, []).append(key)
                        break

    def find(self, table: str, key: QName) -> Component | None:
        """The component ``key`` of ``table`` (``elements``, ``types``, ...), else the first
        one of that local name, else None."""
        components: dict[QName, Component] = getattr(self, table)
        found = components.get(key)
        if found is None:
            fallback = self._by_local.get((table, key[1]))
            if fallback is not None:
                found = components[fallback]
        return found
