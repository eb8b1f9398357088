"""proxy/writer.py (recordings written off the request path) and RecordingStore.add_many."""
from __future__ import annotations

import threading
import time

import pytest

from proxy.writer import RecordingWriter
from recordings.store import RecordingStore, open_store


def _http(path: str) -> dict:
    return {"request": {"method": "GET", "path": path}, "response": {"statusCode": 200}}


@pytest.fixture(params=["memory", "disk"])
def store(request, tmp_path):
    made = RecordingStore() if request.param == "memory" else open_store(tmp_path / "data")
    yield made
    made.close()


def test_add_many_keeps_every_item_in_one_call_and_skips_refused_ones(store):
    session = store.create_session("s")
    items = [(_http(f"/a/{n}"), session["id"], {"method": "GET", "path": f"/a/{n}"})
             for n in range(50)]
    items.insert(10, ({"id": items[0][0].get("id", "x")}, None, {"nope": 1}))  # unknown column
    assert store.add_many("http", items) == 50
    page, total = store.query("http", session_id=session["id"], limit=100)
    assert total == 50 and [r["request"]["path"] for r in page][:3] == ["/a/0", "/a/1", "/a/2"]
    assert all(r["id"].startswith("rec_") and r["timestamp"].endswith("Z") for r in page)
    assert store.totals("http")[0] == 50
    again = items[0][0]
    assert store.add_many("http", [(again, None, None)]) == 0  # duplicate id: skipped
    with pytest.raises(ValueError):
        store.add_many("nope", [])


def test_add_many_applies_the_cap_to_each_item(tmp_path):
    capped = open_store(tmp_path / "data", max_bytes=2000)
    try:
        stored = capped.add_many("http", [({"n": n, "pad": "x" * 300}, None, None)
                                          for n in range(20)])
        assert stored == 20
        stats = capped.stats("http")
        assert stats["bytes"] <= 2000 and stats["dropped"] >= 14
        newest = capped.query("http", sort_by="added", descending=True, limit=1)[0][0]
        assert newest["n"] == 19
    finally:
        capped.close()


def test_writer_stores_in_the_background_and_close_flushes(store):
    written: list[int] = []
    writer = RecordingWriter(lambda: store, written.append)
    for n in range(300):
        assert writer.submit(lambda n=n: ("http", _http(f"/w/{n}"), None, {"path": f"/w/{n}"}))
    writer.close()
    assert store.query("http", limit=1)[1] == 300
    assert sum(written) == 300 and writer.written == 300 and writer.dropped == 0
    assert writer.submit(lambda: None) is False and writer.dropped == 1


def test_writer_full_queue_drops_and_counts_without_blocking(store):
    gate = threading.Event()
    writer = RecordingWriter(lambda: store, size=5)

    def slow():
        gate.wait(5)
        return None

    assert writer.submit(slow)
    time.sleep(0.2)  # the thread now waits inside the first job
    results = [writer.submit(lambda: ("http", _http("/q"), None, None)) for _ in range(20)]
    started = time.monotonic()
    assert writer.submit(lambda: None) is False
    assert time.monotonic() - started < 0.5
    assert results.count(True) == 5 and writer.dropped == 16
    gate.set()
    writer.close()
    assert store.query("http", limit=1)[1] == 5


def test_writer_survives_a_failing_build_and_a_failing_store(store):
    writer = RecordingWriter(lambda: store)

    def broken():
        raise RuntimeError("bad exchange")

    writer.submit(broken)
    writer.submit(lambda: ("nope", {}, None, None))  # an unknown kind: the store refuses
    writer.submit(lambda: ("http", _http("/after"), None, None))
    writer.close()
    page, total = store.query("http")
    assert total == 1 and page[0]["request"]["path"] == "/after"
