"""The README's shell and Python examples run in the order written, against a fresh server.

Every fenced ```sh block of README.md is parsed; each command runs with bash and real curl,
in a scratch folder whose ``examples`` links to the repository's and whose ``.venv`` links to
this virtualenv, with an isolated HOME. ``mockd`` and ``python3`` are not on PATH until the
README's own ``. .venv/bin/activate`` runs: a line that sources a file (``. FILE``,
``source FILE``) changes the environment of the lines after it. Every fenced ```python block
runs whole, in its place in that order, with the ``python3`` that PATH then names. The
server is the README's own quick-start command (``mockd start -c examples/quickstart.yaml``),
started by the fixture on free loopback ports: the README's ports (4280, 4290, 4281, 4300, 8888)
are rewritten to free ones in every command. Nothing leaves loopback and every command is
bounded by a timeout.

What a comment promises is checked when it states a result: a leading status (``# 404 ...``)
and/or a JSON value (``# {"id":"42","name":"Test User"}``), where ``"…"`` stands for any value
and a trailing ``…`` in an object or a list for more keys or items. A comment on a line of its
own states the result of the command before it. A curl without a stated status must answer
2xx; any other command must exit 0.

Lines (and Python blocks, by their first line) that cannot run in a test are listed in
:data:`NOT_RUN` with the reason and what the test does instead; a line ending in ``&`` is
started in the background, waited for and stopped at the end (:func:`_start_background`).
Every other line runs.
"""
from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import MOCKD, MockdProcess, free_port, isolated_env

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
VENV_BIN = str(Path(MOCKD).parent)

#: The README's quick-start line: the fixture runs its ``mockd start`` part (on free ports).
QUICK_START = ("python3 -m venv .venv && .venv/bin/pip install -e . && "
               ".venv/bin/mockd start -c examples/quickstart.yaml")

#: Lines not run as written: line -> why, and what the test does instead.
NOT_RUN = {
    QUICK_START: "creates a virtualenv and installs mockd from the network, then serves in the "
                 "foreground; the tests run inside an installed virtualenv already, so the "
                 "fixture starts the line's `mockd start` part as the server the other blocks "
                 "talk to",
    "python3 -m venv .venv && .venv/bin/pip install -e '.[dev]' && .venv/bin/pytest":
        "installs the test tools from the network and runs this whole test suite, this test "
        "included; not run",
    "from openai import OpenAI":
        "needs the `chat` mock of the YAML example above it, which the quick-start server "
        "does not load; tests/integration/test_sse.py drives the openai SDK against that mock",
    "import paho.mqtt.client as mqtt":
        "needs the `plant` MQTT mock of the YAML example above it on port 1883 and ends in "
        "loop_forever(); tests/integration/test_mqtt_mocks.py and test_mqtt_real_clients.py "
        "drive paho against such mocks",
}

#: Ports the README uses; each is rewritten to a free loopback port for the run.
README_PORTS = (4280, 4290, 4281, 4300, 8888)

COMMAND_TIMEOUT = 60.0
STATUS_MARK = "\n__README_HTTP_STATUS__ "


@dataclass
class Command:
    """One shell command (or one whole Python block) of the README: its text, the comment
    stating its result, and where it is (block number, README line)."""

    text: str
    comment: str
    block: int
    line: int
    language: str = "sh"

    @property
    def key(self) -> str:
        """How :data:`NOT_RUN` names it: the line, or a Python block's first line."""
        return self.text.split("\n", 1)[0] if self.language == "python" else self.text

    def where(self) -> str:
        return f"README.md line {self.line} ({self.language} block {self.block}): {self.key}"


def _split_comment(line: str) -> tuple[str, str]:
    """``(command, comment)`` of one line; a ``#`` inside quotes or a word is not a comment."""
    quote = ""
    for index, char in enumerate(line):
        if quote:
            if char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        elif char == "#" and (index == 0 or line[index - 1].isspace()):
            return line[:index].rstrip(), line[index + 1:].strip()
    return line.rstrip(), ""


def readme_commands() -> list[Command]:
    """Every command of the README's ```sh blocks (continuation lines joined) and every
    ```python block, in order."""
    commands: list[Command] = []
    block = 0
    inside = False
    fenced = False
    python: list[str] | None = None
    pending = ""
    start_line = 0
    for number, raw in enumerate(README.read_text(encoding="utf-8").splitlines(), start=1):
        if raw.startswith("```"):
            if fenced and python:
                commands.append(Command("\n".join(python) + "\n", "", block, start_line,
                                        "python"))
            fenced = not fenced
            inside = fenced and raw.strip() in ("```sh", "```python")
            block += inside
            python = [] if inside and raw.strip() == "```python" else None
            start_line = number + 1
            continue
        if python is not None:
            python.append(raw)
            continue
        if not inside or not raw.strip():
            continue
        if not pending:
            start_line = number
        text, comment = _split_comment(raw)
        if text.endswith("\\"):
            pending += text[:-1] + " "
            continue
        text = (pending + text.strip()).strip()
        pending = ""
        if not text:  # a comment line: the result of the command before it
            if commands and commands[-1].block == block and not commands[-1].comment:
                commands[-1].comment = comment
            continue
        commands.append(Command(text, comment, block, start_line))
    return commands


# ------------------------------------------------------------------- stated results

ANY = "__readme_any__"
MORE = "__readme_more__"


def stated_result(comment: str) -> tuple[int | None, Any]:
    """``(status, json)`` a comment states at its start (each None when not stated)."""
    match = re.match(r"([1-5]\d\d)\b\s*", comment)
    status = int(match.group(1)) if match else None
    rest = comment[match.end():] if match else comment
    if not rest.startswith(("{", "[")):
        return status, None
    text = (rest.replace('"…"', json.dumps(ANY))
            .replace(",…}", f',"{MORE}":true}}').replace(",…]", f',"{MORE}"]'))
    value, _ = json.JSONDecoder().raw_decode(text)
    return status, value


def matches(expected: Any, actual: Any) -> bool:
    """Whether ``actual`` is what ``expected`` (from :func:`stated_result`) describes."""
    if expected == ANY:
        return True
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return False
        keys = set(expected) - {MORE}
        if MORE not in expected and keys != set(actual):
            return False
        return all(key in actual and matches(expected[key], actual[key]) for key in keys)
    if isinstance(expected, list):
        if not isinstance(actual, list):
            return False
        items = [item for item in expected if item != MORE]
        if len(items) != len(actual) and not (MORE in expected and len(actual) >= len(items)):
            return False
        return all(matches(item, value) for item, value in zip(items, actual))
    return expected == actual


# ------------------------------------------------------------------- running


def _rewrite_ports(text: str, ports: dict[int, int]) -> str:
    return re.sub(r"(?<!\d)(" + "|".join(map(str, ports)) + r")(?!\d)",
                  lambda match: str(ports[int(match.group(1))]), text)


def _wait_for_port(port: int, process: subprocess.Popen, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"background command exited {process.returncode}")
        with socket.socket() as sock:
            sock.settimeout(0.5)
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise AssertionError(f"nothing listened on port {port} within {timeout} s")


def _start_background(text: str, env: dict[str, str], cwd: Path, ports: dict[int, int],
                      log: Path) -> subprocess.Popen:
    """Start a ``... &`` line in its own session and wait until every rewritten port it
    names accepts connections."""
    process = subprocess.Popen(["bash", "-c", "exec " + text], env=env, cwd=cwd,
                               stdin=subprocess.DEVNULL, stdout=log.open("wb"),
                               stderr=subprocess.STDOUT, start_new_session=True)
    for port in ports.values():
        if re.search(rf"(?<!\d){port}(?!\d)", text):
            _wait_for_port(port, process)
    return process


def _assign(text: str) -> tuple[str, str] | None:
    """``(name, script)`` for ``NAME=...`` or ``export NAME=...`` lines, else None."""
    match = re.match(r"(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=", text)
    return (match.group(1), text) if match else None


def _run_python(command: Command, text: str, env: dict[str, str], cwd: Path) -> str:
    """Run one Python block with the ``python3`` on the block's PATH; "" when it exits 0."""
    python = shutil.which("python3", path=env["PATH"])
    if python is None:
        return f"{command.where()}\n  no python3 on PATH {env['PATH']}"
    done = subprocess.run([python, "-"], input=text, env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=COMMAND_TIMEOUT)
    if done.returncode != 0:
        return (f"{command.where()}\n  {python} exit {done.returncode}\n  stdout: "
                f"{done.stdout[-2000:]}\n  stderr: {done.stderr[-2000:]}")
    return ""


def _source(command: Command, text: str, env: dict[str, str], cwd: Path) -> str:
    """Run a ``. FILE`` / ``source FILE`` line and keep the environment it leaves."""
    done = subprocess.run(["bash", "-c", f"{text} && env -0"], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=COMMAND_TIMEOUT)
    if done.returncode != 0:
        return f"{command.where()}\n  exit {done.returncode}, stderr: {done.stderr}"
    env.clear()
    env.update(line.split("=", 1) for line in done.stdout.split("\0") if "=" in line)
    return ""


def _run(command: Command, text: str, env: dict[str, str], cwd: Path) -> str:
    """Run one command; returns a failure description, or "" when it kept its promise."""
    if command.language == "python":
        return _run_python(command, text, env, cwd)
    if re.match(r"(?:\.|source)\s", text):
        return _source(command, text, env, cwd)
    assignment = _assign(text)
    if assignment is not None:
        name, script = assignment
        done = subprocess.run(["bash", "-c", f'{script}\nprintf %s "${name}"'], env=env,
                              cwd=cwd, capture_output=True, text=True, timeout=COMMAND_TIMEOUT)
        if done.returncode != 0 or not done.stdout:
            return f"{command.where()}\n  exit {done.returncode}, stderr: {done.stderr}"
        env[name] = done.stdout
        return ""
    is_curl = shlex.split(text)[0] == "curl"
    if is_curl:
        # Real curl, silent but for errors, with the status appended to its output.
        text = "curl -sS -w " + shlex.quote(STATUS_MARK + "%{http_code}") + text[len("curl"):]
    done = subprocess.run(["bash", "-c", text], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=COMMAND_TIMEOUT, stdin=subprocess.DEVNULL)
    report = (f"{command.where()}\n  exit {done.returncode}\n  stdout: {done.stdout[-2000:]}"
              f"\n  stderr: {done.stderr[-2000:]}")
    if done.returncode != 0:
        return report
    status, expected = stated_result(command.comment)
    if not is_curl:
        return ""
    body, _, code = done.stdout.rpartition(STATUS_MARK)
    actual_status = int(code.strip())
    if status is not None and actual_status != status:
        return f"{report}\n  expected status {status}, got {actual_status}"
    if status is None and not 200 <= actual_status < 300:
        return f"{report}\n  expected a 2xx status, got {actual_status}"
    if expected is not None:
        try:
            actual = json.loads(body)
        except ValueError:
            return f"{report}\n  expected JSON {command.comment!r}, got {body!r}"
        if not matches(expected, actual):
            return f"{report}\n  expected {command.comment!r}"
    return ""


@pytest.fixture
def readme_run(tmp_path):
    """A scratch folder (``examples`` linked), an isolated HOME, free ports for the README's
    ports, and the quick-start server started from the README's own command."""
    if shutil.which("curl") is None:
        pytest.fail("curl is needed to run the README's examples as written (install nothing "
                    "here: put curl on PATH)")
    work = tmp_path / "work"
    work.mkdir()
    (work / "examples").symlink_to(ROOT / "examples")
    (work / ".venv").symlink_to(Path(VENV_BIN).parent)
    home = tmp_path / "home"
    home.mkdir()
    ports = {port: free_port() for port in README_PORTS}
    # The virtualenv is not on PATH: the README's `. .venv/bin/activate` puts it there.
    path = [entry for entry in os.environ.get("PATH", "").split(os.pathsep)
            if entry and Path(entry).resolve() != Path(VENV_BIN).resolve()]
    env = isolated_env(home, PATH=os.pathsep.join(path))
    env.pop("VIRTUAL_ENV", None)
    for name in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY",
                 "all_proxy"):
        env.pop(name, None)
    # The quick-start line's `mockd start` part, on this run's ports.
    start = shlex.split(QUICK_START.rsplit("&&", 1)[1])
    assert start[:2] == [".venv/bin/mockd", "start"], start
    argv = [MOCKD, *start[1:], "--port", str(ports[4280]), "--admin-port", str(ports[4290])]
    server = MockdProcess(argv, env, work, tmp_path / "server.log")
    server.base = f"http://127.0.0.1:{ports[4280]}"
    server.admin = f"http://127.0.0.1:{ports[4290]}"
    try:
        server.wait_healthy(server.admin + "/health")
        server.wait_healthy(server.base + "/health")
        yield work, env, ports, server
    finally:
        server.stop()


def test_readme_lists_the_lines_it_does_not_run_as_written():
    texts = [command.text for command in readme_commands()]
    assert texts[0] == QUICK_START, "the first sh block is the quick start the fixture runs"
    keys = [command.key for command in readme_commands()]
    for line in NOT_RUN:
        assert line in keys, f"NOT_RUN names a line the README no longer has: {line}"


def test_readme_activates_the_virtualenv_before_calling_mockd():
    commands = readme_commands()
    first_mockd = next(index for index, command in enumerate(commands[1:], 1)
                       if re.search(r"(?<![\w/.])mockd\b", command.text))
    assert any(command.text == ". .venv/bin/activate" for command in commands[1:first_mockd])


def test_readme_shell_examples_run_in_order(readme_run, tmp_path):
    work, env, ports, server = readme_run
    commands = readme_commands()
    background: list[subprocess.Popen] = []
    ran = 0
    try:
        for command in commands:
            if command.key in NOT_RUN:
                continue
            text = _rewrite_ports(command.text, ports)
            if text.endswith("&"):
                background.append(_start_background(text[:-1].strip(), env, work, ports,
                                                    tmp_path / f"background-{len(background)}.log"))
                ran += 1
                continue
            failure = _run(command, text, env, work)
            assert not failure, failure + f"\nserver log:\n{server.log()[-3000:]}"
            ran += 1
        assert server.proc.poll() is None, f"the quick-start server exited:\n{server.log()}"
    finally:
        for process in background:
            try:
                os.killpg(process.pid, signal.SIGTERM)
                process.wait(timeout=10)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                os.killpg(process.pid, signal.SIGKILL)
    assert ran == len(commands) - len(NOT_RUN)
