from django.apps import AppConfig


class TablesConfig(AppConfig):
    """Stateful tables, bindings and custom operations."""

    name = "tables"
    default_auto_field = "django.db.models.BigAutoField"
