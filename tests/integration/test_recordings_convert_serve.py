"""Converted HTTP recordings served by a real ``mockd start -c``: the answers equal the
recorded ones, and a stateful conversion behaves as a working twin (create, then get)."""
from __future__ import annotations

import base64
import gzip
import json
from typing import Any

import pytest

from mocks.portability.recordings_http import convert_http_recordings
from tests.helpers import start_server

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR-bytes"


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def recording(method: str, url: str, status: int, body: bytes = b"", *,
              content_type: str | None = "application/json", request: Any = None,
              headers: dict[str, list[str]] | None = None) -> dict[str, Any]:
    answer_headers = dict(headers or {})
    if content_type:
        answer_headers["Content-Type"] = [content_type]
    answer_headers["Date"] = ["Fri, 27 Nov 2026 10:00:00 GMT"]
    answer_headers["Content-Length"] = [str(len(body))]
    return {
        "id": f"r-{method}-{url}", "sessionId": "s1",
        "request": {"method": method, "url": f"https://shop.test{url}",
                    "path": url.partition("?")[0], "host": "shop.test", "scheme": "https",
                    "headers": {"Accept": ["*/*"]},
                    "body": b64(json.dumps(request).encode()) if request is not None else ""},
        "response": {"statusCode": status, "statusText": "", "headers": answer_headers,
                     "body": b64(body)},
        "duration": 2_000_000}


def as_json(value: Any) -> bytes:
    return json.dumps(value).encode()


#: Traffic converted to static mocks, each answer checked against the server's.
STATIC = [
    recording("GET", "/catalog/42", 200, as_json({"id": 42, "name": "lamp"})),
    recording("GET", "/catalog/43", 200, as_json({"id": 43, "name": "desk"})),
    recording("GET", "/search?q=lamp&session=1", 200, as_json([42])),
    recording("GET", "/search?q=desk&session=2", 200, as_json([43])),
    recording("POST", "/auth", 200, as_json({"token": "t-ada"}), request={"user": "ada"}),
    recording("POST", "/auth", 401, as_json({"error": "denied"}), request={"user": "eve"}),
    recording("GET", "/about", 200, b"shop {{ v2 }}", content_type="text/plain; charset=utf-8",
              headers={"X-Shop": ["north"], "Set-Cookie": ["[REDACTED]"]}),
    recording("GET", "/logo.png", 200, PNG, content_type="image/png"),
    recording("GET", "/news", 200, gzip.compress(as_json({"items": ["sale"]})),
              headers={"Content-Encoding": ["gzip"]}),
    recording("GET", "/catalog/44", 404, as_json({"error": "no such item"})),
]

ORDER = {"id": 1, "item": "lamp", "qty": 1}
#: CRUD traffic on /orders, converted with ``stateful``.
CRUD = [
    recording("GET", "/orders", 200, as_json({"orders": [ORDER], "object": "order_list", "page": 1})),
    recording("POST", "/orders", 201, as_json({"id": 2, "item": "desk", "qty": 2}),
              request={"item": "desk", "qty": 2}),
    recording("GET", "/orders/1", 200, as_json(ORDER)),
    recording("PUT", "/orders/2", 200, as_json({"id": 2, "item": "desk", "qty": 3}),
              request={"item": "desk", "qty": 3}),
    recording("DELETE", "/orders/2", 204, content_type=None),
    recording("GET", "/orders/2", 404, as_json({"error": "not found"})),
]


def merged(*fragments: dict[str, Any]) -> dict[str, Any]:
    config: dict[str, Any] = {"version": "1.0", "mocks": [], "tables": [], "extend": []}
    for fragment in fragments:
        for key in ("mocks", "tables", "extend"):
            config[key] += fragment.get(key, [])
    return config


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("recordings-convert")
    config = merged(convert_http_recordings(STATIC, include_headers=True),
                    convert_http_recordings(CRUD, stateful=True, id_prefix="crud-"))
    with start_server(tmp, json.dumps(config, indent=1)) as process:
        yield process


@pytest.mark.parametrize("record", STATIC, ids=lambda record: (
    f"{record['request']['method']} {record['request']['url'].split('shop.test')[1]}"))
def test_static_answers_equal_the_recorded_ones(data, record):
    request = record["request"]
    url = request["url"].split("shop.test", 1)[1]
    body = base64.b64decode(request["body"]) if request["body"] else None
    answer = data.request(request["method"], url, content=body,
                          headers={"Content-Type": "application/json"} if body else None)
    recorded = record["response"]
    expected = base64.b64decode(recorded["body"])
    encoding = recorded["headers"].get("Content-Encoding", [""])[0]
    if encoding == "gzip":
        expected = gzip.decompress(expected)
    content_type = recorded["headers"]["Content-Type"][0]
    assert answer.status_code == recorded["statusCode"]
    assert answer.headers["content-type"] == content_type
    if "json" in content_type:
        assert answer.json() == json.loads(expected)
    else:
        assert answer.content == expected


def test_recorded_headers_are_kept_but_cookies_and_dates_are_not(data):
    answer = data.get("/about")
    assert answer.headers["x-shop"] == "north"
    assert "set-cookie" not in answer.headers
    assert answer.headers.get("date") != "Fri, 27 Nov 2026 10:00:00 GMT"


def test_an_unrecorded_id_of_a_discriminated_path_is_not_matched(data):
    assert data.get("/catalog/45").status_code == 404


def test_the_stateful_twin_lists_the_recorded_items(data):
    answer = data.get("/orders")
    assert answer.status_code == 200
    listed = answer.json()
    assert listed["object"] == "order_list" and "page" not in listed
    assert [order["id"] for order in listed["orders"]][:2] == [1, 2]
    assert data.get("/orders/1").json() == ORDER


def test_the_stateful_twin_serves_create_then_get(data):
    created = data.post("/orders", json={"item": "chair", "qty": 4})
    assert created.status_code == 201
    item = created.json()
    assert item["item"] == "chair" and isinstance(item["id"], int) and item["id"] > 2
    fetched = data.get(f"/orders/{item['id']}")
    assert (fetched.status_code, fetched.json()) == (200, item)
    assert data.put(f"/orders/{item['id']}", json={"item": "chair", "qty": 5}).json()["qty"] == 5
    assert data.delete(f"/orders/{item['id']}").status_code == 204
    assert data.get(f"/orders/{item['id']}").status_code == 404
