"""HTTP recordings -> mocks (:mod:`mocks.portability.recordings_http`): each rule over
hand-built recordings, and every converted fragment validated, compiled and served by the
in-process data plane."""
from __future__ import annotations

import asyncio
import base64
import gzip
import json
from typing import Any

import pytest

from mocks.engine.app import DataPlaneApp
from mocks.engine.core import Engine
from mocks.loader import validate_config
from mocks.portability.recordings_http import (convert_http_recordings,
                                               convert_http_recordings_result, looks_like_id,
                                               singular)


def b64(data: bytes | str) -> str:
    return base64.b64encode(data.encode() if isinstance(data, str) else data).decode()


def recording(method: str, url: str, status: int = 200, body: Any = None, *,
              content_type: str | None = "application/json", request: Any = None,
              headers: dict[str, list[str]] | None = None, timestamp: str | None = None,
              **extra: Any) -> dict[str, Any]:
    """One HTTP recording document as the recording proxy stores it."""
    if body is None:
        raw = b""
    elif isinstance(body, bytes):
        raw = body
    elif isinstance(body, str):
        raw = body.encode()
    else:
        raw = json.dumps(body).encode()
    answer_headers = dict(headers or {})
    if content_type:
        answer_headers.setdefault("Content-Type", [content_type])
    path, _, query = url.partition("?")
    document = {
        "id": f"rec-{method}-{url}", "sessionId": "s1",
        "request": {"method": method, "url": f"http://api.test{url}", "path": path,
                    "host": "api.test", "scheme": "http",
                    "headers": {"Content-Type": ["application/json"]},
                    "body": b64(json.dumps(request)) if request is not None else ""},
        "response": {"statusCode": status, "statusText": "", "headers": answer_headers,
                     "body": b64(raw)},
        "duration": 1_500_000}
    if timestamp:
        document["timestamp"] = timestamp
    document.update(extra)
    return document


class Served:
    """A converted fragment loaded into an engine, answering requests in process."""

    def __init__(self, fragment: dict[str, Any]):
        engine = Engine()
        engine.load(validate_config(fragment))
        self.app = DataPlaneApp(engine)

    def __call__(self, method: str, url: str, body: Any = None) -> tuple[int, dict, bytes]:
        path, _, query = url.partition("?")
        raw = b"" if body is None else json.dumps(body).encode()
        sent: list[dict] = []

        async def receive():
            return {"type": "http.request", "body": raw, "more_body": False}

        async def send(message):
            sent.append(message)

        scope = {"type": "http", "method": method, "path": path,
                 "query_string": query.encode(), "scheme": "http",
                 "headers": [(b"content-type", b"application/json")],
                 "server": ("127.0.0.1", 4280), "client": ("127.0.0.1", 5000)}
        asyncio.run(self.app(scope, receive, send))
        start = next(message for message in sent if message["type"] == "http.response.start")
        headers = {name.decode().lower(): value.decode() for name, value in start["headers"]}
        return start["status"], headers, b"".join(
            message.get("body", b"") for message in sent if message["type"] == "http.response.body")

    def json(self, method: str, url: str, body: Any = None) -> tuple[int, Any]:
        status, _, raw = self(method, url, body)
        return status, json.loads(raw) if raw else None


def convert(records, **options) -> dict[str, Any]:
    fragment = convert_http_recordings(records, **options)
    validate_config(fragment)
    return fragment


def matchers(fragment) -> dict[str, dict]:
    return {mock["name"]: mock["http"]["matcher"] for mock in fragment["mocks"]}


# ---------------------------------------------------------------------------- path shapes


@pytest.mark.parametrize(("segment", "expected"), [
    pytest.param("42", True, id="number"),
    pytest.param("3f2b8c1e-9d4a-4c6b-8e2f-1a2b3c4d5e6f", True, id="uuid"),
    pytest.param("01HZY3M4K5N6P7Q8R9S0T1V2W3", True, id="ulid"),
    pytest.param("5f3a9c0d2b3e8f71", True, id="hex"),
    pytest.param("cus_9f3K2xAb", True, id="prefixed id"),
    pytest.param("users", False, id="collection word"),
    pytest.param("v1", False, id="version"),
    pytest.param("me", False, id="keyword"),
    pytest.param("deadbeef", False, id="hex letters only read as a word"),
    pytest.param("line-items", False, id="hyphenated word"),
])
def test_identifier_segments(segment, expected):
    assert looks_like_id(segment) is expected


@pytest.mark.parametrize(("word", "expected"), [
    ("users", "user"), ("categories", "category"), ("addresses", "address"),
    ("boxes", "box"), ("line-items", "lineItem"), ("status", "status"),
    ("data", "data")])
def test_singular_names(word, expected):
    assert singular(word) == expected


def test_varying_ids_with_one_answer_become_one_capture_mock():
    same = {"name": "anyone"}
    fragment = convert([recording("GET", "/users/42", body=same),
                        recording("GET", "/users/43", body=same)])
    assert [(mock["id"], mock["name"]) for mock in fragment["mocks"]] == [
        ("get-users-id", "GET /users/{id}")]
    assert Served(fragment).json("GET", "/users/99") == (200, same)


def test_earlier_captures_are_named_after_their_collection():
    fragment = convert([recording("GET", "/users/42/orders/7", body={"id": 7})])
    assert matchers(fragment) == {"GET /users/{userId}/orders/{id}": {
        "method": "GET", "path": "/users/{userId}/orders/{id}"}}


def test_ids_with_different_answers_get_one_literal_mock_each():
    fragment = convert([recording("GET", "/users/42", body={"id": 42}),
                        recording("GET", "/users/43", body={"id": 43}),
                        recording("GET", "/users/me", body={"id": 1})])
    assert list(matchers(fragment)) == ["GET /users/42", "GET /users/43", "GET /users/me"]
    served = Served(fragment)
    assert served.json("GET", "/users/43") == (200, {"id": 43})
    assert served.json("GET", "/users/me") == (200, {"id": 1})
    assert served("GET", "/users/44")[0] == 404


# ---------------------------------------------------------------------------- discriminators


def test_discriminating_query_becomes_query_matchers_and_the_rest_is_left_out():
    fragment = convert([recording("GET", "/search?q=a&lang=en", body=["a"]),
                        recording("GET", "/search?q=b&lang=fr", body=["b"]),
                        recording("GET", "/search?q=a&lang=fr", body=["a"])])
    assert {name: matcher.get("queryParams") for name, matcher in matchers(fragment).items()} \
        == {"GET /search?q=a": {"q": "a"}, "GET /search?q=b": {"q": "b"}}
    served = Served(fragment)
    assert served.json("GET", "/search?q=b&lang=de") == (200, ["b"])
    assert served.json("GET", "/search?q=a") == (200, ["a"])


def test_a_missing_query_parameter_is_matched_as_absent():
    fragment = convert([recording("GET", "/items?page=2", body=[2]),
                        recording("GET", "/items", body=[1])])
    served = Served(fragment)
    assert served.json("GET", "/items") == (200, [1])
    assert served.json("GET", "/items?page=2") == (200, [2])


def test_volatile_query_parameters_never_discriminate():
    fragment = convert([recording("GET", "/feed?_=111", body=[1]),
                        recording("GET", "/feed?_=222", body=[2])])
    [mock] = fragment["mocks"]
    assert "queryParams" not in mock["http"]["matcher"]
    assert [answer["body"] for answer in mock["http"]["responses"]] == [[1], [2]]


def test_json_body_fields_become_conditions_only_where_they_discriminate():
    fragment = convert([
        recording("POST", "/login", body={"ok": True}, request={"user": "ada", "pw": "1"}),
        recording("POST", "/login", 401, body={"ok": False},
                  request={"user": "bob", "pw": "2"}),
        recording("POST", "/login", body={"ok": True}, request={"user": "ada", "pw": "3"})])
    assert [matcher["bodyJsonPath"] for matcher in matchers(fragment).values()] == [
        {"$.user": "ada"}, {"$.user": "bob"}]
    served = Served(fragment)
    assert served.json("POST", "/login", {"user": "bob", "pw": "x"}) == (401, {"ok": False})
    assert served.json("POST", "/login", {"user": "ada"}) == (200, {"ok": True})


def test_a_json_body_without_differing_answers_adds_no_condition():
    fragment = convert([recording("POST", "/events", 202, request={"n": 1}),
                        recording("POST", "/events", 202, request={"n": 2})])
    [mock] = fragment["mocks"]
    assert mock["http"]["matcher"] == {"method": "POST", "path": "/events"}


# ---------------------------------------------------------------------------- repeats


def test_identical_pairs_are_merged_with_deduplicate():
    records = [recording("GET", "/ping", body={"pong": True})] * 3
    [mock] = convert(records)["mocks"]
    assert mock["http"]["response"] == {"statusCode": 200,
                                        "headers": {"Content-Type": "application/json"},
                                        "body": {"pong": True}}


def test_different_answers_to_one_request_are_served_in_turn():
    records = [recording("GET", "/tick", body={"n": n}) for n in (1, 2, 1)]
    deduplicated = convert(records)
    assert [answer["body"] for answer in deduplicated["mocks"][0]["http"]["responses"]] == [
        {"n": 1}, {"n": 2}]
    every = convert(records, deduplicate=False)
    mock = every["mocks"][0]["http"]
    assert mock["responseMode"] == "sequential"
    served = Served(every)
    assert [served.json("GET", "/tick")[1]["n"] for _ in range(4)] == [1, 2, 1, 1]


def test_without_deduplicate_identical_repeats_stay_one_answer_each():
    [mock] = convert([recording("GET", "/ping", body="pong", content_type="text/plain")] * 2,
                     deduplicate=False)["mocks"]
    assert len(mock["http"]["responses"]) == 2


# ---------------------------------------------------------------------------- responses


def test_bodies_keep_their_kind_and_bytes():
    png = b"\x89PNG\r\n\x1a\n\x00\x00binary"
    records = [
        recording("GET", "/doc.json", body={"a": [1, 2]}),
        recording("GET", "/readme", body="hello {{ not a template }}",
                  content_type="text/plain; charset=utf-8"),
        recording("GET", "/logo", body=png, content_type="image/png"),
        recording("GET", "/zipped", body=gzip.compress(b'{"z": 1}'),
                  headers={"Content-Encoding": ["gzip"]}),
        recording("DELETE", "/things/x", 204, content_type=None),
    ]
    fragment = convert(records)
    responses = {mock["name"]: mock["http"]["response"] for mock in fragment["mocks"]}
    assert responses["GET /doc.json"]["body"] == {"a": [1, 2]}
    assert responses["GET /logo"]["bodyBase64"] == b64(png)
    assert responses["GET /zipped"]["body"] == {"z": 1}
    assert "headers" not in responses["DELETE /things/x"]
    served = Served(fragment)
    assert served("GET", "/readme")[2] == b"hello {{ not a template }}"
    status, headers, raw = served("GET", "/logo")
    assert (status, headers["content-type"], raw) == (200, "image/png", png)
    assert served("GET", "/zipped")[1].get("content-encoding") is None
    assert served("DELETE", "/things/x")[0] == 204


def test_undecodable_encodings_keep_their_content_encoding():
    raw = b"\x1b\x00brotli-bytes"
    [mock] = convert([recording("GET", "/br", body=raw,
                                headers={"Content-Encoding": ["br"]})])["mocks"]
    assert mock["http"]["response"]["headers"]["Content-Encoding"] == "br"
    assert mock["http"]["response"]["bodyBase64"] == b64(raw)


def test_only_content_type_is_kept_unless_headers_are_included():
    headers = {"X-Request-Id": ["abc"], "Date": ["Fri, 27 Nov 2026 10:00:00 GMT"],
               "Content-Length": ["2"], "Connection": ["keep-alive"],
               "Set-Cookie": ["[REDACTED]"], "X-Api-Key": ["[REDACTED]"],
               "X-Signed": ["token [REDACTED]"], "Cache-Control": ["no-store"]}
    record = recording("GET", "/h", body={}, headers=headers)
    plain = convert([record])["mocks"][0]["http"]["response"]["headers"]
    assert plain == {"Content-Type": "application/json"}
    full = convert([record], include_headers=True)
    assert full["mocks"][0]["http"]["response"]["headers"] == {
        "X-Request-Id": "abc", "Cache-Control": "no-store", "Content-Type": "application/json"}
    status, served_headers, _ = Served(full)("GET", "/h")
    assert served_headers["x-request-id"] == "abc"


def test_a_truncated_body_is_served_as_cut_and_said_so():
    record = recording("GET", "/big", body='{"items": [1, 2', bodyTruncated=True)
    result = convert_http_recordings_result([record])
    [mock] = result.mocks
    assert mock["http"]["response"]["body"] == '{"items": [1, 2'
    assert "cut" in mock["description"]
    assert any("truncated" in warning for warning in result.warnings)


def test_a_cut_request_body_is_flagged_on_its_side_only():
    """The proxy sets the record's flag when either side was cut, plus the side's own."""
    records = [recording("POST", "/up", body={"ok": 1}, request={"kind": "a"}),
               recording("POST", "/up", body={"ok": 2}, request={"kind": "b"})]
    for record in records:
        record["request"]["bodyTruncated"] = True
        record["bodyTruncated"] = True
    result = convert_http_recordings_result(records)
    [mock] = result.mocks
    assert "bodyJsonPath" not in mock["http"]["matcher"]  # a cut request body is not read
    assert "description" not in mock and not result.warnings  # the answers were whole


def test_redacted_values_never_become_conditions():
    records = [recording("GET", "/me?api_key=[REDACTED]", body={"n": 1}),
               recording("GET", "/me?api_key=[REDACTED]&x=1", body={"n": 2}),
               recording("POST", "/pw", body={"ok": True}, request={"password": "[REDACTED]"}),
               recording("POST", "/pw", 401, body={"ok": False}, request={"password": "[REDACTED]"})]
    conditions = matchers(convert(records))
    assert conditions["GET /me?x=(absent)"]["queryParams"] == {"x": {"absent": True}}
    assert all("api_key" not in (matcher.get("queryParams") or {})
               for matcher in conditions.values())
    assert conditions["POST /pw"] == {"method": "POST", "path": "/pw"}


# ---------------------------------------------------------------------------- input


def test_unreadable_recordings_are_skipped_with_a_warning_each():
    broken_body = recording("GET", "/a", body={})
    broken_body["response"]["body"] = "***"
    records = [broken_body, recording("CONNECT", "/b"), recording("GET", "/ws", 101),
               "not a recording", {"request": {"method": "GET", "path": "/c"}},
               recording("GET", "/fine", body={"ok": 1})]
    result = convert_http_recordings_result(records)
    assert [mock["name"] for mock in result.mocks] == ["GET /fine"]
    assert [row["item"] for row in result.skipped] == [
        "recordings[0] (GET /a)", "recordings[1] (CONNECT /b)", "recordings[2] (GET /ws)",
        "recordings[3]", "recordings[4] (GET /c)"]
    assert "not valid base64" in result.skipped[0]["reason"]


def test_records_must_be_a_list():
    with pytest.raises(ValueError, match="records: expected a list"):
        convert_http_recordings({"request": {}})


def test_output_is_deterministic_and_follows_recording_time():
    records = [recording("GET", "/t", body={"n": 2}, timestamp="2026-11-27T10:00:02Z"),
               recording("GET", "/t", body={"n": 1}, timestamp="2026-11-27T10:00:01Z")]
    first = convert_http_recordings(records)
    assert first == convert_http_recordings(list(records))
    assert [answer["body"]["n"] for answer in first["mocks"][0]["http"]["responses"]] == [1, 2]


def test_duplicate_names_get_unique_ids_and_a_prefix_is_put_in_front():
    fragment = convert([recording("GET", "/a-b", body=1), recording("GET", "/a_b", body=2)],
                       id_prefix="s1-")
    assert [mock["id"] for mock in fragment["mocks"]] == ["s1-get-a-b", "s1-get-a-b-2"]


# ---------------------------------------------------------------------------- stateful


ADA = {"id": "cus_1a2b3c4d", "name": "Ada"}
BOB = {"id": "cus_9f8e7d6c", "name": "Bob"}


def crud_recordings() -> list[dict[str, Any]]:
    return [
        recording("GET", "/api/customers", body={"object": "list", "data": [ADA],
                                                 "has_more": False}),
        recording("POST", "/api/customers", 201, body=BOB, request={"name": "Bob"}),
        recording("GET", f"/api/customers/{BOB['id']}", body=BOB),
        recording("PATCH", f"/api/customers/{BOB['id']}", body={**BOB, "name": "Bobby"},
                  request={"name": "Bobby"}),
        recording("DELETE", f"/api/customers/{ADA['id']}", 204, content_type=None),
        recording("GET", f"/api/customers/{ADA['id']}", 404, body={"error": "gone"}),
        recording("POST", f"/api/customers/{BOB['id']}/verify", body={"verified": True}),
        recording("GET", "/api/status", body={"up": True}),
    ]


def test_crud_traffic_becomes_a_table_with_bindings():
    fragment = convert(crud_recordings(), stateful=True)
    [table] = fragment["tables"]
    assert table["name"] == "customers"
    assert (table["idStrategy"], table["idPrefix"]) == ("prefix", "cus_")
    assert {item["id"]: item["name"] for item in table["seedData"]} == {
        ADA["id"]: "Ada", BOB["id"]: "Bobby"}
    assert table["response"]["list"] == {"dataField": "data",
                                         "extraFields": {"object": "list", "has_more": False},
                                         "hideMeta": True}
    assert table["response"]["timestamps"] == {"format": "none"}
    assert sorted((binding["mock"], binding["action"]) for binding in fragment["extend"]) == [
        ("delete-api-customers-id", "delete"), ("get-api-customers", "list"),
        ("get-api-customers-id", "get"), ("patch-api-customers-id", "patch"),
        ("post-api-customers", "create")]
    statics = [mock["name"] for mock in fragment["mocks"]
               if mock["id"] not in {binding["mock"] for binding in fragment["extend"]}]
    assert statics == ["POST /api/customers/{id}/verify", "GET /api/status"]


def test_the_stateful_twin_serves_create_then_get():
    served = Served(convert(crud_recordings(), stateful=True))
    status, listed = served.json("GET", "/api/customers")
    assert status == 200 and listed["object"] == "list"
    assert [item["id"] for item in listed["data"]] == [ADA["id"], BOB["id"]]
    status, created = served.json("POST", "/api/customers", {"name": "Cy"})
    assert status == 201 and created["id"].startswith("cus_") and created["name"] == "Cy"
    assert served.json("GET", f"/api/customers/{created['id']}") == (200, created)
    assert served("DELETE", f"/api/customers/{created['id']}")[0] == 204
    assert served("GET", f"/api/customers/{created['id']}")[0] == 404
    assert served.json("POST", f"/api/customers/{BOB['id']}/verify") == (200, {"verified": True})


def test_the_id_field_is_the_one_equal_to_the_captured_id():
    sku = {"sku": "4711", "label": "soap"}
    fragment = convert([recording("GET", "/products", body=[sku]),
                        recording("GET", "/products/4711", body=sku)], stateful=True)
    [table] = fragment["tables"]
    assert table["idField"] == "sku"
    assert table["seedData"] == [sku]
    assert Served(fragment).json("GET", "/products/4711") == (200, sku)


def test_nested_collections_get_a_parent_field():
    fragment = convert([recording("GET", "/users/42/orders", body=[{"id": 7, "total": 3}]),
                        recording("GET", "/users/42/orders/7", body={"id": 7, "total": 3})],
                       stateful=True)
    [table] = fragment["tables"]
    assert (table["parentField"], table["idStrategy"]) == ("userId", "sequence")
    served = Served(fragment)
    assert served.json("GET", "/users/42/orders/7") == (200, {"id": 7, "total": 3})
    assert served.json("GET", "/users/42/orders") == (200, {"data": [{"id": 7, "total": 3}]})
    assert served.json("GET", "/users/43/orders") == (200, {"data": []})


def test_crud_without_ids_stays_static_with_a_warning():
    records = [recording("GET", "/notes", body=[{"text": "a"}]),
               recording("GET", "/notes/12", body={"text": "a"})]
    result = convert_http_recordings_result(records, stateful=True)
    assert result.tables == [] and result.extend == []
    assert [mock["name"] for mock in result.mocks] == ["GET /notes", "GET /notes/{id}"]
    assert any("/notes" in warning and "static" in warning for warning in result.warnings)


def test_without_stateful_crud_traffic_stays_static():
    fragment = convert(crud_recordings())
    assert set(fragment) == {"mocks"}
