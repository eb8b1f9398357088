"""Our own format: a mockd config / ``MockCollection`` document, upgraded to the current
format version by chained one-step converters.

The native export carries ``version`` (:data:`FORMAT_VERSION`). A reader upgrades an older
document one version at a time (``UPGRADES[v]`` turns version ``v`` into the next), the
way mitmproxy's ``io/compat.py`` does, so every converter stays small and old files keep
loading. Today's chain:

* ``"0"``, an unversioned document: a bare list of mocks, a single mock, or a mapping with
  ``mocks`` but no ``version`` -> ``"1.0"`` (wrapped as ``{version: "1.0", mocks: [...]}``).

A ``version`` this mockd does not know (for example ``"2.0"``) is an error that says which
versions are read.

Collection keys kept: ``mocks``, ``tables``, ``extend``, ``statefulResources``,
``customOperations`` (and the descriptive ``kind``/``name``/``metadata``, which are not
part of what is imported). ``imports`` inside an imported document are not followed.

Source: STYLE §10; SPEC "Configuration file", "Versioning"; behavior notes §1 ("GET
/config" shape), §13 (detection: ``version`` with ``kind`` or ``mocks``).
"""
from __future__ import annotations

from typing import Any, Callable

from mocks.portability.importers.result import DocumentProbe, ImportDocumentError, ImportOptions, ImportResult

FORMAT = "mockd"
#: The format version this mockd writes and reads natively.
FORMAT_VERSION = "1.0"
#: Keys of a collection that become part of the imported config.
COLLECTION_KEYS = {"mocks": "mocks", "tables": "tables", "extend": "extend",
                   "statefulResources": "stateful_resources",
                   "customOperations": "custom_operations"}


def _unversioned_to_1_0(document: Any) -> dict[str, Any]:
    """Version "0" (no ``version``): a list of mocks, one mock, or ``{mocks: [...]}``."""
    if isinstance(document, list):
        return {"version": "1.0", "mocks": document}
    if isinstance(document, dict) and "mocks" not in document and (
            "type" in document or "http" in document or "matcher" in document):
        return {"version": "1.0", "mocks": [document]}
    if isinstance(document, dict):
        return {**document, "version": "1.0"}
    raise ImportDocumentError(FORMAT, "", "expected a mapping with a 'mocks' list")


#: version -> (next version, converter). Each converter does exactly one step.
UPGRADES: dict[str, tuple[str, Callable[[Any], Any]]] = {
    "0": ("1.0", _unversioned_to_1_0),
}


def document_version(document: Any) -> str:
    """The format version of a document: its ``version`` as text (``1`` and ``1.0`` read as
    ``"1.0"``), or ``"0"`` when it has none."""
    if not isinstance(document, dict) or "version" not in document:
        return "0"
    version = document["version"]
    if isinstance(version, bool):
        return str(version)
    if isinstance(version, int):
        return f"{version}.0"
    if isinstance(version, float):
        return f"{version:.1f}"
    return str(version)


def upgrade(document: Any) -> dict[str, Any]:
    """``document`` converted step by step to :data:`FORMAT_VERSION`.

    Raises :class:`ImportDocumentError` ``mockd: version: unsupported version '2.0' ...``.
    """
    version = document_version(document)
    steps = 0
    while version != FORMAT_VERSION:
        if version not in UPGRADES:
            readable = ", ".join(sorted({*UPGRADES, FORMAT_VERSION}))
            raise ImportDocumentError(FORMAT, "version", f"unsupported version {version!r}; "
                                      f"this mockd reads versions {readable}")
        version, step = UPGRADES[version]
        document = step(document)
        steps += 1
        if steps > len(UPGRADES):  # a chain that loops would be a programming error
            raise ImportDocumentError(FORMAT, "version", "version upgrade chain loops")
    if isinstance(document, dict) and document.get("version") != FORMAT_VERSION:
        document = {**document, "version": FORMAT_VERSION}
    return document


class NativeImporter:
    """mockd config files and exports (aliases ``native``, ``own``, ``json``, ``yaml``)."""

    format = FORMAT
    #: The format's name and its detection rule in words, for ``GET /formats``.
    title = "mockd config or export"
    detection = "an object with 'version' and either 'kind' or 'mocks'"

    def detects(self, probe: DocumentProbe) -> bool:
        """``version`` together with ``kind`` or ``mocks`` (behavior notes §13)."""
        data = probe.structured()
        return isinstance(data, dict) and "version" in data and ("kind" in data
                                                                 or "mocks" in data)

    def convert(self, probe: DocumentProbe, options: ImportOptions) -> ImportResult:
        """The collection's mocks, tables, bindings and operations, upgraded to the current
        format version. Raises :class:`ImportDocumentError`."""
        document = upgrade(probe.data(FORMAT))
        result = ImportResult(format=FORMAT)
        name = document.get("name")
        metadata = document.get("metadata")
        if not name and isinstance(metadata, dict):
            name = metadata.get("name")
        result.name = str(name) if name else None
        for key, attribute in COLLECTION_KEYS.items():
            items = document.get(key)
            if items is None:
                continue
            if not isinstance(items, list):
                raise ImportDocumentError(FORMAT, key, "expected a list")
            for index, item in enumerate(items):
                if not isinstance(item, dict):
                    raise ImportDocumentError(FORMAT, f"{key}[{index}]", "expected a mapping")
            getattr(result, attribute).extend(items)
        if document.get("imports"):
            result.warnings.append("the document's own 'imports' are not followed; import "
                                   "those files separately")
        return result
