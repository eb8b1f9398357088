"""Shared fixtures of the integration tests: clients for a module's ``server`` fixture.

A test module defines ``server`` (usually module-scoped, from ``tests.helpers.start_server``);
``admin`` and ``data`` give a fresh httpx client on its admin and mock-server ports per test.
"""
from __future__ import annotations

import pytest


@pytest.fixture
def admin(server):
    """An httpx client on the admin port of the module's server."""
    with server.admin_client() as client:
        yield client


@pytest.fixture
def data(server):
    """An httpx client on the mock-server (data-plane) port of the module's server."""
    with server.client() as client:
        yield client
