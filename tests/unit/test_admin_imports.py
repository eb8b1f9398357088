"""What a full start's admin side loads for an HTTP-only config (issue 28 item 4): the admin
URLconf registers every protocol's routes without importing its server or library; a
protocol's admin route imports them on its first call (or finds no server of that protocol
without importing anything while none has compiled)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: Libraries of protocols and features an HTTP-only admin API never uses at start.
LIBRARIES = ("grpc", "google.protobuf", "graphql", "amqtt", "lxml", "oauthlib", "authlib",
             "jwt", "cryptography", "zeep", "h11")
#: Our modules that load those libraries or build models an HTTP-only start does not use: the
#: protocol servers and handlers, the proxy's CA and server, the chaos config model.
SERVERS = ("mocks.protocols.grpc.server", "mocks.protocols.grpc.protos",
           "mocks.protocols.mqtt.broker", "mocks.protocols.mqtt.recordings",
           "mocks.protocols.soap.handler", "mocks.protocols.websocket.session", "proxy.ca",
           "proxy.server", "chaos.config")

#: The admin URLconf as the first admin request loads it in ``mockd start``, the runner, and
#: the ``GET /ports`` rows of gRPC servers and MQTT brokers of an engine serving neither.
SCRIPT = """
import os, sys, types
os.environ["DJANGO_SETTINGS_MODULE"] = "mockd_project.settings"
import django
django.setup()
import mockd_project.urls, mockd_project.runner
from mocks.protocols.grpc.control import grpc_ports
from mocks.protocols.mqtt.control import mqtt_ports
engine = types.SimpleNamespace(
    snapshot=types.SimpleNamespace(mocks=[], services={"http": object()}),
    listeners=types.SimpleNamespace(running={}, failures={}))
control = types.SimpleNamespace(engine=engine)
print("ports", len(grpc_ports(control)) + len(mqtt_ports(control)))
from mockd_project.api import DeferredViewSignature, api
built_at_start, loaded_at_start = DeferredViewSignature.built, list(sys.modules)
document = api.get_openapi_schema()  # loads the whole config schema too
operations = sum(len(methods) for methods in document["paths"].values())
print("signatures", built_at_start, DeferredViewSignature.built, operations)
print("\\n".join(loaded_at_start))
"""


def test_admin_urlconf_of_a_full_start_loads_no_protocol_library(tmp_path):
    """One subprocess: every admin route registered, no protocol library or server loaded,
    no operation's view signature read (``mockd_project.api.DeferredViewSignature``) until
    the OpenAPI document, and ``/ports`` finds no gRPC server or MQTT broker without loading
    them."""
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path),
           "MOCKD_DATA_DIR": str(tmp_path / "data"), "PYDANTIC_DISABLE_PLUGINS": "1"}
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                          cwd=ROOT, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.split("\n")
    assert lines[0] == "ports 0"
    # No view signature is read when the URLconf loads; the OpenAPI document reads each once.
    _, at_start, after_document, operations = lines[1].split()
    assert int(at_start) == 0
    assert int(after_document) >= int(operations) > 150
    modules = set(lines[2:])
    loaded = sorted({wanted for name in modules for wanted in LIBRARIES + SERVERS
                     if name == wanted or name.startswith(wanted + ".")})
    assert loaded == []
    # The routes themselves are all there: the protocol routers are mounted.
    assert {"mockd_project.api", "mocks.protocols.grpc.api", "mocks.protocols.mqtt.api",
            "mocks.protocols.soap.api", "mocks.protocols.websocket.api",
            "proxy.api"} <= modules


#: A real ``mockd start`` in this process: once both ``/health`` and the first ``GET /mocks``
#: answered 200 (as ``tests/helpers.start_server`` and the first admin call do), the modules
#: loaded are written to ``argv[1]`` and the server is stopped with SIGTERM.
START_SCRIPT = """
import os, signal, sys, threading, time, urllib.request
out, data_dir, admin_port, port, config = sys.argv[1:6]
def stop_when_ready():
    deadline = time.monotonic() + 60
    for url in (f"http://127.0.0.1:{admin_port}/health", f"http://127.0.0.1:{port}/health",
                f"http://127.0.0.1:{admin_port}/mocks"):
        while time.monotonic() < deadline:
            try:
                if urllib.request.urlopen(url, timeout=2).status == 200:
                    break
            except OSError:
                time.sleep(0.05)
    import gc
    with open(out, "w") as file:
        file.write(f"collector {gc.isenabled()} {gc.get_freeze_count()}\\n")
        file.write("\\n".join(sys.modules))
    os.kill(os.getpid(), signal.SIGTERM)
threading.Thread(target=stop_when_ready, daemon=True).start()
sys.argv = ["mockd", "start", "--no-auth", "--port", port, "--admin-port", admin_port,
            "--data-dir", data_dir, "-c", config]
from mockd_project.cli import main
main()
"""

#: Modules a full start of an HTTP-only config does not load before its first admin answer:
#: the migration machinery and the apps' migrations (a new data directory is a copy of the
#: schema template, migrated by construction: ``mockd_project.schema_cache``).
NOT_AT_START = ("django.db.migrations.executor", "django.db.migrations.loader",
                "django.db.migrations.autodetector", "mocks.migrations.0001_initial")


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _start_and_list_modules(tmp_path: Path, name: str, cache: Path) -> set[str]:
    out = tmp_path / f"{name}.modules"
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "MOCKD_SCHEMA_CACHE": str(cache),
           "MOCKD_TESTS_CHEAP_PASSWORD_HASH": "insecure-md5-for-tests",
           "NO_PROXY": "127.0.0.1", "no_proxy": "127.0.0.1"}
    done = subprocess.run([sys.executable, "-c", START_SCRIPT, str(out),
                           str(tmp_path / f"{name}-data"), str(_free_port()),
                           str(_free_port()), str(ROOT / "examples" / "quickstart.yaml")],
                          capture_output=True, text=True, cwd=tmp_path, env=env, timeout=90)
    assert done.returncode == 0, done.stderr
    collector, *modules = out.read_text().split("\n")
    # The collector, paused while the server started, runs again, what the start built frozen.
    _, enabled, frozen = collector.split()
    assert enabled == "True" and int(frozen) > 10_000
    return set(modules)


def test_a_full_start_loads_only_what_its_first_answers_need(tmp_path):
    """A real ``mockd start -c examples/quickstart.yaml`` in a new data directory, after its
    first admin answer: the admin URLconf and the engine are loaded; no protocol library or
    server, no migration module (the schema template is copied); the garbage collector runs
    again, with the start-up state frozen."""
    from tests.helpers import SCHEMA_CACHE

    cache = Path(SCHEMA_CACHE)
    if not list(cache.glob("admin-schema-*.sqlite3")):
        _start_and_list_modules(tmp_path, "template", cache)  # the first start writes it
    modules = _start_and_list_modules(tmp_path, "start", cache)
    assert {"mockd_project.urls", "mockd_project.api", "mocks.engine.core",
            "mocks.protocols.http.handler"} <= modules
    loaded = sorted({wanted for name in modules for wanted in LIBRARIES + SERVERS + NOT_AT_START
                     if name == wanted or name.startswith(wanted + ".")})
    assert loaded == []
