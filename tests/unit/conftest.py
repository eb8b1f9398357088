"""Fixtures shared by the unit tests of the admin side."""
from __future__ import annotations

from typing import Iterator

import pytest


@pytest.fixture
def engine() -> Iterator[object]:
    """An in-process :class:`~mocks.engine.core.Engine` behind ``runtime.control`` for the
    duration of a test, with the default workspace stored (a test module may define its own
    ``engine`` fixture instead)."""
    from mockd_project.runtime import runtime
    from mocks.control import workspaces
    from mocks.engine.control import EngineControl
    from mocks.engine.core import Engine

    engine = Engine()
    previous = runtime.control
    runtime.control = EngineControl(engine)
    workspaces.ensure_default_workspace()
    yield engine
    runtime.control = previous
