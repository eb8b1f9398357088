"""Test-wide settings: Django points at a throw-away data directory."""
from __future__ import annotations

import os
import tempfile

os.environ.setdefault("MOCKD_DATA_DIR", tempfile.mkdtemp(prefix="mockd-tests-"))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mockd_project.settings")


def pytest_configure(config):
    """Load the Django settings so pytest-django sets Django up (its own hook runs last and
    only sets up Django when the settings are already configured)."""
    from django.conf import settings

    settings.DATABASES  # noqa: B018 - forces the lazy settings to load
