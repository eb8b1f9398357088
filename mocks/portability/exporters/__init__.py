"""Export: the current configuration as a mockd collection, an OpenAPI document or an
Insomnia collection.

Owns: the native export shape (:func:`native_collection`, :func:`dump_collection`), the
resolved form of tables and bindings (:func:`resolve_bindings`), and, in submodules,
:mod:`.openapi` (OpenAPI 3.0 from HTTP mocks) and :mod:`.insomnia` (collection v4 JSON and
v5 YAML). Every function takes the collection document that ``GET /config`` answers
(``{version, kind, name, metadata, mocks, tables?, extend?, statefulResources?,
customOperations?}``) and returns plain data; callers serialise and send it.

Who may call it: the ``mockd export`` command, the admin routes ``/openapi.*`` and
``/insomnia.*``, tests. No Django, no I/O; pure functions.

Source: SPEC "Import and export" (export formats), "Client-collection exports",
"Versioning"; behavior notes §1 ("Configuration and exports"), §13 (``export`` flags, tables
and bindings in resolved form).
"""
from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass
from typing import Any

from mocks.portability.importers.native import FORMAT_VERSION

__all__ = ["FORMAT_VERSION", "native_collection", "resolve_bindings", "dump_collection",
           "DEFAULT_EXPORT_NAME", "EXPORT_FORMATS", "ExportFormat"]

#: Collection name when none is given (``mockd export -n``; behavior notes §13).
DEFAULT_EXPORT_NAME = "exported-config"


@dataclass(frozen=True, slots=True)
class ExportFormat:
    """One export format (SPEC "Import and export" export formats, "Client-collection
    exports"; behavior notes §1 "Configuration and exports", §13 ``mockd export``).

    Attributes:
        name: the canonical name (``mockd``, ``openapi``, ``insomnia``).
        title: how the format is named to users.
        description: what the exported document holds.
        aliases: other names ``mockd export --format`` accepts for it.
        cli: whether ``mockd export --format`` writes it.
        routes: the admin routes that answer it.
        media_types: the media types it is served or written as.
    """

    name: str
    title: str
    description: str
    aliases: tuple[str, ...] = ()
    cli: bool = False
    routes: tuple[str, ...] = ()
    media_types: tuple[str, ...] = ()


#: Every export format by canonical name, as ``GET /formats`` lists them (a test holds
#: ``mockd export --format`` to the names and aliases of the ``cli`` formats).
EXPORT_FORMATS: dict[str, ExportFormat] = {format.name: format for format in (
    ExportFormat("mockd", "mockd collection",
                 "The native collection {version, kind: MockCollection, name, metadata, mocks, "
                 "statefulResources?, customOperations?}, tables and bindings in resolved form; "
                 "YAML (default) or JSON",
                 aliases=("native", "own", "yaml", "yml", "json"), cli=True,
                 routes=("GET /config",), media_types=("application/x-yaml", "application/json")),
    ExportFormat("openapi", "OpenAPI 3.0",
                 "An OpenAPI 3.0 document of the HTTP mocks: one operation per path and method "
                 "(a mock without a method gives one per method), conditions as parameters, "
                 "the answer as the response example",
                 cli=True, routes=("GET /openapi.json", "GET /openapi.yaml"),
                 media_types=("application/json", "application/x-yaml")),
    ExportFormat("insomnia", "Insomnia collection",
                 "A client collection with one folder per mock type and one request per mock "
                 "(v4 JSON or v5 YAML; v5 adds sample CRUD requests per table)",
                 routes=("GET /insomnia.json", "GET /insomnia.yaml"),
                 media_types=("application/json", "application/x-yaml")),
)}

_METHOD_AND_PATH = re.compile(r"([A-Za-z]+)\s+(/\S*)\Z")


def resolve_bindings(document: dict[str, Any]) -> dict[str, Any]:
    """``document`` with tables and bindings in resolved form (behavior notes §13):
    ``tables[]`` become ``statefulResources[]`` and each ``extend[]`` binding becomes the
    bound mock's ``http.statefulBinding`` ``{table, action, operation?, response?}``.

    A binding whose mock cannot be found (by id, then ``"METHOD /path"``) stays in
    ``extend``. The input is not changed.
    """
    result = copy.deepcopy(document)
    mocks = result.get("mocks") or []
    tables = result.pop("tables", None) or []
    if tables:
        result["statefulResources"] = [*(result.get("statefulResources") or []), *tables]
    remaining = []
    for binding in result.pop("extend", None) or []:
        mock = _find_mock(mocks, str(binding.get("mock", "")))
        if mock is None or mock.get("type", "http") != "http" or not isinstance(
                mock.get("http"), dict):
            remaining.append(binding)
            continue
        mock["http"]["statefulBinding"] = {key: value for key, value in binding.items()
                                           if key != "mock"}
    if remaining:
        result["extend"] = remaining
    return result


def _find_mock(mocks: list[dict[str, Any]], reference: str) -> dict[str, Any] | None:
    for mock in mocks:
        if mock.get("id") == reference:
            return mock
    found = _METHOD_AND_PATH.match(reference.strip())
    if found is not None:
        method, path = found.group(1).upper(), found.group(2)
        for mock in mocks:
            matcher = (mock.get("http") or {}).get("matcher") or {}
            if matcher.get("path") == path and str(matcher.get("method") or "").upper() == method:
                return mock
    return None


def native_collection(document: dict[str, Any], name: str | None = None,
                      resolved: bool = True) -> dict[str, Any]:
    """The native export ``{version: "1.0", kind: "MockCollection", name, metadata: {name},
    mocks, statefulResources?, extend?, customOperations?}`` of a ``GET /config`` document.

    Args:
        document: the collection or config document.
        name: the collection name (default: the document's, else ``exported-config``).
        resolved: put tables and bindings in resolved form (:func:`resolve_bindings`).
    """
    source = resolve_bindings(document) if resolved else copy.deepcopy(document)
    label = name or source.get("name") or DEFAULT_EXPORT_NAME
    metadata = dict(source.get("metadata") or {})
    metadata["name"] = label
    collection: dict[str, Any] = {"version": FORMAT_VERSION, "kind": "MockCollection",
                                  "name": label, "metadata": metadata,
                                  "mocks": source.get("mocks") or []}
    for key in ("tables", "extend", "statefulResources", "customOperations"):
        if source.get(key):
            collection[key] = source[key]
    return collection


def dump_collection(collection: Any, format: str) -> str:
    """``collection`` as text: ``yaml`` (block style, keys in order) or ``json`` (indented).

    Raises ``ValueError`` for another format.
    """
    if format in ("yaml", "yml"):
        import yaml

        return yaml.safe_dump(collection, sort_keys=False, allow_unicode=True, width=100)
    if format == "json":
        return json.dumps(collection, indent=2, ensure_ascii=False) + "\n"
    raise ValueError(f"unknown text format {format!r}; use yaml or json")
