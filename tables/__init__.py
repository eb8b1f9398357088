"""Stateful tables, extend bindings and custom operations.

Owns: the in-memory table store (:mod:`tables.store`: :class:`~tables.store.TableStore`,
:class:`~tables.store.OperationRequest`, :class:`~tables.store.OperationResult`,
:meth:`~tables.store.TableStore.execute`), list queries (:mod:`tables.query`), response
transforms (:mod:`tables.transforms`), validation (:mod:`tables.validation`), form bodies
(:mod:`tables.forms`), ids and timestamps (:mod:`tables.ids`), errors with code, status and
hint (:mod:`tables.errors`), the config schema of tables and bindings (:mod:`tables.config`),
the HTTP adapter (:mod:`tables.binding`), the engine-control face (:mod:`tables.control`),
custom operations (:mod:`tables.operations`, their schema :mod:`tables.operations_config`
and their expression language :mod:`tables.expressions`), the Redis state store that
replicas share (:mod:`tables.redis_store`) and how a server chooses it
(:mod:`tables.state_options`).
Those runtime modules import nothing from Django (ARCHITECTURE seam 2; checked by
``tests/unit/test_plane_boundary.py``). The Django side is ``models`` (persisted
definitions), ``services`` and ``api`` (admin routes) and ``cli``, ``operations_cli`` (client
commands; the offline checks of ``stateful custom validate`` are ``operations_check``,
loaded by that command only).

Who may call it: the engine (it compiles table definitions and bound mocks into a snapshot and
holds the one :class:`~tables.store.TableStore`), every protocol adapter through
``TableStore.execute``, and the admin side through ``EngineControl``.

Concurrency: single owner, the engine's event loop; nothing in the in-memory store awaits,
so each operation is atomic with respect to every other request. On Redis each write is one
Lua script, checked against what it read (see :mod:`tables.redis_store`).
"""
