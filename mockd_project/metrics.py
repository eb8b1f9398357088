"""Prometheus metrics of the admin port: ``GET /metrics`` (no auth).

The data plane does not touch prometheus-client: the engine's request log keeps plain O(1)
counters (:class:`mocks.engine.requestlog.TrafficCounters`) and this module turns a copy of
them into metric families at scrape time. Admin-side traffic is counted with ordinary
prometheus-client metrics by the admin gateway.

Source: SPEC "Health and metrics"; behavior notes §17 (prefix ``mockd_``, the metric names,
labels and histogram buckets).
"""
from __future__ import annotations

import time
from typing import Any, Iterator

from django.http import HttpRequest, HttpResponse
from ninja import Router
from prometheus_client import (CollectorRegistry, Counter, GCCollector, Histogram,
                               PlatformCollector, ProcessCollector, disable_created_metrics,
                               generate_latest)
from prometheus_client.core import (CounterMetricFamily, GaugeMetricFamily,
                                    HistogramMetricFamily, Metric)

from mockd_project.runtime import runtime
from mocks.engine.requestlog import DURATION_BUCKETS

#: Text exposition format served on ``/metrics``.
METRICS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

router = Router(tags=["metrics"])

# `*_created` series only add noise to a local tool's scrape.
disable_created_metrics()

registry = CollectorRegistry(auto_describe=False)
ProcessCollector(registry=registry)
PlatformCollector(registry=registry)
GCCollector(registry=registry)

#: Admin API requests by method and status (counted by the admin gateway).
ADMIN_REQUESTS = Counter("mockd_admin_requests", "Admin API requests.", ["method", "status"],
                         registry=registry)
#: Admin API request durations in seconds.
ADMIN_DURATION = Histogram("mockd_admin_request_duration_seconds",
                           "Admin API request duration in seconds.", ["method"],
                           buckets=DURATION_BUCKETS, registry=registry)


def _bound(value: float) -> str:
    return repr(float(value))


class EngineCollector:
    """Metric families built from one copy of the engine's counters and status.

    ``data`` is set right before :func:`generate_latest` runs (on the same loop, with no
    await in between, so concurrent scrapes never mix their copies).
    """

    def __init__(self) -> None:
        self.data: dict[str, Any] | None = None

    def describe(self) -> list[Metric]:
        """No fixed description: families depend on the traffic seen."""
        return []

    def collect(self) -> Iterator[Metric]:
        """Yield the ``mockd_*`` families of behavior notes §17."""
        data = self.data or {}
        traffic = data.get("traffic") or {}
        status = data.get("status") or {}
        uptime = GaugeMetricFamily("mockd_uptime_seconds", "Seconds since the server started.")
        uptime.add_metric([], time.time() - runtime.started_at)
        yield uptime
        for name in ("mockd_http_requests", "mockd_requests"):
            family = CounterMetricFamily(name, "Data-plane requests by method, mock path "
                                               "template and status.",
                                         labels=["method", "path", "status"])
            for (method, path, code), count in sorted(traffic.get("requests", {}).items()):
                family.add_metric([method, path, str(code)], count)
            yield family
        for name in ("mockd_http_request_duration_seconds", "mockd_request_duration_seconds"):
            histogram = HistogramMetricFamily(name, "Data-plane request duration in seconds.",
                                              labels=["method", "path"])
            sums = traffic.get("durationSums", {})
            for (method, path), counts in sorted(traffic.get("durations", {}).items()):
                running = 0
                buckets = []
                for bound, count in zip(DURATION_BUCKETS, counts):
                    running += count
                    buckets.append((_bound(bound), running))
                buckets.append(("+Inf", running + counts[-1]))
                histogram.add_metric([method, path], buckets, sums.get((method, path), 0.0))
            yield histogram
        mocks_total = GaugeMetricFamily("mockd_mocks_total", "Mocks by type.", labels=["type"])
        mocks_enabled = GaugeMetricFamily("mockd_mocks_enabled", "Enabled mocks by type.",
                                          labels=["type"])
        for mock_type, count in sorted(status.get("mocksByType", {}).items()):
            mocks_total.add_metric([mock_type], count)
            mocks_enabled.add_metric([mock_type],
                                     status.get("enabledByType", {}).get(mock_type, 0))
        yield mocks_total
        yield mocks_enabled
        connections = GaugeMetricFamily("mockd_active_connections",
                                        "Open streaming connections by protocol.",
                                        labels=["protocol"])
        connections.add_metric(["request-stream"], data.get("streamSubscribers", 0))
        for protocol, count in sorted((status.get("openStreams") or {}).items()):
            connections.add_metric([protocol], count)
        yield connections
        hits = CounterMetricFamily("mockd_match_hits", "Requests answered, by mock id.",
                                   labels=["mock_id"])
        for mock_id, count in sorted(traffic.get("matchHits", {}).items()):
            hits.add_metric([mock_id], count)
        yield hits
        misses = CounterMetricFamily("mockd_match_misses", "Requests no mock matched.")
        misses.add_metric([], traffic.get("matchMisses", 0))
        yield misses
        errors = CounterMetricFamily("mockd_errors", "Errors the engine answered itself, "
                                                     "by type.", labels=["type"])
        for error_type, count in sorted(traffic.get("errors", {}).items()):
            errors.add_metric([error_type], count)
        yield errors
        port_info = GaugeMetricFamily("mockd_port_info", "Listening ports.",
                                      labels=["port", "protocol", "component"])
        for key, component in (("admin", "Admin API"), ("data", "Mock Engine"),
                               ("control", "Engine Control")):
            if key in runtime.ports:
                port_info.add_metric([str(runtime.ports[key]), "HTTP", component], 1)
        yield port_info


engine_collector = EngineCollector()
registry.register(engine_collector)


@router.get("/metrics", summary="Prometheus metrics (no auth)")
async def metrics(request: HttpRequest) -> HttpResponse:
    """The text exposition format of every ``mockd_*`` metric plus process/runtime metrics."""
    control = runtime.control
    data: dict[str, Any] = {}
    if control is not None:
        data["traffic"] = await control.traffic()
        data["status"] = await control.status()
        data["streamSubscribers"] = data["status"].get("streamSubscribers", 0)
    engine_collector.data = data
    body = generate_latest(registry)
    return HttpResponse(body, content_type=METRICS_CONTENT_TYPE)
