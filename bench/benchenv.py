"""The environment of a benchmark's child processes (shared by ``engine_start.py`` and
``cli_start.py``).

:func:`child_env` returns a copy of ``os.environ`` without ``MOCKD_*`` and byte-code
settings, then: ``MOCKD_DATA_DIR=<folder>/data``; ``PYTHONPATH=tree`` when ``tree`` is not
this checkout (a ``git worktree`` of an older commit run with this virtualenv); and either
``PYTHONDONTWRITEBYTECODE=1`` (``no_bytecode``: compile from source every run) or a
``PYTHONPYCACHEPREFIX`` under ``folder`` (byte code written by a warm-up run and reused, as
an installed mockd has it).
"""
from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def child_env(folder: Path, tree: Path, no_bytecode: bool) -> dict[str, str]:
    """The child environment described in the module docstring (``folder`` must exist)."""
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("MOCKD_", "PYTHONPYCACHEPREFIX", "PYTHONDONTWRITE"))}
    env["MOCKD_DATA_DIR"] = str(folder / "data")
    if tree.resolve() != ROOT:
        env["PYTHONPATH"] = str(tree.resolve())
    if no_bytecode:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    else:
        env["PYTHONPYCACHEPREFIX"] = str(folder / "pycache")
    return env
