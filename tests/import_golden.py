"""Golden files of the importers (STYLE §14): a real-world-shaped sample next to the JSON
the importer must produce.

Layout under ``tests/fixtures/import/<format>/``:

* ``<case>.<ext>`` (or a directory ``<case>/``): the input document;
* ``<case>.options.json`` (optional): ``{"as": ..., "format": ..., "include_static": ...}``;
* ``<case>.expected.json``: ``{format, name, warnings, operationIds, config}`` with volatile
  values pinned (random ``http_<16 hex>`` ids become ``http_<pinned-N>`` in order of
  appearance; a SOAP mock's embedded ``wsdl`` text becomes ``<wsdl text>``).

Regenerate after an intended change with ``MOCKD_UPDATE_GOLDEN=1 pytest tests/unit -k
golden`` and review the diff like code.
"""
from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from mocks.portability.importers import import_path

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "import"
_RANDOM_ID = re.compile(r"http_[0-9a-f]{16}")


def cases(format: str) -> list[Path]:
    """Input documents of one format's fixtures, sorted by name.

    Raises AssertionError (at collection, where the list parametrizes a test) when the
    folder is missing or holds no input, so a moved fixture folder never leaves a golden
    test with nothing to run.
    """
    folder = FIXTURES / format
    assert folder.is_dir(), f"golden fixtures folder {folder} does not exist"
    found = sorted(path for path in folder.iterdir()
                   if not path.name.endswith((".expected.json", ".options.json"))
                   and not path.name.startswith("."))
    assert found, f"no golden input documents in {folder}"
    return found


def case_name(path: Path) -> str:
    """``petstore-3.0.yaml`` -> ``petstore-3.0`` (test id and golden file stem)."""
    return path.name if path.is_dir() else path.name.rsplit(".", 1)[0]


def pin(document: Any) -> Any:
    """``document`` with volatile values replaced by stable placeholders."""
    text = json.dumps(document, ensure_ascii=False)
    seen: dict[str, str] = {}

    def replace(match: re.Match[str]) -> str:
        return seen.setdefault(match.group(0), f"http_<pinned-{len(seen) + 1}>")

    pinned = json.loads(_RANDOM_ID.sub(replace, text))
    for mock in pinned.get("config", {}).get("mocks", []):
        if isinstance(mock.get("soap"), dict) and "wsdl" in mock["soap"]:
            mock["soap"]["wsdl"] = "<wsdl text>"
    return pinned


def convert(path: Path) -> dict[str, Any]:
    """The pinned golden document of one input."""
    options_path = path.parent / f"{case_name(path)}.options.json"
    options = json.loads(options_path.read_text()) if options_path.exists() else {}
    result = import_path(path, options.get("format"), options.get("as"),
                         include_static=bool(options.get("include_static")))
    return pin({"format": result.format, "name": result.name, "warnings": result.warnings,
                "operationIds": result.operation_ids, "config": result.config_document()})


def assert_matches_golden(path: Path) -> None:
    """Compare the conversion of ``path`` with its ``.expected.json`` (or write it when
    ``MOCKD_UPDATE_GOLDEN=1``)."""
    actual = convert(path)
    expected_path = path.parent / f"{case_name(path)}.expected.json"
    if os.environ.get("MOCKD_UPDATE_GOLDEN") == "1" or not expected_path.exists():
        expected_path.write_text(json.dumps(actual, indent=2, ensure_ascii=False) + "\n")
        if os.environ.get("MOCKD_UPDATE_GOLDEN") != "1":
            raise AssertionError(f"{expected_path.name} did not exist; written now - review it")
    expected = json.loads(expected_path.read_text())
    assert actual == expected, f"{path.name}: conversion differs from {expected_path.name}"
