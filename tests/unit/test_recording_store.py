"""recordings/store.py: the one recording store (in memory and on disk)."""
from __future__ import annotations

import logging
import stat
import threading

import pytest

from recordings import store as store_module
from recordings.store import KINDS, RecordingStore, open_store


def _mode(path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture(params=["memory", "disk"])
def store(request, tmp_path):
    made = RecordingStore() if request.param == "memory" else open_store(tmp_path / "data")
    yield made
    made.close()


def _http(path="/a", body="x"):
    return {"request": {"method": "GET", "path": path}, "response": {"statusCode": 200,
                                                                     "body": body}}


def test_add_assigns_id_timestamp_and_session(store):
    session = store.create_session("s1")
    record = store.add("http", _http(), session_id=session["id"],
                       columns={"method": "GET", "path": "/a", "status": 200})
    assert record["id"].startswith("rec_") and record["sessionId"] == session["id"]
    assert record["timestamp"].endswith("Z")
    assert store.get(record["id"]) == record
    kept = store.add("soap", {"id": "soaprec_1", "timestamp": 12.5})
    assert kept["id"] == "soaprec_1" and kept["timestamp"] == 12.5
    assert store.get("missing") is None


def test_unknown_kind_and_column_are_refused(store):
    with pytest.raises(ValueError, match="kind"):
        store.add("ftp", {})
    with pytest.raises(ValueError, match="column"):
        store.add("http", {}, columns={"colour": "red"})
    with pytest.raises(ValueError, match="sort_by"):
        store.query("http", sort_by="id; DROP TABLE recordings")
    with pytest.raises(ValueError, match="filter"):
        store.query("http", filters={"nope": 1})


def test_sessions(store):
    first = store.create_session("one", filters={"includePaths": ["/api/*"]})
    assert first["startTime"].endswith("Z") and first["endTime"] is None
    assert first["recordingCount"] == 0 and first["kind"] == "http"
    stream = store.create_session("two", kind="stream")
    store.add("http", _http(), session_id=first["id"])
    store.add("http", _http(), session_id=first["id"])
    assert store.get_session(first["id"])["recordingCount"] == 2
    assert store.get_session(first["id"])["filters"] == {"includePaths": ["/api/*"]}
    assert [s["id"] for s in store.list_sessions()] == [first["id"], stream["id"]]
    assert [s["id"] for s in store.list_sessions("stream")] == [stream["id"]]
    ended = store.end_session(first["id"])
    assert ended["endTime"] is not None
    assert store.end_session("sess_nope") is None
    assert store.delete_session(first["id"]) is True
    assert store.query("http")[1] == 0
    assert store.delete_session(first["id"]) is False
    store.create_session("three")
    assert store.clear_sessions("http") == 1
    assert store.list_sessions() == [stream]


def test_query_filters_sort_and_paging(store):
    session = store.create_session("s")
    for index, (method, status) in enumerate([("GET", 200), ("POST", 201), ("GET", 404),
                                              ("GET", 200)]):
        store.add("http", {"n": index, "timestamp": f"2026-01-01T00:00:0{index}Z"},
                  session_id=session["id"] if index < 2 else None,
                  columns={"method": method, "status": status, "path": f"/p{index}"})
    store.add("stream", {"n": 99}, columns={"protocol": "sse"})
    page, total = store.query("http")
    assert [r["n"] for r in page] == [0, 1, 2, 3] and total == 4
    page, total = store.query("http", filters={"method": "GET"}, descending=True,
                              limit=2, offset=0)
    assert [r["n"] for r in page] == [3, 2] and total == 3
    page, total = store.query("http", filters={"method": "GET"}, limit=2, offset=2)
    assert [r["n"] for r in page] == [3] and total == 3
    page, total = store.query("http", sort_by="status", descending=True)
    assert [r["n"] for r in page] == [2, 1, 3, 0]
    assert store.query("http", session_id=session["id"])[1] == 2
    page, total = store.query("http", match=lambda doc: doc["n"] % 2 == 1, limit=1, offset=1)
    assert [r["n"] for r in page] == [3] and total == 2
    assert store.query("stream", filters={"protocol": "sse"})[1] == 1


def test_soft_delete_vacuum_and_clear(store):
    one = store.add("stream", {"v": 1})
    two = store.add("stream", {"v": 2})
    assert store.delete(one["id"], soft=True) is True
    assert store.delete(one["id"], soft=True) is False
    assert store.get(one["id"]) is None
    assert store.get(one["id"], include_deleted=True)["v"] == 1
    assert store.query("stream")[1] == 1
    assert store.query("stream", include_deleted=True)[1] == 2
    stats = store.stats("stream")
    assert (stats["count"], stats["deleted"]) == (1, 1)
    assert store.vacuum("stream") == 1
    assert store.get(one["id"], include_deleted=True) is None
    assert store.delete(two["id"]) is True and store.delete(two["id"]) is False
    store.add("mqtt", {"a": 1})
    store.add("mqtt", {"a": 2})
    store.add("soap", {"a": 3})
    assert store.clear("mqtt") == 2
    assert store.stats()["count"] == 1


def test_replace_keeps_id_timestamp_and_updates_columns(store):
    record = store.add("stream", {"status": "recording"}, columns={"state": "recording"})
    assert store.replace(record["id"], {"status": "complete", "frames": [1, 2]},
                         columns={"state": "complete"}) is True
    again = store.get(record["id"])
    assert again["status"] == "complete" and again["timestamp"] == record["timestamp"]
    assert store.query("stream", filters={"state": "complete"})[1] == 1
    assert store.replace("rec_missing", {}) is False


def test_cap_drops_oldest_and_counts_dropped(caplog):
    store = RecordingStore(max_bytes=1000, warn_percent=50)
    caplog.set_level(logging.WARNING, logger="recordings.store")
    ids = [store.add("http", {"pad": "x" * 150})["id"] for _ in range(12)]
    stats = store.stats()
    assert stats["bytes"] <= 1000 and stats["dropped"] > 0
    assert stats["count"] + stats["dropped"] == 12
    assert store.get(ids[0]) is None and store.get(ids[-1]) is not None
    kept, _ = store.query("http")
    assert [r["id"] for r in kept] == ids[-len(kept):]
    assert stats["warning"] is True and stats["usedPercent"] >= 50
    warnings = [r for r in caplog.records if "recording storage at" in r.getMessage()]
    assert len(warnings) == 1
    assert store.stats("http")["dropped"] == stats["dropped"]
    assert store.stats("soap")["dropped"] == 0
    # larger than the whole cap: not kept, counted
    huge = store.add("http", {"pad": "x" * 2000})
    assert store.get(huge["id"]) is None
    assert store.stats()["dropped"] == stats["dropped"] + 1


def test_warning_again_only_after_falling_below(caplog):
    store = RecordingStore(max_bytes=1000, warn_percent=50)
    caplog.set_level(logging.WARNING, logger="recordings.store")
    for _ in range(4):
        store.add("http", {"pad": "x" * 150})
    store.clear("http")
    assert store.stats()["warning"] is False
    for _ in range(4):
        store.add("http", {"pad": "x" * 150})
    warnings = [r for r in caplog.records if "recording storage at" in r.getMessage()]
    assert len(warnings) == 2


def test_reopen_keeps_everything(tmp_path):
    data = tmp_path / "data"
    store = open_store(data, max_bytes=100_000)
    session = store.create_session("keep", filters={"x": 1})
    small = store.add("http", _http(), session_id=session["id"], columns={"method": "GET"})
    large = store.add("stream", {"pad": "y" * 70_000})
    soft = store.add("soap", {"a": 1})
    store.delete(soft["id"], soft=True)
    room = 100_000 - store.stats()["bytes"]
    store.add("mqtt", {"pad": "z" * room})  # just over the cap: drops the oldest (small)
    before = store.stats()
    assert before["dropped"] == 1
    store.close()
    again = open_store(data, max_bytes=100_000)
    try:
        assert again.stats() == before
        assert again.get_session(session["id"])["filters"] == {"x": 1}
        assert again.get(small["id"]) is None
        assert again.get(large["id"])["pad"] == "y" * 70_000
        assert again.get(soft["id"], include_deleted=True) == soft
        assert again.query("mqtt")[1] == 1
        assert again.stats("http")["dropped"] == 1
    finally:
        again.close()


def test_large_documents_are_files_removed_with_their_recording(tmp_path):
    data = tmp_path / "data"
    store = open_store(data)
    files = data / "recordings"
    big = store.add("stream", {"pad": "b" * 70_000})
    assert (files / f"{big['id']}.json").exists()
    assert store.get(big["id"])["pad"] == "b" * 70_000
    small = store.add("stream", {"pad": "s"})
    assert not (files / f"{small['id']}.json").exists()
    assert store.delete(big["id"]) is True
    assert not (files / f"{big['id']}.json").exists()
    soft = store.add("stream", {"pad": "c" * 70_000})
    store.delete(soft["id"], soft=True)
    assert (files / f"{soft['id']}.json").exists()
    store.vacuum()
    assert not (files / f"{soft['id']}.json").exists()
    grown = store.add("stream", {"pad": "s"})
    store.replace(grown["id"], {"pad": "g" * 70_000})
    assert (files / f"{grown['id']}.json").exists()
    store.replace(grown["id"], {"pad": "g"})
    assert not (files / f"{grown['id']}.json").exists()
    session = store.create_session("s", kind="stream")
    in_session = store.add("stream", {"pad": "d" * 70_000}, session_id=session["id"])
    store.delete_session(session["id"])
    assert not (files / f"{in_session['id']}.json").exists()
    store.close()
    capped = open_store(tmp_path / "capped", max_bytes=150_000)
    first = capped.add("stream", {"pad": "e" * 70_000})
    capped.add("stream", {"pad": "f" * 70_000})
    capped.add("stream", {"pad": "h" * 70_000})
    assert not (tmp_path / "capped" / "recordings" / f"{first['id']}.json").exists()
    capped.close()


def test_files_are_private(tmp_path):
    data = tmp_path / "data"
    store = open_store(data)
    store.add("stream", {"pad": "p" * 70_000})
    store.add("http", _http())
    assert _mode(data) == 0o700
    assert _mode(data / "recordings") == 0o700
    for path in [data / "recordings.sqlite3", *(data / "recordings").iterdir()]:
        assert _mode(path) == 0o600, path
    for path in data.glob("recordings.sqlite3-*"):
        assert _mode(path) & 0o077 == 0, path
    store.close()


def test_in_memory_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    store = RecordingStore()
    store.add("http", {"pad": "m" * 100_000})
    assert store.stats()["count"] == 1
    assert list(tmp_path.iterdir()) == []
    store.close()


def test_concurrent_use_from_two_threads(tmp_path):
    store = open_store(tmp_path / "data", max_bytes=0)
    errors: list[BaseException] = []

    def work(kind: str) -> None:
        try:
            for index in range(200):
                record = store.add(kind, {"n": index}, columns={"status": index})
                assert store.get(record["id"])["n"] == index
                if index % 10 == 0:
                    store.query(kind, limit=5)
                    store.delete(record["id"], soft=True)
        except BaseException as error:  # noqa: BLE001 - reported by the assertion below
            errors.append(error)

    threads = [threading.Thread(target=work, args=(kind,)) for kind in ("http", "mqtt")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert not errors
    assert store.stats("http")["count"] == 180 and store.stats("mqtt")["count"] == 180
    assert store.vacuum() == 40
    store.close()


def test_current_and_install():
    original = store_module.current()
    try:
        assert store_module.current() is original
        mine = RecordingStore()
        store_module.install(mine)
        assert store_module.current() is mine
    finally:
        store_module.install(original)
    assert set(KINDS) == {"http", "stream", "soap", "mqtt", "grpc"}


def test_totals_follow_every_change(tmp_path):
    store = open_store(tmp_path / "data")
    one = store.add("mqtt", {"a": 1})
    two = store.add("mqtt", {"a": 22})
    store.add("soap", {"b": 1})
    assert store.totals("mqtt") == (2, store.stats("mqtt")["bytes"])
    store.delete(one["id"], soft=True)
    assert store.totals("mqtt") == (1, store.stats("mqtt")["bytes"])
    store.replace(two["id"], {"a": "longer"})
    store.vacuum()
    assert store.totals("mqtt") == (1, store.stats("mqtt")["bytes"])
    store.close()
    again = open_store(tmp_path / "data")
    assert again.totals("mqtt") == (1, again.stats("mqtt")["bytes"])
    assert again.drop_oldest("mqtt") is True and again.totals("mqtt") == (0, 0)
    again.close()
