"""Protocol handlers plug into the engine through this registry (STYLE §5).

Each non-plain-HTTP mock type names a *compiler* by import string. The compiler turns one
validated mock into the routes it serves on the data-plane port (HTTP-borne protocols: the
identity provider, GraphQL, SOAP) and, for protocols with listeners of their own (gRPC, MQTT),
into a service the runner starts. Import strings are resolved once, when a snapshot is
compiled, never per request; a mock type without a compiler is kept (listed, exported) but
serves nothing yet.

A compiler is ``compile(mock, key_path, context) -> list[ProtocolRoute]`` and raises
:class:`~mocks.core.errors.ConfigError` naming the key path for bad config.

Who may call it: :func:`mocks.engine.snapshot.compile_snapshot`. Django-free.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, Callable

#: mock ``type`` -> ``"module:function"`` of its compiler.
PROTOCOL_COMPILERS: dict[str, str] = {
    "oauth": "oidc.engine:compile_oauth_mock",
}


@dataclass(frozen=True, slots=True)
class ProtocolRoute:
    """One exact data-plane path served by a protocol handler.

    Attributes:
        path: the exact request path (``/oauth/token``).
        mock_id: the mock that owns the route (request log, verification).
        action: an object with ``async respond(request, path_params, template_state, send)
            -> status`` — the same interface as a static response.
        methods: the methods it answers (empty = all).
        prefix: when True the route answers every path *below* ``path`` that no HTTP mock
            matched (e.g. the identity provider's 404 for unknown endpoints under its issuer
            path); such routes never shadow a mock.
    """

    path: str
    mock_id: str
    action: Any
    methods: frozenset[str] = frozenset()
    prefix: bool = False


_resolved: dict[str, Callable[..., list[ProtocolRoute]] | None] = {}


def compiler_for(mock_type: str) -> Callable[..., list[ProtocolRoute]] | None:
    """The compiler of ``mock_type`` (import resolved once and cached), or None."""
    if mock_type not in _resolved:
        target = PROTOCOL_COMPILERS.get(mock_type)
        if target is None:
            _resolved[mock_type] = None
        else:
            module_name, _, attribute = target.partition(":")
            try:
                _resolved[mock_type] = getattr(importlib.import_module(module_name), attribute)
            except (ImportError, AttributeError):
                _resolved[mock_type] = None
    return _resolved[mock_type]
