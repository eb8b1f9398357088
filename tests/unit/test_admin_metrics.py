"""The admin port's ``/metrics`` answer without a server: one exposition merging the
``mockd_*`` families with django-prometheus' and prometheus-client's, and the two
``mockd_admin_*`` families summed from django-prometheus' per-view series plus the answers
the gateway gives before Django."""
from __future__ import annotations

import asyncio
import math

import django_prometheus.conf
from django.conf import settings
from django_prometheus.middleware import Metrics as DjangoMetrics
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from mockd_project import metrics
from mockd_project.middleware import AdminGateway
from mocks.engine.requestlog import DURATION_BUCKETS


async def _django_stand_in(scope, receive, send):
    await receive()
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"ok"})


def _status(gateway: AdminGateway, path: str, headers: dict[bytes, bytes] | None = None) -> int:
    """Drive the gateway once with ``PUT path``; the answered status."""
    sent: list[dict] = []

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):
        sent.append(message)

    scope = {"type": "http", "method": "PUT", "path": path, "query_string": b"",
             "headers": list((headers or {}).items()), "client": ("127.0.0.1", 1)}
    asyncio.run(gateway(scope, receive, send))
    return sent[0]["status"]


def _families() -> dict[str, list]:
    """Family name -> every family of that name in one scrape (a list, to see duplicates)."""
    found: dict[str, list] = {}
    for family in text_string_to_metric_families(generate_latest(metrics.exposition).decode()):
        found.setdefault(family.name, []).append(family)
    return found


def _admin_samples() -> dict[tuple[str, tuple], float]:
    """``(sample name, sorted labels) -> value`` of the two ``mockd_admin_*`` families."""
    return {(sample.name, tuple(sorted(sample.labels.items()))): sample.value
            for family in metrics.AdminCollector().collect() for sample in family.samples}


def _delta(before: dict, after: dict, name: str, **labels: str) -> float:
    key = (name, tuple(sorted(labels.items())))
    return after.get(key, 0.0) - before.get(key, 0.0)


def test_exposition_merges_every_source_and_names_each_family_once():
    DjangoMetrics.get_instance()  # django-prometheus registers its families on first use
    families = _families()
    duplicates = sorted(name for name, found in families.items() if len(found) > 1)
    assert duplicates == []
    for name in ("mockd_uptime_seconds", "mockd_http_requests", "mockd_admin_requests",
                 "mockd_admin_request_duration_seconds", "mockd_port_info",
                 "django_http_requests_latency_seconds_by_view_method",
                 "django_http_responses_total_by_status_view_method", "django_db_execute",
                 "python_gc_objects_collected", "python_info"):
        assert name in families, name
    # the gateway's own helper series are summed into mockd_admin_*, never exposed
    assert not any(name.startswith("mockd_admin_gateway") for name in families)


def test_admin_requests_sum_django_series_over_views_plus_gateway_answers():
    django = DjangoMetrics.get_instance()
    before = _admin_samples()
    django.responses_by_status_view_method.labels("200", "view-a", "PATCH").inc()
    django.responses_by_status_view_method.labels("200", "view-b", "PATCH").inc(2)
    django.responses_by_status_view_method.labels("404", "view-a", "PATCH").inc()
    django.requests_latency_by_view_method.labels("view-a", "PATCH").observe(0.003)
    django.requests_latency_by_view_method.labels("view-b", "PATCH").observe(0.2)
    metrics.record_gateway_answer("PATCH", 401, 0.0004)
    after = _admin_samples()
    assert _delta(before, after, "mockd_admin_requests_total", method="PATCH", status="200") == 3
    assert _delta(before, after, "mockd_admin_requests_total", method="PATCH", status="404") == 1
    assert _delta(before, after, "mockd_admin_requests_total", method="PATCH", status="401") == 1
    name = "mockd_admin_request_duration_seconds"
    assert _delta(before, after, f"{name}_count", method="PATCH") == 3
    assert _delta(before, after, f"{name}_bucket", method="PATCH", le="0.001") == 1
    assert _delta(before, after, f"{name}_bucket", method="PATCH", le="0.005") == 2
    assert _delta(before, after, f"{name}_bucket", method="PATCH", le="0.25") == 3
    assert _delta(before, after, f"{name}_bucket", method="PATCH", le="+Inf") == 3
    assert math.isclose(_delta(before, after, f"{name}_sum", method="PATCH"), 0.2034)


def test_admin_duration_uses_the_documented_buckets_for_django_and_the_gateway():
    expected = (*DURATION_BUCKETS, math.inf)
    assert tuple(settings.PROMETHEUS_LATENCY_BUCKETS) == expected
    assert tuple(django_prometheus.conf.PROMETHEUS_LATENCY_BUCKETS) == expected
    metrics.record_gateway_answer("GET", 200, 0.01)
    DjangoMetrics.get_instance().requests_latency_by_view_method.labels("v", "GET").observe(1)
    bounds = {float(sample.labels["le"]) for family in metrics.AdminCollector().collect()
              for sample in family.samples if sample.name.endswith("_bucket")}
    assert bounds == set(expected)


def test_gateway_counts_its_own_answers_and_static_files_but_not_what_django_serves(
        monkeypatch):
    monkeypatch.setattr(metrics.runtime, "api_key", "secret")
    gateway = AdminGateway(_django_stand_in, auth_enabled=True, rate_per_second=0,
                           static_prefix="/static/")
    key = {b"x-api-key": b"secret"}
    before = _admin_samples()
    assert _status(gateway, "/mocks") == 401  # answered by the gateway itself
    assert _status(gateway, "/static/app.js", key) == 200
    assert _status(gateway, "/mocks", key) == 200  # Django's part
    after = _admin_samples()
    assert _delta(before, after, "mockd_admin_requests_total", method="PUT", status="401") == 1
    # the static answer only: the /mocks answer is django-prometheus' to count
    assert _delta(before, after, "mockd_admin_requests_total", method="PUT", status="200") == 1
    assert _delta(before, after, "mockd_admin_request_duration_seconds_count",
                  method="PUT") == 2
