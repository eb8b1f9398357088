"""Dashboard preferences: one JSON object kept in SQLite (behavior notes §1 "Other routes":
``/preferences``).

Owns: the ``dashboard`` row of :class:`mocks.models.Preference`. The object's keys are the
dashboard's business (theme, column widths, the last workspace, ...); mockd only checks that
it is a JSON object of at most :data:`MAX_PREFERENCES_BYTES` and hands it back as stored.

Who may call it: the admin API (:mod:`mocks.api_extras`). Writes run in one transaction;
nothing here touches the engine.
"""
from __future__ import annotations

from typing import Any

import orjson
from django.db import transaction
from django.utils import timezone as django_timezone

from mocks.core.errors import ConfigIssue
from mocks.models import Preference
from mocks.control.errors import AdminError, ConfigValidationError

#: Largest preferences object, in bytes of compact JSON (64 KiB).
MAX_PREFERENCES_BYTES = 64 * 1024
#: The key of the dashboard's preferences row.
DASHBOARD = "dashboard"


def get_preferences() -> dict[str, Any]:
    """The stored preferences object; ``{}`` before the first ``PUT``."""
    row = Preference.objects.filter(key=DASHBOARD).first()
    return dict(row.value) if row is not None and isinstance(row.value, dict) else {}


def put_preferences(value: Any) -> dict[str, Any]:
    """Replace the preferences with ``value`` and return it.

    Raises :class:`AdminError`: 400 ``validation_error`` when ``value`` is not a JSON
    object, 413 ``body_too_large`` when its compact JSON exceeds
    :data:`MAX_PREFERENCES_BYTES`.
    """
    if not isinstance(value, dict):
        raise ConfigValidationError([ConfigIssue(
            "body", f"preferences must be a JSON object, got {_kind(value)}")])
    size = len(orjson.dumps(value))
    if size > MAX_PREFERENCES_BYTES:
        raise AdminError(413, "body_too_large",
                         f"Preferences are {size} bytes of JSON; at most "
                         f"{MAX_PREFERENCES_BYTES} bytes (64 KiB) are kept: store less")
    with transaction.atomic():
        Preference.objects.update_or_create(
            key=DASHBOARD, defaults={"value": value, "updated_at": django_timezone.now()})
    return value


def _kind(value: Any) -> str:
    return {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number")
