"""gRPC mocks: any ``.proto`` compiled at run time, served on a port of its own.

Owns: the ``grpc`` config model (:mod:`.config`), run-time proto compilation into private
descriptor pools (:mod:`.protos`), JSON <-> message conversion and fake messages
(:mod:`.messages`), compiled method answers (:mod:`.compiled`), table-bound methods
(:mod:`.stateful`), the ``grpc.aio`` listener of a port and the engine-wide call state
(:mod:`.server`), server reflection v1 and v1alpha (:mod:`.reflection`), the handler
(:mod:`.handler`) and the admin views (:mod:`.control`).

Who may call it: the protocol registry (:mod:`mocks.protocols`), the engine's listener
supervisor (start/stop/adopt of :class:`~.server.GrpcPortService`), engine control and the
admin API (views of :mod:`.control`), the command line and the ``.proto`` importer
(:func:`~.protos.inline_protos`).

Concurrency: single owner, the engine's event loop: servers start and stop there and every
call runs there as a coroutine. Compiling (protoc) may run in a worker thread; it touches no
runtime state.
"""
