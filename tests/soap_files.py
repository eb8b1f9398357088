"""SOAP test files: an lxml ``XMLSchema`` of everything a WSDL declares, built without
mockd's own reader, to check that sample answers are valid; and the JAX-WS ``?xsd=1`` layout.

:func:`wsdl_schema` copies the WSDL's folder, follows ``wsdl:import`` (relative locations),
writes each ``<types>`` schema out as a file beside the WSDL document that holds it (with
every namespace declaration in scope, so QName values keep their prefixes; a
namespace-only ``xs:import`` of another inline schema is pointed at that file), and compiles
one schema importing them all. Files the schemas import or include are read by libxml2 from
the copy, network off.
"""
from __future__ import annotations

import shutil
from pathlib import Path

from lxml import etree

XSD = "http://www.w3.org/2001/XMLSchema"
WSDL = "http://schemas.xmlsoap.org/wsdl/"


def _wsdl_documents(main: Path) -> list[Path]:
    found, pending = [], [main]
    while pending:
        path = pending.pop(0)
        if path in found:
            continue
        found.append(path)
        root = etree.parse(str(path)).getroot()
        for element in root.findall(f"{{{WSDL}}}import"):
            target = path.parent / element.get("location")
            if target.suffix != ".xsd":
                pending.append(target.resolve())
    return found


def wsdl_schema(wsdl: Path, workdir: Path) -> etree.XMLSchema:
    """The schema of every global element of the WSDL at ``wsdl`` (see the module
    docstring); ``workdir`` receives the copy."""
    copy = workdir / "schema-copy"
    shutil.copytree(wsdl.parent, copy, dirs_exist_ok=True)
    inline: list[tuple[Path, etree._Element]] = []
    for document in _wsdl_documents((copy / wsdl.name).resolve()):
        root = etree.parse(str(document)).getroot()
        for schema in root.iterfind(f"{{{WSDL}}}types/{{{XSD}}}schema"):
            inline.append((document, schema))
    files: dict[str, Path] = {}
    written: list[tuple[Path, etree._Element]] = []
    for number, (document, schema) in enumerate(inline):
        standalone = etree.Element(schema.tag, nsmap=schema.nsmap)
        for name, value in schema.attrib.items():
            standalone.set(name, value)
        for child in schema:
            standalone.append(etree.fromstring(etree.tostring(child)))
        path = document.parent / f"inline-{number}.xsd"
        files.setdefault(schema.get("targetNamespace") or "", path)
        written.append((path, standalone))
    for path, standalone in written:
        for element in standalone.findall(f"{{{XSD}}}import"):
            target = files.get(element.get("namespace") or "")
            if element.get("schemaLocation") is None and target is not None:
                element.set("schemaLocation", target.name if target.parent == path.parent
                            else str(target))
        path.write_bytes(etree.tostring(standalone))
    main = etree.Element(f"{{{XSD}}}schema", nsmap={"xs": XSD})
    for namespace, path in files.items():
        etree.SubElement(main, f"{{{XSD}}}import", namespace=namespace,
                         schemaLocation=path.as_uri())
    main_path = copy / "all-schemas.xsd"
    main_path.write_bytes(etree.tostring(main))
    parser = etree.XMLParser(no_network=True, resolve_entities=False)
    return etree.XMLSchema(etree.parse(str(main_path), parser))


def assert_valid(schema: etree.XMLSchema, fragment: str) -> None:
    """``fragment`` (one element, as text) is valid against ``schema``; else AssertionError
    with lxml's reasons."""
    element = etree.fromstring(fragment)
    if not schema.validate(element):
        reasons = "; ".join(str(error.message) for error in schema.error_log)
        raise AssertionError(f"not valid: {reasons}\n{fragment}")


USERS_WSDL = Path(__file__).resolve().parent / "fixtures" / "soap" / "users.wsdl"


def xsd_query_layout(folder: Path) -> Path:
    """Write ``users.wsdl`` into ``folder`` as a JAX-WS service saved with wget: the schema
    in a file named ``UserService?xsd=1``, imported by that name. Returns the WSDL's path."""
    users = USERS_WSDL.read_text()
    start, end = users.index("<xs:schema"), users.index("</xs:schema>") + len("</xs:schema>")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "UserService?xsd=1").write_text(users[start:end].replace(
        "<xs:schema ", '<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema" '
                       'xmlns:tns="urn:example:users" ', 1))
    wsdl = folder / "UserService.wsdl"
    wsdl.write_text(users[:start] + '<xs:schema targetNamespace="urn:example:users:wrapper">'
                    '<xs:import namespace="urn:example:users" schemaLocation="UserService?xsd=1"'
                    '/></xs:schema>' + users[end:])
    return wsdl
