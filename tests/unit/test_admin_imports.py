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
print("\\n".join(sys.modules))
"""


def test_admin_urlconf_of_a_full_start_loads_no_protocol_library(tmp_path):
    """One subprocess: every admin route registered, no protocol library or server loaded,
    and ``/ports`` finds no gRPC server or MQTT broker without loading them."""
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path),
           "MOCKD_DATA_DIR": str(tmp_path / "data"), "PYDANTIC_DISABLE_PLUGINS": "1"}
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                          cwd=ROOT, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.split("\n")
    assert lines[0] == "ports 0"
    modules = set(lines[1:])
    loaded = sorted({wanted for name in modules for wanted in LIBRARIES + SERVERS
                     if name == wanted or name.startswith(wanted + ".")})
    assert loaded == []
    # The routes themselves are all there: the protocol routers are mounted.
    assert {"mockd_project.api", "mocks.protocols.grpc.api", "mocks.protocols.mqtt.api",
            "mocks.protocols.soap.api", "mocks.protocols.websocket.api",
            "proxy.api"} <= modules
