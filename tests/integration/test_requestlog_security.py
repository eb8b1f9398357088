"""The request log holds no secrets and bounded answers; admin list routes refuse bad numbers.

Against a real ``mockd start`` (module-scoped, free loopback ports):

* a large gRPC reply (grpcio client) and a large MQTT answer (paho client) are logged cut at
  64 KiB with ``responseBodyTruncated`` and their true ``responseBodySize``;
* ``Cookie``, ``X-API-Key``, ``X-Auth-Token``, ``Proxy-Authorization``, ``Authorization`` and
  query parameters such as ``api_key`` and ``password`` are redacted in ``GET /requests``,
  ``GET /requests/{id}``, invocations, the request stream and near misses;
* the ``recording`` block of the config file sets what is redacted and with what;
* ``limit``/``offset``/``status``/``page``/``per_page`` values that are huge, negative or not
  numbers answer 400 ``validation_error`` naming the parameter on every admin list route,
  never 500 (and the data plane's table lists cut them instead).

Source: SPEC "Admin-side records" (recording redaction configuration), "Request log entry",
"Limits", "Errors"; behavior notes §1 "Request log", §18 "Limits".
"""
from __future__ import annotations

import importlib
import json
import sys
import time
from pathlib import Path

import httpx
import pytest

from mocks.engine.requestlog import LOGGED_BODY_LIMIT
from tests.helpers import free_port, http_mock, make_config, start_server

pytestmark = pytest.mark.integration

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "grpc"
TIMEOUT = 10
#: Answers three times the log's limit.
BIG = LOGGED_BODY_LIMIT * 3
#: Secrets sent by the tests; none may appear in anything the admin API shows.
SECRETS = ("cookie-secret-1", "api-key-secret-2", "auth-token-secret-3", "bearer-secret-4",
           "query-key-secret-5", "query-password-secret-6", "proxy-secret-7",
           "near-miss-secret-8")


def server_config(grpc_port: int, mqtt_port: int) -> dict:
    return make_config(
        http_mock("echo", "GET", "/echo", body="ok"),
        http_mock("keyed", "GET", "/keyed", body="ok", matcher={"headers": {"X-API-Key": "k"}}),
        http_mock("pets-list", "GET", "/api/pets", body="ignored"),
        {"id": "big-grpc", "type": "grpc", "grpc": {
            "port": grpc_port, "protoFile": str(FIXTURES / "greeter.proto"),
            "services": {"helloworld.Greeter": {"methods": {
                "SayHello": {"response": {"message": "g" * BIG}}}}}}},
        {"id": "big-mqtt", "type": "mqtt", "mqtt": {"port": mqtt_port, "topics": [
            {"topic": "ask/big", "onPublish": {"response": {"topic": "answer/big",
                                                            "payload": "m" * BIG}}}]}},
        tables=[{"name": "pets", "seedData": [{"id": "1", "name": "Rex"}]}],
        extend=[{"mock": "pets-list", "table": "pets", "action": "list"}])


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    folder = tmp_path_factory.mktemp("requestlog-security")
    grpc_port, mqtt_port = free_port(), free_port()
    with start_server(folder, server_config(grpc_port, mqtt_port)) as process:
        process.grpc_port, process.mqtt_port = grpc_port, mqtt_port
        yield process
        log = process.log()
    assert "Traceback" not in log, log[-3000:]


def _entries(admin: httpx.Client, **filters) -> list[dict]:
    answer = admin.get("/requests", params=filters)
    assert answer.status_code == 200, answer.text
    return answer.json()["requests"]


def _wait_for_entry(admin: httpx.Client, **filters) -> dict:
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        entries = _entries(admin, **filters)
        if entries:
            return entries[0]
        time.sleep(0.05)
    raise AssertionError(f"no request log entry for {filters}")


def _assert_cut_answer(entry: dict, letter: str) -> None:
    assert entry["responseBodyTruncated"] is True
    assert entry["responseBodySize"] >= BIG
    assert len(entry["responseBody"]) <= LOGGED_BODY_LIMIT
    assert letter * 1000 in entry["responseBody"]


# ---------------------------------------------------------------------------- answer sizes


def test_grpc_large_reply_is_logged_cut_at_the_limit_with_its_size(server, tmp_path):
    grpc = pytest.importorskip("grpc")
    from grpc_tools import protoc

    assert protoc.main(["protoc", f"-I{FIXTURES}", f"--python_out={tmp_path}",
                        f"--grpc_python_out={tmp_path}", str(FIXTURES / "greeter.proto")]) == 0
    sys.path.insert(0, str(tmp_path))
    try:
        pb2 = importlib.import_module("greeter_pb2")
        pb2_grpc = importlib.import_module("greeter_pb2_grpc")
    finally:
        sys.path.remove(str(tmp_path))
    options = [("grpc.max_receive_message_length", 16 * 1024 * 1024)]
    with grpc.insecure_channel(f"127.0.0.1:{server.grpc_port}", options=options) as channel:
        reply = pb2_grpc.GreeterStub(channel).SayHello(pb2.HelloRequest(name="a"),
                                                       timeout=TIMEOUT, wait_for_ready=True)
    assert len(reply.message) == BIG  # the client got all of it
    with server.admin_client() as admin:
        entry = _wait_for_entry(admin, grpcService="helloworld.Greeter")
    _assert_cut_answer(entry, "g")


def test_mqtt_large_answer_is_logged_cut_at_the_limit_with_its_size(server):
    mqtt = pytest.importorskip("paho.mqtt.client")
    client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="big-asker")
    deadline = time.monotonic() + TIMEOUT
    while True:  # the broker starts listening shortly after the admin API answers
        try:
            client.connect("127.0.0.1", server.mqtt_port, keepalive=30)
            break
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)
    client.loop_start()
    try:
        client.publish("ask/big", b"hello", qos=1).wait_for_publish(TIMEOUT)
        with server.admin_client() as admin:
            entry = _wait_for_entry(admin, mqttTopic="ask/big")
    finally:
        client.loop_stop()
        client.disconnect()
    _assert_cut_answer(entry, "m")


# ---------------------------------------------------------------------------- redaction


def _send_secrets(server) -> None:
    with server.client() as client:
        answer = client.get("/echo", params={"api_key": SECRETS[4], "password": SECRETS[5],
                                             "page": "2"},
                            headers={"Cookie": f"session={SECRETS[0]}; theme=dark",
                                     "X-API-Key": SECRETS[1], "X-Auth-Token": SECRETS[2],
                                     "Authorization": f"Bearer {SECRETS[3]}",
                                     "Proxy-Authorization": f"Basic {SECRETS[6]}"})
        assert answer.status_code == 200
        assert client.get("/keyed", headers={"X-API-Key": SECRETS[7]}).status_code == 404


def _assert_no_secret(text: str) -> None:
    leaked = [secret for secret in SECRETS if secret in text]
    assert not leaked, f"{leaked} in {text[:2000]}"


def _newest_entry_without_secrets(server, admin: httpx.Client, path: str) -> dict:
    """The newest entry of ``path`` after :func:`_send_secrets`; the listing shows none."""
    _send_secrets(server)
    listing = admin.get("/requests", params={"path": path})
    _assert_no_secret(listing.text)
    return listing.json()["requests"][0]


def test_requests_hide_cookie_api_key_tokens_and_secret_query_parameters(server):
    with server.admin_client() as admin:
        entry = _newest_entry_without_secrets(server, admin, "/echo")
        assert entry["headers"]["Cookie"] == ["session=[REDACTED]; theme=[REDACTED]"]
        assert entry["headers"]["X-Api-Key"] == ["[REDACTED]"]
        assert entry["headers"]["X-Auth-Token"] == ["[REDACTED]"]
        assert entry["headers"]["Authorization"] == ["Bearer [REDACTED]"]
        assert entry["headers"]["Proxy-Authorization"] == ["Basic [REDACTED]"]
        assert entry["queryString"] == "api_key=[REDACTED]&password=[REDACTED]&page=2"
        one = admin.get(f"/requests/{entry['id']}")
        assert one.status_code == 200 and one.json()["queryString"] == entry["queryString"]
        _assert_no_secret(one.text)
        invocations = admin.get("/mocks/echo/invocations")
        assert invocations.json()["invocations"][-1]["headers"]["X-Api-Key"] == "[REDACTED]"
        _assert_no_secret(invocations.text)


def test_near_misses_in_the_log_hide_the_secret_the_request_sent(server):
    with server.admin_client() as admin:
        entry = _newest_entry_without_secrets(server, admin, "/keyed")
    keyed = next(miss for miss in entry["nearMisses"] if miss["mockId"] == "keyed")
    assert keyed["reason"].endswith('got "[REDACTED]"'), keyed["reason"]
    assert json.loads(entry["responseBody"])["error"] == "no_match"


def test_request_stream_hides_the_secrets(server):
    with server.admin_client() as admin, admin.stream("GET", "/requests/stream") as stream:
        lines = stream.iter_lines()
        assert next(lines) == "event: connected"
        _send_secrets(server)
        seen: list[str] = []
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline and sum('"path":"/keyed"' in line
                                                  for line in seen) == 0:
            seen.append(next(lines))
    text = "\n".join(seen)
    assert '"path":"/echo"' in text and "[REDACTED]" in text
    _assert_no_secret(text)


def test_recording_block_of_the_config_file_sets_the_redaction(tmp_path):
    config = make_config(http_mock("echo", "GET", "/echo", body="ok"), recording={
        "filterHeaders": ["X-Tenant"], "filterQueryParams": ["session*"],
        "redactValue": "<hidden>"})
    with start_server(tmp_path, config) as process:
        with process.client() as client:
            client.get("/echo", params={"sessionId": "s-1", "api_key": "visible-key"},
                       headers={"X-Tenant": "acme", "Cookie": "a=visible-cookie"})
        with process.admin_client() as admin:
            entry = _entries(admin, path="/echo")[0]
    assert entry["headers"]["X-Tenant"] == ["<hidden>"]
    assert entry["headers"]["Cookie"] == ["a=visible-cookie"]  # the list replaced the default
    assert entry["queryString"] == "sessionId=<hidden>&api_key=visible-key"


# ---------------------------------------------------------------------------- bad numbers

#: Every admin list route and the numeric query parameters it reads.
LIST_ROUTES = [
    ("/mocks", ("limit", "offset")),
    ("/requests", ("limit", "offset", "status")),
    ("/mocks/echo/invocations", ("limit", "offset")),
    ("/state/resources/pets/items", ("limit", "offset", "page", "per_page")),
    ("/mqtt-recordings", ("limit", "offset")),
    ("/soap-recordings", ("limit", "offset")),
]
BAD_NUMBERS = ["99999999999999999999", "9223372036854775808", "-1", "-99999999999999999999",
               "abc", "1.5", "1e3", "9" * 5000]


@pytest.mark.parametrize("path, parameters", [pytest.param(*row, id=row[0]) for row in LIST_ROUTES])
def test_admin_list_routes_answer_400_naming_a_bad_number(server, path, parameters):
    with server.admin_client() as admin:
        assert admin.get(path).status_code == 200
        for name in parameters:
            for value in BAD_NUMBERS:
                answer = admin.get(path, params={name: value})
                assert answer.status_code == 400, (name, value[:30], answer.text[:300])
                body = answer.json()
                assert body["error"] == "validation_error"
                assert body["message"].startswith(f"{name}:"), body["message"]


def test_table_list_on_the_data_plane_cuts_huge_numbers(server):
    with server.client() as client:
        for name in ("limit", "offset"):
            answer = client.get("/api/pets", params={name: "99999999999999999999"})
            assert answer.status_code == 200, answer.text
            assert answer.json()["meta"][name] == 2**31 - 1
