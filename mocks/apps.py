from django.apps import AppConfig


class MocksConfig(AppConfig):
    """Mocks, workspaces, the config schema and the engine."""

    name = "mocks"
    default_auto_field = "django.db.models.BigAutoField"
