from django.apps import AppConfig


class ProxyConfig(AppConfig):
    """The recording proxy and its CA."""

    name = "proxy"
    default_auto_field = "django.db.models.BigAutoField"
