"""Crash safety of the admin store (issue 33, item 2): ``kill -9`` of ``mockd start`` in the
middle of a burst of admin writes and a ``POST /config`` import loses no acknowledged
definition and leaves no half-applied one; the next start on the same data dir serves exactly
the committed state.

One test, :data:`ROUNDS` kills. Every round starts the server on the same data dir (which is
also the check of the previous round's kill), compares what ``GET /mocks`` lists and what the
data plane answers with what the writers were told, fires a burst (writers that create,
replace and delete mocks, each on mocks of its own, and one import of
:data:`IMPORT_SIZE` mocks), and kills the process with SIGKILL right after a randomly chosen
acknowledgment. A write answered 2xx before the kill must be there after the restart; the one
write each writer may have had in flight is either fully there or not at all; the import is
all or nothing. The admin key is read from the data dir once (auth stays on).

Cost: a server start is mostly imports (Django, ninja, the admin URLconf: 3.5 s of a
4 s start on a 2-core machine at load 2). The first start runs the ``mockd`` command; the
restarts after each kill are forked from a :func:`launcher` process that imported the server
once, so each is the ``mockd start`` command's own work (the migrate check, loading the
stored definitions, binding, serving) without the imports: about 1 s at load 10, of which
the migrate check is 0.45 s. The burst is bounded
(:data:`WRITERS` x :data:`OPS_PER_WRITER` requests and one import).
"""
from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.client_tls import CLIENT_TLS
from tests.helpers import (STARTUP_TIMEOUT, MockdProcess, free_port, http_mock, isolated_env,
                           start_server)

#: Kills in the run (issue 33: "a loop of 20 kills").
ROUNDS = 20
WRITERS = 3
OPS_PER_WRITER = 5
IMPORT_SIZE = 6
#: Older mocks (not touched by the last burst) the data plane is asked for after a restart.
DATA_SAMPLE = 10
#: A state no write has produced: the mock is absent.
ABSENT = None


class Writer(threading.Thread):
    """One writer of one round: a fixed plan of admin writes on mocks no other writer
    touches, sent one after another. ``acked`` is the state of each mock after the last
    answered write; ``pending`` the state the one unanswered write (if any) would give."""

    def __init__(self, client: httpx.Client, plan: list[tuple[str, str, str | None]],
                 on_ack: Any):
        super().__init__(daemon=True)
        self.client, self.plan, self.on_ack = client, plan, on_ack
        self.acked: dict[str, str | None] = {}
        self.pending: tuple[str, str | None] | None = None
        self.unexpected: list[str] = []

    def run(self) -> None:
        for verb, mock_id, body in self.plan:
            self.pending = (mock_id, body)
            try:
                if verb == "create":
                    answer = self.client.post("/mocks", json=mock_of(mock_id, body))
                elif verb == "update":
                    answer = self.client.put(f"/mocks/{mock_id}", json=mock_of(mock_id, body))
                else:
                    answer = self.client.delete(f"/mocks/{mock_id}")
            except httpx.HTTPError:
                return  # the server was killed: this write stays pending
            if not answer.is_success:
                self.unexpected.append(f"{verb} {mock_id}: {answer.status_code} {answer.text}")
                return
            self.acked[mock_id] = body
            self.pending = None
            self.on_ack()


def launcher() -> None:
    """Run as a process of its own: import and set up the full server once (for the data dir
    in ``$MOCKD_DATA_DIR``), then for every JSON list of ``mockd`` arguments read on stdin,
    fork a child that runs that command (in a new session, output to the file named by the
    last element) and print the child's PID. Children are reaped by the kernel."""
    os.environ["DJANGO_SETTINGS_MODULE"] = "mockd_project.settings"
    import django

    django.setup()
    import mockd_project.cli
    import mockd_project.runner
    import mockd_project.urls  # noqa: F401 - the admin URLconf, loaded on the first request
    from django.core.management import load_command_class
    from django.db.migrations.loader import MigrationLoader

    load_command_class("django.core", "migrate")
    MigrationLoader(None)  # imports the migration modules; opens no database

    signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    for line in sys.stdin:
        *argv, log_path = json.loads(line)
        pid = os.fork()
        if pid == 0:
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            os.setsid()
            log = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            null = os.open(os.devnull, os.O_RDONLY)
            os.dup2(null, 0)
            os.dup2(log, 1)
            os.dup2(log, 2)
            code = 1
            try:
                mockd_project.cli.main(args=argv, prog_name="mockd")
            except SystemExit as exit_:
                code = exit_.code if isinstance(exit_.code, int) else 1
            finally:
                os._exit(code)
        print(pid, flush=True)


class ForkedServer(MockdProcess):
    """A ``mockd start`` forked by the :func:`launcher`: same clients as
    :class:`MockdProcess`; :meth:`stop` only sends SIGKILL and waits for the PID to go."""

    def __init__(self, launcher_process: subprocess.Popen, argv: list[str], log_path: Path):
        launcher_process.stdin.write(json.dumps([*argv, str(log_path)]) + "\n")
        launcher_process.stdin.flush()
        self.pid = int(launcher_process.stdout.readline())
        self.log_path = log_path
        self.base = self.admin = ""
        self.returncode: int | None = None

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    @property
    def proc(self) -> Any:
        return self

    def poll(self) -> int | None:
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return -9
        return None

    def wait(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while self.poll() is None:
            assert time.monotonic() < deadline, f"PID {self.pid} still runs"
            time.sleep(0.005)

    def send_signal(self, sig: int) -> None:
        os.kill(self.pid, sig)

    def stop(self, sig: int = signal.SIGKILL, timeout: float = 10.0) -> int:
        if self.poll() is None:
            os.kill(self.pid, signal.SIGKILL)
            self.wait(timeout)
        return -9


def start(tmp_path: Path, data_dir: Path, launcher_process: subprocess.Popen | None) -> Any:
    """``mockd start`` with auth on ``data_dir`` (the command itself when ``launcher_process``
    is None, else forked by it); returns once both ``/health`` answer."""
    if launcher_process is None:
        return start_server(tmp_path, no_auth=False, data_dir=data_dir)
    port, admin_port = free_port(), free_port()
    server = ForkedServer(launcher_process, ["start", "--port", str(port), "--admin-port",
                                             str(admin_port), "--data-dir", str(data_dir)],
                          tmp_path / "forked.log")
    server.base = f"http://127.0.0.1:{port}"
    server.admin = f"http://127.0.0.1:{admin_port}"
    try:
        server.wait_healthy(server.admin + "/health", STARTUP_TIMEOUT)
        server.wait_healthy(server.base + "/health", STARTUP_TIMEOUT)
    except BaseException:
        server.stop()
        raise
    return server


def text_of(path: Path) -> str:
    return path.read_text() if path.exists() else ""


def mock_of(mock_id: str, body: str | None) -> dict[str, Any]:
    return http_mock(mock_id, "GET", f"/crash/{mock_id}", body=body)


def served_state(server: Any, key: str, ids: set[str]) -> dict[str, str]:
    """``id -> response body`` of every stored mock (``GET /mocks``); also checks that the
    data plane answers each of ``ids`` as stored (its body, or 404 when absent)."""
    with server.admin_client(headers={"X-API-Key": key}, verify=CLIENT_TLS) as admin:
        answer = admin.get("/mocks")
    assert answer.status_code == 200, answer.text
    stored = {mock["id"]: mock["http"]["response"].get("body")
              for mock in answer.json()["mocks"]}
    with server.client(verify=CLIENT_TLS) as data:
        for mock_id in sorted(ids):
            reply = data.get(f"/crash/{mock_id}")
            if mock_id in stored:
                assert (reply.status_code, reply.text) == (200, stored[mock_id]), mock_id
            else:
                assert reply.status_code == 404, (mock_id, reply.status_code, reply.text)
    return stored


def plan_round(rng: random.Random, round_no: int, owned: list[list[str]],
               ) -> list[list[tuple[str, str, str | None]]]:
    """Each writer's writes: a replace and a delete of mocks it kept from earlier rounds
    (when it has some), then creates of new mocks, some replaced or deleted after."""
    plans = []
    for writer, kept in enumerate(owned):
        plan: list[tuple[str, str, str | None]] = []
        if kept:
            plan.append(("update", rng.choice(kept), f"u{round_no}"))
        if len(kept) > 2:
            victim = rng.choice(kept)
            plan.append(("delete", victim, ABSENT))
        new = 0
        while len(plan) < OPS_PER_WRITER:
            mock_id = f"r{round_no}w{writer}n{new}"
            new += 1
            plan.append(("create", mock_id, f"c{round_no}"))
            if len(plan) < OPS_PER_WRITER and rng.random() < 0.5:
                plan.append(rng.choice([("update", mock_id, f"u{round_no}"),
                                        ("delete", mock_id, ABSENT)]))
        plans.append(plan)
    return plans


@pytest.mark.timeout(300)  # 20 restarts on a loaded machine
def test_kill_9_keeps_exactly_the_acknowledged_writes(tmp_path):
    seed = int(os.environ.get("MOCKD_CRASH_SEED") or time.time())
    data_dir = tmp_path / "data"
    launcher_process = subprocess.Popen(
        [sys.executable, "-c", "from tests.integration.test_crash_safety import launcher; "
                               "launcher()"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        cwd=Path(__file__).resolve().parents[2],
        env=isolated_env(tmp_path, MOCKD_DATA_DIR=str(data_dir.absolute())))
    try:
        rounds(tmp_path, data_dir, launcher_process, seed)
    finally:
        launcher_process.stdin.close()
        launcher_process.wait(timeout=10)


def rounds(tmp_path: Path, data_dir: Path, launcher_process: subprocess.Popen,
           seed: int) -> None:
    """The :data:`ROUNDS` kills of :func:`test_kill_9_keeps_exactly_the_acknowledged_writes`
    and the final check; the first start runs the ``mockd`` command, the others are forked."""
    rng = random.Random(seed)
    #: id -> the states it may be in after the restart (acknowledged, or in flight)
    allowed: dict[str, set[str | None]] = {}
    owned: list[list[str]] = [[] for _ in range(WRITERS)]
    imports: list[tuple[list[str], bool]] = []
    key = ""
    last_touched: set[str] = set()
    for round_no in range(ROUNDS + 1):
        forked = round_no > 0
        server = start(tmp_path, data_dir, launcher_process if forked else None)
        try:
            if not key:
                key = (data_dir / "admin-api-key").read_text().strip()
            where = f"seed {seed}, after kill {round_no}"
            # A stale PID file of the killed process does not stop the next start.
            # (written once the listeners run: polled)
            pid_file, deadline = tmp_path / ".mockd" / "mockd.pid", time.monotonic() + 10
            while f'"pid": {server.proc.pid},' not in text_of(pid_file):
                assert time.monotonic() < deadline, f"{where}: {text_of(pid_file)}"
                time.sleep(0.01)
            # The data plane is asked for the mocks the last burst touched and a sample of
            # the older ones (GET /mocks lists them all).
            recent = last_touched | (set(imports[-1][0]) if imports else set())
            older = sorted(set(allowed) - recent)
            stored = served_state(server, key,
                                  recent | set(rng.sample(older, min(DATA_SAMPLE, len(older)))))
            imported = [mock_id for ids, _ in imports for mock_id in ids]
            unknown = set(stored) - set(allowed) - set(imported)
            assert not unknown, f"{where}: never written: {sorted(unknown)}"
            for mock_id, states in allowed.items():
                assert stored.get(mock_id, ABSENT) in states, (
                    f"{where}: {mock_id} is {stored.get(mock_id, ABSENT)!r}, "
                    f"expected one of {states}")
            for ids, acknowledged in imports:
                present = [mock_id for mock_id in ids if mock_id in stored]
                assert len(present) in ((len(ids),) if acknowledged else (0, len(ids))), (
                    f"{where}: import {'answered' if acknowledged else 'in flight'} left "
                    f"{len(present)} of {len(ids)} mocks")
            # What the restart shows is committed: it is the next round's starting point.
            allowed = {mock_id: {stored.get(mock_id, ABSENT)} for mock_id in allowed}
            imports = [(ids, True) for ids, _ in imports if ids[0] in stored]
            owned = [[mock_id for mock_id in kept if mock_id in stored] for kept in owned]
            if round_no == ROUNDS:
                break
            last_touched = burst(server, key, rng, round_no, allowed, owned, imports)
        finally:
            server.stop(signal.SIGKILL)


def burst(server: Any, key: str, rng: random.Random, round_no: int,
          allowed: dict[str, set[str | None]], owned: list[list[str]],
          imports: list[tuple[list[str], bool]]) -> set[str]:
    """Send one round's writes and import, SIGKILL the server after a random number of
    acknowledgments, and record what each mock may now be in ``allowed``, ``owned`` and
    ``imports``; returns the ids the writers were to touch."""
    plans = plan_round(rng, round_no, owned)
    total = sum(len(plan) for plan in plans)
    kill_after = rng.randrange(1, total)
    importer_at = rng.randrange(0, kill_after)
    acks, lock = [0], threading.Lock()
    importer_due, reached = threading.Event(), threading.Event()

    def on_ack() -> None:
        with lock:
            acks[0] += 1
            if acks[0] >= importer_at:
                importer_due.set()
            if acks[0] >= kill_after:
                reached.set()

    import_ids = [f"imp{round_no}n{index}" for index in range(IMPORT_SIZE)]
    import_answer: list[httpx.Response] = []

    def send_import() -> None:
        body = {"version": "1.0", "mocks": [mock_of(mock_id, f"i{round_no}")
                                            for mock_id in import_ids]}
        try:
            import_answer.append(importer_client.post("/config", json=body))
        except httpx.HTTPError:
            pass

    headers = {"X-API-Key": key}
    clients = [server.admin_client(headers=headers, timeout=20, verify=CLIENT_TLS)
               for _ in range(WRITERS + 1)]
    importer_client = clients[-1]
    writers = [Writer(client, plan, on_ack) for client, plan in zip(clients, plans)]
    importer = threading.Thread(target=send_import, daemon=True)
    try:
        if importer_at == 0:
            importer_due.set()
        for writer in writers:
            writer.start()
        # Every writer stopping early (an unexpected answer) leaves the event unset: bounded.
        importer_due.wait(timeout=60)
        importer.start()
        finished = reached.wait(timeout=60)
        time.sleep(rng.random() * 0.01)
        server.proc.send_signal(signal.SIGKILL)
        server.proc.wait(timeout=10)
        assert finished, f"round {round_no}: only {acks[0]} of {kill_after} writes answered"
        for thread in (*writers, importer):
            thread.join(timeout=20)
            assert not thread.is_alive(), f"round {round_no}: a client still waits"
    finally:
        for client in clients:
            client.close()
    for writer in writers:
        assert not writer.unexpected, writer.unexpected
        for mock_id, body in writer.acked.items():
            allowed[mock_id] = {body}
        if writer.pending is not None:
            mock_id, body = writer.pending
            allowed.setdefault(mock_id, {ABSENT}).add(body)
    for index, writer in enumerate(writers):
        touched = {mock_id for _, mock_id, _ in writer.plan}
        owned[index] = sorted(set(owned[index]) | touched)
    acknowledged = bool(import_answer)
    if acknowledged:
        assert import_answer[0].status_code == 200, import_answer[0].text
    imports.append((import_ids, acknowledged))
    return {mock_id for plan in plans for _, mock_id, _ in plan}
