"""mockd as a library: mock servers inside a Python process and a pytest plugin.

``from mockd import MockServer`` runs the mockd engine (the data plane: every protocol,
tables, chaos) in a background thread on a free loopback port, without Django; the pytest
plugin (``mockd.pytest_plugin``) gives tests a fresh or reset server per test.

Importing this package is cheap: the engine's modules load when a server starts.
See ``docs/python-api.md``.
"""
from __future__ import annotations

from mockd.builders import free_port, graphql, grpc, http, mqtt, oauth, soap, sse, websocket
from mockd.errors import (MockConfigError, MockdError, NearMiss, ServerNotRunning,
                          ServerStartError, TableOperationError, VerificationError)
from mockd.server import LoggedRequest, MockServer, Table

__all__ = ["LoggedRequest", "MockConfigError", "MockServer", "MockdError", "NearMiss",
           "ServerNotRunning", "ServerStartError", "Table", "TableOperationError",
           "VerificationError", "free_port", "graphql", "grpc", "http", "mqtt", "oauth", "soap", "sse",
           "websocket"]
