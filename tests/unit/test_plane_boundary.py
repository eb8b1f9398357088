"""The plane boundary as a test (ARCHITECTURE seam 2; STYLE §1): the engine core imports
nothing from Django, Channels or any ``models`` module."""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ENGINE_PACKAGES = [ROOT / "mocks" / "engine", ROOT / "mocks" / "protocols", ROOT / "oidc"]
#: Django glue inside otherwise engine-side packages (an app's AppConfig).
DJANGO_GLUE = {ROOT / "oidc" / "apps.py"}
FORBIDDEN = ("django", "channels", "ninja", "daphne")
#: The table runtime (store, queries, transforms, bindings); ``tables/`` also holds Django
#: modules (apps, models, api, services, cli) that are not listed here.
TABLE_RUNTIME_MODULES = [ROOT / "tables" / f"{name}.py" for name in (
    "__init__", "config", "ids", "forms", "query", "errors", "transforms", "validation", "store",
    "binding", "control", "expressions", "operations_config", "operations")]


def _imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(), str(path))
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            names.append(module)
            names += [f"{module}.{alias.name}" for alias in node.names]
    return names


@pytest.mark.parametrize("path", [path for package in ENGINE_PACKAGES
                                  for path in sorted(package.rglob("*.py"))
                                  if path not in DJANGO_GLUE] + TABLE_RUNTIME_MODULES,
                         ids=lambda path: str(path.relative_to(ROOT)))
def test_engine_module_imports_no_django(path):
    bad = [name for name in _imports(path)
           if name.split(".")[0] in FORBIDDEN or name.split(".")[-1] == "models"]
    assert not bad, f"{path.relative_to(ROOT)} imports {bad}"


def test_importing_the_engine_loads_no_django_at_run_time():
    code = ("import sys, mocks.engine.app, mocks.engine.control, mocks.loader,"
            " oidc.engine, tables.store, tables.binding, tables.control, tables.operations,"
            " tables.expressions;"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('django', 'channels', 'ninja')))")
    output = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            cwd=ROOT, check=True).stdout.strip()
    assert output == "[]"
