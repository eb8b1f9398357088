"""The process-wide handles the admin side uses to reach the engine.

Set once by the runner before the admin listener starts. Admin code reads ``runtime.control``
(an :class:`~mocks.engine.control.EngineControl`) and never touches engine dicts directly
(ARCHITECTURE seam 5).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Runtime:
    """Attributes: control (EngineControl or None), started_at (epoch s), ready, ports."""

    control: Any = None
    started_at: float = field(default_factory=time.time)
    ready: bool = False
    ports: dict[str, int] = field(default_factory=dict)


runtime = Runtime()
