"""Untrusted XML, read safely: parsing, namespace-agnostic XPath, element -> map.

Every XML document that comes from a request (a SOAP envelope, a body read by the ``xpath``
template function) or from a config file (a WSDL) goes through :func:`parse_xml`:

* lxml with ``resolve_entities=False``, ``no_network=True``, ``load_dtd=False`` and
  ``huge_tree=False`` (libxml2's own depth and size limits stay on);
* a document with a DTD (``<!DOCTYPE``, ``<!ENTITY``) is refused outright: no entity is ever
  declared, so "billion laughs" bombs and external entities (``file:///etc/passwd``) cannot
  be expressed (SOAP 1.1 §3 and SOAP 1.2 part 1 §5 forbid DTDs in a message anyway);
* bodies over a byte limit are refused before parsing.

XPath (:func:`compile_xpath`) ignores namespaces: every element and attribute name test is
rewritten to match by local name (:func:`local_xpath`), so users write
``/Envelope/Body/GetUser/id``, ``//GetUser/id`` or ``//item/@type``, and prefixes written in
the expression (``/soap:Envelope/soap:Body``, ``@xsi:type``) are ignored; no namespace needs
declaring.

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


#: ``lxml.etree`` once imported (the hot path skips the import statement).
_etree: Any = None


def _lxml() -> Any:
    """``lxml.etree``, imported on first use."""
    global _etree
    if _etree is None:
        from lxml import etree

        _etree = etree
    return _etree


def _parser() -> Any:
    """This thread's safe lxml parser (parsers are not shared across threads)."""
    parser = getattr(_local, "parser", None)
    if parser is None:
        etree = _lxml()
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
    etree = _etree if _etree is not None else _lxml()
    raw = data.encode("utf-8") if isinstance(data, str) else data
    if len(raw) > limit:
        raise XmlRefused("too_large", f"XML document of {len(raw)} bytes is over the limit "
                                      f"of {limit} bytes")
    # "!" first: a one-byte search is half the cost of "<!", and most envelopes hold none.
    if b"!" in raw and (b"<!DOCTYPE" in raw or b"<!ENTITY" in raw):
        raise XmlRefused("dtd", "DTDs and entity declarations are not allowed (XML bombs and "
                                "external entities are refused)")
    if isinstance(data, str) and raw[:5] == b"<?xml":
        # Text with an encoding declaration: lxml refuses unicode input that declares one.
        data = raw
    parser = getattr(_local, "parser", None)
    try:
        root = etree.fromstring(data, parser if parser is not None else _parser())
    except etree.XMLSyntaxError as error:
        line = getattr(error, "lineno", None) or None
        message = getattr(error, "msg", None) or str(error)
        where = f" at line {line}" if line else ""
        raise XmlRefused("malformed", f"not well-formed XML{where}: {message}", line) from None
    except ValueError as error:  # e.g. an encoding lxml cannot use
        raise XmlRefused("malformed", f"not well-formed XML: {error}") from None
    if root is None:
        raise XmlRefused("malformed", "not well-formed XML: empty document")
    if raw[:1] != b"<" and raw.lstrip()[:1] != b"<" and root.getroottree().docinfo.doctype:
        # A DOCTYPE the byte scan missed (UTF-16 and other encodings whose bytes do not
        # start with "<"): still refused.
        raise XmlRefused("dtd", "DTDs and entity declarations are not allowed (XML bombs and "
                                "external entities are refused)")
    return root


def local_name(tag: Any) -> str:
    """``{urn:x}GetUser`` -> ``GetUser``; comments and other non-elements -> ``""``."""
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


def element_text(element: Any) -> str:
    """All text inside ``element`` (children included), stripped of surrounding space."""
    return "".join(element.itertext()).strip()


def element_to_map(element: Any) -> Any:
    """``element``'s content as JSON-like data, by local names: a leaf is its text; an element
    with children is ``{child: value}``, a repeated child a list of values; attributes are
    left out. ``<GetUser><id>42</id><tag>a</tag><tag>b</tag></GetUser>`` ->
    ``{"id": "42", "tag": ["a", "b"]}``."""
    out: dict[str, Any] = {}
    for child in element[:]:  # lxml builds a slice's list in C: cheaper than its iterator
        tag = child.tag
        if tag.__class__ is not str:
            continue  # a comment or processing instruction
        name = tag[tag.find("}") + 1:]
        value = element_to_map(child) if len(child) else (child.text or "").strip()
        if name in out:  # a repeat: values are text or maps, so a list is the repeats
            existing = out[name]
            if existing.__class__ is list:
                existing.append(value)
            else:
                out[name] = [existing, value]
        else:
            out[name] = value
    return out if out else (element.text or "").strip()


_XPATH_TOKEN = re.compile(
    r"""(?P<string>'[^']*'|"[^"]*")"""
    r"|(?P<number>\d+(?:\.\d*)?|\.\d+)"
    r"|(?P<axis>[A-Za-z_][\w.-]*\s*::)"
    r"|(?P<name>(?:[A-Za-z_][\w.-]*:)?(?:[A-Za-z_][\w.-]*|\*))(?P<call>\s*\()?"
    r"|(?P<space>\s+)"
    r"|(?P<other>.)", re.S)
_OPERATORS = frozenset(("and", "or", "div", "mod"))
#: Tokens after which a name is an operator (``a and b``), not a name test.
_OPERAND_ENDS = frozenset(("string", "number", "name", "]", ")", ".", "*"))


def local_xpath(expression: str) -> str:
    """``expression`` with every element name test made namespace-agnostic:
    ``/soap:Envelope/Body/GetUser[id='1']`` ->
    ``/*[local-name()='Envelope']/*[local-name()='Body']/*[local-name()='GetUser'][*[local-name()='id']='1']``.
    Attribute names match by local name too (``@xsi:type`` -> ``@*[local-name()='type']``:
    the attribute in any namespace or none); functions, axes, operators and quoted strings
    are kept."""
    out: list[str] = []
    previous = ""  # kind of the last significant token
    for found in _XPATH_TOKEN.finditer(expression):
        kind = found.lastgroup if found.lastgroup != "call" else "name"
        text = found.group()
        if found.group("space") is not None:
            out.append(text)
            continue
        if found.group("name") is not None:
            name = found.group("name")
            local = name.rsplit(":", 1)[-1]
            if found.group("call") is not None:
                out.append(text)  # a function or node test: text(), local-name(), ...
                previous = "("
                continue
            if name in _OPERATORS and previous in _OPERAND_ENDS:
                out.append(text)
                previous = "operator"
                continue
            if local == "*":
                out.append(local)
            else:  # an element or attribute name test (after "@"): by local name
                out.append(f"*[local-name()='{local}']")
            previous = "name"
            continue
        if kind == "axis":
            axis = text.replace(" ", "")
            out.append(axis)
            previous = "attribute::" if axis == "attribute::" else "axis"
            continue
        out.append(text)
        previous = kind if kind in ("string", "number") else text
    return "".join(out)


def compile_xpath(expression: str) -> Callable[[Any], str]:
    """A function ``evaluate(root) -> text`` for ``expression``, namespaces ignored: every
    element name test matches by local name (see :func:`local_xpath`), so the document is
    used as parsed.

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
        compiled = etree.XPath(local_xpath(text), smart_strings=False)
    except etree.XPathSyntaxError as error:
        raise ValueError(f"invalid XPath {expression!r}: {error}") from None
    chain = _NAME_CHAIN.fullmatch(text)
    if chain is not None:
        evaluate = _name_chain_evaluator(chain.group(1) == "/",
                                         [name.rsplit(":", 1)[-1]
                                          for name in chain.group(2).split("/")])
        evaluate.expression = expression  # type: ignore[attr-defined]
        return evaluate

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


_NAME = r"(?:[A-Za-z_][\w.-]*:)?[A-Za-z_][\w.-]*"
#: ``/A/B/C`` or ``//A/B/C``: element names joined by child steps, nothing else.
_NAME_CHAIN = re.compile(rf"(//?)({_NAME}(?:/{_NAME})*)")


def _name_chain_evaluator(absolute: bool, names: list[str]) -> Callable[[Any], str]:
    """The evaluator of ``/A/B/C`` (``absolute``) or ``//A/B/C`` by local names, without the
    XPath engine: the first ``C`` in document order (``iter`` walks in that order) whose
    parent is a ``B`` whose parent is an ``A`` (the document element for ``/A/...``), as
    :func:`xpath_text` gives it. Same result as the rewritten XPath (see
    :func:`compile_xpath`); about half its cost, and no XPath context per call."""
    wanted = "{*}" + names[-1]  # lxml: this local name in any namespace, or in none
    ancestors = tuple(reversed(names[:-1]))  # parent first

    def evaluate(root: Any) -> str:
        if root is None:
            return ""
        if root.getparent() is not None:  # XPath "/" and "//" start at the document
            root = root.getroottree().getroot()
        for element in root.iter(wanted):
            node = element
            for name in ancestors:
                node = node.getparent()
                if node is None:
                    break
                tag = node.tag
                if tag[tag.rfind("}") + 1:] != name:
                    node = None
                    break
            if node is None or (absolute and node.getparent() is not None):
                continue
            if len(element) == 0:  # a leaf: its text (xpath_text of one element)
                return (element.text or "").strip()
            return element_text(element)
        return ""

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
        if len(result) == 0:  # a leaf: its text, without walking
            return (result.text or "").strip()
        return element_text(result)
    return str(result)


def request_document(request: Any) -> Any:
    """The XML document of ``request``'s body (parsed once, then cached on the request as
    ``xml_document``), or None when the body is not XML or is refused. A SOAP route stores
    the envelope it already parsed there, so templates never parse twice."""
    state = request.__dict__
    if "xml_document" in state:
        return state["xml_document"]
    document = None
    body = request.body
    if body and body.lstrip()[:1] == b"<":
        try:
            document = parse_xml(body)
        except XmlRefused:
            document = None
    state["xml_document"] = document
    return document
