"""The plane boundary as a test (ARCHITECTURE seam 2; STYLE §1): the engine core imports
nothing from Django, Channels or any ``models`` module."""
from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ENGINE_PACKAGES = [ROOT / "mocks" / "engine", ROOT / "mocks" / "protocols", ROOT / "oidc"]
#: Django glue inside otherwise engine-side packages (an app's AppConfig).
DJANGO_GLUE = {ROOT / "oidc" / "apps.py"}
#: The admin side of the protocol folders: their admin routes (``api.py``, and the shared
#: router factory ``mocks/protocols/api.py``) and port-sharing merges; the engine never
#: imports them (the import-linter contract on ``mocks.protocols`` says so).
PROTOCOL_ADMIN_SIDE = {ROOT / "mocks" / "protocols" / "api.py",
                       *(ROOT / "mocks" / "protocols").glob("*/api.py"),
                       *(ROOT / "mocks" / "protocols").glob("*/port_sharing.py")}
FORBIDDEN = ("django", "channels", "ninja", "daphne")
#: The table runtime (store, queries, transforms, bindings); ``tables/`` also holds Django
#: modules (apps, models, api, services, cli) that are not listed here.
TABLE_RUNTIME_MODULES = [ROOT / "tables" / f"{name}.py" for name in (
    "__init__", "config", "ids", "forms", "query", "errors", "transforms", "validation", "store",
    "binding", "control", "expressions", "operations_config", "operations")]


def _imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(), str(path))
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            names.append(module)
            names += [f"{module}.{alias.name}" for alias in node.names]
    return names


@pytest.mark.parametrize("path", [path for package in ENGINE_PACKAGES
                                  for path in sorted(package.rglob("*.py"))
                                  if path not in DJANGO_GLUE | PROTOCOL_ADMIN_SIDE]
                         + TABLE_RUNTIME_MODULES,
                         ids=lambda path: str(path.relative_to(ROOT)))
def test_engine_module_imports_no_django(path):
    bad = [name for name in _imports(path)
           if name.split(".")[0] in FORBIDDEN or name.split(".")[-1] == "models"]
    assert not bad, f"{path.relative_to(ROOT)} imports {bad}"


#: Run after the modules of an engine start were listed (:func:`engine_start_output`): the
#: engine's other run-time modules, then the Django-side modules loaded by then.
ENGINE_IMPORTS = (
    "import mocks.engine.app, mocks.engine.control, mocks.loader, oidc.engine, tables.store\n"
    "import tables.binding, tables.control, tables.operations, tables.expressions\n"
    "print('django', sorted(m for m in sys.modules if m.split('.')[0] in\n"
    "                       ('django', 'channels', 'ninja')))\n")


def test_importing_the_engine_loads_no_django_at_run_time(engine_start_output):
    """The engine's modules (data-plane app, engine control, loader, the identity provider's
    engine, the table runtime, custom operations) imported on top of an engine start load
    no Django, Channels or ninja (the engine start alone loads none: see below)."""
    assert engine_start_output["django"] == "[]"


#: Admin-side modules ``mockd engine`` must never load (ARCHITECTURE seam 2: no Django at
#: all, so no ORM, no models, no admin URLconf, no ninja).
ADMIN_SIDE_MODULES = ("django", "ninja", "mocks.models", "mocks.control.commit",
                      "mockd_project.urls")


#: What ``mockd engine -c FILE`` runs before it serves (an HTTP-only config): the CLI module,
#: the runner, the handlers and the config compile, the data-plane app and the
#: engine-control app (``control`` in the script).
ENGINE_START = (
    "import asyncio, sys\n"
    "from mockd_project import cli, runner\n"
    "from mockd_project.asgi import data_plane_application\n"
    "from mocks.engine.control import EngineControl, EngineControlApp\n"
    "options = runner.RunOptions(full=False, config='examples/quickstart.yaml', port=0,\n"
    "                            engine_token='t')\n"
    "engine, config = runner.prepare(options)\n"
    "runner.tls_contexts(options, runner.resolve_tls(options, config), None)\n"
    "data_plane_application(engine, lean=True)\n"
    "control = EngineControl(engine)\n"
    "EngineControlApp(control, runner.resolve_engine_token(options).value)\n"
    "import uvicorn.config, uvicorn.server\n")


@pytest.fixture(scope="module")
def engine_start_output() -> dict[str, str]:
    """One subprocess for the module, in this order: :data:`ENGINE_START`, one request of the
    engine-control port's HTTP side (``/status``), then ``modules``: the modules loaded by
    then, one a line, and ``built:<module>.<Model>`` for each pydantic model of
    :data:`LAZY_CONFIG_MODULES` built by then; then ``routes``: what
    :data:`CONTROL_ROUTES_CHECK` printed; then ``django``: what :data:`ENGINE_IMPORTS`
    printed. Each later step runs on what the earlier ones loaded, which the tests of the
    earlier ones check."""
    code = ENGINE_START + ("asyncio.run(control.status())\n"
                           "print('\\n'.join(sys.modules))\n"
                           "from pydantic import BaseModel\n"
                           f"for name in {LAZY_CONFIG_MODULES!r}:\n"
                           "    for value in vars(sys.modules.get(name, sys)).values():\n"
                           "        if (isinstance(value, type) and issubclass(value, BaseModel)\n"
                           "                and value.__pydantic_complete__):\n"
                           "            print(f'built:{value.__module__}.{value.__name__}')\n"
                           "print('--routes--')\n" + CONTROL_ROUTES_CHECK
                           + "print('--django--')\n" + ENGINE_IMPORTS)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, timeout=60)
    assert done.returncode == 0, done.stderr
    modules, rest = done.stdout.split("--routes--\n")
    routes, django = rest.split("--django--\n")
    return {"modules": modules, "routes": routes.strip(),
            "django": django.strip().removeprefix("django ")}


@pytest.fixture(scope="module")
def engine_start_modules(engine_start_output) -> list[str]:
    """The ``modules`` part of :func:`engine_start_output`, as a list."""
    return engine_start_output["modules"].split()


def _among(modules: list[str], names: tuple[str, ...]) -> list[str]:
    """Which of ``names`` (packages or modules) are among ``modules``."""
    return sorted({wanted for name in modules for wanted in names
                   if name == wanted or name.startswith(wanted + ".")})


def test_mockd_engine_start_path_loads_nothing_of_the_admin_side(engine_start_modules):
    """What ``mockd engine -c FILE`` runs before it serves: the CLI module, the runner, the
    handlers and the config compile, the data-plane app and the engine-control app."""
    assert _among(engine_start_modules, ADMIN_SIDE_MODULES) == []


#: Third-party libraries of protocols other than HTTP (ARCHITECTURE "Protocol handlers": an
#: HTTP-only engine pays for none of them).
PROTOCOL_LIBRARIES = ("grpc", "google.protobuf", "graphql", "amqtt", "lxml", "oauthlib",
                      "authlib", "jwt")
#: Modules of features an HTTP-only config without chaos, custom operations or WebSocket
#: traffic does not use: loaded on first use (chaos when turned on, custom operations when a
#: config or an admin defines one, the WebSocket library on the first upgrade, the admin
#: fan-out's HTTP client when an admin asks for the traffic counters, the TLS module with
#: HTTPS).
UNUSED_FEATURE_MODULES = ("chaos.config", "chaos.injector", "tables.operations",
                          "tables.operations_config", "tables.expressions", "websockets",
                          "wsproto", "httpx", "mockd_project.tls")


def test_mockd_engine_with_an_http_only_config_loads_no_protocol_library(engine_start_modules):
    """``mockd engine -c`` an HTTP-only config, up to serving, then one engine-control
    request of the HTTP side (``/status``): no grpc, graphql-core, amqtt, lxml, oauthlib,
    authlib or PyJWT, and none of the unused features' modules (chaos, custom operations,
    the WebSocket library)."""
    assert _among(engine_start_modules, PROTOCOL_LIBRARIES + UNUSED_FEATURE_MODULES) == []


def test_a_grpc_and_a_graphql_mock_load_their_libraries_when_they_compile(tmp_path):
    """The other side of paying for what is used: the engine start path with a config of a
    gRPC and a GraphQL mock imports grpc, protobuf and graphql-core (when those mocks
    compile), and still no other protocol's library."""
    config = tmp_path / "mocks.yaml"
    config.write_text(json.dumps({"mocks": [
        {"id": "greeter", "type": "grpc",
         "grpc": {"port": 50051, "protoFile": str(ROOT / "examples" / "greeter.proto")}},
        {"id": "graph", "type": "graphql",
         "graphql": {"path": "/graphql", "schema": "type Query { hello: String }"}}]}))
    code = ENGINE_START.replace("'examples/quickstart.yaml'", repr(str(config)))
    assert code != ENGINE_START
    code += "print('\\n'.join(sys.modules))\n"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, timeout=60)
    assert done.returncode == 0, done.stderr
    assert _among(done.stdout.split(), PROTOCOL_LIBRARIES) == ["google.protobuf", "graphql",
                                                               "grpc"]


#: Run in :func:`engine_start_output` after the engine start: the registry's control routes
#: answer ``/status`` (not a protocol's path), then whether the gRPC server was imported and
#: which protocols' routes were.
CONTROL_ROUTES_CHECK = (
    "from mocks.engine.control import ProtocolControlRoutes\n"
    "routes = ProtocolControlRoutes.from_registry()\n"
    "async def answer(status, payload): print('status', status)\n"
    "async def read(): return b''\n"
    "asyncio.run(routes.route(None, 'GET', '/status', {}, read, answer))\n"
    "before = 'mocks.protocols.grpc.server' in sys.modules\n"
    "print('before', before, sorted(routes.loaded))\n")


def test_a_protocols_control_routes_load_when_one_of_its_routes_is_asked(engine_start_output):
    """The engine-control port imports a protocol's routes (and server) on the first request
    of its paths, through the registry's ``control_routes`` string: a request of another
    path (``/status``) imports none."""
    assert engine_start_output["routes"] == "before False []"


@pytest.mark.parametrize(("path", "owner"), [
    pytest.param("/grpc", "grpc", id="protocol root"),
    pytest.param("/grpc/connections/c1", "grpc", id="below the root"),
    pytest.param("/mqtt-connections/c1", "mqtt", id="dash suffix"),
    pytest.param("/soap-recordings", "soap", id="recordings"),
    pytest.param("/mocks/m1/websocket/connections", "websocket", id="under a mock"),
    pytest.param("/mocks/m1/verify", "verify", id="mock route of the engine"),
    pytest.param("/", "", id="root"),
])
def test_route_owner_names_the_protocol_of_a_control_path(path, owner):
    from mocks.engine.control import route_owner

    assert route_owner(path) == owner


#: Config models of protocols an HTTP-only engine does not serve.
OTHER_PROTOCOL_MODELS = ("mocks.protocols.graphql.config", "mocks.protocols.grpc.config",
                         "mocks.protocols.mqtt.config", "mocks.protocols.soap.config",
                         "mocks.protocols.websocket.config", "oidc.config")


def test_mockd_engine_with_an_http_only_config_builds_no_other_protocols_config_model(
        engine_start_modules):
    """The ``Mock`` schema builds a protocol's model when a block of its type is validated
    (:class:`mocks.config.ProtocolBlock`), so an HTTP-only engine builds none of the others."""
    assert sorted(set(engine_start_modules) & set(OTHER_PROTOCOL_MODELS)) == []


#: Config modules an HTTP-only config without streams, tables or ``serverConfig`` never
#: imports: each is imported when a block of its kind is first validated
#: (:class:`mocks.core.lazymodel.LazyModel`, :class:`mocks.config.ProtocolBlock`).
LAZY_CONFIG_MODULES = ("tables.config", "mocks.protocols.streaming.config",
                       "mocks.server_config", *OTHER_PROTOCOL_MODELS)

#: One block of each kind :data:`LAZY_CONFIG_MODULES` covers.
EVERY_KIND_CONFIG = {"serverConfig": {"httpPort": 4280}, "tables": [{"name": "users"}], "mocks": [
    {"id": "s", "http": {"matcher": {"path": "/s"}, "sse": {"events": [{"data": "x"}]}}},
    {"id": "c", "http": {"matcher": {"path": "/c"}, "chunked": {"data": "a"}}},
    {"id": "b", "http": {"matcher": {"path": "/u"},
                         "statefulBinding": {"table": "users", "action": "list"}}},
    {"id": "w", "type": "websocket", "websocket": {"path": "/ws"}},
    {"id": "g", "type": "graphql",
     "graphql": {"path": "/graphql", "schema": "type Query { a: String }"}},
    {"id": "r", "type": "grpc", "grpc": {"port": 50051, "protoFile": "examples/greeter.proto"}},
    {"id": "q", "type": "mqtt", "mqtt": {"port": 1883}},
    {"id": "o", "type": "oauth", "oauth": {"issuer": "http://localhost:4280/oauth",
                                           "clients": [{"clientId": "app"}]}},
    {"id": "p", "type": "soap", "soap": {"path": "/soap", "operations": {"Get": {}}}}]}


def test_validating_an_http_only_config_imports_no_other_config_module():
    """``validate_config`` of the quick-start mocks plus one with request validation rules,
    a scenario and a response list (a dict: no PyYAML needed) imports none of
    :data:`LAZY_CONFIG_MODULES` and not PyYAML; then a config with one block of each kind
    imports every one of them. One subprocess, no server."""
    import yaml

    http_only = yaml.safe_load((ROOT / "examples" / "quickstart.yaml").read_text())
    http_only["mocks"].append({"id": "rules", "http": {
        "matcher": {"method": "POST", "path": "/rules"},
        "scenario": {"name": "flow", "newState": "done"},
        "responses": [{"statusCode": 201}, {"statusCode": 409}],
        "validation": {"fields": {"name": {"type": "string", "minLength": 1}},
                       "headers": {"X-Id": {"pattern": "^[0-9]+$"}}}}})
    code = ("import json, sys\n"
            "from mocks.loader import validate_config\n"
            "for document in sys.argv[1:]:\n"
            "    validate_config(json.loads(document))\n"
            "    print(json.dumps(sorted(sys.modules)))\n")
    done = subprocess.run([sys.executable, "-c", code, json.dumps(http_only),
                           json.dumps(EVERY_KIND_CONFIG)],
                          capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert done.returncode == 0, done.stderr
    after_http, after_every_kind = (json.loads(line) for line in done.stdout.splitlines())
    assert _among(after_http, LAZY_CONFIG_MODULES + ("yaml",)) == []
    assert _among(after_every_kind, LAZY_CONFIG_MODULES) == sorted(LAZY_CONFIG_MODULES)


def test_mockd_engine_with_an_http_only_config_builds_no_table_or_stream_model(
        engine_start_modules):
    """An HTTP-only engine start does not import the table config schema (the table runtime
    names its models in annotations only), nor the streaming schema and its event compilers
    (loaded by the first ``sse``/``chunked`` mock), nor the table list-query and validation
    rules and the HTTP request validation (loaded by the first table or ``http.validation``),
    and builds no model of ``serverConfig`` (``defer_build``; the ``http`` block names them
    through :class:`~mocks.core.lazymodel.LazyModel`)."""
    built = [name for name in engine_start_modules if name.startswith("built:")]
    assert _among(engine_start_modules, (
        "tables.config", "mocks.protocols.streaming.config", "mocks.protocols.streaming.actions",
        "tables.query", "tables.validation", "mocks.protocols.http.validation")) == []
    assert built == []
    # Nor pydantic's optional parts: the v1 shim and the e-mail validator.
    assert _among(engine_start_modules, ("pydantic.v1", "email_validator")) == []
