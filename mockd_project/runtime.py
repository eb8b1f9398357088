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
    """Process-wide state of one mockd server.

    Attributes:
        control: the ``EngineControl`` the admin side drives (None until the runner sets it).
        started_at: epoch seconds when the server started (set by ``runner.serve``).
        ready: True once the startup configuration is loaded (``/ready`` follows it).
        ports: listening ports by role: ``data``, ``https``, ``admin``, ``control``.
        tls_listeners: the roles of :attr:`ports` that serve TLS (``https``, ``admin``).
        host: the interface the data plane and admin listen on.
        api_key: the admin API key (None with ``--no-auth``).
        data_dir: the data directory (full mode), as a string.
        persist: False with ``--no-persist`` (definitions kept in memory only).
        shutdown_hooks: coroutine functions (no arguments) the runner awaits, in order, when
            the server stops, after open streams end and before the listeners close (the
            recording proxy registers its stop here); one that raises is logged and skipped.
    """

    control: Any = None
    started_at: float = field(default_factory=time.time)
    ready: bool = False
    ports: dict[str, int] = field(default_factory=dict)
    tls_listeners: set[str] = field(default_factory=set)
    host: str = "127.0.0.1"
    api_key: str | None = None
    data_dir: str | None = None
    persist: bool = True
    shutdown_hooks: list[Any] = field(default_factory=list)


runtime = Runtime()
