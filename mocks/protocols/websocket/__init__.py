"""WebSocket mocks: scripted conversations on the mock port (the ``websocket`` mock type).

Modules: :mod:`.config` (the pydantic model), :mod:`.compiled` (matchers, responses and
scenario steps compiled with the snapshot), :mod:`.session` (serving one connection),
:mod:`.hub` (open connections of an engine, for the admin API), :mod:`.handler` (the
protocol handler registered in :data:`mocks.protocols.PROTOCOLS`).
"""
