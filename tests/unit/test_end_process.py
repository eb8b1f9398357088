"""``mockd_project.daemon.end_process``: a stopped server ends with its exit status after
the work the interpreter would do at exit (threads joined, ``atexit`` callbacks, output
flushed), skipping only the teardown of its modules."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """
import atexit, sys, threading, time
from pathlib import Path
from mockd_project.daemon import end_process
out = Path(sys.argv[1])
def late_writer():
    time.sleep(0.05)
    out.with_suffix(".thread").write_text("joined")
threading.Thread(target=late_writer).start()
atexit.register(lambda: out.write_text("atexit ran"))
sys.stdout.write("buffered, no newline")
end_process(3)
print("never reached")
"""


def test_end_process_runs_exit_work_and_keeps_the_status(tmp_path):
    marker = tmp_path / "marker.txt"
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(marker)], capture_output=True,
                          text=True, cwd=ROOT, timeout=30)
    assert done.returncode == 3, done.stderr
    assert done.stdout == "buffered, no newline"
    assert marker.read_text() == "atexit ran"
    assert marker.with_suffix(".thread").read_text() == "joined"


COLLECTOR_SCRIPT = """
import gc
from mockd_project import engine_start
engine_start.resume_collector()  # not paused: an embedding process's collector is left alone
print(gc.isenabled(), gc.get_freeze_count() == 0)
engine_start.pause_collector()
print(gc.isenabled())
kept = [[] for _ in range(1000)]
engine_start.resume_collector()
print(gc.isenabled(), gc.get_freeze_count() >= 1000)
gc.disable()
engine_start.pause_collector()  # already off: not ours to turn back on
engine_start.resume_collector()
print(gc.isenabled())
"""


def test_a_server_start_pauses_the_collector_and_freezes_what_it_built():
    """``pause_collector`` (the server commands, before their imports) turns the cyclic
    collector off; ``resume_collector`` (once ready) moves what is alive into the permanent
    generation and turns it back on; neither touches a collector it did not turn off."""
    done = subprocess.run([sys.executable, "-c", COLLECTOR_SCRIPT], capture_output=True,
                          text=True, cwd=ROOT, timeout=30)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n") == ["True True", "False", "True True", "False", ""]
