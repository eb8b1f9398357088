"""Streaming mocks: server-sent events (SSE, with the ``llm-chat`` and
``notification-stream`` templates), chunked transfer and NDJSON responses.

Owns:

* the config schema of ``http.sse`` and ``http.chunked`` (:mod:`.config`);
* compiling them once per snapshot into a :class:`~.sender.StreamAction`
  (:func:`.actions.compile_stream_action`; :mod:`.sse`, :mod:`.chunked`, :mod:`.events`,
  :mod:`.templates`, :mod:`.placeholders`);
* one async item source per stream, one framing class per format (:mod:`.framing`) and the
  one sender that stops on ``http.disconnect`` (:mod:`.sender`), shared by every format;
* the runtime state that outlives a snapshot swap (:class:`~.runtime.StreamRuntime`: open
  connections with ids, per-mock resumption buffers, statistics), owned by the engine as
  ``Engine.streams``;
* the engine-control face of that state (:mod:`.control`).

Who may call it: the snapshot compiler (``compile_stream_action``), the data-plane app
(``StreamAction.stream``), the engine (``StreamRuntime.snapshot_loaded``) and
``EngineControl``. The admin side reaches the runtime only through ``EngineControl``.
Django-free (ARCHITECTURE seam 2; ``tests/unit/test_plane_boundary.py``).

Concurrency: single owner, the engine's event loop. A stream runs in its request's task plus
one task watching for the disconnect; both end before the request's task returns.

This ``__init__`` imports nothing, so :mod:`mocks.config` can import :mod:`.config`
without an import cycle.
"""
