"""Test-wide settings: Django points at a throw-away data directory.

The suite runs in parallel (pytest-xdist, ``-n`` in pyproject's ``addopts``): every worker is
its own process and imports this file itself, so each worker gets its own data directory and
its own in-memory test database. Shared resources are made safe where they are handed out:
ports in :func:`tests.helpers.free_port`, the npm cache in :mod:`tests.thirdparty`.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

os.environ.setdefault("MOCKD_DATA_DIR", tempfile.mkdtemp(prefix="mockd-tests-"))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mockd_project.settings")

#: Protocol areas, each a marker registered in pyproject.toml: a test file whose name starts
#: with ``test_<prefix>``, or that sits in a folder named after the area, gets the marker, so
#: ``pytest -m grpc`` runs one area.
AREA_PREFIXES = {
    "http": ("http", "cors", "request_validation", "matching", "conditions", "queryparams",
             "responses", "response_sequence", "data_plane"),
    "grpc": ("grpc",),
    "graphql": ("graphql",),
    "soap": ("soap",),
    "websocket": ("websocket",),
    "sse": ("sse",),
    "mqtt": ("mqtt",),
    "oidc": ("oidc",),
    "tables": ("tables", "custom_operations", "member_bindings", "stripe"),
    "chaos": ("chaos",),
    "admin": ("admin",),
    "importers": ("import", "export", "wiremock", "har"),
    "cli": ("cli",),
    "tls": ("tls",),
}


def pytest_configure(config):
    """Load the Django settings so pytest-django sets Django up (its own hook runs last and
    only sets up Django when the settings are already configured)."""
    from django.conf import settings

    for database in settings.DATABASES.values():
        # Our engine is django-prometheus' sqlite wrapper, which pytest-django does not know
        # for sqlite: under xdist it would name a test database file "test_<path>_gw0" in a
        # folder that does not exist. Name Django's own default (a per-process in-memory
        # database) explicitly, which pytest-django leaves alone.
        test = database.setdefault("TEST", {})
        if not test.get("NAME"):  # Django may have filled in None already
            test["NAME"] = ":memory:"


def pytest_collection_modifyitems(config, items):
    """Mark each test with its protocol area (``AREA_PREFIXES``) from its file or folder
    name."""
    for item in items:
        path = Path(str(item.path))
        name = path.name.removeprefix("test_")
        folders = set(path.parent.relative_to(config.rootpath).parts) \
            if path.is_relative_to(config.rootpath) else set()
        for area, prefixes in AREA_PREFIXES.items():
            if name.startswith(prefixes) or area in folders:
                item.add_marker(getattr(pytest.mark, area))
