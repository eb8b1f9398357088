"""Admin niceties against a real `mockd start`: truthful rate-limit headers, the OpenAPI
export of mocks without a method, and the dashboard routes `/folders`, `/preferences`,
`/formats`, `/templates`, `/handlers` (issue 14 item 6; behavior notes §1 "Other routes",
§3, §13, §18)."""
from __future__ import annotations

import json
import time

import pytest
import yaml

from tests.helpers import (MOCKD, MockdProcess, free_port, http_mock, isolated_env, make_config,
                           run_mockd, start_server)

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with start_server(tmp_path_factory.mktemp("admin-extras"),
                      make_config(http_mock("any-method", None, "/anything", body={"ok": True}),
                                  http_mock("get-only", "GET", "/only", body="only"))) as process:
        yield process


# ---------------------------------------------------------------------------- rate limit


def test_rate_limit_headers_count_down_to_the_429(tmp_path):
    port, admin_port = free_port(), free_port()
    argv = [MOCKD, "start", "--port", str(port), "--admin-port", str(admin_port),
            "--data-dir", str(tmp_path / "data"), "--no-auth"]
    # 2 requests/s, so the bucket holds 4 and hardly refills while the test runs
    with MockdProcess(argv, isolated_env(tmp_path, MOCKD_ADMIN_RATE_LIMIT="2"), tmp_path,
                      tmp_path / "server.log") as process:
        process.admin = f"http://127.0.0.1:{admin_port}"
        process.wait_healthy(process.admin + "/health")
        time.sleep(2.5)  # the readiness polls took tokens: let the bucket fill up again
        with process.admin_client() as admin:
            answers = [admin.get("/mocks") for _ in range(5)]
    limit = int(answers[0].headers["X-RateLimit-Limit"])
    assert limit == 4
    for count, answer in enumerate(answers[:4], start=1):
        assert answer.status_code == 200
        assert int(answer.headers["X-RateLimit-Limit"]) == limit
        assert int(answer.headers["X-RateLimit-Remaining"]) == limit - count
    refused = answers[4]
    assert refused.status_code == 429 and refused.text == "Too Many Requests"
    assert refused.headers["X-RateLimit-Remaining"] == "0"
    assert int(refused.headers["Retry-After"]) >= 1
    assert int(refused.headers["X-RateLimit-Reset"]) >= int(answers[3].headers["X-RateLimit-Reset"])


def test_default_rate_limit_headers_say_burst_200(admin):
    first = admin.get("/mocks")
    second = admin.get("/mocks")
    assert first.headers["X-RateLimit-Limit"] == second.headers["X-RateLimit-Limit"] == "200"
    assert int(second.headers["X-RateLimit-Remaining"]) <= int(
        first.headers["X-RateLimit-Remaining"])


# ---------------------------------------------------------------------------- openapi export


def test_export_openapi_of_a_mock_without_method_lists_every_method(server, tmp_path):
    result = run_mockd(["export", "--format", "openapi", "--admin-url", server.admin],
                       tmp_path)
    assert result.returncode == 0, result.stderr
    document = yaml.safe_load(result.stdout)
    assert sorted(document["paths"]["/anything"]) == [
        "delete", "get", "head", "options", "patch", "post", "put"]
    assert list(document["paths"]["/only"]) == ["get"]


def test_openapi_route_lists_every_method_too(admin):
    document = admin.get("/openapi.json").json()
    assert len(document["paths"]["/anything"]) == 7
    assert json.dumps(document)  # plain JSON
