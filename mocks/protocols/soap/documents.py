"""The files of one WSDL: the document itself and what it imports, read locally and served
back from the mock.

A WSDL may keep its types in other files: ``xs:import`` / ``xs:include`` / ``xs:redefine``
(``schemaLocation``) in its ``<types>`` schemas and in those files, and ``wsdl:import``
(``location``) for WSDL documents split in two (the usual JAX-WS and WCF layouts).
:func:`load_documents` follows every such reference from the main document, breadth first,
and returns a :class:`DocumentSet` (document 0 is the WSDL, the others numbered 1, 2, ... in
the order they were first referenced).

Where the files come from (a :class:`DocumentSource`):

* :class:`FolderSource`: the WSDL's folder (``wsdlFile``, or ``mockd import`` of a file).
  A location is a path relative to the document holding it, percent-decoded, its query part
  included in the file name (``UserService?xsd=1`` reads the file ``UserService?xsd=1``, as
  wget saves it); it must resolve (``..`` folded, symbolic links followed) into the WSDL's
  folder or below, and into the folders the server may read config files from (never
  mockd's data directory or secret files: :func:`mocks.core.responses.outside_roots`);
* :class:`MappingSource`: texts given with an inline WSDL (``soap.documents``: ``{name:
  text}``, names relative to the WSDL, as written by ``mockd import``);
* nothing (an inline WSDL without ``documents``, a WSDL imported from text): any reference
  is an error that says how to give the file.

Never read: a remote location (``http:``, ``https:``, ``file:``, ``//host``...; mockd never
downloads), except an ``xs:import`` of a namespace every SOAP toolkit knows by heart
(:data:`WELL_KNOWN_NAMESPACES`, such as SOAP encoding), which is kept as an import of the
namespace alone. Each document is parsed by :func:`mocks.core.xmldoc.parse_xml` (no DTD, no
entities, no network), at most :data:`MAX_DOCUMENT_BYTES` each and :data:`MAX_DOCUMENTS`
in all.

Serving (:meth:`DocumentSet.served`): each document is serialized once with every address
(``soap:address``, ``soap12:address``, ``http:address``) set to :data:`ADDRESS_PLACEHOLDER`
and every followed reference set to ``<placeholder>?xsd=N`` (``?wsdl=N`` for a WSDL), so the
handler only swaps the placeholder for ``<scheme>://<host><path>`` per request; a client
such as zeep, svcutil or wsimport given ``<path>?wsdl`` reaches every file through the mock.

Errors: :class:`WsdlError` naming the file and the reference that failed. Django-free.

Source: SPEC "SOAP mock", "Import and export" (WSDL 1.1 row); behavior notes §10, §13.
"""
from __future__ import annotations

import posixpath
import re
from copy import deepcopy
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import unquote

from mocks.core.responses import denied_reason, outside_roots
from mocks.core.xmldoc import XmlRefused, local_name, parse_xml

WSDL_NAMESPACE = "http://schemas.xmlsoap.org/wsdl/"
#: Namespaces of XML Schema (2001, and the drafts some old WSDLs still use).
XSD_NAMESPACES = frozenset({"http://www.w3.org/2001/XMLSchema",
                            "http://www.w3.org/2000/10/XMLSchema",
                            "http://www.w3.org/1999/XMLSchema"})
#: Namespaces of the address elements rewritten to the mock's URL (SOAP 1.1, SOAP 1.2, HTTP).
ADDRESS_NAMESPACES = ("http://schemas.xmlsoap.org/wsdl/soap/",
                      "http://schemas.xmlsoap.org/wsdl/soap12/",
                      "http://schemas.xmlsoap.org/wsdl/http/")
#: Namespaces whose remote ``xs:import`` is accepted without reading it: SOAP toolkits
#: carry these schemas themselves. The import is served without its ``schemaLocation``.
WELL_KNOWN_NAMESPACES = frozenset({
    "http://schemas.xmlsoap.org/soap/encoding/", "http://www.w3.org/2003/05/soap-encoding",
    "http://schemas.xmlsoap.org/wsdl/", "http://schemas.xmlsoap.org/soap/envelope/",
    "http://www.w3.org/2003/05/soap-envelope", "http://www.w3.org/XML/1998/namespace",
    *XSD_NAMESPACES})
#: What every address location (and the start of every served reference) becomes.
ADDRESS_PLACEHOLDER = "urn:mockd:soap-address"
#: Largest document read (the WSDL or one imported file), in bytes (16 MiB).
MAX_DOCUMENT_BYTES = 16 * 1024 * 1024
#: Most documents one WSDL may bring in, itself included.
MAX_DOCUMENTS = 500

_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")
_SCHEMA_REFERENCES = ("import", "include", "redefine")


class WsdlError(ValueError):
    """A WSDL document (or a file it brings in) that cannot be used.

    Attributes:
        location: where (``definitions``, ``binding[B]``, the relative name of an imported
            file such as ``types.xsd``; ``""`` for the WSDL as a whole).
        message: what is wrong (``not well-formed XML at line 3: ...``).
        line: the line of a syntax error, when known.
    """

    def __init__(self, location: str, message: str, line: int | None = None):
        super().__init__(f"{location}: {message}" if location else message)
        self.location = location
        self.message = message
        self.line = line


class DocumentSource(Protocol):
    """Where the files a WSDL refers to are read from (see the module docstring)."""

    def read(self, name: str) -> bytes:
        """The bytes of ``name`` (a normalized POSIX path relative to the WSDL's folder).
        Raises :class:`LookupError` with the reason when it cannot be had."""
        ...


class FolderSource:
    """Files in the WSDL's folder and below (see the module docstring).

    Args:
        folder: the WSDL's folder.
        roots: the folders a config may read from (a
            :class:`~mocks.core.responses.FileRoots` or a tuple of resolved folders; empty:
            anywhere but mockd's own places).
    """

    def __init__(self, folder: Path, roots: tuple[Path, ...] = ()):
        self.folder = folder.resolve()
        self.roots = roots

    def read(self, name: str) -> bytes:
        """See :class:`DocumentSource`. Refuses ``..`` escapes, symbolic links leading out
        of the folder, mockd's secret files and data directory, and files over
        :data:`MAX_DOCUMENT_BYTES`."""
        candidates = [name]
        if "?" in name:  # wget on Windows (and --restrict-file-names=windows) writes "@"
            candidates.append(name.replace("?", "@"))
        for candidate in candidates:
            path = self.folder / candidate
            resolved = path.resolve()
            if not resolved.is_relative_to(self.folder):
                raise LookupError(f"it leads outside the WSDL's folder ({self.folder}); only "
                                  f"files in that folder and below are read")
            escaped = outside_roots(path, self.roots)
            if escaped is not None:
                reason = denied_reason(escaped, self.roots) if escaped.is_absolute() else None
                raise LookupError(f"it is refused: {reason}" if reason else
                                  f"it resolves to {escaped}, outside the folders config files "
                                  f"may be read from")
            if candidate != candidates[-1] and not resolved.exists():
                continue
            try:
                if resolved.stat().st_size > MAX_DOCUMENT_BYTES:
                    raise LookupError(f"it is larger than {MAX_DOCUMENT_BYTES // 2 ** 20} MiB")
                return resolved.read_bytes()
            except OSError as error:
                raise LookupError(f"cannot read {str(path)!r}: "
                                  f"{error.strerror or error}") from None
        raise LookupError("not found")


class MappingSource:
    """Texts given with an inline WSDL: ``{name: text}`` (``soap.documents``)."""

    def __init__(self, documents: dict[str, str]):
        self.documents = {normalize(name): text for name, text in documents.items()}

    def read(self, name: str) -> bytes:
        """See :class:`DocumentSource`."""
        text = self.documents.get(name)
        if text is None:
            known = ", ".join(sorted(self.documents)) or "none"
            raise LookupError(f"soap.documents has no entry {name!r} (entries: {known}); add "
                              f"the file's text under that name")
        return text.encode("utf-8")


class NoSource:
    """No files: every reference fails with ``hint`` (what to do instead)."""

    def __init__(self, hint: str):
        self.hint = hint

    def read(self, name: str) -> bytes:
        """See :class:`DocumentSource`; always raises."""
        raise LookupError(self.hint)


def normalize(name: str) -> str:
    """``name`` as a normalized POSIX path (``./a//b.xsd`` -> ``a/b.xsd``)."""
    return posixpath.normpath(name.replace("\\", "/")).removeprefix("./")


def is_remote(location: str) -> bool:
    """Whether ``location`` names something on another host or scheme (``http://x``,
    ``file:/x``, ``//host/x``), rather than a relative path."""
    if location.startswith("//"):
        return True
    match = _SCHEME.match(location)
    return match is not None and not (len(location) > 2 and location[1] == ":"
                                      and location[2] in "/\\")  # C:\ is a drive


@dataclass(slots=True)
class Reference:
    """One ``wsdl:import`` / ``xs:import`` / ``xs:include`` / ``xs:redefine`` of a document.

    Attributes:
        element: the referring element.
        attribute: ``location`` or ``schemaLocation``.
        kind: ``wsdl:import``, ``xs:import``, ``xs:include`` or ``xs:redefine``.
        target: the index of the document it reads, or None when not followed (a
            well-known namespace imported from a remote location).
    """

    element: Any
    attribute: str
    kind: str
    target: int | None = None


@dataclass(slots=True)
class SourceDocument:
    """One document of a :class:`DocumentSet`.

    Attributes:
        index: 0 for the WSDL, then 1, 2, ... (served at ``?xsd=N`` / ``?wsdl=N``).
        name: its path relative to the WSDL's folder (``""`` for an inline WSDL).
        root: the parsed root element.
        kind: ``wsdl`` (a ``definitions`` root) or ``xsd`` (a ``schema`` root).
        references: what it refers to, in document order.
    """

    index: int
    name: str
    root: Any
    kind: str
    references: list[Reference] = field(default_factory=list)


def _references(root: Any, kind: str) -> list[Reference]:
    """The references of one document, in document order (see :class:`Reference`)."""
    found: list[Reference] = []
    if kind == "wsdl":
        schemas = []
        for child in root:
            name = local_name(child.tag)
            if name == "import":
                found.append(Reference(child, "location", "wsdl:import"))
            elif name == "types":
                schemas.extend(schema for schema in child if local_name(schema.tag) == "schema")
    else:
        schemas = [root]
    for schema in schemas:
        for child in schema:
            name = local_name(child.tag)
            if name in _SCHEMA_REFERENCES:
                found.append(Reference(child, "schemaLocation", f"xs:{name}"))
    return found


def document_kind(root: Any) -> str | None:
    """``wsdl`` for a WSDL 1.1 ``definitions`` root, ``xsd`` for a ``schema`` root, else
    None."""
    tag = root.tag
    name = local_name(tag)
    if name == "definitions":
        return "wsdl"
    if name == "schema" and (not tag.startswith("{") or tag[1:].split("}")[0] in XSD_NAMESPACES):
        return "xsd"
    return None


class DocumentSet:
    """A WSDL and every document it brings in (see the module docstring).

    Attributes:
        documents: by index; ``documents[0]`` is the WSDL.
        by_name: index of each document by its relative name.
    """

    def __init__(self, main: SourceDocument):
        self.documents: list[SourceDocument] = [main]
        self.by_name: dict[str, int] = {main.name: 0} if main.name else {}

    @property
    def main(self) -> SourceDocument:
        """The WSDL itself."""
        return self.documents[0]

    def target_of(self, reference: Reference) -> SourceDocument | None:
        """The document ``reference`` reads, or None when it is not followed."""
        return self.documents[reference.target] if reference.target is not None else None

    def inline_schemas(self) -> list[Any]:
        """The ``<types>`` schemas of every WSDL document, in document order."""
        roots = []
        for document in self.documents:
            if document.kind != "wsdl":
                continue
            for child in document.root:
                if local_name(child.tag) == "types":
                    roots.extend(schema for schema in child if local_name(schema.tag) == "schema")
        return roots

    def served(self) -> list[bytes]:
        """Every document as served (see the module docstring), by index: XML declaration,
        UTF-8, the placeholder where the host-dependent URLs go."""
        from lxml import etree

        out = []
        for document in self.documents:
            copy = deepcopy(document.root)
            # The copy has the same structure: its references come in the same order.
            for reference, copied in zip(document.references,
                                         _references(copy, document.kind)):
                if reference.target is None:
                    copied.element.attrib.pop(copied.attribute, None)
                else:
                    key = "wsdl" if self.documents[reference.target].kind == "wsdl" else "xsd"
                    copied.element.set(copied.attribute,
                                       f"{ADDRESS_PLACEHOLDER}?{key}={reference.target}")
            if document.kind == "wsdl":
                for element in copy.iter():
                    tag = element.tag
                    if isinstance(tag, str) and tag.endswith("}address") and \
                            tag[1:].split("}")[0] in ADDRESS_NAMESPACES:
                        element.set("location", ADDRESS_PLACEHOLDER)
            out.append(etree.tostring(copy, xml_declaration=True, encoding="UTF-8"))
        return out


def load_documents(root: Any, source: DocumentSource, name: str = "") -> DocumentSet:
    """The :class:`DocumentSet` of the WSDL whose parsed root is ``root`` (named ``name``
    relative to its folder; ``""`` for inline text), its references followed through
    ``source``.

    Raises :class:`WsdlError`: a file is not well-formed XML or has a DTD (the location
    names the file), a reference is remote (outside :data:`WELL_KNOWN_NAMESPACES`), absolute,
    leads outside the WSDL's folder, cannot be read or is neither a WSDL nor a schema, or
    there are more than :data:`MAX_DOCUMENTS` files.
    """
    documents = DocumentSet(SourceDocument(0, normalize(name) if name else "", root,
                                           document_kind(root) or "wsdl"))
    position = 0
    while position < len(documents.documents):
        holder = documents.documents[position]
        position += 1
        holder.references = _references(holder.root, holder.kind)
        for reference in holder.references:
            reference.target = _follow(documents, holder, reference, source)
    return documents


def _where(holder: SourceDocument, reference: Reference) -> str:
    return f"{reference.kind} in {holder.name or 'the WSDL'}"


def _follow(documents: DocumentSet, holder: SourceDocument, reference: Reference,
            source: DocumentSource) -> int | None:
    """The index of the document ``reference`` names (read and parsed on first use)."""
    location = (reference.element.get(reference.attribute) or "").strip()
    if not location:
        if reference.kind == "xs:import":
            return None  # a namespace-only import: resolved among the loaded schemas
        raise WsdlError(holder.name, f"{reference.kind} without a "
                                     f"{reference.attribute}: nothing to read")
    where = _where(holder, reference)
    if is_remote(location):
        if reference.kind == "xs:import" and \
                reference.element.get("namespace") in WELL_KNOWN_NAMESPACES:
            return None
        raise WsdlError(holder.name, f"{reference.attribute} {location!r} ({where}) is remote: "
                        f"mockd never downloads schemas or WSDL files; save the file beside the "
                        f"WSDL and refer to it by a relative path")
    relative = unquote(location.split("#", 1)[0]).replace("\\", "/")
    if relative.startswith("/"):
        raise WsdlError(holder.name, f"{reference.attribute} {location!r} ({where}) is an "
                        f"absolute path: only paths relative to the WSDL's folder are read")
    name = normalize(posixpath.join(posixpath.dirname(holder.name), relative))
    if name == ".." or name.startswith("../"):
        raise WsdlError(holder.name, f"{reference.attribute} {location!r} ({where}) leads "
                        f"outside the WSDL's folder; only files in that folder and below are "
                        f"read")
    known = documents.by_name.get(name)
    if known is not None:
        return known
    if len(documents.documents) >= MAX_DOCUMENTS:
        raise WsdlError(holder.name, f"more than {MAX_DOCUMENTS} files are referenced; "
                        f"{location!r} ({where}) is one too many")
    try:
        data = source.read(name)
    except LookupError as error:
        raise WsdlError(holder.name, f"{reference.attribute} {location!r} ({where}) cannot be "
                        f"read: {error.args[0] if error.args else error}") from None
    try:
        root = parse_xml(data, MAX_DOCUMENT_BYTES)
    except XmlRefused as error:
        raise WsdlError(name, error.reason, error.line) from None
    kind = document_kind(root)
    wanted = ("wsdl", "xsd") if reference.kind == "wsdl:import" else ("xsd",)
    if kind not in wanted:
        raise WsdlError(name, f"{location!r} ({where}) is not "
                        f"{'a WSDL or ' if len(wanted) == 2 else 'an '}XML Schema document: "
                        f"its root is <{local_name(root.tag)}>")
    index = len(documents.documents)
    documents.documents.append(SourceDocument(index, name, root, kind))
    documents.by_name[name] = index
    return index
