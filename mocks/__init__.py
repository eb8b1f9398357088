"""Mocks, workspaces, the config schema and the engine.

``mocks.engine`` is the Django-free data plane; ``mocks.config`` is the one config schema;
the admin-side modules (``api``, ``models``, ``services``) may import the engine, never the
other way round.
"""
