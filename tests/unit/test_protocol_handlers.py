"""The protocol handler interface: one contract suite over every registered handler, the
registry's failure modes, incremental compiles, listener services and the WebSocket entry."""
from __future__ import annotations

import asyncio
from typing import Any

import pytest

from mocks import protocols
from mocks.config import ConfigFile, Mock
from mocks.core.errors import ConfigError
from mocks.engine.core import Engine
from mocks.engine.listeners import ListenerSupervisor
from mocks.engine.snapshot import compile_snapshot
from mocks.engine.websocket import WebSocketRouterApp
from mocks.loader import validate_config
from mocks.protocols import (CompileContext, CompiledMock, HandlerImportError, ProtocolEntry,
                             ProtocolHandler, WebSocketRoute)
from tests.helpers import asgi_upgrade, http_mock, make_config
from tests.oidc_presets import oauth_mock

#: A one-method service for the ``grpc`` samples (compiled in process at run time).
GRPC_PROTO = ('syntax = "proto3"; package demo; message Text { string text = 1; } '
              'service Pinger { rpc Ping (Text) returns (Text); }')

#: One valid mock per served type and one invalid block with the key its error must name.
#: A new handler must add its samples here, or the suite below fails.
SAMPLES: dict[str, tuple[dict[str, Any], dict[str, Any], str]] = {
    "http": (http_mock("h", "GET", "/h", body="ok"),
             {"id": "bad", "type": "http",
              "http": {"matcher": {"pathPattern": "("}, "response": {}}},
             "mocks[0].http.matcher.pathPattern"),
    "oauth": (oauth_mock("idp"),
              {"id": "bad", "type": "oauth",
               "oauth": {"issuer": "http://localhost:4280/auth",
                         "clients": [{"clientId": "c", "clientSecret": "s", "bogus": 1}]}},
              "mocks[0].oauth.clients[0].bogus"),
    "graphql": ({"id": "g", "type": "graphql",
                 "graphql": {"path": "/graphql", "schema": "type Query { hi: String }",
                             "resolvers": {"Query.hi": {"response": "hello"}}}},
                {"id": "bad", "type": "graphql",
                 "graphql": {"path": "/graphql", "schema": "type Query {\n  hi: String\n  x: }"}},
                "mocks[0].graphql.schema"),
    "websocket": ({"id": "w", "type": "websocket",
                   "websocket": {"path": "/ws", "matchers": [
                       {"match": {"type": "exact", "value": "ping"},
                        "response": {"type": "text", "value": "pong"}}]}},
                  {"id": "bad", "type": "websocket",
                   "websocket": {"path": "/ws", "matchers": [
                       {"match": {"type": "exact", "value": "a"}, "noResponse": True},
                       {"match": {"type": "regex", "value": "("}, "noResponse": True}]}},
                  "mocks[0].websocket.matchers[1].match.value"),
    "soap": ({"id": "s", "type": "soap",
              "soap": {"path": "/soap", "operations": {
                  "Ping": {"soapAction": "urn:ping", "response": "<PingResponse/>"}}}},
             {"id": "bad", "type": "soap",
              "soap": {"path": "/soap", "operations": {
                  "Ping": {"response": "<PingResponse/>",
                           "match": {"xpath": {"//[": "1"}}}}}},
             "mocks[0].soap.operations.Ping.match.xpath.//["),
    "grpc": ({"id": "r", "type": "grpc",
              "grpc": {"port": 50051, "protoContent": GRPC_PROTO, "services": {
                  "demo.Pinger": {"methods": {"Ping": {"response": {"text": "pong"}}}}}}},
             {"id": "bad", "type": "grpc",
              "grpc": {"port": 50051, "protoContent": GRPC_PROTO, "services": {
                  "demo.Pinger": {"methods": {"Ping": {"response": {"nope": 1}}}}}}},
             "mocks[0].grpc.services.demo.Pinger.methods.Ping.response"),
    "mqtt": ({"id": "q", "type": "mqtt",
              "mqtt": {"port": 1883, "topics": [
                  {"topic": "s/t", "messages": [{"payload": '{"v": 1}', "interval": "5s",
                                                 "repeat": True}]}]}},
             {"id": "bad", "type": "mqtt",
              "mqtt": {"port": 1883, "topics": [
                  {"topic": "s/t", "messages": [{"payload": "{{nope.x}}"}]}]}},
             "mocks[0].mqtt.topics[0].messages[0].payload"),
}

SERVED = [entry.mock_type for entry in protocols.PROTOCOLS if entry.handler is not None]


def test_every_served_type_has_contract_samples():
    assert SERVED and set(SERVED) == set(SAMPLES)


@pytest.mark.parametrize("mock_type", SERVED)
def test_handler_implements_the_interface_for_its_type(mock_type):
    handler = protocols.handler_for(mock_type)
    assert isinstance(handler, ProtocolHandler)
    assert handler.mock_type == mock_type
    assert handler.config_model is protocols.config_models()[mock_type]


@pytest.mark.parametrize("mock_type", SERVED)
def test_handler_compiles_a_valid_mock_into_what_it_serves(mock_type):
    mock = validate_config(make_config(SAMPLES[mock_type][0])).mocks[0]
    output = protocols.handler_for(mock_type).compile(mock, CompileContext("mocks[0]"))
    assert isinstance(output, CompiledMock)
    assert output.candidates or output.routes or output.websocket_routes or output.services


@pytest.mark.parametrize("mock_type", SERVED)
def test_bad_protocol_block_is_a_config_error_naming_the_key(mock_type):
    _, bad, key = SAMPLES[mock_type]
    with pytest.raises(ConfigError) as raised:
        compile_snapshot(validate_config(make_config(bad)))
    assert raised.value.path == key


def test_no_type_is_left_without_a_handler():
    # Every type of the SPEC's list is served now; a type registered without a handler would
    # be stored and serve nothing, which the pending placeholder model
    # (mocks.protocols.pending) exists for.
    assert [entry.mock_type for entry in protocols.PROTOCOLS if entry.handler is None] == []


def test_the_pending_placeholder_model_keeps_any_keys():
    from mocks.protocols.pending import PendingProtocolConfig

    assert PendingProtocolConfig.model_validate(
        {"anything": [1, 2]}).model_dump() == {"anything": [1, 2]}


def test_mock_schema_is_a_union_over_type_with_each_handlers_block():
    schema = ConfigFile.model_json_schema(by_alias=True)
    mock = schema["$defs"]["Mock"]
    assert [variant["required"] for variant in mock["oneOf"]] == [
        [kind] for kind in protocols.MOCK_TYPES]
    assert mock["properties"]["oauth"]["anyOf"][0]["$ref"] == "#/$defs/OAuthConfig"
    assert "issuer" in schema["$defs"]["OAuthConfig"]["properties"]


def test_a_mock_takes_only_the_block_of_its_type():
    with pytest.raises(ConfigError, match="takes only the 'http' object; remove 'mqtt'"):
        validate_config(make_config({"id": "x", "type": "http", "mqtt": {"port": 1883},
                                     "http": {"matcher": {"path": "/x"}}}))


@pytest.fixture
def broken_registry(monkeypatch):
    entry = ProtocolEntry("websocket", "mocks.protocols.pending:PendingProtocolConfig",
                          "mocks.protocols.no_such_module:HANDLER")
    monkeypatch.setitem(protocols._ENTRIES, "websocket", entry)
    monkeypatch.setattr(protocols, "PROTOCOLS", tuple(
        entry if item.mock_type == "websocket" else item for item in protocols.PROTOCOLS))
    monkeypatch.setattr(protocols, "_handlers", {})


def test_a_handler_that_fails_to_import_is_an_error_not_a_dead_type(broken_registry):
    with pytest.raises(HandlerImportError, match="websocket.*no_such_module"):
        protocols.load_handlers()


def test_startup_fails_with_exit_2_when_a_handler_cannot_load(broken_registry):
    from mockd_project.runner import RunOptions, StartupFailure, prepare

    with pytest.raises(StartupFailure) as raised:
        prepare(RunOptions(full=False))
    assert raised.value.exit_code == 2 and "no_such_module" in raised.value.message


def test_an_object_that_is_not_a_handler_is_refused(monkeypatch):
    entry = ProtocolEntry("mqtt", "mocks.protocols.pending:PendingProtocolConfig",
                          "mocks.protocols:PROTOCOLS")
    monkeypatch.setitem(protocols._ENTRIES, "mqtt", entry)
    monkeypatch.setattr(protocols, "_handlers", {})
    with pytest.raises(HandlerImportError, match="does not implement"):
        protocols.handler_for("mqtt")


# ---------------------------------------------------------------- incremental compiles


def _mocks(count: int) -> list[dict[str, Any]]:
    return [http_mock(f"m{number}", "GET", f"/items/{number}", body=f"item {number}")
            for number in range(count)]


def test_unchanged_mock_objects_reuse_their_compiled_output():
    config = validate_config(make_config(*_mocks(3)))
    first = compile_snapshot(config)
    changed = validate_config(make_config(http_mock("m1", "GET", "/items/1", body="new")))
    again = compile_snapshot(config.model_copy(update={"mocks": [
        config.mocks[0], changed.mocks[0], config.mocks[2]]}), previous=first)
    assert again.compiled["m0"].output is first.compiled["m0"].output
    assert again.compiled["m2"].output is first.compiled["m2"].output
    assert again.compiled["m1"].output is not first.compiled["m1"].output


def test_a_reused_mock_that_moved_gets_its_new_position_in_precedence():
    config = validate_config(make_config(
        http_mock("a", "GET", "/same", body="a"), http_mock("b", "GET", "/same", body="b")))
    first = compile_snapshot(config)
    swapped = compile_snapshot(config.model_copy(update={"mocks": config.mocks[::-1]}),
                               previous=first)
    assert [candidate.mock_id for candidate in swapped.candidates] == ["b", "a"]
    assert swapped.compiled["a"].order == 1


def test_bound_mocks_are_always_recompiled():
    document = make_config(http_mock("list", "GET", "/users"))
    document["tables"] = [{"name": "users"}]
    document["extend"] = [{"mock": "list", "table": "users", "action": "list"}]
    config = validate_config(document)
    first = compile_snapshot(config)
    again = compile_snapshot(config, previous=first)
    assert not first.compiled["list"].reusable
    assert again.compiled["list"].output is not first.compiled["list"].output


def test_engine_reload_with_one_new_mock_compiles_only_that_mock(monkeypatch):
    engine = Engine()
    config = validate_config(make_config(*_mocks(50)))
    engine.load(config)
    calls: list[str] = []
    handler = protocols.handler_for("http")
    original = type(handler).compile
    monkeypatch.setattr(type(handler), "compile",
                        lambda self, mock, context: calls.append(mock.id) or original(
                            self, mock, context))
    extra = validate_config(make_config(http_mock("new", "GET", "/new", body="n"))).mocks[0]
    engine.load(config.model_copy(update={"mocks": [*config.mocks, extra]}))
    assert calls == ["new"]
    assert len(engine.snapshot.candidates) == 51


# ---------------------------------------------------------------- listener services


class FakeListener:
    """A listener service that records what the supervisor asked of it."""

    def __init__(self, name: str, definition: Any, log: list[str], fail: bool = False):
        self.name, self.definition, self.log, self.fail = name, definition, log, fail
        self.status = "stopped"

    async def start(self) -> None:
        if self.fail:
            raise OSError("address already in use")
        self.status = "running"
        self.log.append(f"start {self.name} {self.definition}")

    async def stop(self) -> None:
        self.status = "stopped"
        self.log.append(f"stop {self.name} {self.definition}")

    def health(self) -> dict[str, Any]:
        return {"status": self.status}


def test_fake_listener_satisfies_the_service_interface():
    assert isinstance(FakeListener("x", 1, []), protocols.ListenerService)


async def test_supervisor_keeps_unchanged_listeners_and_restarts_changed_ones():
    log: list[str] = []
    supervisor = ListenerSupervisor()
    await supervisor.reconcile({"grpc:1": FakeListener("grpc:1", "v1", log),
                                "mqtt:2": FakeListener("mqtt:2", "v1", log)})
    await supervisor.reconcile({"grpc:1": FakeListener("grpc:1", "v1", log),
                                "mqtt:2": FakeListener("mqtt:2", "v2", log)})
    await supervisor.reconcile({"mqtt:2": FakeListener("mqtt:2", "v2", log)})
    assert log == ["start grpc:1 v1", "start mqtt:2 v1", "stop mqtt:2 v1", "start mqtt:2 v2",
                   "stop grpc:1 v1"]
    await supervisor.stop_all()
    assert log[-1] == "stop mqtt:2 v2" and supervisor.running == {}


async def test_a_listener_that_cannot_start_is_reported_and_does_not_stop_the_others():
    log: list[str] = []
    supervisor = ListenerSupervisor()
    await supervisor.reconcile({"grpc:1": FakeListener("grpc:1", "v1", log, fail=True),
                                "mqtt:2": FakeListener("mqtt:2", "v1", log)})
    assert supervisor.health() == {"mqtt:2": {"status": "running"},
                                   "grpc:1": {"status": "failed",
                                              "error": "address already in use"}}


async def test_engine_starts_listeners_of_a_config_loaded_on_its_loop(monkeypatch):
    log: list[str] = []
    listener = FakeListener("fake:9", "v1", log)
    handler = protocols.handler_for("http")
    original = type(handler).compile

    def with_service(self, mock, context):
        output = original(self, mock, context)
        return CompiledMock(candidates=output.candidates, services=(listener,))

    monkeypatch.setattr(type(handler), "compile", with_service)
    engine = Engine()
    engine.load(validate_config(make_config(http_mock("h", "GET", "/h"))))
    for _ in range(50):
        if log:
            break
        await asyncio.sleep(0.01)
    assert log == ["start fake:9 v1"]
    disabled = {**http_mock("h", "GET", "/h"), "enabled": False}
    engine.load(validate_config(make_config(disabled)))
    for _ in range(50):
        if len(log) == 2:
            break
        await asyncio.sleep(0.01)
    assert log == ["start fake:9 v1", "stop fake:9 v1"]


# ---------------------------------------------------------------- the WebSocket entry


async def test_websocket_upgrade_at_a_path_no_mock_serves_is_refused_before_accept():
    assert await asgi_upgrade(WebSocketRouterApp(Engine()), "/nothing") == [
        {"type": "websocket.close", "code": 1008}]


async def test_websocket_upgrade_is_dispatched_to_the_route_of_the_live_snapshot(monkeypatch):
    async def echo_app(scope, receive, send):
        await receive()
        await send({"type": "websocket.accept"})

    handler = protocols.handler_for("http")
    original = type(handler).compile
    monkeypatch.setattr(type(handler), "compile", lambda self, mock, context: CompiledMock(
        candidates=original(self, mock, context).candidates,
        websocket_routes=(WebSocketRoute("/ws", mock.id, echo_app),)))
    engine = Engine()
    engine.load(validate_config(make_config(http_mock("h", "GET", "/h"))))
    assert await asgi_upgrade(WebSocketRouterApp(engine), "/ws") == [{"type": "websocket.accept"}]


def test_mock_model_is_built_from_the_registry():
    assert set(Mock.model_fields) >= set(protocols.MOCK_TYPES)


# ---------------------------------------------------------------- patched snapshots

from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402

from tests.helpers import make_request  # noqa: E402

PATHS = ["/a", "/a/{id}", "/a/b", "/b/{id}", "/{any}/x", "/c/*", None, "/a/{id}/c"]
PROBES = ["/a", "/a/1", "/a/b", "/b/2", "/q/x", "/a/x", "/b/x", "/c/d/e", "/z", "/a/1/c", "/b"]


def _random_mock(number: int, path_choice: int, method_choice: int, variant: int) -> Any:
    method = ["GET", "POST", None][method_choice]
    path = PATHS[path_choice]
    matcher = {} if path is not None or method else {"headers": {"X-Any": "*"}}
    document = http_mock(f"m{number}", method, path, body=f"v{variant}", matcher=matcher)
    if variant % 3 == 0:
        document["enabled"] = False
    return validate_config(make_config(document)).mocks[0]


EDIT = st.tuples(st.sampled_from(["add", "remove", "edit", "move"]),
                 st.integers(0, 1000), st.integers(0, len(PATHS) - 1), st.integers(0, 2),
                 st.integers(0, 5))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(EDIT, min_size=1, max_size=25))
def test_patched_snapshots_serve_like_full_compiles(edits):
    mocks = [_random_mock(number, number % len(PATHS), number % 3, number) for number in range(6)]
    counter = len(mocks)
    snapshot = compile_snapshot(ConfigFile(mocks=mocks))
    for action, pick, path_choice, method_choice, variant in edits:
        if action == "add" or not mocks:
            mocks.append(_random_mock(counter, path_choice, method_choice, variant))
            counter += 1
        elif action == "remove":
            mocks.pop(pick % len(mocks))
        elif action == "edit":
            position = pick % len(mocks)
            number = int(mocks[position].id[1:])
            mocks[position] = _random_mock(number, path_choice, method_choice, variant)
        else:
            mocks.insert(0, mocks.pop(pick % len(mocks)))
        config = ConfigFile(mocks=list(mocks))
        snapshot = compile_snapshot(config, previous=snapshot)
        fresh = compile_snapshot(config)
        assert [c.mock_id for c in snapshot.candidates] == [c.mock_id for c in fresh.candidates]
        for method in ("GET", "POST", "DELETE"):
            for path in PROBES:
                request = make_request(method, path, headers={"X-Any": "1"})
                served, expected = snapshot.index.find(request), fresh.index.find(request)
                assert (served and (served.candidate.mock_id, served.path_params)) == (
                    expected and (expected.candidate.mock_id, expected.path_params)), (
                    method, path)


def test_a_small_edit_patches_the_index_instead_of_rebuilding_it(monkeypatch):
    config = validate_config(make_config(*_mocks(200)))
    first = compile_snapshot(config)
    rebuilt: list[int] = []
    original = type(first.index).__init__
    monkeypatch.setattr(type(first.index), "__init__",
                        lambda self, *args, **kwargs: rebuilt.append(1) or original(
                            self, *args, **kwargs))
    changed = validate_config(make_config(http_mock("m7", "GET", "/items/7", body="x")))
    mocks = [*config.mocks]
    mocks[7] = changed.mocks[0]
    del mocks[100]
    again = compile_snapshot(config.model_copy(update={"mocks": mocks}), previous=first)
    assert rebuilt == [] and len(again.candidates) == 199
    assert again.index.find(make_request("GET", "/items/7")).candidate.action is not \
        first.index.find(make_request("GET", "/items/7")).candidate.action
    assert again.index.find(make_request("GET", "/items/100")) is None
    assert first.index.find(make_request("GET", "/items/100")).candidate.mock_id == "m100"


async def test_a_large_full_compile_runs_off_the_event_loop():
    from mocks.engine.control import OFF_LOOP_COMPILE_MOCKS, EngineControl

    control = EngineControl(Engine())
    config = validate_config(make_config(*_mocks(OFF_LOOP_COMPILE_MOCKS * 2)))
    ticks: list[float] = []
    stop = asyncio.Event()

    async def ticker() -> None:
        loop = asyncio.get_running_loop()
        while not stop.is_set() and len(ticks) < 100_000:
            ticks.append(loop.time())
            await asyncio.sleep(0.001)

    task = asyncio.create_task(ticker())
    await asyncio.sleep(0.01)
    before = len(ticks)
    answer = await control.apply_config(config)
    during = len(ticks) - before
    stop.set()
    await task
    assert answer["mocks"] == OFF_LOOP_COMPILE_MOCKS * 2
    assert control.engine.snapshot.config is config
    # Compiled on the loop, the ticker could not have run at all while the load was awaited.
    assert during >= 3


async def test_a_small_edit_is_patched_in_on_the_loop(monkeypatch):
    from mocks.engine.control import EngineControl

    control = EngineControl(Engine())
    config = validate_config(make_config(*_mocks(50)))
    await control.apply_config(config)
    monkeypatch.setattr(asyncio, "to_thread", None)  # a thread would fail loudly here
    extra = validate_config(make_config(http_mock("x", "GET", "/x", body="x"))).mocks[0]
    await control.apply_config(config.model_copy(update={"mocks": [*config.mocks, extra]}))
    assert control.engine.snapshot.index.find(make_request("GET", "/x")).candidate.mock_id == "x"
