"""``GET /mocks`` read as plain rows (behavior notes §1 "Mocks"): the same bytes as the
model-based listing it replaced, for mocks of every type in several workspaces and folders,
with every filter and page, and faster than it on 1,000 mocks."""
from __future__ import annotations

import statistics
import time
from datetime import datetime, timedelta, timezone
from typing import Any

import orjson
import pytest
from django.test import Client

from mockd_project.api import OrjsonRenderer
from mockd_project.runtime import runtime
from mocks.config import MOCK_TYPES
from mocks.control import mock_changes
from mocks.control.documents import mock_document
from mocks.control.mock_changes import MockFilter
from mocks.engine.control import EngineControl
from mocks.engine.core import Engine
from mocks.models import Mock, Workspace

pytestmark = pytest.mark.django_db(transaction=True)

BASE = datetime(2026, 11, 27, 3, 4, 5, tzinfo=timezone.utc)

#: Protocol configs with the values JSON round trips get wrong when done carelessly.
CONFIGS: dict[str, list[dict[str, Any]]] = {
    "http": [{"matcher": {"method": "GET", "path": "/users/{id}"},
              "response": {"statusCode": 200, "body": {"name": "Zoë ✓ \u2028", "n": 1e-7,
                                                       "big": 2 ** 63 - 1, "neg": -0.0,
                                                       "huge": 1e300, "pi": 3.141592653589793,
                                                       "nested": [[], {}, None, True, 0.1]}}},
             {"matcher": {"pathPattern": "^/orders/[0-9]+$"},
              "responses": [{"statusCode": 201}, {"statusCode": 503, "delayMs": 250}],
              "responseMode": "random"},
             {"matcher": {"path": "/events"}, "sse": {"events": [{"data": "a\nb"}]}}],
    "graphql": [{"path": "/graphql", "schema": "type Query { a: Int }",
                 "resolvers": {"Query.a": {"response": 1}}}],
    "grpc": [{"port": 50051, "protoFile": "users.proto",
              "services": {"demo.Users": {"methods": {"Get": {"response": {"id": "1"}}}}}}],
    "mqtt": [{"port": 1883, "topics": [{"topic": "sensors/+/temp", "qos": 1}]}],
    "soap": [{"path": "/soap", "operations": {"GetUser": {"response": "<u/>"}}}],
    "websocket": [{"path": "/ws", "echoMode": True}],
    "oauth": [{"issuer": "http://127.0.0.1:4280/idp", "clients": [{"clientId": "c"}]}],
}


def _stored_mocks() -> list[Mock]:
    """Mocks of every type: names, descriptions, folders, sort keys and timestamps set and
    unset in turn, two workspaces, positions not in creation order."""
    now = BASE
    Workspace.objects.get_or_create(id="local", defaults={"name": "Local", "created_at": now,
                                                          "updated_at": now})
    Workspace.objects.create(id="ws_team", name="Team", created_at=now, updated_at=now)
    rows = []
    number = 0
    for mock_type in MOCK_TYPES:
        for config in CONFIGS.get(mock_type, [{"path": f"/{mock_type}"}]):
            for variant in range(4):
                number += 1
                created = BASE + timedelta(seconds=number, microseconds=(
                    0, 999_999, 123_456, 1_000)[variant])
                rows.append(Mock(
                    id=f"{mock_type}-{number}", type=mock_type,
                    name=("", f"{mock_type} {number}", "Überweisung users", "x")[variant],
                    description=("", "lists users", "", "ÄB \"quoted\"")[variant],
                    enabled=variant != 2,
                    workspace_id="ws_team" if number % 3 == 0 else "local",
                    path=str(config.get("path") or config.get("matcher", {}).get("path", "")),
                    parent_id=("", "fld_a", "", "fld_b")[variant],
                    meta_sort_key=(None, 1.5, -3.0, 0.0)[variant],
                    position=(number * 7) % 53, config=config,
                    created_at=created, updated_at=created + timedelta(minutes=variant)))
    return Mock.objects.bulk_create(rows)


def _model_listing(filters: MockFilter) -> bytes:
    """The answer as the listing built it from model instances before it read plain rows
    (the filters, unchanged, are the listing's own)."""
    rows = mock_changes.filtered_mocks(filters)
    total = rows.count()
    end = None if filters.limit is None else filters.offset + filters.limit
    mocks = [mock_document(row) for row in rows[filters.offset:end]]
    return OrjsonRenderer().render(None, {"mocks": mocks, "total": total,
                                          "count": len(mocks)}, response_status=200)


@pytest.fixture
def client(monkeypatch):
    monkeypatch.setattr(runtime, "control", EngineControl(Engine()))
    monkeypatch.setattr(runtime, "ready", True)
    return Client()


QUERIES = [
    ("", {}),
    ("type=http", {"type": "http"}),
    ("type=grpc", {"type": "grpc"}),
    ("type=oauth&enabled=true", {"type": "oauth", "enabled": True}),
    ("enabled=false", {"enabled": False}),
    ("workspaceId=ws_team", {"workspace_id": "ws_team"}),
    ("workspaceId=local&type=websocket", {"workspace_id": "local", "type": "websocket"}),
    ("parentId=fld_a", {"parent_id": "fld_a"}),
    ("folderId=fld_b", {"parent_id": "fld_b"}),
    ("parentId=", {"parent_id": ""}),
    ("search=users", {"search": "users"}),
    ("search=%C3%BCberweisung", {"search": "überweisung"}),
    ("search=nothing-like-this", {"search": "nothing-like-this"}),
    ("limit=5", {"limit": 5}),
    ("limit=0", {"limit": 0}),
    ("offset=7&limit=10", {"offset": 7, "limit": 10}),
    ("offset=3", {"offset": 3}),
    ("offset=100000", {"offset": 100000}),
    ("type=http&enabled=true&workspaceId=local&offset=1&limit=2",
     {"type": "http", "enabled": True, "workspace_id": "local", "offset": 1, "limit": 2}),
]


def test_every_filter_and_page_answers_the_same_bytes_as_the_model_listing(client):
    _stored_mocks()
    for query, filters in QUERIES:
        answer = client.get("/mocks?" + query)
        assert answer.status_code == 200, query
        assert answer["content-type"] == "application/json; charset=utf-8"
        assert answer.content == _model_listing(MockFilter(**filters)), query
    everything = orjson.loads(client.get("/mocks").content)
    assert everything["total"] == everything["count"] == Mock.objects.count()
    assert {mock["type"] for mock in everything["mocks"]} == set(MOCK_TYPES)


def test_documents_keep_the_shape_of_one_mock(client):
    _stored_mocks()
    listed = orjson.loads(client.get("/mocks?limit=10000").content)["mocks"]
    for document in listed[:12]:
        assert document == orjson.loads(client.get(f"/mocks/{document['id']}").content)
    first = next(mock for mock in listed if mock["id"] == "http-2")
    assert first["createdAt"] == "2026-11-27T03:04:07.999Z"
    assert first["metaSortKey"] == 1.5 and first["parentId"] == "fld_a"
    plain = next(mock for mock in listed if mock["id"] == "http-1")
    assert plain["createdAt"] == "2026-11-27T03:04:06.000Z"
    assert "name" not in plain and "parentId" not in plain and "metaSortKey" not in plain


def test_bad_paging_is_still_refused_naming_the_parameter(client):
    for query, name in (("limit=-1", "limit"), ("offset=abc", "offset"),
                        ("limit=99999999999", "limit")):
        answer = client.get("/mocks?" + query)
        assert answer.status_code == 400, query
        assert answer.json()["error"] == "validation_error" and name in answer.json()["message"]


def test_a_thousand_mocks_list_faster_than_with_model_instances():
    now = BASE
    Workspace.objects.get_or_create(id="local", defaults={"name": "Local", "created_at": now,
                                                          "updated_at": now})
    Mock.objects.bulk_create(
        Mock(id=f"dash-{number}", type="http", name=f"Dashboard bench {number}",
             path=f"/dash/{number}", method="GET", position=number,
             config={"matcher": {"method": "GET", "path": f"/dash/{number}"},
                     "response": {"statusCode": 200, "body": {"n": number, "ok": True}}},
             created_at=now + timedelta(microseconds=number * 1013),
             updated_at=now + timedelta(microseconds=number * 1013))
        for number in range(1_000))

    def rows_ms() -> float:
        began = time.perf_counter()
        mocks, total = mock_changes.list_mocks(MockFilter())
        orjson.dumps({"mocks": mocks, "total": total, "count": len(mocks)})
        return (time.perf_counter() - began) * 1e3

    def models_ms() -> float:
        began = time.perf_counter()
        _model_listing(MockFilter())
        return (time.perf_counter() - began) * 1e3

    rows = statistics.median(rows_ms() for _ in range(7))
    models = statistics.median(models_ms() for _ in range(7))
    assert rows * 2 < models, (rows, models)
