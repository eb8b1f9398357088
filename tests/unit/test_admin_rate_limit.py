"""The admin rate limit and its headers: Limit is the burst actually allowed, Remaining counts
down from it, a 429 comes when it reaches 0 (behavior notes §3, §18; issue 14 item 6)."""
from __future__ import annotations

import asyncio
import time

import pytest

from mockd_project.middleware import AdminGateway, TokenBuckets
from mockd_project.runtime import runtime


def test_bucket_allows_the_burst_then_refuses():
    buckets = TokenBuckets(rate=100, burst=200)
    states = [buckets.take("ip", 10.0) for _ in range(201)]
    assert [state.remaining for state in states[:3]] == [199, 198, 197]
    assert all(state.limit == 200 for state in states)
    assert states[199].allowed and states[199].remaining == 0
    assert not states[200].allowed and states[200].remaining == 0


@pytest.mark.parametrize("requests", [1, 7, 50])
def test_remaining_is_limit_minus_requests(requests):
    buckets = TokenBuckets(rate=100, burst=200)
    state = None
    for _ in range(requests):
        state = buckets.take("ip", 5.0)
    assert state.remaining == state.limit - requests


def test_bucket_refills_at_the_rate_and_reports_when_full():
    buckets = TokenBuckets(rate=100, burst=200)
    for _ in range(200):
        buckets.take("ip", 0.0)
    refused = buckets.take("ip", 0.0)
    assert not refused.allowed and refused.retry_after == pytest.approx(0.01)
    assert refused.full_in == pytest.approx(2.0)
    later = buckets.take("ip", 0.5)  # 50 tokens came back, one is taken now
    assert later.allowed and later.remaining == 49
    assert later.full_in == pytest.approx(1.51)


def test_buckets_are_per_client():
    buckets = TokenBuckets(rate=1, burst=2)
    buckets.take("a", 0.0)
    buckets.take("a", 0.0)
    assert not buckets.take("a", 0.0).allowed
    assert buckets.take("b", 0.0).remaining == 1


async def _ok(scope, receive, send):
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"ok"})


def _headers(gateway: AdminGateway) -> tuple[int, dict[bytes, bytes]]:
    sent = []

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):
        sent.append(message)

    scope = {"type": "http", "method": "GET", "path": "/health", "query_string": b"",
             "headers": [], "client": ("127.0.0.1", 1)}
    asyncio.run(gateway(scope, receive, send))
    return sent[0]["status"], dict(sent[0]["headers"])


def test_gateway_headers_agree_and_429_comes_at_zero(monkeypatch):
    monkeypatch.setattr(runtime, "api_key", None)
    gateway = AdminGateway(_ok, auth_enabled=False, rate_per_second=2)  # burst 4
    answers = [_headers(gateway) for _ in range(5)]
    limits = {headers[b"x-ratelimit-limit"] for _, headers in answers}
    assert limits == {b"4"}
    remaining = [int(headers[b"x-ratelimit-remaining"]) for _, headers in answers]
    assert remaining == [3, 2, 1, 0, 0]
    assert [status for status, _ in answers] == [200, 200, 200, 200, 429]
    status, headers = answers[-1]
    assert headers[b"retry-after"] == b"1"
    reset = int(headers[b"x-ratelimit-reset"])
    assert time.time() + 1 <= reset <= time.time() + 3  # four tokens at 2/s: full in ~2 s
