"""What each part of the benchmark's templated SOAP answer costs in the server.

Companion of ``bench/soap.py``: one ``mockd engine`` (core 0) serves the static ``GET
/api/hello`` mock and five SOAP mocks answering the same envelope (``soap.ENVELOPE``) with
the same answer, each with one part taken away:

  full     the benchmark's answer: ``{{xpath '//GetUser/id'}}``,
           ``{{request.body.GetUser.name}}`` and ``{{uuid}}``
  nobody   without the ``request.body`` reference (no body map is built)
  noxpath  without the XPath
  nouuid   without the uuid
  static   no expression at all (the envelope is still parsed and the operation chosen)

wrk (core 1) runs each case for ``--seconds`` in turn, ``--rounds`` times, the order reversed
every other round. Prints the median requests/s of each case, the microseconds per request
that gives (1e6 / rate: one core serves the requests one after another), and the ratio to
the static mock.

Usage: python bench/soap_parts.py [--rounds 4] [--seconds 2] [--connections 50]
Needs wrk (Debian package) and taskset. Writes bench/out/soap_parts.json.
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run_bench import HERE, MOCKD, free_port, hello_mock, wait_ready  # noqa: E402
from soap import SOAP_MOCK, envelope_script, requests_per_second  # noqa: E402

_FULL = SOAP_MOCK["soap"]["operations"]["GetUser"]["response"]
ANSWERS = {
    "full": _FULL,
    "nobody": _FULL.replace("{{request.body.GetUser.name}}", "Ada"),
    "noxpath": _FULL.replace("{{xpath '//GetUser/id'}}", "42"),
    "nouuid": _FULL.replace("{{uuid}}", "x"),
    "static": _FULL.replace("{{request.body.GetUser.name}}", "Ada")
                   .replace("{{xpath '//GetUser/id'}}", "42").replace("{{uuid}}", "x"),
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--seconds", type=int, default=2, help="length of one wrk run")
    parser.add_argument("--connections", type=int, default=50)
    arguments = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="mockd-soap-parts-"))
    mocks = [hello_mock()] + [
        {"id": name, "type": "soap", "soap": {"path": f"/soap/{name}", "operations": {
            "GetUser": {"soapAction": "urn:example:users/GetUser", "response": answer}}}}
        for name, answer in ANSWERS.items()]
    config_path = workdir / "soap_parts.yaml"
    config_path.write_text(yaml.safe_dump({"version": "1.0", "mocks": mocks}, sort_keys=False))
    script = envelope_script(workdir)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    cases = {"hello": (f"{base}/api/hello", None)}
    cases.update({name: (f"{base}/soap/{name}", script) for name in ANSWERS})
    server = subprocess.Popen(["taskset", "-c", "0", MOCKD, "engine", "-c", str(config_path),
                               "--port", str(port)], stdout=subprocess.DEVNULL,
                              stderr=open(workdir / "engine.log", "wb"))
    rates: dict[str, list[float]] = {name: [] for name in cases}
    failures = 0
    try:
        wait_ready(f"{base}/health", server)
        for url, lua in cases.values():  # warm-up
            requests_per_second(url, 1, arguments.connections, lua)
        for round_number in range(arguments.rounds):
            order = list(cases) if round_number % 2 == 0 else list(cases)[::-1]
            for name in order:
                rate, bad = requests_per_second(cases[name][0], arguments.seconds,
                                                arguments.connections, cases[name][1])
                rates[name].append(rate)
                failures += bad
    finally:
        server.terminate()
        server.wait(timeout=10)
    hello = statistics.median(rates["hello"])
    results = {}
    for name, values in rates.items():
        rate = statistics.median(values)
        results[name] = {"median_rps": round(rate), "us_per_request": round(1e6 / rate, 1),
                         "ratio_to_static_http": round(rate / hello, 3)}
        print(f"{name:8s} {rate:>8.0f} req/s  {1e6 / rate:5.1f} µs/request  "
              f"ratio {rate / hello:.3f}")
    print(f"non-2xx answers: {failures}")
    out = HERE / "out"
    out.mkdir(exist_ok=True)
    (out / "soap_parts.json").write_text(json.dumps(results, indent=2))
    return 0 if failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
