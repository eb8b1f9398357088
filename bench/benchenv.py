"""The environment of a benchmark's child processes (shared by ``engine_start.py``,
``full_start.py`` and ``cli_start.py``), and the arguments that pick the checkouts they run.

:func:`child_env` returns a copy of ``os.environ`` without ``MOCKD_*`` and byte-code
settings, then: ``MOCKD_DATA_DIR=<folder>/data``; ``PYTHONPATH=tree`` when ``tree`` is not
this checkout (a ``git worktree`` of an older commit run with this virtualenv); and either
``PYTHONDONTWRITEBYTECODE=1`` (``no_bytecode``: compile from source every run) or a
``PYTHONPYCACHEPREFIX`` under ``folder`` (byte code written by a warm-up run and reused, as
an installed mockd has it).
"""
from __future__ import annotations

import argparse
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


def tree_envs(folder: Path, trees: list[Path], no_bytecode: bool = False,
              **extra: str) -> dict[Path, dict[str, str]]:
    """``{tree: child environment}`` for each tree, each in a new sub-folder ``<index>`` of
    ``folder`` that is also its ``HOME``, with ``extra`` variables set (:func:`child_env`)."""
    envs = {}
    for number, tree in enumerate(trees):
        home = folder / str(number)
        home.mkdir()
        envs[tree] = {**child_env(home, tree, no_bytecode), "HOME": str(home), **extra}
    return envs


def add_tree_arguments(parser: argparse.ArgumentParser) -> None:
    """``--config`` (default ``examples/quickstart.yaml``), ``--tree`` (the checkout to run,
    default this one) and ``--alternate DIR`` (another checkout run alternately with it, run
    for run, so a load change on the machine hits both alike)."""
    parser.add_argument("--config", type=Path, default=ROOT / "examples" / "quickstart.yaml")
    parser.add_argument("--tree", type=Path, default=ROOT,
                        help="project checkout to run (default: this one)")
    parser.add_argument("--alternate", type=Path, default=None, metavar="DIR",
                        help="another checkout run alternately with --tree, run for run")


def trees_of(arguments: argparse.Namespace) -> list[Path]:
    """The checkouts to run, resolved: ``[--tree]`` or ``[--tree, --alternate]``."""
    trees = [arguments.tree.resolve()]
    if arguments.alternate is not None:
        trees.append(arguments.alternate.resolve())
    return trees
