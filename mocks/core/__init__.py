"""The shared kernel of the data plane: what every pipeline stage and protocol handler uses.

Owns: the request object (:mod:`.request`), config errors with their key paths
(:mod:`.errors`), the template language and fake data (:mod:`.templating`, :mod:`.fakedata`),
path templates and their specificity scores (:mod:`.paths`, :mod:`.scores`), compiled static
and templated responses with the ASGI send helpers (:mod:`.responses`), and header redaction
for logs (:mod:`.redaction`).

Who may call it: everything else. It imports nothing else of the project (an import-linter
contract in ``pyproject.toml`` checks it), which is what keeps the engine, the protocol
handlers and the table runtime free of import cycles. Django-free.

Concurrency: stateless apart from :class:`~.templating.TemplateState`, which is owned by the
engine's event loop.
"""
