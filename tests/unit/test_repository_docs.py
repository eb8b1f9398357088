"""The repository stands on its own: a LICENSE matching ``pyproject.toml``, and user docs
(README.md, docs/*.md) that state behaviour instead of pointing at documents that are not in
the repository, whose links all resolve, and that lead to the tables page."""
from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

#: References to documents outside the repository (the design notes the code was written
#: from): a reader of the docs cannot follow them.
OUTSIDE = re.compile(r"\bSPEC\b|behaviou?r notes|§|\bARCHITECTURE\b|\bSTYLE\b|contract notes"
                     r"|\bissue \d+")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def test_license_is_the_apache_license_pyproject_declares():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == "Apache-2.0" and project["license-files"] == ["LICENSE"]
    text = (ROOT / "LICENSE").read_text()
    assert text.split()[:4] == ["Apache", "License", "Version", "2.0,"]
    assert "TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION" in text
    assert "END OF TERMS AND CONDITIONS" in text
    assert "Copyright 2026 the mockd authors" in text
    assert "[yyyy]" not in text


@pytest.mark.parametrize("path", DOCS, ids=lambda path: path.relative_to(ROOT).as_posix())
def test_docs_cite_no_document_outside_the_repository(path):
    found = [f"{path.name}:{number}: {line.strip()}"
             for number, line in enumerate(path.read_text().splitlines(), 1)
             if OUTSIDE.search(line)]
    assert not found, "\n".join(found)


@pytest.mark.parametrize("path", DOCS, ids=lambda path: path.relative_to(ROOT).as_posix())
def test_docs_relative_links_resolve(path):
    broken = []
    for target in LINK.findall(path.read_text()):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue
        file_part = target.split("#", 1)[0]
        if not (path.parent / file_part).exists():
            broken.append(target)
    assert not broken, broken


def test_readme_stateful_section_points_to_the_tables_page():
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Stateful mocks", 1)[1].split("\n## ", 1)[0]
    assert "(docs/tables.md)" in section
