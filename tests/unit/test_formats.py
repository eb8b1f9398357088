"""The format catalogue of ``GET /formats`` is built from the importer and exporter registries
(behavior notes §1 "Other routes", §13)."""
from __future__ import annotations

import pytest

from mocks.cli_portability import EXPORT_FORMATS as CLI_EXPORT_CHOICES
from mocks.portability.exporters import EXPORT_FORMATS
from mocks.portability.formats import format_catalogue
from mocks.portability.importers import ALIASES, DETECTED, FORMATS, importer_for


@pytest.mark.parametrize("name", list(FORMATS))
def test_every_importer_names_its_format_and_detection_rule(name):
    importer = importer_for(name)
    assert importer.title.strip() and importer.detection.strip()
    assert "SPEC" not in importer.detection and "notes" not in importer.detection


def test_catalogue_lists_every_import_format_in_detection_order():
    catalogue = format_catalogue()
    names = [entry["name"] for entry in catalogue["import"]]
    assert names == list(FORMATS)
    assert catalogue["detectionOrder"] == list(DETECTED)
    detected = [entry["name"] for entry in sorted(
        (entry for entry in catalogue["import"] if entry["detected"]),
        key=lambda entry: entry["detectionOrder"])]
    assert detected == list(DETECTED)
    curl = next(entry for entry in catalogue["import"] if entry["name"] == "curl")
    assert curl["detected"] is False and "detectionOrder" not in curl
    assert "--format curl" in curl["detection"]


def test_catalogue_aliases_come_from_the_alias_table():
    listed = {alias: entry["name"] for entry in format_catalogue()["import"]
              for alias in entry["aliases"]}
    assert listed == ALIASES


def test_catalogue_export_formats_come_from_the_exporter_registry():
    exported = format_catalogue()["export"]
    assert [entry["name"] for entry in exported] == list(EXPORT_FORMATS)
    openapi = next(entry for entry in exported if entry["name"] == "openapi")
    assert openapi["cli"] is True and "GET /openapi.json" in openapi["routes"]


def test_mockd_export_accepts_exactly_the_cli_export_formats():
    names = {name for entry in EXPORT_FORMATS.values() if entry.cli
             for name in (entry.name, *entry.aliases)}
    assert set(CLI_EXPORT_CHOICES) == names
