"""Prometheus metrics of the admin port: ``GET /metrics`` (no auth).

One answer, three sources:

* ``mockd_*`` data-plane families. The data plane does not touch prometheus-client: the
  engine's request log keeps plain O(1) counters
  (:class:`mocks.engine.requestlog.TrafficCounters`) and :class:`EngineCollector` turns a copy
  of them into metric families at scrape time.
* django-prometheus' families (``django_http_*`` by view, method and status; ``django_db_*``
  for the SQLite queries), measured by its two middlewares and its database wrapper (see
  ``settings.py``), next to prometheus-client's process, platform and GC collectors. All of
  these live in prometheus-client's default ``REGISTRY``.
* ``mockd_admin_requests_total`` and ``mockd_admin_request_duration_seconds``, derived at
  scrape time by :class:`AdminCollector` (see there for why they are not measured a second
  time).

Families are named as in the metrics section of ``docs/admin-api.md``; histogram buckets are
0.001 ... 10 s.
"""
from __future__ import annotations

import time
from collections import defaultdict
from typing import Any, Iterable, Iterator

from django.http import HttpRequest, HttpResponse
from django_prometheus.middleware import Metrics as DjangoMetrics
from ninja import Router
from prometheus_client import (REGISTRY, CollectorRegistry, Counter, Histogram,
                               disable_created_metrics, generate_latest)
from prometheus_client.core import (CounterMetricFamily, GaugeMetricFamily,
                                    HistogramMetricFamily, Metric)
from prometheus_client.utils import floatToGoString

from mockd_project.runtime import runtime
from mocks.control import openapi_docs as oa
from mocks.control.errors import validation_error
from mocks.engine.requestlog import DURATION_BUCKETS

#: Text exposition format served on ``/metrics``.
METRICS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

router = Router(tags=["metrics"])

# `*_created` series only add noise to a local tool's scrape.
disable_created_metrics()

#: The ``mockd_*`` families; everything else comes from the default ``REGISTRY``.
registry = CollectorRegistry(auto_describe=False)

# Admin answers Django's middleware chain never sees, so django-prometheus cannot count them:
# the gateway's own (CORS preflight, 401, 413, 429) and static files. Registered nowhere:
# they are only read by AdminCollector, which adds them to django-prometheus' series.
GATEWAY_REQUESTS = Counter("mockd_admin_gateway_requests",
                           "Admin answers given before Django, by method and status.",
                           ["method", "status"], registry=None)
GATEWAY_DURATION = Histogram("mockd_admin_gateway_request_duration_seconds",
                             "Duration of admin answers given before Django, in seconds.",
                             ["method"], buckets=DURATION_BUCKETS, registry=None)


def record_gateway_answer(method: str, status: int, seconds: float) -> None:
    """Count one admin answer that did not go through Django's middleware chain.

    Args:
        method: the HTTP method as received (``"GET"``, ``"OPTIONS"``...).
        status: the HTTP status answered (``500`` when nothing was answered).
        seconds: wall time from the request's arrival to the end of the answer, in seconds.
    """
    GATEWAY_REQUESTS.labels(method, str(status)).inc()
    GATEWAY_DURATION.labels(method).observe(seconds)


def _bound(value: float) -> str:
    return repr(float(value))


#: ``(family name, help)`` of the data-plane request counters and duration histograms: the
#: §17 names and their ``mockd_requests_*`` twins. Their series are one per mock path
#: template (or ``unmatched``), so with many mocks they are most of the scrape; the view
#: writes them and the hits per mock itself (:func:`traffic_text`) rather than through
#: prometheus-client's generic writer, which costs about 60 µs a line.
REQUEST_FAMILIES = (("mockd_http_requests", "Data-plane requests by method, mock path "
                                            "template and status."),
                    ("mockd_requests", "Data-plane requests by method, mock path template "
                                       "and status."))
DURATION_FAMILIES = (("mockd_http_request_duration_seconds",
                      "Data-plane request duration in seconds."),
                     ("mockd_request_duration_seconds",
                      "Data-plane request duration in seconds."))
#: The hits per mock: one series per mock, written by :func:`traffic_text` too.
HITS_FAMILY = "mockd_match_hits"
HITS_HELP = "Requests answered, by mock id."
_BUCKET_BOUNDS = tuple(_bound(bound) for bound in DURATION_BUCKETS) + ("+Inf",)


def _request_rows(traffic: dict[str, Any]) -> list[tuple[str, str, str, int]]:
    """``(method, path, status, count)`` of the request counters, sorted."""
    return [(method, path, str(code), count)
            for (method, path, code), count in sorted(traffic.get("requests", {}).items())]


def _duration_rows(traffic: dict[str, Any]) -> list[tuple[str, str, list[int], float]]:
    """``(method, path, cumulative counts of the 12 bounds and +Inf, sum in s)``, sorted."""
    sums = traffic.get("durationSums", {})
    rows = []
    for (method, path), counts in sorted(traffic.get("durations", {}).items()):
        running = 0
        cumulative = []
        for count in counts:
            running += count
            cumulative.append(running)
        rows.append((method, path, cumulative, sums.get((method, path), 0.0)))
    return rows


def _label_value(text: str) -> str:
    """A label value escaped as the text format wants (backslash, quote, newline)."""
    return text.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def traffic_text(traffic: dict[str, Any], names: frozenset[str] | None = None) -> str:
    """The data-plane request counters, duration histograms and hits per mock
    (:data:`REQUEST_FAMILIES`, :data:`DURATION_FAMILIES`, :data:`HITS_FAMILY`) in the text
    exposition format, line for line what
    :func:`prometheus_client.generate_latest` writes for the same families, in about a
    tenth of its time.

    Args:
        traffic: :meth:`mocks.engine.requestlog.TrafficCounters.snapshot`.
        names: only the families :func:`family_wanted` accepts for these names (None: all).
    """
    number_texts: dict[float, str] = {}

    def number(value: float) -> str:
        text = number_texts.get(value)
        if text is None:
            text = number_texts[value] = floatToGoString(value)
        return text

    lines: list[str] = []
    requests = [(f'method="{_label_value(method)}",path="{_label_value(path)}",'
                 f'status="{_label_value(status)}"', number(count))
                for method, path, status, count in _request_rows(traffic)]
    for name, help_text in REQUEST_FAMILIES:
        if not family_wanted(name, names):
            continue
        lines.append(f"# HELP {name}_total {help_text}\n# TYPE {name}_total counter\n")
        lines.extend(f"{name}_total{{{labels}}} {value}\n" for labels, value in requests)
    durations = [(f'method="{_label_value(method)}",path="{_label_value(path)}"',
                  [number(count) for count in cumulative], number(total))
                 for method, path, cumulative, total in _duration_rows(traffic)]
    for name, help_text in DURATION_FAMILIES:
        if not family_wanted(name, names):
            continue
        lines.append(f"# HELP {name} {help_text}\n# TYPE {name} histogram\n")
        for labels, cumulative, total in durations:
            lines.extend(f'{name}_bucket{{le="{bound}",{labels}}} {count}\n'
                         for bound, count in zip(_BUCKET_BOUNDS, cumulative))
            lines.append(f"{name}_count{{{labels}}} {cumulative[-1]}\n"
                         f"{name}_sum{{{labels}}} {total}\n")
    if family_wanted(HITS_FAMILY, names):
        lines.append(f"# HELP {HITS_FAMILY}_total {HITS_HELP}\n"
                     f"# TYPE {HITS_FAMILY}_total counter\n")
        lines.extend(f'{HITS_FAMILY}_total{{mock_id="{_label_value(mock_id)}"}} {number(count)}\n'
                     for mock_id, count in sorted(traffic.get("matchHits", {}).items()))
    return "".join(lines)


class EngineCollector:
    """Metric families built from one copy of the engine's counters and status.

    ``data`` is set right before :func:`generate_latest` runs (on the same loop, with no
    await in between, so concurrent scrapes never mix their copies). ``traffic_as_text`` is
    set by the view while it writes the request families itself (:func:`traffic_text`).
    """

    def __init__(self) -> None:
        self.data: dict[str, Any] | None = None
        self.traffic_as_text = False

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
        if not self.traffic_as_text:
            yield from self._traffic_families(traffic)
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
        for row in status.get("grpcPorts") or ():
            port_info.add_metric([str(row["port"]), row["protocol"], row["component"]], 1)
        yield port_info


    @staticmethod
    def _traffic_families(traffic: dict[str, Any]) -> Iterator[Metric]:
        """:data:`REQUEST_FAMILIES`, :data:`DURATION_FAMILIES` and :data:`HITS_FAMILY` as
        metric families."""
        requests = _request_rows(traffic)
        for name, help_text in REQUEST_FAMILIES:
            family = CounterMetricFamily(name, help_text, labels=["method", "path", "status"])
            for method, path, status, count in requests:
                family.add_metric([method, path, status], count)
            yield family
        durations = _duration_rows(traffic)
        for name, help_text in DURATION_FAMILIES:
            histogram = HistogramMetricFamily(name, help_text, labels=["method", "path"])
            for method, path, cumulative, total in durations:
                histogram.add_metric([method, path], list(zip(_BUCKET_BOUNDS, cumulative)),
                                     total)
            yield histogram
        hits = CounterMetricFamily(HITS_FAMILY, HITS_HELP, labels=["mock_id"])
        for mock_id, count in sorted(traffic.get("matchHits", {}).items()):
            hits.add_metric([mock_id], count)
        yield hits


engine_collector = EngineCollector()
registry.register(engine_collector)


class AdminCollector:
    """``mockd_admin_requests_total{method,status}`` and
    ``mockd_admin_request_duration_seconds{method}``, summed at scrape time.

    Why derived rather than measured: django-prometheus' middlewares already count and time
    every request Django serves (``django_http_responses_total_by_status_view_method`` and
    ``django_http_requests_latency_seconds_by_view_method``); timing the same requests a second
    time in the gateway would keep two clocks that can disagree. The two ``mockd_admin_*``
    names stay because dashboards and alerts use them: they are those families summed over
    ``view``, plus the answers Django never sees (:func:`record_gateway_answer`), so every
    answer of the admin port is in them exactly once. ``settings.PROMETHEUS_LATENCY_BUCKETS``
    gives django-prometheus the same buckets as ours (0.001 ... 10 s), so bucket counts add
    up bound by bound.
    """

    def describe(self) -> list[Metric]:
        """Nothing to describe ahead: the label values depend on the traffic seen."""
        return []

    def collect(self) -> Iterator[Metric]:
        """Yield the two ``mockd_admin_*`` families."""
        django = DjangoMetrics.get_instance()
        counts: dict[tuple[str, str], float] = defaultdict(float)
        for sample in _samples((django.responses_by_status_view_method, GATEWAY_REQUESTS),
                               "_total"):
            counts[(sample.labels["method"], sample.labels["status"])] += sample.value
        requests = CounterMetricFamily("mockd_admin_requests",
                                       "Admin API requests by method and status.",
                                       labels=["method", "status"])
        for (method, status), count in sorted(counts.items()):
            requests.add_metric([method, status], count)
        yield requests

        buckets: dict[str, dict[float, float]] = defaultdict(lambda: defaultdict(float))
        sums: dict[str, float] = defaultdict(float)
        # one pass, so the buckets and the sum of a method come from the same collection
        for sample in _samples((django.requests_latency_by_view_method, GATEWAY_DURATION),
                               ("_bucket", "_sum")):
            if sample.name.endswith("_sum"):
                sums[sample.labels["method"]] += sample.value
            else:
                buckets[sample.labels["method"]][float(sample.labels["le"])] += sample.value
        duration = HistogramMetricFamily("mockd_admin_request_duration_seconds",
                                         "Admin API request duration in seconds.",
                                         labels=["method"])
        for method, by_bound in sorted(buckets.items()):
            duration.add_metric([method], [(floatToGoString(bound), count)
                                           for bound, count in sorted(by_bound.items())],
                                sums[method])
        yield duration


def _samples(metrics: Iterable[Any], suffix: str | tuple[str, ...]) -> Iterator[Any]:
    """The samples of prometheus-client metric objects whose name ends with ``suffix`` (one
    suffix or a tuple of them)."""
    for metric in metrics:
        for family in metric.collect():
            for sample in family.samples:
                if sample.name.endswith(suffix):
                    yield sample


registry.register(AdminCollector())


#: Most ``name[]`` values one scrape may give.
MAX_NAMES = 100

#: What a family's samples add to its name in the text format.
_SAMPLE_SUFFIXES = ("", "_total", "_bucket", "_count", "_sum", "_created", "_info")


def family_wanted(family_name: str, names: frozenset[str] | None) -> bool:
    """Whether a family is written when the scrape asks for ``names`` (``name[]``; None:
    every family): its name or one of its sample names (``x_total``, ``x_bucket``...) is
    asked for, as prometheus-client's own handler filters."""
    return names is None or any(family_name + suffix in names for suffix in _SAMPLE_SUFFIXES)


class _Exposition:
    """Every family ``/metrics`` serves: ours, then the default ``REGISTRY``'s. A family name
    is written once (the first source wins): a duplicate would make the scrape invalid.
    ``names`` keeps only the families :func:`family_wanted` accepts."""

    def __init__(self, names: frozenset[str] | None = None) -> None:
        self.names = names

    def collect(self) -> Iterator[Metric]:
        seen: set[str] = set()
        for source in (registry, REGISTRY):
            for family in source.collect():
                if family.name not in seen:
                    seen.add(family.name)
                    if family_wanted(family.name, self.names):
                        yield family


exposition = _Exposition()


@router.get("/metrics", summary="Prometheus metrics (no auth)", openapi_extra=oa.answers({
    200: oa.Raw(f"# HELP {HITS_FAMILY}_total {HITS_HELP}\n"
                f"# TYPE {HITS_FAMILY}_total counter\n"
                f'{HITS_FAMILY}_total{{mock_id="http_a1b2c3d4e5f60718"}} 3.0\n',
                "text/plain; version=0.0.4; charset=utf-8"),
    400: oa.bad_request("validation_error",
                        f"name[]: at most {MAX_NAMES} names, got {MAX_NAMES + 1}")}))
async def metrics(request: HttpRequest) -> HttpResponse:
    """The text exposition format: the ``mockd_*`` families, django-prometheus'
    ``django_http_*`` and ``django_db_*`` families, and the process and runtime metrics.

    ``?name[]=<sample name>`` (repeatable, at most :data:`MAX_NAMES`) keeps only the families
    named, as prometheus-client's handler does: ``name[]=mockd_match_hits_total`` answers the
    hits per mock without the per-template histograms. More names -> 400
    ``validation_error`` naming ``name[]``."""
    names = request.GET.getlist("name[]")
    if len(names) > MAX_NAMES:
        raise validation_error(f"name[]: at most {MAX_NAMES} names, got {len(names)}")
    wanted = frozenset(names) if names else None
    control = runtime.control
    data: dict[str, Any] = {}
    if control is not None:
        data["traffic"] = await control.traffic()
        data["status"] = await control.status()
        data["streamSubscribers"] = data["status"].get("streamSubscribers", 0)
    engine_collector.data = data
    engine_collector.traffic_as_text = True
    try:
        body = (generate_latest(exposition if wanted is None else _Exposition(wanted))
                + traffic_text(data.get("traffic") or {}, wanted).encode())
    finally:
        engine_collector.traffic_as_text = False
    return HttpResponse(body, content_type=METRICS_CONTENT_TYPE)
