"""What a ``mockd`` command loads (ARCHITECTURE "Protocol handlers": the CLI is composed from
the registry; a client command answers at once).

A client command (``list``, ``status``, ``add``, ``admin key``) imports click and the CLI
modules only: its admin client is the standard library's ``http.client``, so never httpx,
Django, the config models (pydantic), nor a protocol's library or CLI module. A protocol's
command module is imported when that command runs or its help is shown. ``import --dry-run``
of an HTTP-only file validates it locally, with the HTTP config model only. The commands of
the recording proxy and the recordings (``proxy``, ``recordings``, ``stream-recordings``,
``convert``) load none of these either when their help is shown: every subcommand they have
is checked, so a heavy import at the top of one of their modules is caught. Each client
command runs once, in a fresh interpreter, against the fake admin API of
``bench/cli_start.py`` on a loopback port and lists ``sys.modules`` afterwards; the helps
are shown one after another in one fresh interpreter, each listing the modules it loaded
first.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: Runs ``mockd <argv>`` in-process against a fake admin API, then prints ``sys.modules``.
SCRIPT = """
import sys, threading
from http.server import ThreadingHTTPServer
sys.path.insert(0, "bench")
from cli_start import FakeAdmin

server = ThreadingHTTPServer(("127.0.0.1", 0), FakeAdmin)
threading.Thread(target=server.serve_forever, daemon=True).start()
url = "http://127.0.0.1:%d" % server.server_address[1]
from mockd_project.cli import main
argv = [url if item == "URL" else item for item in sys.argv[1:]]
try:
    main.main(args=argv, prog_name="mockd", standalone_mode=False)
except SystemExit as exit:
    assert not exit.code, exit.code
server.shutdown()
print("MODULES", " ".join(sys.modules))
"""

#: Modules (and their submodules) no client command may load.
FORBIDDEN = ("django", "ninja", "pydantic", "mocks.config", "mocks.engine", "grpc", "httpx",
             "httpcore", "anyio",
             "google.protobuf", "graphql", "amqtt", "lxml", "oauthlib", "tables.config",
             "mocks.protocols.grpc", "mocks.protocols.mqtt", "mocks.protocols.soap",
             "mocks.protocols.websocket", "mocks.protocols.graphql", "oidc")


def _run(script: str, argv: list[str], tmp_path: Path) -> str:
    data_dir = tmp_path / "data"
    data_dir.mkdir(exist_ok=True)
    (data_dir / "admin-api-key").write_text("k\n")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "MOCKD_DATA_DIR": str(data_dir)}
    done = subprocess.run([sys.executable, "-c", script, *argv], capture_output=True,
                          text=True, cwd=ROOT, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _loaded(argv: list[str], tmp_path: Path) -> set[str]:
    output = _run(SCRIPT, argv, tmp_path)
    line = next(line for line in output.splitlines() if line.startswith("MODULES "))
    return set(line.split()[1:])


@pytest.fixture(scope="module")
def loaded(tmp_path_factory):
    """``loaded(argv) -> set of module names`` after ``mockd <argv>`` in a fresh interpreter
    (:data:`SCRIPT`); each distinct argv runs once per module (``list`` is asked for by six
    tests and is the same command each time)."""
    tmp_path = tmp_path_factory.mktemp("cli-imports")
    seen: dict[tuple[str, ...], set[str]] = {}

    def run(argv: list[str]) -> set[str]:
        if tuple(argv) not in seen:
            seen[tuple(argv)] = _loaded(argv, tmp_path)
        return seen[tuple(argv)]

    return run


def _matching(modules: set[str], prefixes: tuple[str, ...]) -> list[str]:
    return sorted(name for name in modules
                  if any(name == prefix or name.startswith(prefix + ".") for prefix in prefixes))


CLIENT = ["--admin-url", "URL", "--api-key", "k"]


@pytest.mark.parametrize("argv", [
    pytest.param([*CLIENT, "list"], id="list"),
    pytest.param([*CLIENT, "status"], id="status"),
    pytest.param([*CLIENT, "add", "--path", "/x", "--body", "{}"], id="add"),
    pytest.param([*CLIENT, "http", "add", "--path", "/x", "--sse-event", "a:b"],
                 id="http add with sse"),
    pytest.param(["admin", "key"], id="admin key"),
    pytest.param([*CLIENT, "stateful", "custom", "list"], id="stateful custom list"),
])
def test_client_command_loads_no_django_config_models_or_protocol_library(argv, loaded):
    modules = loaded(argv)
    assert _matching(modules, FORBIDDEN) == []
    if argv[0] != "admin":
        assert "http.client" in modules  # it did talk to the fake admin API


#: Config models of the protocols other than http.
OTHER_PROTOCOL_MODELS = ("mocks.protocols.graphql.config", "mocks.protocols.grpc.config",
                         "mocks.protocols.websocket.config", "mocks.protocols.mqtt.config",
                         "mocks.protocols.soap.config", "oidc.config")

SMALL_CONFIG = """version: "1.0"
mocks:
  - id: hello
    http:
      matcher: {method: GET, path: /hello}
      response: {body: {hello: world}}
"""


def test_import_dry_run_of_an_http_file_validates_with_the_http_model_only(tmp_path):
    config = tmp_path / "small.yaml"
    config.write_text(SMALL_CONFIG)
    modules = _loaded(["import", "--dry-run", str(config)], tmp_path)
    assert "mocks.protocols.http.config" in modules  # it was validated
    assert _matching(modules, ("django", "ninja", "httpx", "grpc", "google.protobuf", "graphql",
                              "amqtt", "lxml", "oauthlib", *OTHER_PROTOCOL_MODELS)) == []


#: Shows the help of each command named on the command line and of every subcommand it has,
#: each in turn in this one interpreter, and prints ``HELP <command> <modules it loaded
#: first>`` for each: a module counts for the first help that imported it.
HELP_SCRIPT = """
import sys
import click
from mockd_project.cli import main

for command in sys.argv[1:]:
    before = set(sys.modules)  # the command's own module counts for its help
    group = main.get_command(click.Context(main), command)
    names = [[]]
    if isinstance(group, click.Group):
        names += [[name] for name in group.list_commands(click.Context(group))]
    for name in names:
        if name:
            before = set(sys.modules)
        try:
            main.main(args=[command, *name, "--help"], prog_name="mockd",
                      standalone_mode=False)
        except SystemExit as exit:
            assert not exit.code, exit.code
        print("HELP", " ".join([command, *name]).replace(" ", "/"),
              " ".join(sorted(set(sys.modules) - before)))
"""

RECORDING_COMMANDS = ("proxy", "recordings", "stream-recordings", "convert")
PROTOCOL_COMMANDS = {"grpc": "mocks.protocols.grpc.cli", "mqtt": "mocks.protocols.mqtt.cli",
                     "websocket": "mocks.protocols.websocket.cli",
                     "soap": "mocks.protocols.soap.cli", "oauth": "oidc.cli"}


@pytest.fixture(scope="module")
def helps(tmp_path_factory) -> dict[str, set[str]]:
    """``{"proxy/start": modules first loaded by its help, ...}``: the help of every recording
    command and protocol command (and of each of their subcommands), shown in turn in one
    fresh interpreter (:data:`HELP_SCRIPT`). A module one help loads is seen as new by that
    help only, so a forbidden import is caught at the first help that makes it, and a
    protocol's command module found new at its own help was not loaded by any help before."""
    output = _run(HELP_SCRIPT, [*RECORDING_COMMANDS, *PROTOCOL_COMMANDS],
                  tmp_path_factory.mktemp("cli-helps"))
    shown = {}
    for line in output.splitlines():
        if line.startswith("HELP "):
            _, name, *modules = line.split(" ")
            shown[name] = set(" ".join(modules).split())
    return shown


@pytest.mark.parametrize("command", RECORDING_COMMANDS)
def test_recording_commands_load_no_django_httpx_or_config_models(command, helps):
    shown = {name: modules for name, modules in helps.items()
             if name == command or name.startswith(command + "/")}
    assert shown, helps.keys()
    for name, modules in shown.items():
        assert _matching(modules, FORBIDDEN) == [], name.replace("/", " ")


@pytest.mark.parametrize(("command", "module"), [
    pytest.param(command, module, id=command) for command, module in PROTOCOL_COMMANDS.items()])
def test_protocol_command_module_loads_when_its_help_is_shown_and_no_sooner(
        command, module, loaded, helps):
    assert module not in loaded([*CLIENT, "list"])
    assert module in helps[command]


def test_mockd_help_lists_the_registry_protocol_commands(tmp_path):
    from click.testing import CliRunner

    from mockd_project.cli import main, protocol_commands

    output = CliRunner().invoke(main, ["--help"]).output
    assert set(protocol_commands()) == {"http", "grpc", "websocket", "mqtt", "soap", "oauth"}
    for name in protocol_commands():
        assert f"  {name} " in output


def test_a_registry_command_that_cannot_import_fails_with_its_name_and_target(monkeypatch):
    from click.testing import CliRunner

    from mockd_project import cli

    monkeypatch.setitem(cli.main.lazy_commands, "nope", "mocks.no_such:group")
    result = CliRunner().invoke(cli.main, ["nope", "--help"])
    assert result.exit_code == 1
    assert "command 'nope': cannot import mocks.no_such:group" in result.output
