"""The mock engine: the data-plane pipeline.

Owns: compiling validated config into an immutable :class:`~mocks.engine.snapshot.Snapshot`
through the protocol handlers (incrementally: a small edit is patched in), the method + path
index and near misses (:mod:`.matching`), the raw ASGI data-plane app (request -> match ->
respond -> serve event, :mod:`.app`), the WebSocket entry (:mod:`.websocket`), listener
services (:mod:`.listeners`), the request log and verification, CORS, and engine control
(:mod:`.control`). Request, templating and responses live in :mod:`mocks.core`; what each mock
type serves lives in :mod:`mocks.protocols`.

Who may call it: the runner (``mockd start`` / ``mockd engine``), the admin side through
``EngineControl``, and tests. It imports nothing from Django (ARCHITECTURE seam 2; enforced by
the import-linter contracts in ``pyproject.toml``).

Concurrency: single owner. Snapshots are immutable and swapped by one assignment on the engine's
event loop; runtime state (sequences, logs) is only touched from that loop.
"""
