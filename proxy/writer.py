"""Recording writes off the request path: a bounded queue drained by one background thread.

The proxy relays an exchange, then hands what it saw to :meth:`RecordingWriter.submit` (a
function that builds the recording, and its kind, session and columns), or, when nothing else
is going on (:attr:`RecordingWriter.idle` and no other exchange in flight), writes it at once
with :meth:`RecordingWriter.write_now` so that a client reading the recordings right after
its answer finds them; under load the thread takes
everything queued (at most :data:`BATCH` at a time), builds the recordings and stores them
in one transaction (:meth:`recordings.store.RecordingStore.add_many`). A full queue never
blocks the relay nor grows: the recording is dropped and counted (:attr:`dropped`, one
warning per burst). :meth:`close` writes what is queued and stops the thread.

Source: SPEC "Proxy" (records HTTP traffic), "Limits" (bounded queues); behavior notes §1.

Django-free.
"""
from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from typing import Any

log = logging.getLogger("mockd.proxy")

#: Recordings waiting to be written, at most.
QUEUE_SIZE = 10_000
#: Recordings written in one transaction, at most.
BATCH = 500

#: ``(kind, record, session_id, columns)``, or None for "nothing to keep".
Built = tuple[str, dict, "str | None", "dict | None"] | None

_STOP = object()


class RecordingWriter:
    """One background writer (see the module docstring).

    Args:
        store: returns the recording store (called in the writer thread per batch).
        on_written: called in the writer thread with the number of recordings kept.
        size: the queue bound (recordings).

    Attributes:
        dropped: recordings dropped because the queue was full (or the writer closed).
        written: recordings stored.
    """

    def __init__(self, store: Callable[[], Any], on_written: Callable[[int], None] | None = None,
                 size: int = QUEUE_SIZE):
        self._store = store
        self._on_written = on_written
        self._queue: queue.Queue[Any] = queue.Queue(maxsize=size)
        self._thread: threading.Thread | None = None
        self._closed = False
        self._warned = False
        self.dropped = 0
        self.written = 0

    def submit(self, build: Callable[[], Built]) -> bool:
        """Queue ``build`` (run later in the writer thread; it answers ``(kind, record,
        session_id, columns)`` or None). False when the recording was dropped (queue full,
        writer closed). Never blocks."""
        if self._closed:
            self.dropped += 1
            return False
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="mockd-proxy-recordings",
                                            daemon=True)
            self._thread.start()
        try:
            self._queue.put_nowait(build)
        except queue.Full:
            self.dropped += 1
            if not self._warned:
                self._warned = True
                log.warning("the proxy's recording queue is full (%d waiting): recordings are "
                            "dropped until it drains", self._queue.maxsize)
            return False
        return True

    @property
    def idle(self) -> bool:
        """True when nothing is queued or being written."""
        return self._queue.unfinished_tasks == 0

    def write_now(self, build: Callable[[], Built]) -> None:
        """Build and store one recording in the calling thread (never raises)."""
        self._write([build])

    def close(self, timeout: float = 10.0) -> None:
        """Write what is queued, then stop the thread (waits up to ``timeout`` s). Blocking:
        call it from a worker thread when on the event loop."""
        self._closed = True
        thread = self._thread
        if thread is None:
            return
        try:
            self._queue.put(_STOP, timeout=timeout)
        except queue.Full:
            log.warning("the proxy's recording queue did not drain in %.0f s", timeout)
            return
        thread.join(timeout)

    # ------------------------------------------------------------------ the thread
    def _run(self) -> None:
        stop = False
        while not stop:
            jobs = [self._queue.get()]
            while len(jobs) < BATCH:
                try:
                    jobs.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            count = len(jobs)
            if _STOP in jobs:
                stop = True
                jobs = [job for job in jobs if job is not _STOP]
            try:
                self._write(jobs)
            finally:
                for _ in range(count):
                    self._queue.task_done()
            if self._queue.qsize() == 0:
                self._warned = False

    def _write(self, jobs: list[Callable[[], Built]]) -> None:
        by_kind: dict[str, list[tuple[dict, Any, Any]]] = {}
        for job in jobs:
            try:
                built = job()
            except Exception:  # noqa: BLE001 - one bad exchange never stops the writer
                log.exception("cannot build a proxy recording")
                continue
            if built is not None:
                kind, record, session_id, columns = built
                by_kind.setdefault(kind, []).append((record, session_id, columns))
        for kind, items in by_kind.items():
            try:
                stored = self._store().add_many(kind, items)
            except Exception:  # noqa: BLE001 - a failed write never breaks the relay
                log.exception("cannot store %d proxy recording(s)", len(items))
                continue
            self.written += stored
            if self._on_written is not None and stored:
                self._on_written(stored)
