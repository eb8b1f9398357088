from django.apps import AppConfig


class ChaosConfig(AppConfig):
    """Chaos injection: faults and profiles."""

    name = "chaos"
    default_auto_field = "django.db.models.BigAutoField"
