"""Per-mock request validation (``http.validation``) through a real ``mockd engine``
subprocess, driven with httpx (behavior notes §7)."""
from __future__ import annotations

import pytest

from tests.helpers import http_mock, make_config, run_mockd, start_engine, write_config

pytestmark = pytest.mark.integration


def build_config() -> dict:
    return make_config(
        http_mock("create-user", "POST", "/users/{team}", status=201, body={"created": True},
                  validation={
                      "fields": {"email": {"type": "string", "format": "email",
                                           "required": True},
                                 "age": {"type": "integer", "min": 18}},
                      "pathParams": {"team": {"pattern": "^[a-z]+$"}},
                      "queryParams": {"dryRun": {"type": "boolean"}},
                      "headers": {"X-Tenant": {"required": True}}}),
        http_mock("warned", "POST", "/warned", body={"ok": True},
                  validation={"mode": "warn", "required": ["name"]}),
        http_mock("permissive", "POST", "/permissive", body={"ok": True},
                  validation={"mode": "permissive", "required": ["name"], "failStatus": 422,
                              "fields": {"age": {"type": "integer"}}}),
        http_mock("plain", "POST", "/plain", body={"ok": True}))


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    with start_engine(tmp_path_factory.mktemp("validation"), build_config()) as process:
        yield process


@pytest.fixture
def client(engine):
    with engine.client() as http:
        yield http


def test_a_valid_request_gets_the_mock_answer(client):
    answer = client.post("/users/blue", params={"dryRun": "true"},
                         headers={"X-Tenant": "t1"}, json={"email": "a@b.io", "age": 30})
    assert answer.status_code == 201 and answer.json() == {"created": True}
    assert "x-mockd-validation-warnings" not in answer.headers


def test_a_bad_request_gets_problem_json_naming_every_location(client):
    answer = client.post("/users/Blue9", params={"dryRun": "perhaps"},
                         json={"email": "nope", "age": 12})
    assert answer.status_code == 400
    assert answer.headers["content-type"] == "application/problem+json"
    body = answer.json()
    assert (body["type"], body["title"], body["status"], body["detail"]) == (
        "validation_error", "Request Validation Failed", 400, "5 validation errors")
    assert [(error["field"], error["location"], error["code"]) for error in body["errors"]] \
        == [("email", "body", "format"), ("age", "body", "min"), ("team", "path", "pattern"),
            ("dryRun", "query", "type"), ("x-tenant", "header", "required")]
    assert body["errors"][1]["received"] == 12 and body["errors"][1]["expected"] == "18"


def test_one_failure_puts_its_message_in_detail(client):
    answer = client.post("/users/blue", headers={"X-Tenant": "t"}, content=b"{broken")
    assert answer.status_code == 400
    assert answer.json()["detail"] == "request body is not valid JSON"
    assert answer.json()["errors"][0]["code"] == "invalid_json"


def test_warn_mode_answers_with_a_warnings_header(client):
    answer = client.post("/warned", json={})
    assert answer.status_code == 200 and answer.json() == {"ok": True}
    assert answer.headers["x-mockd-validation-warnings"] == "name is required"
    clean = client.post("/warned", json={"name": "x"})
    assert "x-mockd-validation-warnings" not in clean.headers


def test_permissive_mode_and_fail_status(client):
    answer = client.post("/permissive", json={"name": "x", "age": "old"})
    assert answer.status_code == 200
    assert answer.headers["x-mockd-validation-warnings"] == "age must be of type integer"
    rejected = client.post("/permissive", json={"age": 3})
    assert rejected.status_code == 422 and rejected.json()["status"] == 422
    assert rejected.json()["errors"][0]["code"] == "required"


def test_a_mock_without_validation_is_unchanged(client):
    answer = client.post("/plain", content=b"{not json")
    assert answer.status_code == 200 and answer.json() == {"ok": True}


def test_a_bad_rule_fails_the_engine_start_with_the_key(tmp_path):
    config = make_config(http_mock("v", "POST", "/v",
                                   validation={"fields": {"email": {"pattern": "(["}}}))
    path = write_config(tmp_path / "bad.yaml", config)
    result = run_mockd(["engine", "-c", str(path), "--port", "0"], tmp_path)
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert "mocks[0].http.validation.fields.email.pattern" in output
