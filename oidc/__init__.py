"""The identity-provider (OAuth 2.0 / OpenID Connect) mock."""
