"""Test-wide settings: Django points at a throw-away data directory."""
from __future__ import annotations

import os
import tempfile

os.environ.setdefault("MOCKD_DATA_DIR", tempfile.mkdtemp(prefix="mockd-tests-"))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mockd_project.settings")
