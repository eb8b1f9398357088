"""Mock templates, and the dashboard routes in-process (behavior notes §1 "Other routes":
``/templates``, ``/handlers``, ``/formats``, ``/folders``, ``/preferences``)."""
from __future__ import annotations

import json

import pytest
from django.test import Client

from mockd_project.runtime import runtime
from mocks.config import Mock
from mocks.engine.control import EngineControl
from mocks.engine.core import Engine
from mocks.loader import validate_config
from mocks.control.mock_templates import TEMPLATES, list_templates
from mocks.portability.formats import format_catalogue
from mocks.protocols import MOCK_TYPES, PROTOCOLS


@pytest.mark.parametrize("template", TEMPLATES, ids=[t["id"] for t in TEMPLATES])
def test_every_template_mock_validates_with_the_config_schema(template):
    assert set(template) <= {"id", "type", "name", "description", "mock", "config"}
    assert template["name"] and template["description"]
    mock = Mock.model_validate(template["mock"])
    assert mock.type == template["type"] and "id" not in template["mock"]


@pytest.mark.parametrize("template", TEMPLATES, ids=[t["id"] for t in TEMPLATES])
def test_every_template_compiles_and_serves(template):
    document = template.get("config") or {"version": "1.0", "mocks": [template["mock"]]}
    Engine().load(validate_config(document))  # raises ConfigError naming the key if not
    if "config" in template:
        assert template["config"]["mocks"][0] == template["mock"]


def test_template_ids_are_unique_and_types_known():
    ids = [template["id"] for template in TEMPLATES]
    assert len(ids) == len(set(ids))
    assert {template["type"] for template in TEMPLATES} <= set(MOCK_TYPES)


def _http_kinds() -> set[str]:
    kinds = set()
    for template in list_templates("http"):
        http = template["mock"]["http"]
        response = http.get("response") or {}
        headers = response.get("headers") or {}
        if "json" in headers.get("Content-Type", "") and "{{" not in json.dumps(response):
            kinds.add("json")
        if "{{" in json.dumps(response):
            kinds.add("templated")
        if "sse" in http:
            kinds.add("sse")
        bound = [mock for mock in (template.get("config") or {}).get("mocks", [])
                 if mock["http"].get("statefulBinding")]
        actions = {mock["http"]["statefulBinding"]["action"] for mock in bound}
        if {"list", "create", "get", "update", "delete"} <= actions and template["config"].get(
                "tables"):
            kinds.add("crud")
    return kinds


def test_http_templates_cover_json_templated_sse_and_crud():
    assert {"json", "templated", "sse", "crud"} <= _http_kinds()


def test_templates_exist_only_for_served_types():
    served = {entry.mock_type for entry in PROTOCOLS if entry.handler}
    assert {template["type"] for template in TEMPLATES} == served


# ---------------------------------------------------------------------------- routes


@pytest.fixture
def client(db, monkeypatch):
    monkeypatch.setattr(runtime, "control", EngineControl(Engine()))
    monkeypatch.setattr(runtime, "ready", True)
    return Client()


def test_templates_route_filters_by_type(client):
    everything = client.get("/templates").json()
    assert everything["count"] == len(TEMPLATES)
    oauth = client.get("/templates", {"type": "oauth"}).json()
    assert [template["type"] for template in oauth["templates"]] == ["oauth"]
    assert [template["id"] for template in client.get(
        "/templates", {"type": "mqtt"}).json()["templates"]] == ["mqtt-devices"]
    bad = client.get("/templates", {"type": "nope"})
    assert bad.status_code == 400 and bad.json()["error"] == "validation_error"
    assert client.get("/templates/http-sse").json()["id"] == "http-sse"
    assert client.get("/templates/none").json() == {"error": "not_found",
                                                    "message": "Template not found"}


def test_handlers_route_comes_from_the_registry(client):
    answer = client.get("/handlers").json()
    assert answer["count"] == len(PROTOCOLS)
    assert [row["type"] for row in answer["handlers"]] == list(MOCK_TYPES)
    by_type = {row["type"]: row for row in answer["handlers"]}
    assert by_type["http"]["served"] is True and by_type["http"]["configModel"] == "HttpMock"
    assert by_type["oauth"]["served"] is True and by_type["grpc"]["served"] is True
    assert by_type["mqtt"]["served"] is True
    assert by_type["http"]["templates"] == len(list_templates("http"))


def test_formats_route_answers_the_catalogue(client):
    assert client.get("/formats").json() == json.loads(json.dumps(format_catalogue()))


def test_folder_and_preference_routes(client):
    created = client.post("/folders", {"name": "Users"}, content_type="application/json")
    assert created.status_code == 201
    folder_id = created.json()["id"]
    assert client.get("/folders").json()["count"] == 1
    renamed = client.patch(f"/folders/{folder_id}", {"name": "People"},
                           content_type="application/json")
    assert renamed.json()["name"] == "People"
    assert client.delete(f"/folders/{folder_id}").status_code == 204
    assert client.get(f"/folders/{folder_id}").status_code == 404
    assert client.put("/preferences", {"theme": "dark"},
                      content_type="application/json").json() == {"theme": "dark"}
    assert client.get("/preferences").json() == {"theme": "dark"}
    broken = client.put("/preferences", "{", content_type="application/json")
    assert broken.status_code == 400 and broken.json()["error"] == "invalid_json"
