"""Redaction helpers handed to the request log (issue 8 item 5)."""
from __future__ import annotations

import pytest

from mocks.core.redaction import REDACTED, SENSITIVE_HEADERS, redact_form, redact_header


@pytest.mark.parametrize("text, expected", [
    pytest.param("grant_type=password&username=alice&password=s3cret",
                 f"grant_type=password&username=alice&password={REDACTED}", id="password"),
    pytest.param("client_id=a&client_secret=b%26c&scope=openid",
                 f"client_id=a&client_secret={REDACTED}&scope=openid", id="client secret"),
    pytest.param("grant_type=authorization_code&code=xyz&code_verifier=v&redirect_uri=http%3A",
                 f"grant_type=authorization_code&code={REDACTED}&code_verifier={REDACTED}"
                 f"&redirect_uri=http%3A", id="code and verifier"),
    pytest.param("token=abc&token_type_hint=access_token",
                 f"token={REDACTED}&token_type_hint=access_token", id="introspection token"),
    pytest.param("grant_type=refresh_token&refresh_token=r", f"grant_type=refresh_token"
                 f"&refresh_token={REDACTED}", id="refresh token"),
    pytest.param("access_token=a&x=1", f"access_token={REDACTED}&x=1", id="query token"),
    pytest.param("passwordless=1&mycode=2", "passwordless=1&mycode=2", id="similar names kept"),
    pytest.param('{"password": "p"}', '{"password": "p"}', id="not a form"),
    pytest.param("", "", id="empty"),
])
def test_redact_form_hides_secret_fields_only(text, expected):
    assert redact_form(text) == expected


@pytest.mark.parametrize("name, value, expected", [
    ("Authorization", "Bearer eyJ.a.b", f"Bearer {REDACTED}"),
    ("authorization", "Basic d2ViOnNlY3JldA==", f"Basic {REDACTED}"),
    ("Authorization", "token-without-scheme", REDACTED),
    ("Content-Type", "application/json", "application/json"),
])
def test_redact_header(name, value, expected):
    assert redact_header(name, value) == expected


def test_sensitive_headers_are_lower_case():
    assert "authorization" in SENSITIVE_HEADERS
    assert all(name == name.lower() for name in SENSITIVE_HEADERS)


def test_request_log_entry_hides_credentials_but_keeps_the_rest():
    from mocks.engine.core import ServeEvent
    from mocks.engine.requestlog import RequestLog
    from tests.helpers import make_request

    log = RequestLog(capacity=10)
    request = make_request("POST", "/auth/token", query="code=abc&state=s1",
                           headers={"Authorization": "Basic c2VjcmV0",
                                    "Content-Type": "application/x-www-form-urlencoded"},
                           body="grant_type=password&username=ada&password=hunter2")
    log.observe(ServeEvent(request, 0.0, 1.0, 200, "idp", "/auth/token"))
    entry = next(log.newest_first()).entry()
    assert entry["headers"]["Authorization"] == ["Basic [REDACTED]"]
    assert entry["queryString"] == "code=[REDACTED]&state=s1"
    assert entry["body"] == "grant_type=password&username=ada&password=[REDACTED]"
