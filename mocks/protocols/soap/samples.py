"""Sample XML of schema elements and types: the answers of a WSDL-only SOAP mock.

:class:`SampleWriter` writes an instance of a global element (or a type, under a given
element name) that is valid against the WSDL's schemas (:class:`~.xsd.SchemaSet`):

* namespaces: a global element is in its schema's target namespace; a local element is in
  it when its ``form`` (else its schema's ``elementFormDefault``) is ``qualified``, in no
  namespace otherwise; the same for attributes (``attributeFormDefault``). The sample's root
  namespace is its default namespace when no element of the sample is unqualified, else the
  prefix ``tns``; other namespaces get ``ns1``, ``ns2``...;
* content: ``xs:sequence`` and ``xs:all`` give every member, ``xs:choice`` exactly one
  branch (the first that does not recurse), groups are expanded, ``complexContent``
  extensions put the base type's content first; each member appears ``minOccurs`` times
  (once when it is optional; at most :data:`MAX_REPEATS`), an optional member that would
  recurse is left out; a required ``xs:any`` becomes an element of a namespace it allows;
* required attributes are written (``fixed`` or ``default`` value, else a sample of their
  type); optional ones are left out;
* text: ``fixed``, else ``default``, else the first ``enumeration``, else a sample of the
  built-in type (:data:`XSD_SAMPLES`) adjusted to the ``length``, ``minLength``,
  ``maxLength``, ``min/maxInclusive``, ``min/maxExclusive`` and (simple) ``pattern``
  facets;
* an abstract element is replaced by the first concrete member of its substitution group;
  an abstract type by the first concrete type derived from it, named by ``xsi:type``.

Bounded: about :data:`MAX_NODES` elements per sample and :data:`MAX_DEPTH` levels; past
them optional content is left out and required elements are written empty (a schema that
requires more has no sample of bounded size, so that sample is not valid). Compile-time
only; Django-free.

Source: SPEC "SOAP mock" (the answer of a WSDL operation); behavior notes §10, §13
(operations answer "their sample response").
"""
from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from typing import Any

from mocks.core.xmldoc import local_name
from mocks.protocols.soap.xsd import XML_NAMESPACE, QName, SchemaContext, SchemaSet, is_xsd

XSI_NAMESPACE = "http://www.w3.org/2001/XMLSchema-instance"
#: Sample text by built-in XSD type (local name).
XSD_SAMPLES = {
    "string": "sample", "normalizedString": "sample", "token": "sample", "language": "en",
    "Name": "sample", "NCName": "sample", "NMTOKEN": "sample", "NMTOKENS": "sample",
    "ID": "id1", "IDREF": "id1", "IDREFS": "id1", "ENTITY": "sample", "ENTITIES": "sample",
    "QName": "sample", "NOTATION": "sample", "anyURI": "https://example.com",
    "anySimpleType": "sample", "anyAtomicType": "sample", "anyType": "",
    "int": "0", "integer": "0", "long": "0", "short": "0", "byte": "0",
    "nonNegativeInteger": "0", "positiveInteger": "1", "negativeInteger": "-1",
    "nonPositiveInteger": "0", "unsignedInt": "0", "unsignedLong": "0",
    "unsignedShort": "0", "unsignedByte": "0",
    "float": "0.0", "double": "0.0", "decimal": "0.0", "boolean": "true",
    "date": "2024-01-15", "dateTime": "2024-01-15T10:30:00Z",
    "dateTimeStamp": "2024-01-15T10:30:00Z", "time": "10:30:00", "duration": "P1D",
    "dayTimeDuration": "P1D", "yearMonthDuration": "P1Y", "gYear": "2024",
    "gYearMonth": "2024-01", "gMonth": "--01", "gMonthDay": "--01-15", "gDay": "---15",
    "base64Binary": "c2FtcGxl", "hexBinary": "00",
}
_NUMERIC = frozenset(name for name, text in XSD_SAMPLES.items()
                     if text[:1].isdigit() and name not in ("date", "dateTime", "dateTimeStamp",
                                                            "time", "gYear", "gYearMonth"))
_INTEGERS = frozenset(name for name in _NUMERIC if name not in ("float", "double", "decimal"))
#: Deepest element nesting written.
MAX_DEPTH = 24
#: Most elements in one sample.
MAX_NODES = 2000
#: Most copies of one member (its ``minOccurs``, when larger, is cut here).
MAX_REPEATS = 50
_NAMESPACE_OF_OTHER = "urn:mockd:sample"


class Node:
    """One element of a sample: ``namespace`` (``""``: none), ``name``, ``attributes``
    (``[(namespace, name, value)]``, a value of ``(namespace, local)`` being a QName),
    ``text`` and ``children``."""

    __slots__ = ("namespace", "name", "attributes", "text", "children")

    def __init__(self, namespace: str, name: str, text: str = ""):
        self.namespace = namespace
        self.name = name
        self.attributes: list[tuple[str, str, Any]] = []
        self.text = text
        self.children: list[Node] = []


def _occurs(particle: Any) -> tuple[int, int | None]:
    """``(minOccurs, maxOccurs)`` of a particle (None: unbounded)."""
    try:
        low = int(particle.get("minOccurs", "1"))
    except ValueError:
        low = 1
    high_text = particle.get("maxOccurs", "1")
    try:
        high = None if high_text == "unbounded" else int(high_text)
    except ValueError:
        high = None
    return low, high


def _repeats(particle: Any) -> int:
    """How many copies of ``particle`` a sample holds (see the module docstring)."""
    low, high = _occurs(particle)
    count = min(max(low, 1), MAX_REPEATS)
    return count if high is None else min(count, high)


def _children(element: Any, *names: str) -> list[Any]:
    return [child for child in element if local_name(child.tag) in names]


def _first(element: Any, *names: str) -> Any:
    return next((child for child in element if local_name(child.tag) in names), None)


class SampleWriter:
    """Samples of one :class:`~.xsd.SchemaSet` (see the module docstring)."""

    def __init__(self, schemas: SchemaSet):
        self.schemas = schemas
        self._nodes = 0
        self._recursed = False

    # ------------------------------------------------------------------ entry points
    def element(self, key: QName) -> Node | None:
        """A sample of the global element ``key``, or None when no schema declares it."""
        component = self.schemas.find("elements", key)
        if component is None:
            return None
        self._nodes = 0
        return self._global(key, component.element, component.context, (), 0, True)

    def typed(self, namespace: str, name: str, type_key: QName) -> Node:
        """An element ``name`` in ``namespace`` whose content is a sample of the type
        ``type_key`` (an RPC part)."""
        self._nodes = 0
        node = Node(namespace, name)
        self._typed(node, type_key, None, None, (), 0)
        return node

    # ------------------------------------------------------------------ elements
    def _global(self, key: QName, declaration: Any, context: SchemaContext,
                stack: tuple, depth: int, required: bool) -> Node | None:
        if declaration.get("abstract") in ("true", "1"):
            for member in self.schemas.substitutes.get(key, ()):
                found = self.schemas.elements.get(member)
                if found is not None and found.element.get("abstract") not in ("true", "1") \
                        and ("element", member) not in stack:
                    return self._global(member, found.element, found.context, stack, depth,
                                        required)
        if ("element", key) in stack:
            self._recursed = True
            return Node(key[0], key[1]) if required else None
        return self._declared(declaration, context, key[0], (*stack, ("element", key)), depth,
                              required)

    def _element(self, declaration: Any, context: SchemaContext, stack: tuple, depth: int,
                 required: bool) -> Node | None:
        reference = declaration.get("ref")
        if reference:
            key = context.resolve(declaration, reference)
            component = self.schemas.find("elements", key)
            if component is None:
                return Node(key[0], key[1]) if required else None
            return self._global(key, component.element, component.context, stack, depth,
                                required)
        form = declaration.get("form")
        qualified = form == "qualified" if form else context.qualified_elements
        return self._declared(declaration, context, context.namespace if qualified else "",
                              stack, depth, required)

    def _declared(self, declaration: Any, context: SchemaContext, namespace: str,
                  stack: tuple, depth: int, required: bool) -> Node | None:
        if self._nodes >= MAX_NODES or depth >= MAX_DEPTH:
            # Past the bounds: optional content is left out, required content left empty
            # (a schema that requires more cannot have a sample of bounded size).
            return Node(namespace, declaration.get("name") or "element") if required else None
        self._nodes += 1
        node = Node(namespace, declaration.get("name") or "element")
        fixed = declaration.get("fixed")
        if fixed is None:
            fixed = declaration.get("default")
        inline = _first(declaration, "complexType", "simpleType")
        if inline is not None and local_name(inline.tag) == "complexType":
            self._complex(node, inline, context, stack, depth + 1)
        elif inline is not None:
            node.text = self._simple(inline, context, stack)
        elif declaration.get("type"):
            type_key = context.resolve(declaration, declaration.get("type"))
            if not self._typed(node, type_key, declaration, context, stack, depth):
                return None if not required else node
        if fixed is not None and not node.children:
            node.text = fixed
        return node

    def _typed(self, node: Node, type_key: QName, declaration: Any,
               context: SchemaContext | None, stack: tuple, depth: int) -> bool:
        """Fill ``node`` with a sample of the type ``type_key``; False when the type
        recurses (the node is then left empty)."""
        if is_xsd(type_key[0]):
            node.text = XSD_SAMPLES.get(type_key[1], "sample")
            return True
        component = self.schemas.find("types", type_key)
        if component is None:
            node.text = XSD_SAMPLES.get(type_key[1], "sample")
            return True
        if local_name(component.element.tag) == "simpleType":
            node.text = self._simple(component.element, component.context, stack)
            return True
        if component.element.get("abstract") in ("true", "1"):
            concrete = self._concrete(type_key, stack)
            if concrete is not None:
                node.attributes.append((XSI_NAMESPACE, "type", concrete))
                type_key, component = concrete, self.schemas.types[concrete]
        if ("type", type_key) in stack:
            self._recursed = True
            return False
        self._complex(node, component.element, component.context,
                      (*stack, ("type", type_key)), depth + 1)
        return True

    def _concrete(self, type_key: QName, stack: tuple) -> QName | None:
        """The first non-abstract complex type derived (at any depth) from ``type_key``."""
        pending = list(self.schemas.derived.get(type_key, ()))
        seen = set()
        while pending:
            candidate = pending.pop(0)
            if candidate in seen:
                continue
            seen.add(candidate)
            component = self.schemas.types.get(candidate)
            if component is not None and component.element.get("abstract") not in ("true", "1"):
                return candidate
            pending.extend(self.schemas.derived.get(candidate, ()))
        return None

    # ------------------------------------------------------------------ complex types
    def _complex(self, node: Node, complex_type: Any, context: SchemaContext, stack: tuple,
                 depth: int) -> None:
        for child in complex_type:
            kind = local_name(child.tag)
            if kind in ("sequence", "choice", "all", "group"):
                node.children.extend(self._particle(child, context, stack, depth))
            elif kind in ("attribute", "attributeGroup"):
                self._attribute(node, child, context, stack)
            elif kind == "complexContent":
                self._complex_content(node, child, context, stack, depth)
            elif kind == "simpleContent":
                self._simple_content(node, child, context, stack)

    def _base(self, derivation: Any, context: SchemaContext) -> tuple[QName | None, Any]:
        """``(base type QName, its Component)`` of an extension or restriction."""
        base = derivation.get("base")
        if not base:
            return None, None
        key = context.resolve(derivation, base)
        return key, (None if is_xsd(key[0]) else self.schemas.find("types", key))

    def _complex_content(self, node: Node, content: Any, context: SchemaContext,
                         stack: tuple, depth: int) -> None:
        derivation = _first(content, "extension", "restriction")
        if derivation is None:
            return
        key, base = self._base(derivation, context)
        if base is not None and ("type", key) not in stack:
            if local_name(derivation.tag) == "extension":
                self._complex(node, base.element, base.context, (*stack, ("type", key)), depth)
            else:  # a restriction restates the content; attributes are inherited
                self._inherited_attributes(node, base.element, base.context,
                                           (*stack, ("type", key)))
        self._complex(node, derivation, context, stack, depth)

    def _simple_content(self, node: Node, content: Any, context: SchemaContext,
                        stack: tuple) -> None:
        derivation = _first(content, "extension", "restriction")
        if derivation is None:
            return
        key, base = self._base(derivation, context)
        if base is not None and ("type", key) not in stack:
            inner = (*stack, ("type", key))
            if local_name(base.element.tag) == "simpleType":
                node.text = self._simple(base.element, base.context, inner)
            else:
                simple = _first(base.element, "simpleContent")
                if simple is not None:
                    self._simple_content(node, simple, base.context, inner)
                self._inherited_attributes(node, base.element, base.context, inner)
        elif key is not None:
            node.text = XSD_SAMPLES.get(key[1], "sample")
        if local_name(derivation.tag) == "restriction":
            node.text = self._restricted(derivation, context, node.text, key, stack)
        for child in derivation:
            if local_name(child.tag) in ("attribute", "attributeGroup"):
                self._attribute(node, child, context, stack)

    def _inherited_attributes(self, node: Node, complex_type: Any, context: SchemaContext,
                              stack: tuple) -> None:
        """The required attributes of ``complex_type`` and its bases, content left out."""
        probe = Node("", "")
        self._complex(probe, complex_type, context, stack, MAX_DEPTH)
        node.attributes.extend(probe.attributes)

    # ------------------------------------------------------------------ particles
    def _particle(self, particle: Any, context: SchemaContext, stack: tuple,
                  depth: int) -> list[Node]:
        count = _repeats(particle)
        if count == 0:
            return []
        once = self._once(particle, context, stack, depth)
        if count > 1 and once:
            # Copies share their nodes; they count against the bound all the same.
            size = sum(_size(node) for node in once)
            count = max(1, min(count, (MAX_NODES - self._nodes) // size + 1))
            self._nodes += size * (count - 1)
        return once * count

    def _once(self, particle: Any, context: SchemaContext, stack: tuple,
              depth: int) -> list[Node]:
        """One occurrence of ``particle``."""
        kind = local_name(particle.tag)
        required = _occurs(particle)[0] > 0
        if kind == "element":
            node = self._element(particle, context, stack, depth, required)
            return [] if node is None else [node]
        if kind == "any":
            return [self._any(particle, context)] if required else []
        if kind == "group":
            key = context.resolve(particle, particle.get("ref") or "")
            group = self.schemas.find("groups", key)
            if group is None or ("group", key) in stack:
                return []
            model = _first(group.element, "sequence", "choice", "all")
            if model is None:
                return []
            return self._particle(model, group.context, (*stack, ("group", key)), depth)
        if kind == "choice":
            return self._choice(particle, context, stack, depth)
        once = []  # sequence, all
        for member in particle:
            if local_name(member.tag) in ("element", "sequence", "choice", "group", "any",
                                          "all"):
                once.extend(self._particle(member, context, stack, depth))
        return once

    def _choice(self, choice: Any, context: SchemaContext, stack: tuple,
                depth: int) -> list[Node]:
        """One branch: the first that yields content without recursing, else the first that
        does not recurse, else the first."""
        fallback: list[Node] | None = None
        empty: list[Node] | None = None
        for member in choice:
            if local_name(member.tag) not in ("element", "sequence", "choice", "group", "any"):
                continue
            recursed, self._recursed = self._recursed, False
            nodes = self._particle(member, context, stack, depth)
            this_recursed, self._recursed = self._recursed, recursed or self._recursed
            if not this_recursed and nodes:
                return nodes
            if not this_recursed and empty is None:
                empty = nodes
            if fallback is None:
                fallback = nodes
        return empty if empty is not None else (fallback or [])

    def _any(self, wildcard: Any, context: SchemaContext) -> Node:
        """An element a required ``xs:any`` accepts."""
        allowed = (wildcard.get("namespace") or "##any").split()
        first = allowed[0]
        namespace = {"##any": _NAMESPACE_OF_OTHER, "##other": _NAMESPACE_OF_OTHER,
                     "##local": "", "##targetNamespace": context.namespace}.get(first, first)
        self._nodes += 1
        return Node(namespace, "any", "sample")

    # ------------------------------------------------------------------ attributes
    def _attribute(self, node: Node, declaration: Any, context: SchemaContext,
                   stack: tuple) -> None:
        if local_name(declaration.tag) == "attributeGroup":
            key = context.resolve(declaration, declaration.get("ref") or "")
            group = self.schemas.find("attribute_groups", key)
            if group is not None and ("attributeGroup", key) not in stack:
                for child in group.element:
                    if local_name(child.tag) in ("attribute", "attributeGroup"):
                        self._attribute(node, child, group.context,
                                        (*stack, ("attributeGroup", key)))
            return
        if declaration.get("use") != "required":
            return
        value = declaration.get("fixed") or declaration.get("default")
        reference = declaration.get("ref")
        if reference:
            namespace, name = context.resolve(declaration, reference)
            target = self.schemas.find("attributes", (namespace, name))
            if target is not None:
                declaration, context = target.element, target.context
                value = value or declaration.get("fixed") or declaration.get("default")
        else:
            name = declaration.get("name") or "attribute"
            form = declaration.get("form")
            qualified = form == "qualified" if form else context.qualified_attributes
            namespace = context.namespace if qualified else ""
        if value is None:
            inline = _first(declaration, "simpleType")
            if inline is not None:
                value = self._simple(inline, context, stack)
            elif declaration.get("type"):
                holder = Node("", "")
                self._typed(holder, context.resolve(declaration, declaration.get("type")),
                            declaration, context, stack, MAX_DEPTH)
                value = holder.text
            else:
                value = "sample"
        node.attributes = [item for item in node.attributes
                           if (item[0], item[1]) != (namespace, name)]
        node.attributes.append((namespace, name, value))

    # ------------------------------------------------------------------ simple types
    def _simple(self, simple_type: Any, context: SchemaContext, stack: tuple) -> str:
        """Sample text of a ``simpleType`` element."""
        derivation = _first(simple_type, "restriction", "list", "union")
        if derivation is None:
            return "sample"
        kind = local_name(derivation.tag)
        if kind == "list":
            inline = _first(derivation, "simpleType")
            if inline is not None:
                return self._simple(inline, context, stack)
            return self._named_simple(context.resolve(derivation, derivation.get("itemType")
                                                      or "string"), stack)
        if kind == "union":
            inline = _first(derivation, "simpleType")
            members = (derivation.get("memberTypes") or "").split()
            if members:
                return self._named_simple(context.resolve(derivation, members[0]), stack)
            return self._simple(inline, context, stack) if inline is not None else "sample"
        inline = _first(derivation, "simpleType")
        key = None
        if inline is not None:
            base_text = self._simple(inline, context, stack)
        else:
            key = context.resolve(derivation, derivation.get("base") or "string")
            base_text = self._named_simple(key, stack)
        return self._restricted(derivation, context, base_text, key, stack)

    def _named_simple(self, key: QName, stack: tuple) -> str:
        if is_xsd(key[0]):
            return XSD_SAMPLES.get(key[1], "sample")
        component = self.schemas.find("types", key)
        if component is None or ("type", key) in stack:
            return XSD_SAMPLES.get(key[1], "sample")
        if local_name(component.element.tag) == "simpleType":
            return self._simple(component.element, component.context,
                                (*stack, ("type", key)))
        holder = Node("", "")
        simple = _first(component.element, "simpleContent")
        if simple is not None:
            self._simple_content(holder, simple, component.context, (*stack, ("type", key)))
        return holder.text

    def _builtin(self, key: QName | None, stack: tuple) -> str:
        """The built-in type a simple type derives from (local name; ``string`` when
        unknown)."""
        seen = 0
        while key is not None and not is_xsd(key[0]) and seen < 32:
            seen += 1
            component = self.schemas.find("types", key)
            if component is None:
                return key[1] if key[1] in XSD_SAMPLES else "string"
            restriction = component.element.find(".//{*}restriction")
            if restriction is None or not restriction.get("base"):
                return "string"
            key = component.context.resolve(restriction, restriction.get("base"))
        return key[1] if key is not None else "string"

    def _restricted(self, restriction: Any, context: SchemaContext, text: str,
                    base: QName | None, stack: tuple) -> str:
        """``text`` made to satisfy the facets of ``restriction``."""
        facets: dict[str, str] = {}
        for facet in restriction:
            kind = local_name(facet.tag)
            if kind == "enumeration" and facet.get("value") is not None:
                return facet.get("value")
            if facet.get("value") is not None:
                facets.setdefault(kind, facet.get("value"))
        if not facets:
            return text
        builtin = self._builtin(base, stack)
        if builtin in _NUMERIC:
            return _bounded_number(text, facets, builtin in _INTEGERS)
        if "pattern" in facets:
            sample = pattern_sample(facets["pattern"])
            if sample is not None:
                return sample
        return _sized(text, facets)


def _size(node: Node) -> int:
    """How many elements ``node`` writes (itself and everything inside)."""
    return 1 + sum(_size(child) for child in node.children)


def _sized(text: str, facets: dict[str, str]) -> str:
    """``text`` padded with ``x`` or cut to the ``length``/``minLength``/``maxLength``."""
    try:
        if "length" in facets:
            size = int(facets["length"])
            return (text + "x" * size)[:size]
        if "minLength" in facets and len(text) < int(facets["minLength"]):
            text = text + "x" * (int(facets["minLength"]) - len(text))
        if "maxLength" in facets and len(text) > int(facets["maxLength"]):
            text = text[:int(facets["maxLength"])]
    except ValueError:
        pass
    return text


def _bounded_number(text: str, facets: dict[str, str], integer: bool) -> str:
    """A number within the ``min/maxInclusive`` and ``min/maxExclusive`` facets."""
    try:
        value = Decimal(text)
        step = Decimal(1) if integer else Decimal("0.5")
        if "minInclusive" in facets:
            value = max(value, Decimal(facets["minInclusive"]))
        if "minExclusive" in facets and value <= Decimal(facets["minExclusive"]):
            value = Decimal(facets["minExclusive"]) + step
        if "maxInclusive" in facets:
            value = min(value, Decimal(facets["maxInclusive"]))
        if "maxExclusive" in facets and value >= Decimal(facets["maxExclusive"]):
            value = Decimal(facets["maxExclusive"]) - step
    except InvalidOperation:
        return text
    if integer:
        return str(int(value))
    return format(value.normalize(), "f") if value != 0 else "0.0"


# ---------------------------------------------------------------------- patterns
_CLASS_ESCAPES = {"d": "0", "w": "a", "s": " ", "i": "a", "c": "a", "D": "a", "W": "-",
                  "S": "a", "I": "0", "C": " "}


def pattern_sample(pattern: str) -> str | None:
    """A string matching the XSD ``pattern`` (a regular expression matched against the
    whole value), or None when the pattern uses what this reader does not know or the result
    does not match (checked with :mod:`re`). Reads literals, escapes (``\\d``, ``\\w``,
    ``\\p{L}``...), classes (``[A-Z0-9]``, ``[^a]``), groups with ``|`` (the first branch)
    and the quantifiers ``? * + {n} {n,} {n,m}`` (the least count)."""
    try:
        sample, position = _sequence(pattern, 0)
    except (IndexError, ValueError):
        return None
    if position != len(pattern):
        return None
    if "\\p" in pattern or "\\P" in pattern or "\\i" in pattern or "\\c" in pattern:
        return sample  # Python's re knows none of these: the reading is trusted
    try:
        return sample if re.fullmatch(pattern, sample) else None
    except re.error:
        return sample


def _sequence(pattern: str, position: int) -> tuple[str, int]:
    """The sample of the branches from ``position`` to the closing ``)`` or the end (the
    first branch's), and the position after them."""
    out: list[str] = []
    first: str | None = None
    while position < len(pattern) and pattern[position] != ")":
        if pattern[position] == "|":
            if first is None:
                first = "".join(out)
            out = []
            position += 1
            continue
        atom, position = _atom(pattern, position)
        low, position = _quantifier(pattern, position)
        out.append(atom * low)
    return (first if first is not None else "".join(out)), position


def _atom(pattern: str, position: int) -> tuple[str, int]:
    char = pattern[position]
    if char == "(":
        inner, position = _sequence(pattern, position + 1)
        if pattern[position] != ")":
            raise ValueError("unclosed group")
        return inner, position + 1
    if char == "[":
        return _class(pattern, position + 1)
    if char == "\\":
        escaped = pattern[position + 1]
        if escaped in "pP":
            end = pattern.index("}", position)
            return ("A" if escaped == "p" else "-"), end + 1
        if escaped == "n":
            return "\n", position + 2
        if escaped == "t":
            return "\t", position + 2
        return _CLASS_ESCAPES.get(escaped, escaped), position + 2
    if char == ".":
        return "a", position + 1
    if char in "*+?{":
        raise ValueError("quantifier without an atom")
    return char, position + 1


def _class(pattern: str, position: int) -> tuple[str, int]:
    """A character of the class starting after ``[``, and the position after ``]``."""
    negated = pattern[position] == "^"
    if negated:
        position += 1
    members: list[tuple[str, str]] = []
    start = position
    while pattern[position] != "]" or position == start:
        char = pattern[position]
        if char == "\\":
            escaped = pattern[position + 1]
            if escaped in "pP":
                position = pattern.index("}", position) + 1
                members.append(("A", "Z") if escaped == "p" else ("-", "-"))
                continue
            char = _CLASS_ESCAPES.get(escaped, escaped)
            position += 2
        elif char == "-" and pattern[position + 1] == "[":
            raise ValueError("class subtraction")
        else:
            position += 1
        if pattern[position] == "-" and pattern[position + 1] not in "]":
            end = pattern[position + 1]
            if end == "\\":
                end = _CLASS_ESCAPES.get(pattern[position + 2], pattern[position + 2])
                position += 3
            else:
                position += 2
            members.append((char, end))
        else:
            members.append((char, char))
    if not negated:
        return members[0][0], position + 1
    for candidate in "aA0x_-.":
        if not any(low <= candidate <= high for low, high in members):
            return candidate, position + 1
    raise ValueError("no character outside the class")


def _quantifier(pattern: str, position: int) -> tuple[int, int]:
    """The least count of the quantifier at ``position`` (1 when none) and the position
    after it."""
    if position >= len(pattern):
        return 1, position
    char = pattern[position]
    if char in "?*":
        return 0, position + 1
    if char == "+":
        return 1, position + 1
    if char == "{":
        end = pattern.index("}", position)
        return int(pattern[position + 1:end].split(",")[0]), end + 1
    return 1, position


# ---------------------------------------------------------------------- writing XML
def _escape(text: str, attribute: bool = False) -> str:
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return text.replace('"', "&quot;") if attribute else text


def to_xml(node: Node) -> str:
    """``node`` as XML text with its namespace declarations on the root (see the module
    docstring)."""
    used: list[str] = []
    unqualified = False
    for each in _walk(node):
        if each.namespace:
            used.append(each.namespace)
        else:
            unqualified = True
        for namespace, _, value in each.attributes:
            if namespace:
                used.append(namespace)
            if isinstance(value, tuple) and value[0]:
                used.append(value[0])
    prefixes: dict[str, str] = {XML_NAMESPACE: "xml"}
    if node.namespace:
        prefixes[node.namespace] = "" if not unqualified else "tns"
    for namespace in used:
        if namespace not in prefixes:
            prefixes[namespace] = "xsi" if namespace == XSI_NAMESPACE else \
                f"ns{sum(1 for value in prefixes.values() if value.startswith('ns')) + 1}"
    declarations = "".join(
        f' xmlns="{_escape(namespace, True)}"' if prefix == "" else
        f' xmlns:{prefix}="{_escape(namespace, True)}"'
        for namespace, prefix in prefixes.items() if prefix != "xml")
    out: list[str] = []
    _write(node, prefixes, declarations, out)
    return "".join(out)


def _walk(node: Node) -> Any:
    yield node
    for child in node.children:
        yield from _walk(child)


def _name(namespace: str, name: str, prefixes: dict[str, str]) -> str:
    prefix = prefixes.get(namespace, "") if namespace else ""
    return f"{prefix}:{name}" if prefix else name


def _write(node: Node, prefixes: dict[str, str], declarations: str, out: list[str]) -> None:
    tag = _name(node.namespace, node.name, prefixes)
    attributes = "".join(
        f' {_name(namespace, name, prefixes)}="'
        f'{_escape(_name(value[0], value[1], prefixes) if isinstance(value, tuple) else value, True)}"'
        for namespace, name, value in node.attributes)
    if not node.children and not node.text:
        out.append(f"<{tag}{declarations}{attributes}/>")
        return
    out.append(f"<{tag}{declarations}{attributes}>{_escape(node.text)}")
    for child in node.children:
        _write(child, prefixes, "", out)
    out.append(f"</{tag}>")
