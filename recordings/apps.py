from django.apps import AppConfig


class RecordingsConfig(AppConfig):
    """WebSocket and SSE stream recordings."""

    name = "recordings"
    default_auto_field = "django.db.models.BigAutoField"
