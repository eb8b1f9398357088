"""Untrusted XML, read safely: parsing, namespace-free views, XPath, element -> map.

Every XML document that comes from a request (a SOAP envelope, a body read by the ``xpath``
template function) or from a config file (a WSDL) goes through :func:`parse_xml`:

* lxml with ``resolve_entities=False``, ``no_network=True``, ``load_dtd=False`` and
  ``huge_tree=False`` (libxml2's own depth and size limits stay on);
* a document with a DTD (``<!DOCTYPE``, ``<!ENTITY``) is refused outright: no entity is ever
  declared, so "billion laughs" bombs and external entities (``file:///etc/passwd``) cannot
  be expressed (SOAP 1.1 §3 and SOAP 1.2 part 1 §5 forbid DTDs in a message anyway);
* bodies over a byte limit are refused before parsing.

XPath (:func:`compile_xpath`) is evaluated on a *namespace-free* copy of the document
(:func:`strip_namespaces`): users write ``/Envelope/Body/GetUser/id`` or ``//GetUser/id``;
prefixes written in the expression (``/soap:Envelope/soap:Body``) are ignored, so both forms
work without declaring namespaces.

Imports nothing else of the project; lxml is imported on first use (an engine without XML
never loads it). Errors: :class:`XmlRefused` (parsing), :class:`ValueError` (a bad XPath, at
compile time). Django-free.

Source: SPEC "SOAP mock", "Templating"; behavior notes §10 ("SOAP operation": ``match:
{xpath: value}``), §13 (WSDL import).
"""
from __future__ import annotations

import re
import threading
from typing import Any, Callable

#: Largest XML document read from a request, in bytes (2 MiB).
MAX_XML_BYTES = 2 * 1024 * 1024

_local = threading.local()


class XmlRefused(ValueError):
    """An XML document that is not read.

    Attributes:
        kind: ``too_large``, ``dtd`` (a DOCTYPE or entity declaration: refused), or
            ``malformed`` (not well-formed XML).
        line: the line of a syntax error (None when unknown).
        reason: the sentence shown to the user (``not well-formed XML at line 3: ...``).
    """

    def __init__(self, kind: str, reason: str, line: int | None = None):
        super().__init__(reason)
        self.kind = kind
        self.reason = reason
        self.line = line


def _parser() -> Any:
    """This thread's safe lxml parser (parsers are not shared across threads)."""
    parser = getattr(_local, "parser", None)
    if parser is None:
        from lxml import etree

        parser = _local.parser = etree.XMLParser(
            resolve_entities=False, no_network=True, load_dtd=False, dtd_validation=False,
            huge_tree=False, remove_comments=True, remove_pis=True, collect_ids=False)
    return parser


def parse_xml(data: bytes | str, limit: int = MAX_XML_BYTES) -> Any:
    """The root element of ``data``, parsed safely (see the module docstring).

    ``data`` is bytes (its XML declaration names the encoding) or text. Raises
    :class:`XmlRefused` for a document over ``limit`` bytes, one with a DTD, or one that is
    not well-formed (the reason names the line).
    """
    from lxml import etree

    raw = data.encode("utf-8") if isinstance(data, str) else data
    if len(raw) > limit:
        raise XmlRefused("too_large", f"XML document of {len(raw)} bytes is over the limit "
                                      f"of {limit} bytes")
    if b"<!DOCTYPE" in raw or b"<!ENTITY" in raw:
        raise XmlRefused("dtd", "DTDs and entity declarations are not allowed (XML bombs and "
                                "external entities are refused)")
    if isinstance(data, str) and raw[:5] == b"<?xml":
        # Text with an encoding declaration: lxml refuses unicode input that declares one.
        data = raw
    try:
        root = etree.fromstring(data, _parser())
    except etree.XMLSyntaxError as error:
        line = getattr(error, "lineno", None) or None
        message = getattr(error, "msg", None) or str(error)
        where = f" at line {line}" if line else ""
        raise XmlRefused("malformed", f"not well-formed XML{where}: {message}", line) from None
    except ValueError as error:  # e.g. an encoding lxml cannot use
        raise XmlRefused("malformed", f"not well-formed XML: {error}") from None
    if root is None:
        raise XmlRefused("malformed", "not well-formed XML: empty document")
    if root.getroottree().docinfo.doctype:
        # A DOCTYPE the byte scan missed (another encoding): still refused.
        raise XmlRefused("dtd", "DTDs and entity declarations are not allowed (XML bombs and "
                                "external entities are refused)")
    return root


def local_name(tag: Any) -> str:
    """``{urn:x}GetUser`` -> ``GetUser``; comments and other non-elements -> ``""``."""
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


def namespace_of(tag: Any) -> str:
    """``{urn:x}GetUser`` -> ``urn:x``; ``""`` without a namespace."""
    return tag[1:].split("}", 1)[0] if isinstance(tag, str) and tag.startswith("{") else ""


def strip_namespaces(root: Any) -> Any:
    """``root`` changed in place so that every element and attribute has its local name only
    (namespace declarations removed); returns ``root``. XPath then needs no prefixes."""
    from lxml import etree

    for element in root.iter():
        tag = element.tag
        if not isinstance(tag, str):
            continue
        if tag[:1] == "{":
            element.tag = tag.rsplit("}", 1)[1]
        if element.attrib:
            for name in [name for name in element.attrib if name[:1] == "{"]:
                value = element.attrib.pop(name)
                element.attrib.setdefault(name.rsplit("}", 1)[1], value)
    etree.cleanup_namespaces(root)
    return root


def element_text(element: Any) -> str:
    """All text inside ``element`` (children included), stripped of surrounding space."""
    return "".join(element.itertext()).strip()


def element_to_map(element: Any) -> Any:
    """``element``'s content as JSON-like data, by local names: a leaf is its text; an element
    with children is ``{child: value}``, a repeated child a list of values; attributes are
    left out. ``<GetUser><id>42</id><tag>a</tag><tag>b</tag></GetUser>`` ->
    ``{"id": "42", "tag": ["a", "b"]}``."""
    children = [child for child in element if isinstance(child.tag, str)]
    if not children:
        return (element.text or "").strip()
    out: dict[str, Any] = {}
    for child in children:
        name = local_name(child.tag)
        value = element_to_map(child)
        existing = out.get(name, _ABSENT)
        if existing is _ABSENT:
            out[name] = value
        elif isinstance(existing, list):  # a single value is never a list: a repeat
            existing.append(value)
        else:
            out[name] = [existing, value]
    return out


_ABSENT: Any = object()


# Name tests written with a prefix (``soap:Body``); ``::`` (axes) is left alone.
_PREFIX = re.compile(r"(?<![\w.:-])([A-Za-z_][\w.-]*):(?=[A-Za-z_*])")
_QUOTED = re.compile(r"('[^']*'|\"[^\"]*\")")


def unprefixed_xpath(expression: str) -> str:
    """``expression`` with namespace prefixes removed from name tests, quoted strings kept:
    ``/soap:Envelope/soap:Body/t:Get[@a='x:y']`` -> ``/Envelope/Body/Get[@a='x:y']``."""
    parts = _QUOTED.split(expression)
    return "".join(part if index % 2 else _PREFIX.sub("", part)
                   for index, part in enumerate(parts))


def compile_xpath(expression: str) -> Callable[[Any], str]:
    """A function ``evaluate(root) -> text`` for ``expression``, evaluated on a
    namespace-free document (see :func:`strip_namespaces`).

    The result as text: the first node's text (its whole text content for an element), the
    first string of a string list (attribute values, ``text()``), ``true``/``false`` for a
    boolean, a number without a needless ``.0``; nothing found (or a None root) -> ``""``.
    Never raises while evaluating. Raises :class:`ValueError` (``invalid XPath '...': ...``)
    for an expression that does not compile.
    """
    from lxml import etree

    text = expression.strip()
    if not text:
        raise ValueError("empty XPath")
    try:
        compiled = etree.XPath(unprefixed_xpath(text), smart_strings=False)
    except etree.XPathSyntaxError as error:
        raise ValueError(f"invalid XPath {expression!r}: {error}") from None

    def evaluate(root: Any) -> str:
        if root is None:
            return ""
        try:
            result = compiled(root)
        except etree.XPathError:
            return ""
        return xpath_text(result)

    evaluate.expression = expression  # type: ignore[attr-defined]
    return evaluate


def xpath_text(result: Any) -> str:
    """An XPath result as text (see :func:`compile_xpath`)."""
    if isinstance(result, list):
        if not result:
            return ""
        result = result[0]
    if isinstance(result, bool):
        return "true" if result else "false"
    if isinstance(result, float):
        return str(int(result)) if result.is_integer() else repr(result)
    if isinstance(result, str):
        return result
    if hasattr(result, "itertext"):
        return element_text(result)
    return str(result)


def request_document(request: Any) -> Any:
    """The namespace-free XML document of ``request``'s body (parsed once, then cached on the
    request as ``xml_document``), or None when the body is not XML or is refused. A SOAP
    route stores the envelope it already parsed there, so templates never parse twice."""
    state = request.__dict__
    if "xml_document" in state:
        return state["xml_document"]
    document = None
    body = request.body
    if body and body.lstrip()[:1] == b"<":
        try:
            document = strip_namespaces(parse_xml(body))
        except XmlRefused:
            document = None
    state["xml_document"] = document
    return document
