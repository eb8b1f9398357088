from django.apps import AppConfig


class OidcConfig(AppConfig):
    """The identity-provider (OAuth 2.0 / OpenID Connect) mock."""

    name = "oidc"
    default_auto_field = "django.db.models.BigAutoField"
