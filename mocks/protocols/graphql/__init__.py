"""GraphQL mocks: a schema (SDL) served over HTTP and WebSocket at one path of the mock port.

Owns: the ``graphql`` config model (:mod:`.config`), schema building (:mod:`.schema`), fake
values by type and field name (:mod:`.fake`), the executor over graphql-core with cached
documents and configured resolvers (:mod:`.executor`), the lean executor of plain queries
(:mod:`.fastpath`), the cost limits checked before a request runs and the time budget while
it runs (:mod:`.limits`), the HTTP route action (:mod:`.http`),
subscriptions over ``graphql-transport-ws`` / ``graphql-ws`` (:mod:`.subscriptions`) and the
handler registered in :data:`mocks.protocols.PROTOCOLS` (:mod:`.handler`).

Who may call it: the registry (handler and config model), the engine through the compiled
routes. Concurrency: single owner, the engine's event loop; long query texts are parsed and
validated on a small pool of worker threads (pure work on the schema and the text only).
Django-free.
"""
