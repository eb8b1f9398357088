"""HTTP mocks through a real ``mockd engine`` subprocess, driven with httpx.

Covers every matcher field, the precedence rules, every response field, the no-match answer,
the built-in health routes and HEAD falling back to GET (SPEC "Matcher", "Matching rules",
"Response"; behavior notes §4–5).
"""
from __future__ import annotations

import time

import httpx
import pytest

from tests.helpers import http_mock, make_config, start_engine

pytestmark = pytest.mark.integration

METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD"]


def _mocks(tmp_path):
    (tmp_path / "greeting.txt").write_text("hello from a file for {{request.pathParam.who}}")
    mocks = [http_mock(f"method-{m.lower()}", m, "/m/method", body=f"M:{m}",
                       headers={"X-Which": f"M:{m}"}) for m in METHODS]
    mocks += [
        http_mock("users-param", "GET", "/m/users/{id}", body="user={{request.pathParam.id}}"),
        http_mock("users-me", "GET", "/m/users/me", body="me"),
        http_mock("files-rest", "GET", "/m/files/{rest:.*}", body="rest={{request.pathParam.rest}}"),
        http_mock("in-segment", "GET", "/m/sessions/{sid}.json", body="sid={{request.pathParam.sid}}"),
        http_mock("glob", "GET", "/m/static/*", body="glob"),
        http_mock("pattern", "GET", matcher={"pathPattern": r"^/m/orders/(?P<orderId>[0-9]+)$"},
                  body="order={{request.pathParam.orderId}}"),
        http_mock("query", "GET", "/m/query", body="query",
                  matcher={"queryParams": {"a": "1", "b": "x"}}),
        http_mock("header-prefix", "GET", "/m/header", body="header",
                  matcher={"headers": {"X-Tag": "abc*"}}),
        http_mock("body-contains", "POST", "/m/body", body="contains",
                  matcher={"bodyContains": "needle"}),
        http_mock("body-equals", "POST", "/m/body", body="equals",
                  matcher={"bodyEquals": "exact-body"}),
        http_mock("body-pattern", "POST", "/m/body", body="pattern",
                  matcher={"bodyPattern": r"(?i)^hello\s+world$"}),
        http_mock("json-path", "POST", "/m/json", body="json",
                  matcher={"bodyJsonPath": {"$.user.role": "admin", "$.items[*].id": {"exists": True}}}),
        http_mock("secure-fallback", "GET", "/m/secure", body="denied", status=401),
        http_mock("secure", "GET", "/m/secure", body="granted",
                  matcher={"headers": {"Authorization": "Bearer *"}}),
        http_mock("prio-low", "GET", "/m/prio", body="low"),
        http_mock("prio-high", "GET", "/m/prio", body="high", priority=5),
        http_mock("teapot", "GET", "/m/teapot", status=418, body="short and stout",
                  headers={"X-Static": "yes", "X-Echo": "{{request.query.q}}"}),
        http_mock("json-body", "GET", "/m/json-body", body={"a": 1, "list": [True, None]}),
        http_mock("xml-body", "GET", "/m/xml", body="<a>1</a>"),
        http_mock("empty", "DELETE", "/m/empty", status=204),
        http_mock("file", "GET", "/m/file/{who}", response={"bodyFile": "greeting.txt"}),
        http_mock("missing-file", "GET", "/m/missing-file",
                  response={"bodyFile": "does-not-exist.txt"}),
        http_mock("slow", "GET", "/m/slow", body="slow", response={"delayMs": 300}),
        http_mock("health-shadow", "GET", "/health", body="shadow"),
        {"id": "disabled", "enabled": False,
         "http": {"matcher": {"method": "GET", "path": "/m/disabled"},
                  "response": {"body": "never"}}},
        {"matcher": {"method": "GET", "path": "/m/shorthand"}, "response": {"body": "short"}},
    ]
    return mocks


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("http-mocks")
    mocks = _mocks(tmp_path)
    with start_engine(tmp_path, make_config(*mocks)) as process:
        process.mock_count = len(mocks)
        yield process


@pytest.fixture(scope="module")
def client(engine):
    with engine.client() as http:
        yield http


@pytest.mark.parametrize("method", METHODS)
def test_method_selects_its_mock(client, method):
    response = client.request(method, "/m/method")
    assert response.status_code == 200 and response.headers["x-which"] == f"M:{method}"
    assert response.text == ("" if method == "HEAD" else f"M:{method}")


@pytest.mark.parametrize("path,body", [
    pytest.param("/m/users/42", "user=42", id="param captured"),
    pytest.param("/m/users/me", "me", id="exact beats param"),
    pytest.param("/m/files/a/b/c.txt", "rest=a/b/c.txt", id="catch-all"),
    pytest.param("/m/sessions/abc.json", "sid=abc", id="param inside a segment"),
    pytest.param("/m/static/css/site.css", "glob", id="trailing glob"),
    pytest.param("/m/orders/123", "order=123", id="path pattern capture"),
    pytest.param("/m/shorthand", "short", id="shorthand mock"),
])
def test_paths_served(client, path, body):
    response = client.get(path)
    assert response.status_code == 200 and response.text == body


def test_param_does_not_span_segments(client):
    assert client.get("/m/users/42/extra").status_code == 404


def test_query_params_all_listed_must_match_extra_ignored(client):
    assert client.get("/m/query", params={"a": "1", "b": "x", "z": "9"}).text == "query"
    assert client.get("/m/query", params={"a": "1"}).status_code == 404


def test_header_prefix_and_case_insensitive_name(client):
    assert client.get("/m/header", headers={"x-TAG": "abcdef"}).text == "header"
    assert client.get("/m/header", headers={"X-Tag": "zabc"}).status_code == 404


@pytest.mark.parametrize("content,expected", [
    pytest.param("a needle in hay", "contains", id="bodyContains"),
    pytest.param("exact-body", "equals", id="bodyEquals beats nothing else"),
    pytest.param("HELLO   World", "pattern", id="bodyPattern with (?i)"),
])
def test_body_conditions(client, content, expected):
    assert client.post("/m/body", content=content).text == expected


def test_json_path_matcher_and_malformed_json_is_a_plain_miss(client):
    ok = client.post("/m/json", json={"user": {"role": "admin"}, "items": [{"id": 1}]})
    assert ok.text == "json"
    broken = client.post("/m/json", content=b'{"user": {"role": "admin"', headers={
        "Content-Type": "application/json"})
    assert broken.status_code == 404


def test_bearer_mock_wins_and_fallback_answers_401(client):
    assert client.get("/m/secure", headers={"Authorization": "Bearer t"}).text == "granted"
    denied = client.get("/m/secure")
    assert denied.status_code == 401 and denied.text == "denied"


def test_higher_priority_breaks_a_tie(client):
    assert client.get("/m/prio").text == "high"


def test_status_headers_and_templated_header(client):
    response = client.get("/m/teapot", params={"q": "earl grey"})
    assert response.status_code == 418
    assert response.headers["x-static"] == "yes" and response.headers["x-echo"] == "earl grey"
    assert response.headers["content-type"] == "text/plain"


def test_default_content_types(client):
    json_response = client.get("/m/json-body")
    assert json_response.headers["content-type"] == "application/json"
    assert json_response.json() == {"a": 1, "list": [True, None]}
    assert client.get("/m/xml").headers["content-type"] == "application/xml"


def test_no_body_status_only(client):
    response = client.delete("/m/empty")
    assert response.status_code == 204 and response.content == b""


def test_body_file_is_read_and_templated(client):
    assert client.get("/m/file/ada").text == "hello from a file for ada"


def test_missing_body_file_answers_502_and_server_keeps_serving(client):
    response = client.get("/m/missing-file")
    assert response.status_code == 502 and response.json()["error"] == "body_file_error"
    assert client.get("/m/users/me").text == "me"


def test_delay_ms_delays_the_answer(client):
    started = time.monotonic()
    assert client.get("/m/slow").text == "slow"
    assert time.monotonic() - started >= 0.28


def test_disabled_mock_never_matches(client):
    assert client.get("/m/disabled").status_code == 404


def test_health_is_answered_before_matching(client):
    response = client.get("/health")
    assert response.status_code == 200 and response.json()["status"] == "ok"
    assert response.json()["timestamp"].endswith("Z")


def test_internal_health_and_ready(engine, client):
    assert client.get("/__mockd/health").json()["status"] == "healthy"
    ready = client.get("/__mockd/ready").json()
    assert ready == {"status": "ready",
                     "checks": {"mocks": {"count": engine.mock_count, "status": "ok"}}}
    assert client.get("/ready").json()["status"] == "ready"


def test_head_falls_back_to_get_without_a_body(client):
    response = client.head("/m/users/me")
    assert response.status_code == 200 and response.content == b""
    assert response.headers["content-length"] == "2"


def test_no_match_answer_with_near_misses(client):
    response = client.get("/m/query", params={"a": "1", "b": "wrong"})
    assert response.status_code == 404
    body = response.json()
    assert body["error"] == "no_match" and body["message"] == "No mock matched the request"
    assert body["path"] == "/m/query" and body["method"] == "GET"
    assert body["nearMisses"][0]["mockId"] == "query"
    assert body["nearMisses"][0]["reason"] == (
        'method and path matched, but query param b expected "x", got "wrong"')
    assert int(response.headers["x-mockd-near-misses"]) == len(body["nearMisses"]) <= 3


def test_body_over_ten_mebibytes_gets_413(client):
    response = client.post("/m/body", content=b"x" * (10 * 1024 * 1024 + 1))
    assert response.status_code == 413 and response.json()["error"] == "body_too_large"
    assert client.get("/m/users/me").text == "me"


def test_many_concurrent_requests_all_answered(engine):
    import asyncio

    async def burst():
        async with httpx.AsyncClient(base_url=engine.base, trust_env=False, timeout=10) as http:
            answers = await asyncio.gather(*(http.get(f"/m/users/{index}")
                                             for index in range(200)))
        return answers

    answers = asyncio.run(burst())
    assert [answer.text for answer in answers] == [f"user={index}" for index in range(200)]
