"""Request log ring buffer, filters, entry shape and counters (behavior notes §1, §17)."""
from __future__ import annotations

import asyncio

import pytest

from mocks.engine.core import ServeEvent
from mocks.engine.requestlog import (LOGGED_BODY_LIMIT, QueryParameterError, RequestFilter,
                                     RequestLog, base36, canonical_header_name,
                                     parse_request_filter)
from tests.helpers import make_request


def serve_event(path: str = "/a", method: str = "GET", status: int = 200,
                mock_id: str | None = "m1", body: bytes = b"", query: str = "",
                error: str | None = None, near: list | None = None,
                duration_ms: float = 2.0) -> ServeEvent:
    request = make_request(method, path, query, headers={"X-Trace": "t1", "Accept": "*/*"},
                           body=body)
    request.client = "127.0.0.1:5555"
    return ServeEvent(request, 1_800_000_000.5, duration_ms, status, mock_id,
                      path if mock_id else None, near_misses=near, error=error)


def test_base36_counts_like_the_original_ids():
    assert [base36(number) for number in (0, 1, 35, 36, 1295)] == ["0", "1", "z", "10", "zz"]


def test_canonical_header_name_capitalises_each_part():
    assert canonical_header_name("x-api-key") == "X-Api-Key"


def test_entry_carries_both_spellings_of_the_contract_noted_fields():
    log = RequestLog()
    log.workspace_of = {"m1": "local"}
    log.observe(serve_event(body=b'{"a":1}', query="q=1"))
    entry = log.query(RequestFilter())[0][0]
    assert entry["id"] == "req-1"
    assert entry["matchedMockId"] == entry["matchedMockID"] == "m1"
    assert entry["statusCode"] == entry["responseStatus"] == 200
    assert entry["workspaceId"] == "local"
    assert entry["timestamp"] == "2027-01-15T08:00:00.500Z"
    assert entry["queryString"] == "q=1"
    assert entry["headers"]["X-Trace"] == ["t1"]
    assert entry["body"] == '{"a":1}' and entry["bodySize"] == 7
    assert entry["remoteAddr"] == "127.0.0.1:5555"
    assert entry["protocol"] == "http" and entry["durationMs"] == 2.0


def test_unmatched_entry_has_no_mock_id_and_short_near_misses():
    log = RequestLog()
    near = [{"mockId": "m9", "mockName": "n", "score": 3, "maxPossibleScore": 4,
             "matchPercentage": 75, "reason": "method matched, but ...", "fields": []}]
    log.observe(serve_event(mock_id=None, status=404, near=near))
    entry = log.get("req-1")
    assert "matchedMockId" not in entry and "matchedMockID" not in entry
    assert entry["nearMisses"] == [{"mockId": "m9", "mockName": "n", "matchPercentage": 75,
                                    "reason": "method matched, but ..."}]


def test_log_drops_the_oldest_entry_at_capacity_and_lists_newest_first():
    log = RequestLog(capacity=3)
    for index in range(5):
        log.observe(serve_event(path=f"/p{index}"))
    entries, total = log.query(RequestFilter())
    assert total == 3
    assert [entry["path"] for entry in entries] == ["/p4", "/p3", "/p2"]
    assert log.counters.total == 5


def test_long_bodies_are_kept_truncated():
    log = RequestLog()
    log.observe(serve_event(body=b"x" * (LOGGED_BODY_LIMIT + 10)))
    entry = log.get("req-1")
    assert len(entry["body"]) == LOGGED_BODY_LIMIT
    assert entry["bodySize"] == LOGGED_BODY_LIMIT + 10


def test_logged_requests_keep_raw_data_and_drop_parsed_views():
    event = serve_event(method="POST", body=b'{"items": [1, 2, 3]}', query="a=1")
    request = event.request
    assert request.json == {"items": [1, 2, 3]} and request.query == {"a": "1"}
    log = RequestLog()
    log.observe(event)
    assert "json" not in request.__dict__ and "query" not in request.__dict__
    assert request.client == "127.0.0.1:5555"  # given to the request, not derived: kept
    entry = log.get("req-1")
    assert entry["body"] == '{"items": [1, 2, 3]}' and entry["queryString"] == "a=1"
    assert request.json == {"items": [1, 2, 3]}  # rebuilt on demand


@pytest.mark.parametrize("filters, expected", [
    pytest.param(RequestFilter(method="post"), ["/b"], id="method case-insensitive"),
    pytest.param(RequestFilter(path="/a"), ["/a/2", "/a"], id="path prefix"),
    pytest.param(RequestFilter(matched="m2"), ["/a/2"], id="matched mock"),
    pytest.param(RequestFilter(status=404), ["/none"], id="status"),
    pytest.param(RequestFilter(unmatched_only=True), ["/none"], id="unmatched only"),
    pytest.param(RequestFilter(has_error=True), ["/boom"], id="has error"),
    pytest.param(RequestFilter(workspace_id="team"), ["/a/2"], id="workspace"),
    pytest.param(RequestFilter(limit=2, offset=1), ["/a/2", "/none"], id="page"),
    pytest.param(RequestFilter(protocol="grpc"), [], id="other protocol"),
    pytest.param(RequestFilter(extra={"grpcService": "x"}), [], id="protocol-specific field"),
])
def test_query_filters(filters, expected):
    log = RequestLog()
    log.workspace_of = {"m1": "local", "m2": "team"}
    log.observe(serve_event(path="/a"))
    log.observe(serve_event(path="/b", method="POST"))
    log.observe(serve_event(path="/none", mock_id=None, status=404))
    log.observe(serve_event(path="/a/2", mock_id="m2"))
    log.observe(serve_event(path="/boom", status=502, error="body_file_error"))
    entries, _ = log.query(filters)
    assert [entry["path"] for entry in entries] == expected


def test_clear_by_mock_keeps_the_others():
    log = RequestLog()
    log.observe(serve_event(mock_id="m1"))
    log.observe(serve_event(mock_id="m2"))
    log.observe(serve_event(mock_id="m1"))
    assert log.clear("m1") == 2
    assert [record.mock_id for record in log.newest_first()] == ["m2"]
    assert log.clear() == 1 and len(log) == 0


def test_counters_use_the_mock_path_template_and_bucket_durations():
    log = RequestLog()
    log.observe(serve_event(path="/users/{id}", duration_ms=3.0))
    log.observe(serve_event(path="/x", mock_id=None, status=404, duration_ms=700.0))
    counters = log.counters.snapshot()
    assert counters["requests"] == {("GET", "/users/{id}", 200): 1, ("GET", "unmatched", 404): 1}
    assert counters["durations"][("GET", "/users/{id}")][1] == 1  # 0.001 < 0.003 <= 0.005
    assert counters["durations"][("GET", "unmatched")][8] == 1  # 0.5 < 0.7 <= 1.0
    assert counters["matchHits"] == {"m1": 1} and counters["matchMisses"] == 1


def test_subscribers_get_new_records_pushed():
    async def scenario():
        log = RequestLog()
        queue = log.subscribe()
        log.observe(serve_event(path="/pushed"))
        record = await asyncio.wait_for(queue.get(), 1)
        log.unsubscribe(queue)
        log.observe(serve_event(path="/after"))
        return record, queue.qsize(), log.subscriber_count

    record, left, subscribers = asyncio.run(scenario())
    assert record.entry()["path"] == "/pushed"
    assert left == 0 and subscribers == 0


@pytest.mark.parametrize("query, field", [
    pytest.param({"limit": "-1"}, "limit", id="negative limit"),
    pytest.param({"offset": "x"}, "offset", id="offset not a number"),
    pytest.param({"hasError": "maybe"}, "hasError", id="not a boolean"),
    pytest.param({"limit": "99999999999999999999"}, "limit", id="huge limit"),
    pytest.param({"limit": "10001"}, "limit", id="limit over the page bound"),
    pytest.param({"offset": "9223372036854775808"}, "offset", id="huge offset"),
    pytest.param({"status": "1000"}, "status", id="status past three digits"),
    pytest.param({"unmatchedOnly": "maybe"}, "unmatchedOnly", id="unmatchedOnly not a boolean"),
])
def test_parse_request_filter_names_the_bad_parameter(query, field):
    with pytest.raises(QueryParameterError) as caught:
        parse_request_filter(query)
    assert caught.value.name == field


def test_parse_request_filter_reads_every_filter():
    filters = parse_request_filter({"limit": "5", "offset": "2", "method": "GET", "path": "/a",
                                    "matched": "m", "status": "200", "hasError": "false",
                                    "unmatchedOnly": "true", "workspaceId": "w",
                                    "mqttTopic": "t"})
    assert (filters.limit, filters.offset, filters.status, filters.has_error,
            filters.unmatched_only, filters.extra) == (5, 2, 200, False, True, {"mqttTopic": "t"})


def test_large_bodies_are_kept_truncated_with_their_true_size():
    from mocks.engine.core import ServeEvent
    from mocks.engine.requestlog import LOGGED_BODY_LIMIT, RequestLog
    from tests.helpers import make_request

    log = RequestLog(capacity=5)
    request = make_request("POST", "/upload", body=b"x" * (LOGGED_BODY_LIMIT * 3))
    assert request.text  # a matcher may have decoded the whole body
    log.observe(ServeEvent(request, 0.0, 1.0, 200, "m", "/upload"))
    entry = next(log.newest_first()).entry()
    assert entry["bodySize"] == LOGGED_BODY_LIMIT * 3
    assert len(entry["body"]) == LOGGED_BODY_LIMIT
    assert len(request.body) == LOGGED_BODY_LIMIT and "text" not in request.__dict__


@pytest.mark.parametrize("protocol", ["http", "grpc", "mqtt"])
def test_large_answers_are_kept_truncated_with_their_true_size(protocol):
    log = RequestLog(capacity=5)
    event = serve_event()
    event.protocol = protocol
    event.response_body = b"a" * (LOGGED_BODY_LIMIT * 3)
    log.observe(event)
    assert len(event.response_body) == LOGGED_BODY_LIMIT  # the full answer is not pinned
    entry = next(log.newest_first()).entry()
    assert entry["responseBodySize"] == LOGGED_BODY_LIMIT * 3
    assert entry["responseBodyTruncated"] is True
    assert len(entry["responseBody"]) == LOGGED_BODY_LIMIT


def test_small_answers_and_bodies_carry_their_size_and_no_truncation_flag():
    log = RequestLog(capacity=5)
    event = serve_event(body=b"hello")
    event.response_body = b"world!"
    log.observe(event)
    entry = next(log.newest_first()).entry()
    assert (entry["bodySize"], entry["responseBodySize"], entry["responseBody"]) == (
        5, 6, "world!")
    assert "bodyTruncated" not in entry and "responseBodyTruncated" not in entry


def test_large_request_bodies_are_flagged_truncated():
    log = RequestLog(capacity=5)
    log.observe(serve_event(body=b"x" * (LOGGED_BODY_LIMIT + 1)))
    entry = next(log.newest_first()).entry()
    assert entry["bodyTruncated"] is True and entry["bodySize"] == LOGGED_BODY_LIMIT + 1

