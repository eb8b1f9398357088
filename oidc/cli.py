"""``mockd oauth add``: create an identity-provider mock through the admin API.

Defaults (behavior notes §8): issuer ``http://localhost:4280``, client ``test-client`` /
``test-secret`` with redirect ``http://localhost:3000/callback`` and all four grants, user
``testuser`` / ``password`` with claims ``{sub, email: "<user>@example.com", name}``.
``--admin-url`` and ``--api-key`` work as on every client command.

Source: SPEC "Command-line surface" (``<cli> oauth add`` flags); behavior notes §8 and §15.
"""
from __future__ import annotations

import json
from typing import Any

import click

from mockd_project.cli_client import client_options, make_client

from oidc.config import GRANT_TYPES

DEFAULT_ISSUER = "http://localhost:4280"
DEFAULT_CLIENT_ID = "test-client"
DEFAULT_CLIENT_SECRET = "test-secret"
DEFAULT_REDIRECT_URI = "http://localhost:3000/callback"
DEFAULT_USERNAME = "testuser"
DEFAULT_PASSWORD = "password"


def build_oauth_mock(*, name: str | None, issuer: str, client_id: str, client_secret: str,
                     redirect_uris: list[str], username: str, password: str) -> dict[str, Any]:
    """The ``type: oauth`` mock document ``oauth add`` sends to ``POST /mocks``."""
    mock: dict[str, Any] = {
        "type": "oauth",
        "oauth": {
            "issuer": issuer,
            "clients": [{"clientId": client_id, "clientSecret": client_secret,
                         "redirectUris": list(redirect_uris), "grantTypes": list(GRANT_TYPES)}],
            "users": [{"username": username, "password": password,
                       "claims": {"sub": username, "email": f"{username}@example.com",
                                  "name": username}}],
        },
    }
    if name:
        mock["name"] = name
    return mock


@click.group("oauth")
def oauth_group() -> None:
    """Identity-provider (OAuth 2.0 / OpenID Connect) mocks."""


@oauth_group.command("add")
@click.option("-n", "--name", default=None, help="Mock name.")
@click.option("--issuer", default=DEFAULT_ISSUER, show_default=True,
              help="Issuer URL; its path is where the endpoints are served.")
@click.option("--client-id", default=DEFAULT_CLIENT_ID, show_default=True, help="Client id.")
@click.option("--client-secret", default=DEFAULT_CLIENT_SECRET, show_default=True,
              help="Client secret ('' for a public client using PKCE).")
@click.option("--redirect-uri", "redirect_uris", multiple=True,
              default=(DEFAULT_REDIRECT_URI,), show_default=True,
              help="Registered redirect URI (repeatable).")
@click.option("--oauth-user", "username", default=DEFAULT_USERNAME, show_default=True,
              help="Username of the user who approves logins.")
@click.option("--oauth-password", "password", default=DEFAULT_PASSWORD, show_default=True,
              help="That user's password.")
@click.option("--json", "as_json", is_flag=True, help="Print the created mock as JSON.")
@client_options
def oauth_add(name: str | None, issuer: str, client_id: str, client_secret: str,
              redirect_uris: tuple[str, ...], username: str, password: str, as_json: bool,
              admin_url: str | None, api_key: str | None) -> None:
    """Add an identity-provider mock with one client and one user."""
    mock = build_oauth_mock(name=name, issuer=issuer, client_id=client_id,
                            client_secret=client_secret, redirect_uris=list(redirect_uris),
                            username=username, password=password)
    client = make_client(admin_url, api_key)
    try:
        answer = client.request("POST", "/mocks", json=mock)
    finally:
        client.close()
    saved = answer.get("mock", answer) if isinstance(answer, dict) else mock
    if as_json:
        click.echo(json.dumps(saved, indent=2))
        return
    oauth = saved.get("oauth") or mock["oauth"]
    issuer_url = str(oauth.get("issuer", issuer)).rstrip("/")
    click.echo(f"Created mock: {saved.get('id', '')}")
    click.echo("  Type: oauth")
    click.echo(f"  Issuer: {issuer_url}")
    click.echo(f"  Client: {client_id}")
    click.echo(f"  User: {username}")
    click.echo(f"  Discovery: {issuer_url}/.well-known/openid-configuration")
