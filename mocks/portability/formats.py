"""The catalogue of import and export formats, built from the two registries.

``GET /formats`` answers :func:`format_catalogue`; nothing here is written by hand twice:
import formats come from :data:`~mocks.portability.importers.FORMATS` (detection order),
their other names from :data:`~mocks.portability.importers.ALIASES`, their names and
detection rules from each importer class (``title``, ``detection``); export formats from
:data:`~mocks.portability.exporters.EXPORT_FORMATS`.

Who may call it: the admin API (:mod:`mocks.api_extras`), tests. Django-free; loads every
importer module once (WSDL's pulls in lxml).

Source: behavior notes §1 "Other routes" (``/formats``), §13 (detection order, aliases).
"""
from __future__ import annotations

from typing import Any

from mocks.portability.exporters import EXPORT_FORMATS
from mocks.portability.importers import ALIASES, DETECTED, FORMATS, importer_for


def import_formats() -> list[dict[str, Any]]:
    """``[{name, title, aliases, detected, detectionOrder?, detection}]`` in detection order.

    ``detected`` is False for a format only ``--format`` (or ``imports[].format``) selects
    (curl); ``detectionOrder`` (1-based) is given for the others.
    """
    listed = []
    for name in FORMATS:
        importer = importer_for(name)
        entry: dict[str, Any] = {
            "name": name, "title": importer.title,
            "aliases": [alias for alias, target in ALIASES.items() if target == name],
            "detected": name in DETECTED,
        }
        if name in DETECTED:
            entry["detectionOrder"] = DETECTED.index(name) + 1
        entry["detection"] = importer.detection
        listed.append(entry)
    return listed


def export_formats() -> list[dict[str, Any]]:
    """``[{name, title, description, aliases, cli, routes, mediaTypes}]`` in registry order."""
    return [{"name": entry.name, "title": entry.title, "description": entry.description,
             "aliases": list(entry.aliases), "cli": entry.cli, "routes": list(entry.routes),
             "mediaTypes": list(entry.media_types)} for entry in EXPORT_FORMATS.values()]


def format_catalogue() -> dict[str, Any]:
    """``{import: [...], export: [...], detectionOrder: [name, ...]}``: see
    :func:`import_formats` and :func:`export_formats`."""
    return {"import": import_formats(), "export": export_formats(),
            "detectionOrder": list(DETECTED)}
