"""The dashboard's load cost: its page, its static assets and the admin API calls its first
areas make, against a server holding ``--mocks`` mocks and a full request log.

Starts ``mockd start`` (persisted, with an API key, the admin rate limit off so the loop is
not throttled) on free loopback ports, stores ``--mocks`` HTTP mocks with ``POST
/mocks/bulk``, sends ``--requests`` data-plane requests (nine in ten matched, one in ten
unmatched) so the request log holds that many entries, then times, one at a time on one
keep-alive connection as a browser tab would:

* ``GET /`` (the page) and every static file it loads for the frame, the Overview, Mocks and
  Request log areas: the stylesheet and scripts named by the page, then the ES modules
  reached from ``app.js`` and from ``pages/overview.js``, ``pages/mocks.js`` and
  ``pages/requests.js`` through their ``import`` statements, and the area stylesheets those
  load (``useStylesheet``);
* the admin API calls the frame and those areas make on load (with ``X-API-Key``): ``GET
  /workspaces`` and ``/health`` (frame); ``/status``, ``/ports``, ``/mocks`` and ``/metrics``
  (Overview; its counters come from ``/metrics``); ``/mocks`` and ``/metrics`` (Mocks: the
  list and its hit counts); ``/requests?limit=500`` (Request log, its ``MAX_ROWS``); and
  ``/metrics`` filtered to the counter families the dashboard reads (``name[]``).

Each is requested ``--rounds`` times after two warm-up rounds; the report gives the median and
p95 round trip in ms (client side on loopback: an upper bound of the server's time), the body
size, and whether the p95 is under ``--target`` ms (default 100).

Only 127.0.0.1 is contacted; every loop is bounded in count and time.

Usage: ``.venv/bin/python bench/dashboard.py [--mocks 1000] [--requests 1000] [--rounds 50]
[--json]``
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from admin_writes import MOCKD, free_port, percentile, wait_healthy  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
STATIC = ROOT / "static"
#: Areas whose load is timed: their page modules are followed for imports.
AREAS = ("overview", "mocks", "requests")
_IMPORT = re.compile(r"""(?:import|export)\s[^"';]*?from\s*["'](\.{1,2}/[^"']+)["']"""
                     r"""|import\s*\(\s*["'](\.{1,2}/[^"']+)["']\s*\)""")
_STYLESHEET = re.compile(r"""useStylesheet\(\s*["']([\w-]+)["']\s*\)""")
_PAGE_ASSET = re.compile(r"""(?:href|src)="(/static/[^"]+)\"""")
MAX_ASSETS = 100


#: The families ``static/dashboard/js/mocks-data.js`` reads from ``/metrics``.
COUNTER_FAMILIES = ("mockd_match_hits_total", "mockd_http_requests_total",
                    "mockd_match_misses_total", "mockd_mocks_total", "mockd_mocks_enabled",
                    "mockd_uptime_seconds")


def api_calls() -> list[str]:
    """The admin API paths the frame and the timed areas request on load, then the
    dashboard's counters read with the ``name[]`` filter of ``/metrics`` (only the families
    it uses, without the per-template histograms)."""
    counters = "/metrics?" + "&".join(f"name[]={name}" for name in COUNTER_FAMILIES)
    return ["/workspaces", "/health", "/status", "/ports", "/metrics", "/mocks",
            "/requests?limit=500", counters]


def module_assets(page_html: str) -> list[str]:
    """Static URLs of the page and of the timed areas: the page's own ``/static/`` links,
    then every module reached by relative imports from ``app.js`` and the area pages, and the
    stylesheets those modules load. Bounded to :data:`MAX_ASSETS`."""
    found: list[str] = list(dict.fromkeys(_PAGE_ASSET.findall(page_html)))
    queue = [STATIC / "dashboard/js/app.js"] + [STATIC / f"dashboard/js/pages/{area}.js"
                                                for area in AREAS]
    seen: set[Path] = set()
    while queue and len(found) < MAX_ASSETS:
        path = queue.pop(0).resolve()
        if path in seen or not path.is_file():
            continue
        seen.add(path)
        found.append("/static/" + path.relative_to(STATIC.resolve()).as_posix())
        text = path.read_text(encoding="utf-8")
        for static_import, dynamic_import in _IMPORT.findall(text):
            target = static_import or dynamic_import
            if "${" not in target:
                queue.append(path.parent / target)
        for sheet in _STYLESHEET.findall(text):
            found.append(f"/static/dashboard/css/{sheet}.css")
    return list(dict.fromkeys(found))[:MAX_ASSETS]


def bench_mock(number: int) -> dict:
    """Mock ``number``: ``GET /dash/<n>`` with a small JSON body."""
    return {"id": f"dash-{number}", "name": f"Dashboard bench {number}", "type": "http",
            "http": {"matcher": {"method": "GET", "path": f"/dash/{number}"},
                     "response": {"statusCode": 200, "body": {"n": number, "ok": True}}}}


def timed(client: httpx.Client, path: str, rounds: int) -> dict:
    """``rounds`` GETs of ``path`` (after two warm-ups): median, p95 (ms), size, status."""
    for _ in range(2):
        client.get(path)
    times: list[float] = []
    answer = None
    for _ in range(rounds):
        began = time.perf_counter()
        answer = client.get(path)
        times.append((time.perf_counter() - began) * 1000)
    return {"path": path, "status": answer.status_code, "bytes": len(answer.content),
            "median_ms": round(statistics.median(times), 2),
            "p95_ms": round(percentile(times, 0.95), 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mocks", type=int, default=1_000)
    parser.add_argument("--requests", type=int, default=1_000)
    parser.add_argument("--rounds", type=int, default=50)
    parser.add_argument("--target", type=float, default=100.0, help="p95 target in ms")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    args = parser.parse_args()
    if not (1 <= args.rounds <= 10_000 and 0 <= args.mocks <= 100_000
            and 0 <= args.requests <= 100_000):
        parser.error("--rounds 1..10000, --mocks and --requests 0..100000")

    workdir = Path(tempfile.mkdtemp(prefix="mockd-bench-dashboard-"))
    port, admin_port = free_port(), free_port()
    env = {**{key: value for key, value in os.environ.items() if not key.startswith("MOCKD_")},
           "HOME": str(workdir), "NO_PROXY": "127.0.0.1", "MOCKD_ADMIN_RATE_LIMIT": "0"}
    server = subprocess.Popen([MOCKD, "start", "--port", str(port), "--admin-port",
                               str(admin_port), "--engine-port", str(free_port()),
                               "--data-dir", str(workdir / "data"), "--log-level", "error",
                               "--max-log-entries", str(max(args.requests, 1))],
                              env=env, cwd=workdir, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, start_new_session=True)
    admin_url, data_url = f"http://127.0.0.1:{admin_port}", f"http://127.0.0.1:{port}"
    try:
        wait_healthy(admin_url + "/health", time.monotonic() + 60)
        key = (workdir / "data" / "admin-api-key").read_text().strip()
        admin = httpx.Client(base_url=admin_url, timeout=120.0, trust_env=False,
                             headers={"X-API-Key": key})
        for first in range(0, args.mocks, 1_000):
            batch = [bench_mock(n) for n in range(first, min(args.mocks, first + 1_000))]
            admin.post("/mocks/bulk", json=batch).raise_for_status()
        with httpx.Client(base_url=data_url, timeout=10.0, trust_env=False) as data:
            for number in range(args.requests):
                data.get(f"/dash/{number % max(args.mocks, 1)}" if number % 10
                         else f"/unmatched/{number}")
        held = admin.get("/requests", params={"limit": 1}).json()["total"]

        with httpx.Client(base_url=admin_url, timeout=30.0, trust_env=False) as browser:
            page = browser.get("/")
            rows = [timed(browser, "/", args.rounds)]
            rows += [timed(browser, asset, args.rounds) for asset in module_assets(page.text)]
        rows += [timed(admin, call, args.rounds) for call in api_calls()]
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
        shutil.rmtree(workdir, ignore_errors=True)

    over = [row["path"] for row in rows if row["p95_ms"] >= args.target]
    if args.json:
        print(json.dumps({"mocks": args.mocks, "requestLog": held, "rounds": args.rounds,
                          "targetMs": args.target, "results": rows, "overTarget": over},
                         indent=2))
        return
    print(f"mockd start with {args.mocks} mocks and {held} request-log entries; "
          f"{args.rounds} rounds each, one keep-alive connection")
    print(f"{'GET':<44} {'status':>6} {'bytes':>9} {'median ms':>10} {'p95 ms':>8}")
    for row in rows:
        print(f"{row['path']:<44} {row['status']:>6} {row['bytes']:>9} "
              f"{row['median_ms']:>10.2f} {row['p95_ms']:>8.2f}")
    print(f"p95 under {args.target:g} ms: " + ("all" if not over else
                                              "all but " + ", ".join(over)))


if __name__ == "__main__":
    main()
