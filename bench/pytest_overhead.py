"""Per-test cost of the ``mockd`` pytest fixture (reset and fresh isolation) beside
pytest-httpserver's ``httpserver`` fixture.

Each variant is one pytest run (a child process, ``-p no:xdist``) of 200 generated tests in a
temporary folder; every test adds one mock (one expected request for ``httpserver``) and
makes one request with a module-level ``httpx.Client``, so the client costs the same
everywhere. A conftest records each test's setup, call and teardown durations (pytest's own
report durations). Reported per variant, in milliseconds: the median and mean time per test
(setup + call + teardown) over the tests after the first, the first test (it pays for
starting a shared server) and the wall time of the whole pytest run (seconds). The target
is reset mode no slower per test than ``httpserver``.

Usage: python bench/pytest_overhead.py [--tests 200] [--rounds 1] [--timeout 300]
                                      [--variant "mockd (reset)" ...]
Exit status 1 when a run fails.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CONFTEST = '''
import json, os

DURATIONS = {}


def pytest_runtest_logreport(report):
    DURATIONS.setdefault(report.nodeid, 0.0)
    DURATIONS[report.nodeid] += report.duration


def pytest_sessionfinish(session):
    with open(os.environ["BENCH_OUT"], "w") as handle:
        json.dump(list(DURATIONS.values()), handle)
'''

MOCKD_TESTS = '''
import httpx
import pytest
from mockd import http

CLIENT = httpx.Client()


@pytest.mark.parametrize("n", range({tests}))
def test_one_request(mockd, n):
    mockd.add(http("GET", f"/items/{{n}}", body="ok"))
    assert CLIENT.get(f"{{mockd.url}}/items/{{n}}").text == "ok"
'''

HTTPSERVER_TESTS = '''
import httpx
import pytest

CLIENT = httpx.Client()


@pytest.mark.parametrize("n", range({tests}))
def test_one_request(httpserver, n):
    httpserver.expect_request(f"/items/{{n}}").respond_with_data("ok")
    assert CLIENT.get(httpserver.url_for(f"/items/{{n}}")).text == "ok"
'''

VARIANTS = {
    "mockd (reset)": (MOCKD_TESTS, "mockd_isolation = reset\n"),
    "mockd (fresh)": (MOCKD_TESTS, "mockd_isolation = fresh\n"),
    "pytest-httpserver": (HTTPSERVER_TESTS, ""),
}


def run_variant(folder: Path, name: str, tests: int, timeout: float) -> dict[str, float]:
    """One pytest run of ``name`` in ``folder``; returns the figures (ms, wall in s).
    Raises RuntimeError when pytest does not pass every test."""
    source, ini = VARIANTS[name]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "pytest.ini").write_text("[pytest]\n" + ini)
    (folder / "conftest.py").write_text(CONFTEST)
    (folder / "test_bench.py").write_text(source.format(tests=tests))
    out = folder / "durations.json"
    env = {key: value for key, value in os.environ.items()
           if key not in ("DJANGO_SETTINGS_MODULE", "PYTEST_ADDOPTS")}
    env["BENCH_OUT"] = str(out)
    started = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", "-p", "no:django",
         "-p", "no:cacheprovider", "-p", "no:randomly", str(folder)],
        cwd=folder, env=env, capture_output=True, text=True, timeout=timeout)
    wall = time.perf_counter() - started
    if result.returncode != 0:
        raise RuntimeError(f"{name}: pytest failed\n{result.stdout[-3000:]}"
                           f"{result.stderr[-2000:]}")
    durations = [seconds * 1000 for seconds in json.loads(out.read_text())]
    rest = durations[1:]
    return {"median": statistics.median(rest), "mean": statistics.fmean(rest),
            "first": durations[0], "wall": wall}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tests", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=1,
                        help="runs of each variant, interleaved; the best median is shown")
    parser.add_argument("--timeout", type=float, default=300.0)
    parser.add_argument("--variant", action="append", choices=list(VARIANTS),
                        help="run only this variant (repeatable; default: all)")
    args = parser.parse_args()
    chosen = args.variant or list(VARIANTS)
    best: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="mockd-pytest-bench-") as temp:
        try:
            for round_number in range(args.rounds):
                for index, name in enumerate(chosen):
                    figures = run_variant(Path(temp) / f"r{round_number}v{index}", name,
                                          args.tests, args.timeout)
                    if name not in best or figures["median"] < best[name]["median"]:
                        best[name] = figures
        except (RuntimeError, subprocess.TimeoutExpired) as error:
            print(error, file=sys.stderr)
            return 1
    print(f"{args.tests} tests, one request each; per test = setup + call + teardown "
          f"(tests after the first)")
    print(f"{'variant':<20} {'median ms':>10} {'mean ms':>9} {'first ms':>9} {'wall s':>7}")
    for name, figures in best.items():
        print(f"{name:<20} {figures['median']:>10.2f} {figures['mean']:>9.2f} "
              f"{figures['first']:>9.1f} {figures['wall']:>7.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
