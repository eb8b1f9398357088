"""The data-plane request metrics (behavior notes §17): their labels stay bounded whatever
clients send (methods, paths, many mocks), and the text ``/metrics`` writes for them itself
is line for line what prometheus-client writes for the same families."""
from __future__ import annotations

import math

import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from mockd_project import metrics
from mocks.engine import requestlog
from mocks.engine.core import ServeEvent
from mocks.engine.requestlog import TrafficCounters
from tests.helpers import make_request


def _event(method: str, path: str, status: int = 200, mock_id: str | None = None,
           template: str | None = None, duration_ms: float = 2.0) -> ServeEvent:
    return ServeEvent(make_request(method, path), 0.0, duration_ms, status, mock_id, template)


def _generic_text(traffic: dict) -> str:
    """The request families as prometheus-client's generic writer writes them."""

    class Families:
        def collect(self):
            return metrics.EngineCollector._traffic_families(traffic)

    registry = CollectorRegistry(auto_describe=False)
    registry.register(Families())
    return generate_latest(registry).decode()


def test_written_text_is_what_prometheus_client_writes():
    counters = TrafficCounters()
    templates = ["/users/{id}", '/odd "quoted" \\ path', "/line\nbreak", "/ünïcode"]
    for index in range(400):
        mock = index % 9
        counters.count(_event(
            ("GET", "POST", "grpc", "PUT")[index % 4], f"/raw/{index}",
            status=(200, 201, 404, 0)[index % 4],
            mock_id=None if mock == 0 else f"mock-{mock}",
            template=None if mock == 0 else templates[mock % len(templates)],
            duration_ms=(0.2, 7.5, 480.0, 12_000.0, 1.0)[index % 5]))
    for _ in range(1_000_001 // 50_000):  # counts past a million print as 1e+06
        counters.series[next(iter(counters.series))][0] += 50_000
    traffic = counters.snapshot()
    written = metrics.traffic_text(traffic)
    assert written == _generic_text(traffic)
    families = {family.name: family for family in text_string_to_metric_families(written)}
    assert sorted(families) == ["mockd_http_request_duration_seconds", "mockd_http_requests",
                                "mockd_match_hits", "mockd_request_duration_seconds",
                                "mockd_requests"]
    paths = {sample.labels["path"] for sample in families["mockd_http_requests"].samples}
    assert paths == set(templates) | {"unmatched"}


def test_name_filter_keeps_the_families_named():
    counters = TrafficCounters()
    counters.count(_event("GET", "/a", mock_id="a", template="/a"))
    traffic = counters.snapshot()
    only_counter = metrics.traffic_text(traffic, frozenset({"mockd_requests_total"}))
    assert [family.name for family in text_string_to_metric_families(only_counter)] == [
        "mockd_requests"]
    assert metrics.traffic_text(traffic, frozenset({"mockd_match_misses_total"})) == ""
    hits = metrics.traffic_text(traffic, frozenset({"mockd_match_hits_total"}))
    assert hits.splitlines()[-1] == 'mockd_match_hits_total{mock_id="a"} 1.0'
    assert metrics.family_wanted("mockd_http_request_duration_seconds",
                                 frozenset({"mockd_http_request_duration_seconds_sum"}))
    assert metrics.family_wanted("anything", None)


def test_raw_paths_and_unlisted_methods_never_become_labels():
    counters = TrafficCounters()
    for index in range(2_000):
        counters.count(_event("GET", f"/random/{index}", status=404))
        # an unmatched event that carries a template anyway is still unmatched
        counters.count(_event("DELETE", f"/other/{index}", status=404,
                              template=f"/other/{index}"))
    for method in ("NOTIFY", "BIND", "x-custom", "GET"):
        counters.count(_event(method, "/any", mock_id="any", template="/any"))
    assert len(counters.series) == 4  # GET and DELETE unmatched, other and GET on /any
    traffic = counters.snapshot()
    assert traffic["requests"] == {("GET", "unmatched", 404): 2_000,
                                   ("DELETE", "unmatched", 404): 2_000,
                                   ("other", "/any", 200): 3, ("GET", "/any", 200): 1}
    assert traffic["matchMisses"] == 4_000 and traffic["matchHits"] == {"any": 4}
    for protocol in ("grpc", "mqtt", "sse", "websocket", "PATCH", "PROPFIND"):
        assert protocol in requestlog.METHOD_LABELS


def test_series_past_the_cap_are_counted_under_other(monkeypatch):
    monkeypatch.setattr(requestlog, "MAX_SERIES", 10)
    counters = TrafficCounters()
    for index in range(50):
        counters.count(_event("GET", f"/m/{index}", mock_id=f"m{index}",
                              template=f"/m/{index}", duration_ms=index))
    counters.count(_event("GET", "/m/0", mock_id="m0", template="/m/0"))  # kept series
    counters.count(_event("GET", "/nothing", status=404))  # unmatched past the cap
    assert len(counters.series) == 12
    traffic = counters.snapshot()
    assert traffic["requests"][("GET", "other", 200)] == 40
    assert traffic["requests"][("GET", "/m/0", 200)] == 2
    assert traffic["requests"][("GET", "unmatched", 404)] == 1
    assert sorted(traffic["matchHits"]) == sorted(f"m{index}" for index in range(10))
    assert traffic["matchMisses"] == 1 and traffic["total"] == 52
    assert math.isclose(traffic["durationSums"][("GET", "other")],
                        sum(range(10, 50)) / 1000)


@pytest.mark.parametrize("value, text", [("plain", "plain"), ('a"b', 'a\\"b'),
                                         ("a\\b", "a\\\\b"), ("a\nb", "a\\nb")])
def test_label_values_are_escaped_as_the_text_format_wants(value, text):
    assert metrics._label_value(value) == text
