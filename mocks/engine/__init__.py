"""The mock engine: everything the data plane needs to answer a request.

Owns: compiling validated config into an immutable :class:`~mocks.engine.snapshot.Snapshot`
(matchers, templates, the method + path index), matching a :class:`MockRequest` against it,
rendering responses, and the raw ASGI data-plane app.

Who may call it: the runner (``mockd start`` / ``mockd engine``), the admin side through
``EngineControl``, and tests. It imports nothing from Django (ARCHITECTURE seam 2; enforced by
``tests/unit/test_plane_boundary.py``).

Concurrency: single owner. Snapshots are immutable and swapped by one assignment on the engine's
event loop; runtime state (sequences, logs) is only touched from that loop.
"""
