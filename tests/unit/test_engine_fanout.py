"""The admin's merge of several engines (``mocks.control.engines``) with in-memory stand-ins
for remote engines: request log order and ids, verification, invocations, traffic counters,
pushes and health checks by version (issue 32 items 1 and 3)."""
from __future__ import annotations

import asyncio
from typing import Any

from mocks.control.engines import EngineSet, FanOutControl
from mocks.engine.remote import (EngineCallError, filter_query, merge_traffic,
                                 traffic_from_json, traffic_to_json)
from mocks.engine.requestlog import parse_request_filter
from mocks.loader import validate_config


class FakeRemote:
    """The part of ``RemoteEngine`` the fan-out calls, answering from lists."""

    def __init__(self, url: str, entries: list[dict[str, Any]], down: bool = False):
        self.url = url
        self.entries = entries
        self.down = down
        self.version = 0
        self.pushed: list[int] = []

    def has_token(self, token: str) -> bool:
        return True

    def _check(self) -> None:
        if self.down:
            raise EngineCallError(f"GET {self.url}/health: ConnectError refused")

    async def push(self, document: bytes, version: int) -> dict[str, Any]:
        self._check()
        self.version = version
        self.pushed.append(version)
        return {"message": "Configuration loaded", "mocks": 0}

    async def health(self) -> dict[str, Any]:
        self._check()
        return {"status": "healthy", "configVersion": self.version}

    async def requests(self, query: dict[str, Any]) -> dict[str, Any]:
        self._check()
        page = self.entries[:query["limit"]]
        return {"requests": page, "count": len(page), "total": len(self.entries)}

    async def verification(self, mock_id: str) -> dict[str, Any]:
        self._check()
        stamps = sorted(entry["timestamp"] for entry in self.entries)
        return {"mockId": mock_id, "callCount": len(stamps), "firstCalledAt": stamps[0],
                "lastCalledAt": stamps[-1]}


def entry(number: int, second: int) -> dict[str, Any]:
    return {"id": f"req-{number}", "timestamp": f"2026-11-27T10:00:{second:02d}.000Z"}


def fanout(*remotes: FakeRemote) -> FanOutControl:
    engines = EngineSet()
    for remote in remotes:
        record, _ = engines.add(remote.url, "token")
        record.remote = remote
    control = FanOutControl(None, engines)
    asyncio.run(control.apply_config(validate_config({"version": "1.0"})))
    for record in engines.records.values():  # registration pushes; here by hand
        asyncio.run(engines.push(record))
    return control


def test_the_request_log_merges_newest_first_with_the_engine_in_each_id():
    a = FakeRemote("http://a:4281", [entry(2, 30), entry(1, 10)])
    b = FakeRemote("http://b:4281", [entry(1, 20)])
    control = fanout(a, b)
    ids = dict(zip((a.url, b.url), control.engines.records))
    merged = asyncio.run(control.requests(parse_request_filter({"limit": "2"})))
    assert merged["total"] == 3 and merged["count"] == 2
    assert [item["id"] for item in merged["requests"]] == [f"req-2@{ids[a.url]}",
                                                           f"req-1@{ids[b.url]}"]
    counted = asyncio.run(control.verification("m"))
    assert counted == {"mockId": "m", "callCount": 3,
                       "firstCalledAt": "2026-11-27T10:00:10.000Z",
                       "lastCalledAt": "2026-11-27T10:00:30.000Z"}


def test_a_failing_engine_is_marked_unhealthy_left_out_then_caught_up_by_version():
    a = FakeRemote("http://a:4281", [entry(1, 1)])
    b = FakeRemote("http://b:4281", [entry(1, 2)])
    control = fanout(a, b)
    record_b = next(r for r in control.engines.records.values() if r.remote is b)
    b.down = True
    asyncio.run(control.apply_config(validate_config({"version": "1.0"})))
    assert not record_b.healthy and "refused" in record_b.last_error
    assert record_b.document()["status"] == "unhealthy"
    assert asyncio.run(control.requests(parse_request_filter({})))["total"] == 1
    asyncio.run(control.apply_config(validate_config({"version": "1.0"})))
    assert b.pushed == [1]  # version 3 did not wait on an engine known to be down
    b.down = False
    asyncio.run(control.engines.check_all())
    assert record_b.healthy and b.pushed == [1, 3] and a.version == 3


def test_traffic_counters_cross_the_link_and_add_up():
    one = {"requests": {("GET", "/a", 200): 2}, "durations": {("GET", "/a"): [1, 1, 0]},
           "durationSums": {("GET", "/a"): 0.5}, "matchHits": {"m": 2}, "matchMisses": 1,
           "errors": {}, "total": 3}
    assert traffic_from_json(traffic_to_json(one)) == one
    both = merge_traffic([one, traffic_from_json(traffic_to_json(one))])
    assert both["requests"] == {("GET", "/a", 200): 4}
    assert both["durations"] == {("GET", "/a"): [2, 2, 0]}
    assert both["matchHits"] == {"m": 4} and both["matchMisses"] == 2 and both["total"] == 6


def test_a_request_filter_becomes_the_same_query_for_a_remote_engine():
    filters = parse_request_filter({"method": "GET", "hasError": "false", "status": "404",
                                    "unmatchedOnly": "true", "mqttTopic": "t", "offset": "5"})
    query = filter_query(filters, 15)
    assert query == {"limit": 15, "offset": 0, "method": "GET", "status": 404,
                     "hasError": "false", "unmatchedOnly": "true", "mqttTopic": "t"}
    assert parse_request_filter({key: str(value) for key, value in query.items()}).status \
        == 404


def test_without_an_engine_of_its_own_the_admin_answers_503_not_attribute_errors():
    from mocks.control.errors import AdminError

    control = FanOutControl(None, EngineSet())
    assert getattr(control, "engine", None) is None  # the runner's test stays as it was
    for read in (lambda: control.engine, lambda: control.table_store,
                 lambda: control.scenarios()):
        try:
            read()
        except AdminError as error:
            assert (error.status, error.code) == (503, "no_engine")
        else:
            raise AssertionError("no 503")
    try:
        control.no_such_name
    except AdminError:
        raise AssertionError("an unknown name is no engine route") from None
    except AttributeError:
        pass


def test_engine_urls_are_http_and_on_loopback_unless_remote_engines_are_allowed():
    from types import SimpleNamespace

    from mockd_project.workers import admin_control
    from mocks.control.engines import engine_url_problem

    for url in ("http://127.0.0.1:4281", "https://localhost:1", "http://[::1]:2",
                "http://127.8.9.10", "http://[::ffff:127.0.0.1]:3"):
        assert engine_url_problem(url, remote_allowed=False) is None, url
    for url in ("http://10.0.0.7:4281", "http://engine-1:4281", "http://localhost.evil:1",
                "http://169.254.169.254/latest"):
        assert "--allow-remote-engines" in engine_url_problem(url, False), url
        assert engine_url_problem(url, True) is None, url
    for url in ("file:///etc/passwd", "gopher://127.0.0.1:70", "http://", "http://[::1"):
        assert engine_url_problem(url, True).startswith("url: use an http"), url
    options = SimpleNamespace(host="127.0.0.1", allow_remote_engines=False, workers=1,
                              engines_only=True)
    assert admin_control(options, None).engines.remote_allowed is False
    options.allow_remote_engines = True
    assert admin_control(options, None).engines.remote_allowed is True
    options.host, options.allow_remote_engines = "0.0.0.0", False  # deploy/: reachable
    assert admin_control(options, None).engines.remote_allowed is True
