"""SOAP operation with a templated answer vs a static HTTP mock, in one server.

Target (issue "SOAP mocks"): the SOAP operation at ≥ 0.5× the requests/s of the static
``GET /api/hello`` mock. Both are served by ONE ``mockd engine`` pinned to core 0; wrk runs
on core 1 and alternates short runs between the two cases, ``--rounds`` times in each order,
so both meet the same state of the machine (a shared VM drifts by ±20 % within seconds). The
SOAP case POSTs a SOAP 1.1 envelope with a ``SOAPAction``; its answer renders two templates
(``{{xpath '//GetUser/id'}}`` and ``{{request.body.GetUser.name}}``) and one ``{{uuid}}``
inside the envelope. Prints the median requests/s of each case and the median of per-pair
ratios.

A third case, a static HTTP mock answering ``POST /api/static-post`` to the very same request
(envelope body, headers), is the peer with the same transport cost: the SOAP / static-POST
ratio isolates what SOAP itself costs (parse, operation choice, templates, envelope) from what
any POST with a body costs the server (reading the body).

Usage: python bench/soap.py [--rounds 10] [--seconds 2] [--connections 50]
Needs wrk (Debian package) and taskset. Writes bench/out/soap.json.
"""
from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run_bench import HERE, MOCKD, free_port, hello_mock, wait_ready  # noqa: E402

ENVELOPE = ('<?xml version="1.0" encoding="UTF-8"?><soap:Envelope xmlns:soap='
            '"http://schemas.xmlsoap.org/soap/envelope/"><soap:Body><u:GetUser xmlns:u='
            '"urn:example:users"><u:id>42</u:id><u:name>Ada</u:name></u:GetUser></soap:Body>'
            '</soap:Envelope>')
SOAP_MOCK = {"id": "soap", "type": "soap", "soap": {"path": "/soap/users", "operations": {
    "GetUser": {"soapAction": "urn:example:users/GetUser",
                "response": "<GetUserResponse xmlns=\"urn:example:users\"><user>"
                            "<id>{{xpath '//GetUser/id'}}</id>"
                            "<name>{{request.body.GetUser.name}}</name>"
                            "<token>{{uuid}}</token></user></GetUserResponse>"}}}}


def requests_per_second(url: str, seconds: int, connections: int,
                        script: Path | None) -> tuple[float, int]:
    """``(requests/s, non-2xx answers)`` of one wrk run."""
    argv = ["taskset", "-c", "1", "wrk", "-t1", f"-c{connections}", f"-d{seconds}s"]
    if script is not None:
        argv += ["-s", str(script)]
    output = subprocess.run(argv + [url], capture_output=True, text=True, check=True,
                            timeout=seconds + 30).stdout
    bad = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", output)
    return (float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1)),
            int(bad.group(1)) if bad else 0)


def envelope_script(workdir: Path) -> Path:
    """A wrk Lua script POSTing :data:`ENVELOPE` as SOAP 1.1 with its ``SOAPAction``."""
    script = workdir / "soap.lua"
    script.write_text(f'wrk.method = "POST"\nwrk.body = {json.dumps(ENVELOPE)}\n'
                      'wrk.headers["Content-Type"] = "text/xml; charset=utf-8"\n'
                      'wrk.headers["SOAPAction"] = "\\"urn:example:users/GetUser\\""\n')
    return script


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10, help="pairs per order")
    parser.add_argument("--seconds", type=int, default=2, help="length of one wrk run")
    parser.add_argument("--connections", type=int, default=50)
    arguments = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="mockd-soap-bench-"))
    config_path = workdir / "soap.yaml"
    static_post = {"id": "static-post", "http": {
        "matcher": {"method": "POST", "path": "/api/static-post"},
        "response": {"statusCode": 200, "headers": {"Content-Type": "text/xml"},
                     "body": "<ok/>"}}}
    config_path.write_text(yaml.safe_dump({"version": "1.0",
                                           "mocks": [hello_mock(), static_post, SOAP_MOCK]},
                                          sort_keys=False))
    script = envelope_script(workdir)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    cases = {"static": (f"{base}/api/hello", None), "soap": (f"{base}/soap/users", script),
             "post": (f"{base}/api/static-post", script)}
    server = subprocess.Popen(["taskset", "-c", "0", MOCKD, "engine", "-c", str(config_path),
                               "--port", str(port)], stdout=subprocess.DEVNULL,
                              stderr=open(workdir / "engine.log", "wb"))
    try:
        wait_ready(f"{base}/health", server)
        for url, lua in cases.values():  # warm-up
            requests_per_second(url, 2, arguments.connections, lua)
        rates: dict[str, list[float]] = {"static": [], "soap": [], "post": []}
        ratios: list[float] = []
        post_ratios: list[float] = []
        failures = 0
        for order in (("static", "soap", "post"), ("post", "soap", "static")):
            for _ in range(arguments.rounds):
                pair = {}
                for name in order:
                    rate, bad = requests_per_second(*cases[name][:1], arguments.seconds,
                                                    arguments.connections, cases[name][1])
                    pair[name] = rate
                    rates[name].append(rate)
                    failures += bad
                ratios.append(pair["soap"] / pair["static"])
                post_ratios.append(pair["soap"] / pair["post"])
    finally:
        server.terminate()
        server.wait(timeout=10)
    median = statistics.median
    results = {"static_median_rps": round(median(rates["static"])),
               "soap_median_rps": round(median(rates["soap"])),
               "post_median_rps": round(median(rates["post"])),
               "median_ratio": round(median(ratios), 3),
               "median_ratio_to_static_post": round(median(post_ratios), 3),
               "pairs": len(ratios),
               "non2xx": failures, "ratios": [round(ratio, 3) for ratio in ratios]}
    print(f"static HTTP mock      {results['static_median_rps']:>7} req/s (median)")
    print(f"SOAP templated answer {results['soap_median_rps']:>7} req/s (median)")
    print(f"static POST, same body {results['post_median_rps']:>6} req/s (median)")
    print(f"soap/static ratio     {results['median_ratio']:.3f} (median of {len(ratios)} pairs; "
          f"target >= 0.5); non-2xx answers: {failures}")
    print(f"soap/static-POST      {results['median_ratio_to_static_post']:.3f} (same request "
          f"body and headers; the protocol's own cost)")
    out = HERE / "out"
    out.mkdir(exist_ok=True)
    (out / "soap.json").write_text(json.dumps(results, indent=2))
    return 0 if failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
