"""The Django admin edit path goes through the service layer: the engine sees edits at once
(issue 3 "Django admin"; tested with Django's test client)."""
from __future__ import annotations

import json

import pytest
from django.test import Client

from mocks.control import mock_changes, workspaces
from mocks.engine.core import Engine
from mocks.models import Mock
from tests.helpers import http_mock, make_request

pytestmark = pytest.mark.django_db(transaction=True)



@pytest.fixture
def browser(django_user_model, settings):
    # a fast hasher: these tests are about the edit path, not password storage
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    django_user_model.objects.create_superuser("root", "", "pw")
    client = Client()
    assert client.login(username="root", password="pw")
    return client


def served_body(engine: Engine, path: str) -> bytes | None:
    request = make_request("GET", path)
    match = engine.snapshot.index.find(request)
    if match is None:
        return None
    return match.candidate.action.render(request, match.path_params, engine.template_state)[2]


def form_data(**overrides):
    data = {"id": "", "workspace": "local", "type": "http", "name": "", "description": "",
            "enabled": "on", "config": json.dumps({"matcher": {"method": "GET", "path": "/dj"},
                                                    "response": {"body": "from admin"}})}
    data.update(overrides)
    return data


def test_adding_a_mock_in_the_django_admin_serves_it(engine, browser):
    response = browser.post("/admin/mocks/mock/add/", form_data(id="dj-1"))
    assert response.status_code == 302, response.content[:2000]
    assert Mock.objects.get(id="dj-1").path == "/dj"
    assert served_body(engine, "/dj") == b"from admin"


def test_editing_a_mock_in_the_django_admin_reaches_the_engine(engine, browser):
    mock_changes.create_mock(http_mock("edit-me", "GET", "/edit", body="before"))
    config = {"matcher": {"method": "GET", "path": "/edit"}, "response": {"body": "after"}}
    response = browser.post("/admin/mocks/mock/edit-me/change/",
                            form_data(config=json.dumps(config)))
    assert response.status_code == 302, response.content[:2000]
    assert served_body(engine, "/edit") == b"after"


def test_an_invalid_edit_shows_the_field_and_changes_nothing(engine, browser):
    mock_changes.create_mock(http_mock("stay", "GET", "/stay", body="same"))
    config = {"matcher": {"path": "no-slash"}}
    response = browser.post("/admin/mocks/mock/stay/change/", form_data(config=json.dumps(config)))
    assert response.status_code == 200
    assert b"matcher.path: path must start with" in response.content  # at the config field
    assert served_body(engine, "/stay") == b"same"


def test_deleting_a_mock_in_the_django_admin_stops_serving_it(engine, browser):
    mock_changes.create_mock(http_mock("gone", "GET", "/gone", body="x"))
    response = browser.post("/admin/mocks/mock/gone/delete/", {"post": "yes"})
    assert response.status_code == 302
    assert served_body(engine, "/gone") is None and not Mock.objects.filter(id="gone").exists()


def test_workspace_created_in_the_django_admin_gets_a_base_path(engine, browser):
    response = browser.post("/admin/mocks/workspace/add/", {"name": "Payments",
                                                            "description": "", "base_path": ""})
    assert response.status_code == 302, response.content[:2000]
    assert [item["basePath"] for item in workspaces.list_workspaces()] == ["", "/payments"]
