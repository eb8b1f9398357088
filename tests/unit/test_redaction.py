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


# ---------------------------------------------------------------------------- configurable

from mocks.core.redaction import (DEFAULT_FILTER_HEADERS, DEFAULT_REDACTION,  # noqa: E402
                                  NameSet, Redaction)


@pytest.mark.parametrize("name", DEFAULT_FILTER_HEADERS)
def test_every_default_header_is_hidden(name):
    shown = DEFAULT_REDACTION.header(name, "s3cret-value")
    assert "s3cret-value" not in shown and REDACTED in shown


@pytest.mark.parametrize("name, value, expected", [
    pytest.param("Cookie", "session=abc; theme=dark",
                 f"session={REDACTED}; theme={REDACTED}", id="cookie names kept"),
    pytest.param("cookie", "lonely", REDACTED, id="cookie without a name"),
    pytest.param("Set-Cookie", "id=abc; Path=/; HttpOnly", f"id={REDACTED}; Path=/; HttpOnly",
                 id="set-cookie attributes kept"),
    pytest.param("X-API-Key", "k-123", REDACTED, id="api key"),
    pytest.param("x-auth-token", "t-123", REDACTED, id="lower case name"),
    pytest.param("Proxy-Authorization", "Basic dTpw", f"Basic {REDACTED}", id="proxy scheme"),
    pytest.param("Authorization", "a=b; c Bearer", REDACTED, id="no scheme-like first word"),
    pytest.param("X-Request-Id", "r-1", "r-1", id="other header unchanged"),
])
def test_header_values_keep_only_what_helps_debugging(name, value, expected):
    assert DEFAULT_REDACTION.header(name, value) == expected


@pytest.mark.parametrize("name", ["key", "api_key", "apiKey", "APIKEY", "subscription-key",
                                  "token", "access_token", "id_token", "X-Amz-Security-Token",
                                  "secret", "client_secret", "password", "passwd", "pwd",
                                  "signature", "X-Amz-Signature", "sig", "X-Amz-Credential",
                                  "auth", "code", "code_verifier", "client_assertion"])
def test_default_query_parameters_named_like_credentials_are_hidden(name):
    assert DEFAULT_REDACTION.query(f"page=2&{name}=v4lue") == f"page=2&{name}={REDACTED}"


@pytest.mark.parametrize("name", ["page", "limit", "q", "sort", "state", "redirect_uri",
                                  "keyword", "signed", "scope"])
def test_default_query_parameters_of_other_names_are_kept(name):
    assert DEFAULT_REDACTION.query(f"{name}=v") == f"{name}=v"


def test_name_set_is_case_insensitive_with_star_wildcards_and_literal_brackets():
    names = NameSet(["X-Tenant", "*token*", "filter[key]"])
    assert "x-tenant" in names and "MY_TOKEN_2" in names and "FILTER[KEY]" in names
    assert "filterk" not in names and "tenant" not in names and None not in names
    assert not NameSet([])


def test_settings_replace_the_defaults_and_the_redact_value():
    redaction = Redaction.from_settings(filter_headers=["X-Tenant"], filter_query_params=[],
                                        redact_value="***")
    assert redaction.header("X-Tenant", "acme") == "***"
    assert redaction.header("Cookie", "a=1") == "a=1"
    assert redaction.query("api_key=k") == "api_key=k"
    assert redaction.form("password=p&x=1") == "password=***&x=1"  # body keys: the default


def _near_misses(query: str = "", headers: dict | None = None) -> list[dict]:
    from mocks.engine.matching import near_misses
    from tests.helpers import engine_with, http_mock, make_request

    engine = engine_with(http_mock("keyed", "GET", "/k", matcher={
        "headers": {"X-API-Key": "right"}, "queryParams": {"api_key": "good", "page": "1"}}))
    return near_misses(engine.snapshot.candidates,
                       make_request("GET", "/k", query, headers=headers))


def test_near_misses_hide_what_the_request_sent_for_listed_names():
    misses = _near_misses("api_key=wrong-secret&page=1", {"X-API-Key": "header-secret"})
    assert "wrong-secret" in misses[0]["reason"]
    rows, changed = DEFAULT_REDACTION.near_misses(misses, form_body=False)
    assert changed and "wrong-secret" in misses[0]["reason"]  # the input is left alone
    assert rows[0]["reason"].endswith(f'got "{REDACTED}"')
    text = repr(rows)
    assert "wrong-secret" not in text and "header-secret" not in text
    assert "right" in text and "good" in text  # what the mock expects stays visible


def test_near_misses_without_a_sent_secret_are_returned_unchanged():
    misses = _near_misses("page=2")  # api_key and X-API-Key missing: nothing to hide
    rows, changed = DEFAULT_REDACTION.near_misses(misses, form_body=False)
    assert not changed and rows[0] is misses[0]
    assert "(missing)" in rows[0]["reason"]


def test_form_body_near_misses_hide_secret_fields():
    miss = {"mockId": "m", "reason": "method matched, but body expected to contain \"x\"",
            "fields": [{"field": "bodyContains", "matched": False, "expected": "x",
                        "actual": "user=a&password=p1"}]}
    rows, changed = DEFAULT_REDACTION.near_misses([miss], form_body=True)
    assert changed and rows[0]["fields"][0]["actual"] == f"user=a&password={REDACTED}"
    assert DEFAULT_REDACTION.near_misses([miss], form_body=False) == ([miss], False)


def test_recording_block_is_validated_with_key_paths():
    from mocks.core.errors import ConfigError
    from mocks.loader import validate_config

    config = validate_config({"version": "1.0", "recording": {
        "filterHeaders": ["X-Tenant"], "redactValue": "***", "maxBytes": 10}})
    assert config.recording.filter_headers == ["X-Tenant"]
    for bad, key in (({"filterHeaders": [""]}, "filterHeaders"),
                     ({"filterQueryParams": "token"}, "filterQueryParams"),
                     ({"redactValue": ""}, "redactValue"), ({"nope": 1}, "nope")):
        with pytest.raises(ConfigError, match=f"recording.{key}"):
            validate_config({"version": "1.0", "recording": bad})


def test_request_log_uses_the_recording_block_and_keeps_it_across_loads():
    from mocks.engine.core import ServeEvent
    from mocks.engine.requestlog import RequestLog
    from mocks.loader import validate_config
    from tests.helpers import make_request

    log = RequestLog(capacity=5)
    log.observe(ServeEvent(make_request("GET", "/a", "session=s1&api_key=k1",
                                        headers={"X-Tenant": "acme", "Cookie": "c=1"}),
                           0.0, 1.0, 200, "m", "/a"))
    log.use_config(validate_config({"version": "1.0", "recording": {
        "filterHeaders": ["x-tenant"], "filterQueryParams": ["session"], "redactValue": "#"}}))
    log.use_config(validate_config({"version": "1.0"}))  # the admin side's rebuilt config
    entry = next(log.newest_first()).entry()
    assert entry["headers"]["X-Tenant"] == ["#"] and entry["headers"]["Cookie"] == ["c=1"]
    assert entry["queryString"] == "session=#&api_key=k1"
