"""``mockd oauth add``: the mock document it sends (behavior notes §8 defaults)."""
from __future__ import annotations

from click.testing import CliRunner

from mockd_project.cli import main
from oidc.cli import build_oauth_mock
from oidc.config import validate_oauth_config


def test_build_oauth_mock_with_the_notes_defaults_is_a_valid_mock():
    mock = build_oauth_mock(name=None, issuer="http://localhost:4280", client_id="test-client",
                            client_secret="test-secret",
                            redirect_uris=["http://localhost:3000/callback"],
                            username="testuser", password="password")
    assert mock["type"] == "oauth" and "name" not in mock
    config = validate_oauth_config(mock["oauth"], "mocks[0]")
    client, user = config.clients[0], config.users[0]
    assert client.grant_types == ["authorization_code", "client_credentials", "refresh_token",
                                  "password"]
    assert client.redirect_uris == ["http://localhost:3000/callback"]
    assert user.claims == {"sub": "testuser", "email": "testuser@example.com",
                           "name": "testuser"}


def test_oauth_add_reports_an_unreachable_admin_api(tmp_path):
    result = CliRunner().invoke(main, ["oauth", "add", "--admin-url", "http://127.0.0.1:9"],
                                env={"MOCKD_API_KEY": "k", "HOME": str(tmp_path)})
    assert result.exit_code == 1
    assert "cannot reach the mockd admin API" in result.output
