"""pytest's assertion-rewrite cache of the test modules, shared out among the xdist workers.

pytest rewrites the ``assert`` statements of every test module and conftest before importing
it, and keeps the result in ``__pycache__/<name>.cpython-311-pytest-<version>.pyc`` unless
bytecode writing is off (``PYTHONDONTWRITEBYTECODE``, set on many CI machines and here).
Without that cache every xdist worker rewrites all ~220 test modules on its own while it
collects: about 11 s of CPU per worker, on every run.

:func:`share_out` runs in each worker before collection (``tests/conftest.py``:
``pytest_configure``) and writes the cache for its share of the test files (worker ``k`` of
``n`` takes every n-th file), so each file is rewritten once per run instead of once per worker;
later runs of the same checkout read the cache for nothing. The cache files are pytest's own
(hash-checked against the source, so a stale one is never used).

Uses pytest's rewrite functions (``_pytest.assertion.rewrite``): when they are missing or
change shape, nothing is written and pytest rewrites as it always does.
"""
from __future__ import annotations

import fnmatch
import os
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any


def _test_files(config: Any) -> list[Path]:
    """The test modules and conftests under the run's paths (``config.args``; a ``::test``
    suffix is dropped), sorted, as collection will find them."""
    patterns = config.getini("python_files") or ["test_*.py", "*_test.py"]
    found: set[Path] = set()
    for arg in config.args or [str(config.rootpath)]:
        path = Path(arg.split("::", 1)[0])
        if not path.is_absolute():
            path = Path(config.invocation_params.dir) / path
        candidates = [path] if path.is_file() else path.rglob("*.py") if path.is_dir() else []
        for candidate in candidates:
            name = candidate.name
            if name == "conftest.py" or any(fnmatch.fnmatch(name, p) for p in patterns):
                if "__pycache__" not in candidate.parts:
                    found.add(candidate.resolve())
    return sorted(found)


def share_out(config: Any) -> int:
    """Write pytest's rewrite cache for this xdist worker's share of the run's test files
    (``$PYTEST_XDIST_WORKER`` ``gw<k>`` of ``$PYTEST_XDIST_WORKER_COUNT``); returns how many
    files it rewrote. Does nothing (returns 0) outside xdist workers, when pytest writes its
    cache itself (bytecode writing on), when assertion rewriting is off, or when pytest's
    rewrite functions are not there."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    count = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "0") or 0)
    if not worker.startswith("gw") or count < 2 or not sys.dont_write_bytecode:
        return 0
    if config.getoption("assertmode", "rewrite") != "rewrite":
        return 0
    try:
        from _pytest.assertion.rewrite import (PYC_TAIL, _read_pyc, _rewrite_test, _write_pyc,
                                               get_cache_dir, try_makedirs)
    except ImportError:
        return 0
    state = SimpleNamespace(trace=lambda message: None)
    rewritten = 0
    for path in _test_files(config)[int(worker[2:]) % count::count]:
        cache_dir = get_cache_dir(path)
        pyc = cache_dir / (path.name[:-3] + PYC_TAIL)
        try:
            if _read_pyc(path, pyc) is not None or not try_makedirs(cache_dir):
                continue
            source_hash, code = _rewrite_test(path, config)
            if _write_pyc(state, code, source_hash, pyc):
                rewritten += 1
        except (OSError, SyntaxError, TypeError, ValueError):
            continue  # pytest rewrites (and reports) this one itself at collection
    return rewritten
