"""Permissive config models for the mock types whose handlers are not written yet.

``graphql``, ``grpc``, ``websocket``, ``mqtt`` and ``soap`` mocks are stored, listed, exported
and validated as objects, but every key inside them is kept as given until the type's handler
lands with its strict model (each protocol issue replaces its entry in
:data:`mocks.protocols.PROTOCOLS`). They serve nothing yet.

Source: SPEC "Mock" (the protocol blocks); behavior notes §10.
"""
from __future__ import annotations

from mocks.core.schema import Open


class PendingProtocolConfig(Open):
    """The block of a mock type that is not served yet: an object whose keys are kept as
    given (PERMISSIVE PLACEHOLDER: replaced by the protocol's strict model when its handler
    lands)."""
