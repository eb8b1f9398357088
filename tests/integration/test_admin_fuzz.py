"""The admin API fuzzed with schemathesis against its own OpenAPI document: no 500s
(issue 3 "Bad input"). Runs against a real `mockd start` (no auth, rate limit off, so the
generated requests reach the operations)."""
from __future__ import annotations

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings

from tests.helpers import MOCKD, MockdProcess, free_port, http_mock, isolated_env, make_config
from tests.helpers import write_config

pytestmark = pytest.mark.integration

#: Generated cases per operation (hypothesis examples; derandomized, so runs repeat).
EXAMPLES_PER_OPERATION = 15


@pytest.fixture(scope="module")
def admin_url(tmp_path_factory):
    directory = tmp_path_factory.mktemp("fuzz")
    admin_port = free_port()
    config = write_config(directory / "c.yaml", make_config(http_mock("seed", "GET", "/s")))
    argv = [MOCKD, "start", "--no-auth", "-c", str(config), "--port", str(free_port()),
            "--admin-port", str(admin_port), "--engine-port", str(free_port()),
            "--data-dir", str(directory / "data")]
    with MockdProcess(argv, isolated_env(directory, MOCKD_ADMIN_RATE_LIMIT="0"), directory,
                      directory / "server.log") as process:
        process.admin = f"http://127.0.0.1:{admin_port}"
        process.wait_healthy(process.admin + "/health")
        yield process.admin
        log = process.log()
    assert "Traceback" not in log, log[-3000:]


def _fuzz(operation, failures: list[str]) -> None:
    @given(case=operation.as_strategy())
    @settings(max_examples=EXAMPLES_PER_OPERATION, deadline=None, derandomize=True,
              database=None, suppress_health_check=list(HealthCheck))
    def run(case) -> None:
        response = case.call(timeout=15)
        if response.status_code >= 500:
            failures.append(f"{case.method} {case.formatted_path} -> {response.status_code}: "
                            f"{response.text[:300]}")

    run()


def test_admin_api_never_answers_500(admin_url):
    # Driven without schemathesis' pytest plugin (its lazy fixture loader does not work with
    # pytest 9): every operation of the document, EXAMPLES_PER_OPERATION generated cases each.
    schema = schemathesis.openapi.from_url(admin_url + "/openapi-admin.json")
    failures: list[str] = []
    operations = 0
    for result in schema.get_all_operations():
        operation = result.ok()
        if operation.path == "/requests/stream":
            continue  # the request stream never ends by design
        operations += 1
        _fuzz(operation, failures)
    assert operations >= 25
    assert not failures, "\n".join(failures[:20])
