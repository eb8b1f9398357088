"""The admin port's ``GET /metrics`` against a real server: django-prometheus' families (views,
statuses, SQLite queries) beside the ``mockd_*`` families, each family once, and
``mockd_admin_requests_total`` covering both what Django served and what the admin gateway
answered itself."""
from __future__ import annotations

import random
import sqlite3

import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.helpers import http_mock, start_server

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with start_server(tmp_path_factory.mktemp("admin-metrics")) as process:
        yield process


def _scrape(admin) -> tuple[dict[str, list], dict[tuple[str, tuple], float]]:
    """``(family name -> families of that name, (sample name, labels) -> value)``."""
    answer = admin.get("/metrics")
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/plain")
    families: dict[str, list] = {}
    for family in text_string_to_metric_families(answer.text):
        families.setdefault(family.name, []).append(family)
    samples = {(sample.name, tuple(sorted(sample.labels.items()))): sample.value
               for found in families.values() for family in found
               for sample in family.samples}
    return families, samples


def _value(samples: dict, name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def test_metrics_show_django_prometheus_families_for_the_views_called(admin):
    _, before = _scrape(admin)
    assert admin.post("/mocks", json=http_mock("counted", "GET", "/counted")).status_code == 201
    for _ in range(3):
        assert admin.get("/mocks").status_code == 200
    assert admin.get("/mocks/counted").status_code == 200
    families, after = _scrape(admin)

    assert [name for name, found in families.items() if len(found) > 1] == []
    responses = "django_http_responses_total_by_status_view_method_total"
    listed = {"method": "GET", "status": "200", "view": "mockd-admin:list_mocks"}
    assert _value(after, responses, **listed) - _value(before, responses, **listed) == 3
    latency = "django_http_requests_latency_seconds_by_view_method_count"
    fetched = {"method": "GET", "view": "mockd-admin:get_mock"}
    assert _value(after, latency, **fetched) - _value(before, latency, **fetched) == 1
    queries = {"alias": "default", "vendor": "sqlite"}
    assert _value(after, "django_db_execute_total", **queries) > _value(
        before, "django_db_execute_total", **queries)

    admin_requests = "mockd_admin_requests_total"
    assert "mockd_admin_requests" in families
    ok = {"method": "GET", "status": "200"}
    # three lists, one fetch and the first scrape (counted once its answer went out)
    assert _value(after, admin_requests, **ok) - _value(before, admin_requests, **ok) == 5
    created = {"method": "POST", "status": "201"}
    assert _value(after, admin_requests, **created) - _value(before, admin_requests,
                                                             **created) == 1
    buckets = sorted(float(sample.labels["le"])
                     for family in families["mockd_admin_request_duration_seconds"]
                     for sample in family.samples
                     if sample.name.endswith("_bucket") and sample.labels["method"] == "GET")
    assert buckets == [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
                       float("inf")]
    assert "mockd_uptime_seconds" in families and "mockd_http_requests" in families


def test_gateway_answers_count_in_mockd_admin_requests_but_not_in_django_families(admin):
    _, before = _scrape(admin)
    preflight = admin.options("/mocks", headers={"Origin": "http://localhost:3000",
                                                 "Access-Control-Request-Method": "POST"})
    assert preflight.status_code == 200
    _, after = _scrape(admin)
    options = {"method": "OPTIONS", "status": "200"}
    assert _value(after, "mockd_admin_requests_total", **options) - _value(
        before, "mockd_admin_requests_total", **options) == 1
    assert not any(name.startswith("django_http_responses_total_by_status_view_method")
                   and dict(labels).get("method") == "OPTIONS" for name, labels in after)


def test_database_wrapper_keeps_the_write_ahead_log(server, admin):
    assert admin.post("/mocks", json=http_mock("stored", "GET", "/stored")).status_code == 201
    database = server.argv[server.argv.index("--data-dir") + 1] + "/mockd.sqlite3"
    with sqlite3.connect(database) as connection:
        assert connection.execute("PRAGMA journal_mode").fetchone() == ("wal",)


#: Distinct random unmatched paths sent: labelled by raw path they would add at least this many
#: series (each with its histogram's buckets), against the bound of 300 new lines.
UNMATCHED_PATHS = 500


def test_data_plane_labels_stay_bounded_whatever_paths_and_methods_clients_send(admin, data):
    """:data:`UNMATCHED_PATHS` distinct random unmatched paths, requests to one mock at random
    paths under its template, and random methods: ``/metrics`` grows by a fixed handful of
    series, never by one per raw path or method (behavior notes §17: ``path`` is the mock's
    template or ``unmatched``)."""
    assert admin.post("/mocks", json=http_mock("bounded-item", "GET",
                                               "/bounded/{id}")).status_code == 201
    assert admin.post("/mocks", json=http_mock("bounded-any", None,
                                               "/any-method")).status_code == 201
    lines_before = len(admin.get("/metrics").text.splitlines())
    _, before = _scrape(admin)
    rng = random.Random(17)
    raw_paths = [f"/random-{rng.getrandbits(64):016x}/{index}"
                 for index in range(UNMATCHED_PATHS)]
    for path in raw_paths:
        assert data.get(path).status_code == 404
    for index in range(100):
        assert data.get(f"/bounded/{rng.getrandbits(48):x}-{index}").status_code == 200
    # methods the HTTP parser accepts but no mock names (it refuses made-up ones with 400)
    methods = ["NOTIFY", "ACL", "MKCALENDAR", "SUBSCRIBE", "BIND", "CHECKOUT", "UNBIND",
               "REBIND", "MERGE", "MKACTIVITY"] * 5
    for index, method in enumerate(methods):
        assert data.request(method, "/any-method").status_code == 200
        assert data.request(method, f"/nowhere-{index}").status_code == 404
    text = admin.get("/metrics").text
    _, after = _scrape(admin)

    # a few new series (the template's, `other` methods', unmatched GETs: about 130 lines
    # with their buckets), never one per path: 500 paths would be 15,000 lines
    assert len(text.splitlines()) - lines_before <= 300
    assert not any(path in text for path in raw_paths[::10])
    assert "/nowhere-" not in text
    assert not any(f'method="{method}"' in text for method in methods)
    unmatched = {"method": "GET", "path": "unmatched", "status": "404"}
    assert _value(after, "mockd_http_requests_total", **unmatched) - _value(
        before, "mockd_http_requests_total", **unmatched) == UNMATCHED_PATHS
    templated = {"method": "GET", "path": "/bounded/{id}", "status": "200"}
    assert _value(after, "mockd_requests_total", **templated) - _value(
        before, "mockd_requests_total", **templated) == 100
    other = {"method": "other", "path": "/any-method", "status": "200"}
    assert _value(after, "mockd_http_requests_total", **other) == 50
    other_unmatched = {"method": "other", "path": "unmatched", "status": "404"}
    assert _value(after, "mockd_http_requests_total", **other_unmatched) == 50
    assert _value(after, "mockd_match_hits_total", mock_id="bounded-any") == 50
    assert _value(after, "mockd_match_misses_total") - _value(
        before, "mockd_match_misses_total") == UNMATCHED_PATHS + 50
    durations = "mockd_http_request_duration_seconds_count"
    assert _value(after, durations, method="GET", path="unmatched") - _value(
        before, durations, method="GET", path="unmatched") == UNMATCHED_PATHS
    # more new paths add no line to the data-plane families (one would show: equal counts)
    for index in range(100):
        assert data.get(f"/random-again-{rng.getrandbits(64):x}-{index}").status_code == 404
    assert _data_plane_lines(admin.get("/metrics").text) == _data_plane_lines(text)


def _data_plane_lines(text: str) -> int:
    """How many lines of the data-plane request families a scrape has."""
    return sum(1 for line in text.splitlines()
               if line.startswith(("mockd_http_request", "mockd_request", "mockd_match")))


def test_name_filter_answers_only_the_families_asked_for(admin, data):
    """``?name[]=`` keeps the families named (by family or sample name), as
    prometheus-client's handler does: the dashboard's counters without the histograms."""
    assert admin.post("/mocks", json=http_mock("filtered", "GET", "/filtered")).status_code \
        == 201
    assert data.get("/filtered").status_code == 200
    answer = admin.get("/metrics", params=[("name[]", "mockd_match_hits_total"),
                                           ("name[]", "mockd_http_requests_total"),
                                           ("name[]", "mockd_uptime_seconds")])
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/plain")
    families = {family.name: family for family in text_string_to_metric_families(answer.text)}
    assert sorted(families) == ["mockd_http_requests", "mockd_match_hits",
                                "mockd_uptime_seconds"]
    hits = {sample.labels["mock_id"]: sample.value
            for sample in families["mockd_match_hits"].samples}
    assert hits["filtered"] == 1
    whole = admin.get("/metrics").text
    assert len(answer.text) < len(whole) / 3
    assert admin.get("/metrics", params={"name[]": "no_such_family"}).text == ""
    histogram = admin.get("/metrics", params={
        "name[]": "mockd_request_duration_seconds_bucket"}).text
    assert [family.name for family in text_string_to_metric_families(histogram)] == [
        "mockd_request_duration_seconds"]


def test_too_many_names_are_refused_naming_the_parameter(admin):
    answer = admin.get("/metrics", params=[("name[]", f"family_{index}")
                                           for index in range(101)])
    assert answer.status_code == 400
    assert answer.json()["error"] == "validation_error"
    assert "name[]" in answer.json()["message"]
