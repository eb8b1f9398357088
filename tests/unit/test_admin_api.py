"""The admin API in-process with Django's test client: readiness, the no-engine answer and
the one exception handler (behavior notes §1, §3; SPEC "Errors")."""
from __future__ import annotations

import pytest
from django.test import Client

from mockd_project.runtime import runtime
from mocks.engine.control import EngineControl
from mocks.engine.core import Engine

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def client(monkeypatch):
    monkeypatch.setattr(runtime, "control", EngineControl(Engine()))
    monkeypatch.setattr(runtime, "ready", True)
    return Client()


def test_ready_is_503_while_initializing(client, monkeypatch):
    monkeypatch.setattr(runtime, "ready", False)
    answer = client.get("/ready")
    assert answer.status_code == 503
    assert answer.json()["status"] == "initializing" and "timestamp" in answer.json()
    assert client.get("/health").json()["status"] == "ok"
    monkeypatch.setattr(runtime, "ready", True)
    assert client.get("/ready").json()["status"] == "ready"


def test_engine_routes_without_an_engine_are_503(client, monkeypatch):
    monkeypatch.setattr(runtime, "control", None)
    answer = client.get("/requests")
    assert answer.status_code == 503
    assert answer.json() == {"error": "no_engine", "message": "No engine connected"}


@pytest.mark.parametrize("method, path, body, status, code", [
    pytest.param("post", "/mocks", "{", 400, "invalid_json", id="invalid JSON"),
    pytest.param("get", "/mocks?limit=abc", None, 400, "validation_error", id="bad query"),
    pytest.param("get", "/mocks/none", None, 404, "not_found", id="missing mock"),
    pytest.param("post", "/workspaces", "{}", 400, "missing_field", id="no workspace name"),
    pytest.param("post", "/mocks/bulk", '{"not": "a list"}', 400, "validation_error",
                 id="bulk needs an array"),
])
def test_errors_have_the_spec_body(client, method, path, body, status, code):
    kwargs = {"data": body, "content_type": "application/json"} if body is not None else {}
    answer = getattr(client, method)(path, **kwargs)
    assert answer.status_code == status
    assert answer.json()["error"] == code and answer.json()["message"]
