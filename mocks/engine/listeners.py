"""Starting, restarting and stopping the listener services of protocol handlers.

A handler whose mocks need a port of their own (a gRPC server, an MQTT broker, the recording
proxy) returns :class:`~mocks.protocols.ListenerService` objects from ``compile``; the snapshot
collects them by ``name``. After every snapshot swap the engine hands that collection to its
:class:`ListenerSupervisor`, which keeps a running listener whose definition did not change,
stops the ones that are gone or changed, and starts the new ones.

Source: ARCHITECTURE "Protocol handlers" ("the runner starts services in the engine's event
loop, restarts one only when its compiled definition changes, and stops them on shutdown").

Under ``mockd start|engine --workers N`` only worker 0 (the admin's own engine, or the
parent ``mockd engine``) starts these listeners: each has a port of its own, which one
process must serve alone. The other workers set :attr:`ListenerSupervisor.own_ports` to
False and skip them quietly (docs/scale.md "Workers on one machine").

Concurrency: every method runs on the engine's event loop; reconciliations are serialised by
one lock so that two quick config changes cannot start the same port twice.
"""
from __future__ import annotations

import asyncio
import logging
from typing import Any, Mapping

from mocks.protocols import ListenerService

logger = logging.getLogger("mockd.engine")


class ListenerSupervisor:
    """The running listener services of one engine.

    Attributes:
        running: ``name -> service`` of the listeners serving now.
        failures: ``name -> reason`` of listeners that failed to start at the last attempt.
        own_ports: False in workers 1..N-1 of ``--workers N``: no listener starts here
            (worker 0 serves every port of its own); True otherwise.
    """

    def __init__(self) -> None:
        self.own_ports = True
        self.running: dict[str, ListenerService] = {}
        self.failures: dict[str, str] = {}
        self._lock: asyncio.Lock | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        #: The loop of the last reconciliation that ran to its end: the loop the listeners
        #: serve on (a config applied before the server runs compiles on a short-lived loop).
        self._serving_loop: asyncio.AbstractEventLoop | None = None

    def _serialised(self) -> asyncio.Lock:
        if self._lock is None:
            self._lock = asyncio.Lock()
        return self._lock

    async def reconcile(self, wanted: Mapping[str, ListenerService]) -> None:
        """Make the running listeners those of ``wanted`` (``name -> service``).

        A listener that fails to start (its port is taken, say) is logged and recorded in
        :attr:`failures`; the others still start. Never raises for a service's error. With
        :attr:`own_ports` False nothing starts (and anything running stops).
        """
        if not self.own_ports:
            wanted = {}
        async with self._serialised():
            for name, service in list(self.running.items()):
                replacement = wanted.get(name)
                if replacement is not None and replacement.definition == service.definition:
                    adopt = getattr(service, "adopt", None)
                    if adopt is not None and replacement is not service:
                        adopt(replacement)  # new answers, same listener: no restart
                    continue
                await self._stop(name, service)
            for name, service in wanted.items():
                if name in self.running:
                    continue
                try:
                    await service.start()
                except Exception as error:  # noqa: BLE001 - one failed listener, not the engine
                    self.failures[name] = str(error) or type(error).__name__
                    logger.error("listener %s failed to start: %s", name, self.failures[name])
                    continue
                self.failures.pop(name, None)
                self.running[name] = service
            for name in [name for name in self.failures if name not in wanted]:
                del self.failures[name]
            self._serving_loop = asyncio.get_running_loop()

    def schedule(self, wanted: Mapping[str, ListenerService]) -> None:
        """Reconcile soon on the running event loop (called right after a snapshot swap).

        Without a running loop (a config compiled before the server starts) nothing happens
        here: the runner calls :meth:`reconcile` once the loop runs.
        """
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        if not wanted and not self.running:
            return
        task = loop.create_task(self.reconcile(dict(wanted)))
        self._tasks.add(task)  # keep a reference until it finishes
        task.add_done_callback(self._tasks.discard)

    async def settled(self, timeout: float = 30.0) -> None:
        """Wait until every reconciliation scheduled so far (:meth:`schedule`) has finished, at
        most ``timeout`` seconds: then the listeners of the live snapshot serve, or their
        start failed and is in :attr:`failures`. Never raises for a service's error. Waits
        only on the loop the listeners serve on: a config applied before the server runs (on
        a short-lived loop) leaves their start to the server's first reconciliation."""
        if asyncio.get_running_loop() is not self._serving_loop:
            return
        pending = [task for task in self._tasks if not task.done()]
        if pending:
            await asyncio.wait(pending, timeout=timeout)

    async def stop_all(self) -> None:
        """Stop every running listener (server shutdown)."""
        async with self._serialised():
            for name, service in list(self.running.items()):
                await self._stop(name, service)

    async def _stop(self, name: str, service: ListenerService) -> None:
        try:
            await service.stop()
        except Exception:  # noqa: BLE001 - a listener that fails to stop is still dropped
            logger.exception("listener %s failed to stop cleanly", name)
        self.running.pop(name, None)

    def health(self) -> dict[str, dict[str, Any]]:
        """``{name: service.health()}`` for running listeners and ``{"status": "failed",
        "error": reason}`` for those that failed to start."""
        report: dict[str, dict[str, Any]] = {}
        for name, service in self.running.items():
            try:
                report[name] = service.health()
            except Exception as error:  # noqa: BLE001 - a health probe never breaks status
                report[name] = {"status": "failed", "error": str(error)}
        for name, reason in self.failures.items():
            report[name] = {"status": "failed", "error": reason}
        return report
