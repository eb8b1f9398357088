"""The one recording store: every kind of recorded traffic (HTTP proxy recordings, WebSocket
and SSE stream recordings, SOAP, MQTT and gRPC recordings) and the sessions they belong to.

Recordings are JSON documents kept in SQLite (the standard :mod:`sqlite3` module, WAL,
``synchronous=NORMAL``) with indexed summary columns for filters and sorting. A document
larger than ``inline_limit`` bytes is kept as a file ``<files_dir>/<id>.json`` and removed
with its recording (delete, vacuum, clear, a dropped oldest one). ``path=None`` keeps
everything in memory (``mockd engine`` writes nothing to disk).

Storage cap (SPEC "Limits": stream recording storage ``maxBytes`` 500 MiB, ``warnPercent``
80): the size of a recording is the length of its JSON document; when adding or replacing
one would pass ``max_bytes`` (summed over every kind, soft-deleted recordings included until
vacuum), the oldest recordings are dropped first and counted in ``stats()["dropped"]``. A
document larger than the whole cap is not kept (counted as dropped). ``max_bytes`` 0 means
no cap. Crossing ``warn_percent`` of the cap logs one warning (again only after usage fell
back below it).

Usage::

    store = open_store(data_dir, max_bytes=100 * 1024 * 1024)
    session = store.create_session("checkout")
    record = store.add("http", {"request": {...}, "response": {...}},
                       session_id=session["id"], columns={"method": "GET", "path": "/a"})
    page, total = store.query("http", filters={"method": "GET"}, limit=20)

Every method is synchronous, thread-safe (one lock) and quick enough to call from the event
loop. Errors: :class:`ValueError` for an unknown kind, column, sort key or bad bound.

Files are created 0600 and folders 0700 (recorded traffic may hold secrets).

Source: SPEC "Admin-side records" (HTTP and stream recordings), "Limits" (stream recording
storage), "State transitions" (soft delete, vacuum); behavior notes §1 "Proxy, CA, sessions,
recordings", "Connections, protocol handlers, stream recordings". Django-free.
"""
from __future__ import annotations

import logging
import os
import secrets
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import orjson

log = logging.getLogger(__name__)

#: The kinds of recording the store keeps.
KINDS = ("http", "stream", "soap", "mqtt", "grpc")
#: The summary columns ``add(columns=...)`` may set, with their SQL types; ``query(filters=)``
#: compares them for equality and ``sort_by`` may name them.
COLUMNS = {"method": "TEXT", "path": "TEXT", "host": "TEXT", "status": "INTEGER",
           "protocol": "TEXT", "name": "TEXT", "state": "TEXT"}
#: Sort keys of ``query`` besides the columns: ``timestamp`` (the document's, then insertion
#: order), ``added`` (insertion order), ``size`` (document bytes).
SORT_KEYS = ("timestamp", "added", "size", *COLUMNS)
#: Defaults: SPEC "Limits" (500 MiB, warning at 80 %); documents above 64 KiB go to files.
DEFAULT_MAX_BYTES = 500 * 1024 * 1024
DEFAULT_WARN_PERCENT = 80.0
DEFAULT_INLINE_LIMIT = 64 * 1024
#: The file names under a data dir (:func:`open_store`).
DATABASE_NAME = "recordings.sqlite3"
FILES_DIR_NAME = "recordings"

_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS sessions (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    kind TEXT NOT NULL,
    name TEXT NOT NULL,
    start_time TEXT NOT NULL,
    end_time TEXT,
    filters TEXT
);
CREATE TABLE IF NOT EXISTS recordings (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    kind TEXT NOT NULL,
    session_id TEXT,
    timestamp TEXT NOT NULL,
    {", ".join(f"{name} {kind}" for name, kind in COLUMNS.items())},
    size INTEGER NOT NULL,
    deleted INTEGER NOT NULL DEFAULT 0,
    doc BLOB,
    file TEXT
);
CREATE INDEX IF NOT EXISTS recordings_kind ON recordings (kind, deleted, timestamp);
CREATE INDEX IF NOT EXISTS recordings_session ON recordings (session_id);
CREATE INDEX IF NOT EXISTS recordings_size ON recordings (kind, deleted, size);
CREATE INDEX IF NOT EXISTS recordings_oldest ON recordings (kind, seq);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
"""


def utc_now() -> str:
    """The current time as RFC 3339 UTC text with milliseconds (``2026-11-27T10:00:00.123Z``)."""
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _new_id(prefix: str) -> str:
    return f"{prefix}_{secrets.token_hex(8)}"


def _private_dir(path: Path) -> None:
    """Make ``path`` (and missing parents) with mode 0700 for the folders it creates."""
    if not path.is_dir():
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(path, 0o700)


def _write_private(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` (mode 0600) through a temporary file and a rename."""
    temporary = path.with_name(path.name + ".tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "wb") as handle:
        handle.write(data)
    os.replace(temporary, path)


class RecordingStore:
    """Recordings of every kind and their sessions (see the module docstring).

    Args:
        path: the SQLite file (created 0600, its folder 0700); None keeps everything in
            memory.
        files_dir: where documents above ``inline_limit`` bytes go (default: a
            ``recordings`` folder beside ``path``); in memory (``path=None``) without
            ``files_dir`` every document stays inline.
        max_bytes: the storage cap in bytes (0: none).
        warn_percent: the share of the cap (0-100) whose crossing logs one warning.
        inline_limit: documents larger than this many bytes are kept as files.

    Raises ValueError for a negative bound; :class:`sqlite3.Error` when the file cannot be
    opened.
    """

    def __init__(self, path: Path | None = None, *, files_dir: Path | None = None,
                 max_bytes: int = DEFAULT_MAX_BYTES, warn_percent: float = DEFAULT_WARN_PERCENT,
                 inline_limit: int = DEFAULT_INLINE_LIMIT) -> None:
        if max_bytes < 0 or inline_limit < 0 or not 0 <= warn_percent <= 100:
            raise ValueError("max_bytes and inline_limit must be >= 0, warn_percent 0-100")
        self.path = Path(path) if path is not None else None
        self.max_bytes = int(max_bytes)
        self.warn_percent = float(warn_percent)
        self.inline_limit = int(inline_limit)
        if files_dir is None and self.path is not None:
            files_dir = self.path.parent / FILES_DIR_NAME
        self.files_dir = Path(files_dir) if files_dir is not None else None
        self._lock = threading.RLock()
        if self.path is not None:
            _private_dir(self.path.parent)
            if not self.path.exists():
                os.close(os.open(self.path, os.O_WRONLY | os.O_CREAT, 0o600))
            database = str(self.path)
        else:
            database = ":memory:"
        self._db = sqlite3.connect(database, check_same_thread=False, isolation_level=None)
        self._db.row_factory = sqlite3.Row
        if self.path is not None:
            self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(_SCHEMA)
        self._bytes = int(self._db.execute(
            "SELECT COALESCE(SUM(size), 0) FROM recordings").fetchone()[0])
        self._warned = self._used_percent() >= self.warn_percent > 0 and self.max_bytes > 0
        #: kind -> [visible recordings, bytes (soft-deleted included)], kept up to date.
        self._totals: dict[str, list[int]] = {kind: [0, 0] for kind in KINDS}
        for row in self._db.execute("SELECT kind, COALESCE(SUM(deleted = 0), 0), "
                                    "COALESCE(SUM(size), 0) FROM recordings GROUP BY kind"):
            self._totals[row[0]] = [int(row[1]), int(row[2])]
        self._closed = False

    # -- sessions ---------------------------------------------------------------------------

    def create_session(self, name: str, *, kind: str = "http",
                       filters: dict | None = None) -> dict:
        """A new session: ``{id ("sess_<16 hex>"), name, kind, startTime (RFC 3339 UTC),
        endTime: None, filters, recordingCount: 0}``. Raises ValueError for an unknown
        kind."""
        _check_kind(kind)
        session_id = _new_id("sess")
        with self._lock:
            self._db.execute(
                "INSERT INTO sessions (id, kind, name, start_time, filters) VALUES (?,?,?,?,?)",
                (session_id, kind, str(name), utc_now(),
                 orjson.dumps(filters).decode() if filters is not None else None))
            return self._session(session_id)

    def end_session(self, session_id: str) -> dict | None:
        """Stamp ``endTime`` (once) and answer the session; None when unknown."""
        with self._lock:
            self._db.execute("UPDATE sessions SET end_time = ? WHERE id = ? AND end_time IS NULL",
                             (utc_now(), session_id))
            return self._session(session_id)

    def get_session(self, session_id: str) -> dict | None:
        """One session (see :meth:`create_session`), its ``recordingCount`` current; None
        when unknown."""
        with self._lock:
            return self._session(session_id)

    def list_sessions(self, kind: str | None = None) -> list[dict]:
        """Every session (of ``kind`` when given), oldest first."""
        with self._lock:
            if kind is None:
                rows = self._db.execute("SELECT id FROM sessions ORDER BY seq").fetchall()
            else:
                rows = self._db.execute("SELECT id FROM sessions WHERE kind = ? ORDER BY seq",
                                        (kind,)).fetchall()
            return [self._session(row["id"]) for row in rows]

    def delete_session(self, session_id: str) -> bool:
        """Delete a session with its recordings; False when unknown."""
        with self._lock:
            if self._db.execute("SELECT 1 FROM sessions WHERE id = ?",
                                (session_id,)).fetchone() is None:
                return False
            self._remove("session_id = ?", (session_id,))
            self._db.execute("DELETE FROM sessions WHERE id = ?", (session_id,))
            return True

    def clear_sessions(self, kind: str | None = None) -> int:
        """Delete every session (of ``kind`` when given) with their recordings; answers how
        many sessions went."""
        with self._lock:
            ids = [session["id"] for session in self.list_sessions(kind)]
            for session_id in ids:
                self.delete_session(session_id)
            return len(ids)

    def _session(self, session_id: str) -> dict | None:
        row = self._db.execute("SELECT * FROM sessions WHERE id = ?", (session_id,)).fetchone()
        if row is None:
            return None
        count = self._db.execute(
            "SELECT COUNT(*) FROM recordings WHERE session_id = ? AND deleted = 0",
            (session_id,)).fetchone()[0]
        return {"id": row["id"], "name": row["name"], "kind": row["kind"],
                "startTime": row["start_time"], "endTime": row["end_time"],
                "filters": orjson.loads(row["filters"]) if row["filters"] else None,
                "recordingCount": count}

    # -- recordings -------------------------------------------------------------------------

    def add(self, kind: str, record: dict, *, session_id: str | None = None,
            columns: dict | None = None) -> dict:
        """Keep ``record`` (a JSON-serialisable dict) as a recording of ``kind``.

        Sets ``record["id"]`` (``rec_<16 hex>``, when absent), ``record["timestamp"]``
        (RFC 3339 UTC, when absent) and ``record["sessionId"]``; ``columns`` sets any of
        :data:`COLUMNS` for filters and sorting. Drops the oldest recordings beyond the cap
        (see the module docstring). Answers the stored document (``record`` itself).
        Raises ValueError for an unknown kind or column, or a duplicate id; TypeError for a
        document that is not JSON.
        """
        _check_kind(kind)
        values = _columns(columns)
        with self._lock:
            self._check_open()
            return self._insert(kind, record, session_id, values)[0]

    def add_many(self, kind: str, items: list[tuple[dict, str | None, dict | None]]) -> int:
        """Keep several recordings of ``kind`` in one transaction: ``items`` are ``(record,
        session_id, columns)`` as for :meth:`add` (ids and timestamps set the same way; the
        cap applied as if they were added one by one, the oldest recordings dropped in one
        pass when the batch fits under it). An item that :meth:`add` would refuse (duplicate
        id, unknown column, not JSON) is skipped and logged; the others are kept. Answers
        how many were stored. Raises ValueError for an unknown kind or a closed store."""
        _check_kind(kind)
        prepared: list[tuple[dict, dict[str, Any], bytes, bool]] = []
        for record, session_id, columns in items:
            try:
                values = _columns(columns)
                given = "id" in record
                record.setdefault("id", _new_id("rec"))
                record.setdefault("timestamp", utc_now())
                record["sessionId"] = session_id
                prepared.append((record, values, orjson.dumps(record), given))
            except (ValueError, TypeError) as error:
                log.warning("a recording was not kept: %s", error)
        stored = 0
        with self._lock:
            self._check_open()
            self._db.execute("BEGIN")
            try:
                stored = self._insert_many(kind, prepared)
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                self._reload_totals()
                raise
        return stored

    def _insert_many(self, kind: str,
                     prepared: list[tuple[dict, dict[str, Any], bytes, bool]]) -> int:
        total = sum(len(data) for _, _, data, _ in prepared)
        one_pass = self.max_bytes <= 0 or total <= self.max_bytes
        if one_pass:
            self._drop_oldest_for(total)
        rows: dict[tuple[str, ...], list[tuple]] = {}
        seen: set[str] = set()
        stored = 0
        for record, values, data, given in prepared:
            record_id = record["id"]
            if record_id in seen or (given and self._db.execute(
                    "SELECT 1 FROM recordings WHERE id = ?", (record_id,)).fetchone()):
                log.warning("a recording was not kept: a recording with id %r exists",
                            record_id)
                continue
            if not one_pass and not self._make_room(len(data), keep=None, kind=kind):
                continue
            seen.add(record_id)
            doc, file = self._place(record_id, data)
            rows.setdefault(tuple(values), []).append(
                (record_id, kind, record["sessionId"], str(record["timestamp"]), len(data),
                 doc, file, *values.values()))
            self._bytes += len(data)
            self._totals[kind][0] += 1
            self._totals[kind][1] += len(data)
            stored += 1
            if not one_pass:
                self._flush_rows(rows)
        self._flush_rows(rows)
        self._after_growth()
        return stored

    def _flush_rows(self, rows: dict[tuple[str, ...], list[tuple]]) -> None:
        for names, batch in rows.items():
            extra = "".join(f", {name}" for name in names)
            self._db.executemany(
                f"INSERT INTO recordings (id, kind, session_id, timestamp, size, doc, file"
                f"{extra}) VALUES (?,?,?,?,?,?,?{',?' * len(names)})", batch)
        rows.clear()

    def _drop_oldest_for(self, growth: int) -> None:
        """Drop the oldest recordings, in one statement, until ``growth`` more bytes fit
        (``growth`` is at most the cap)."""
        need = self._bytes + growth - self.max_bytes
        if self.max_bytes <= 0 or need <= 0:
            return
        freed = 0
        last = None
        cursor = self._db.execute("SELECT seq, size FROM recordings ORDER BY seq")
        while freed < need:
            chunk = cursor.fetchmany(256)
            if not chunk:
                break
            for row in chunk:
                freed += row["size"]
                last = row["seq"]
                if freed >= need:
                    break
        cursor.close()
        if last is None:
            return
        dropped: dict[str, int] = {}
        for row in self._db.execute("SELECT kind, COUNT(*) FROM recordings WHERE seq <= ? "
                                    "GROUP BY kind", (last,)).fetchall():
            dropped[row[0]] = int(row[1])
        self._remove("seq <= ?", (last,))
        for dropped_kind, count in dropped.items():
            self._count_dropped(dropped_kind, count)
        log.info("recording storage cap reached: %d oldest recording(s) dropped",
                 sum(dropped.values()))

    def _insert(self, kind: str, record: dict, session_id: str | None,
                values: dict[str, Any]) -> tuple[dict, bool]:
        """:meth:`add` under the lock (``values`` checked by :func:`_columns`):
        ``(record, kept)`` (False: larger than the whole cap)."""
        record.setdefault("id", _new_id("rec"))
        record.setdefault("timestamp", utc_now())
        record["sessionId"] = session_id
        data = orjson.dumps(record)
        if self._db.execute("SELECT 1 FROM recordings WHERE id = ?",
                            (record["id"],)).fetchone() is not None:
            raise ValueError(f"a recording with id {record['id']!r} exists")
        if not self._make_room(len(data), keep=None, kind=kind):
            return record, False
        doc, file = self._place(record["id"], data)
        names = ", ".join(values)
        self._db.execute(
            f"INSERT INTO recordings (id, kind, session_id, timestamp, size, doc, file"
            f"{', ' + names if names else ''}) VALUES (?,?,?,?,?,?,?"
            f"{',?' * len(values)})",
            (record["id"], kind, session_id, str(record["timestamp"]), len(data), doc, file,
             *values.values()))
        self._bytes += len(data)
        self._totals[kind][0] += 1
        self._totals[kind][1] += len(data)
        self._after_growth()
        return record, True

    def _reload_totals(self) -> None:
        """Recount the byte total and per-kind totals from the database (after a rollback)."""
        self._bytes = int(self._db.execute(
            "SELECT COALESCE(SUM(size), 0) FROM recordings").fetchone()[0])
        self._totals = {kind: [0, 0] for kind in KINDS}
        for row in self._db.execute("SELECT kind, COALESCE(SUM(deleted = 0), 0), "
                                    "COALESCE(SUM(size), 0) FROM recordings GROUP BY kind"):
            self._totals[row[0]] = [int(row[1]), int(row[2])]

    def replace(self, record_id: str, record: dict, *, columns: dict | None = None) -> bool:
        """Store ``record`` as the new document of recording ``record_id`` (its ``id``,
        ``timestamp`` and ``sessionId`` kept from the old one when absent), updating the
        ``columns`` given. Other recordings may be dropped to stay under the cap. False when
        the recording is unknown (or was dropped)."""
        values = _columns(columns)
        with self._lock:
            self._check_open()
            row = self._db.execute(
                "SELECT seq, kind, session_id, timestamp, size, file FROM recordings WHERE id = ?",
                (record_id,)).fetchone()
            if row is None:
                return False
            record["id"] = record_id
            record.setdefault("timestamp", row["timestamp"])
            record.setdefault("sessionId", row["session_id"])
            data = orjson.dumps(record)
            if not self._make_room(len(data) - row["size"], keep=row["seq"], kind=None):
                return False
            if row["file"]:
                self._unlink(row["file"])
            doc, file = self._place(record_id, data)
            sets = "".join(f", {name} = ?" for name in values)
            self._db.execute(
                f"UPDATE recordings SET size = ?, doc = ?, file = ?, timestamp = ?{sets} "
                f"WHERE id = ?",
                (len(data), doc, file, str(record["timestamp"]), *values.values(), record_id))
            self._bytes += len(data) - row["size"]
            self._totals[row["kind"]][1] += len(data) - row["size"]
            self._after_growth()
            return True

    def get(self, record_id: str, *, include_deleted: bool = False,
            kind: str | None = None) -> dict | None:
        """One recording's document; None when unknown (or soft-deleted, unless
        ``include_deleted``, or not of ``kind`` when given)."""
        with self._lock:
            row = self._db.execute(
                "SELECT doc, file, deleted, kind FROM recordings WHERE id = ?",
                (record_id,)).fetchone()
            if (row is None or (row["deleted"] and not include_deleted)
                    or (kind is not None and row["kind"] != kind)):
                return None
            return self._load(row)

    def query(self, kind: str, *, session_id: str | None = None, filters: dict | None = None,
              match: Callable[[dict], bool] | None = None, sort_by: str = "timestamp",
              descending: bool = False, limit: int = 100, offset: int = 0,
              include_deleted: bool = False) -> tuple[list[dict], int]:
        """``(page, total)``: the documents of ``kind`` (of ``session_id`` when given) whose
        columns equal every ``filters`` value (a None value matches a missing column) and
        that ``match(document)`` accepts, sorted by ``sort_by`` (one of :data:`SORT_KEYS`;
        ties in insertion order), ``offset`` skipped, at most ``limit``; ``total`` counts
        every match. Raises ValueError for an unknown kind, filter or sort key, or a
        negative ``limit``/``offset``."""
        _check_kind(kind)
        if sort_by not in SORT_KEYS:
            raise ValueError(f"sort_by must be one of {', '.join(SORT_KEYS)}")
        if limit < 0 or offset < 0:
            raise ValueError("limit and offset must be >= 0")
        where, params = ["kind = ?"], [kind]
        if not include_deleted:
            where.append("deleted = 0")
        if session_id is not None:
            where.append("session_id = ?")
            params.append(session_id)
        for name, value in (filters or {}).items():
            if name not in COLUMNS:
                raise ValueError(f"unknown filter {name!r}: one of {', '.join(COLUMNS)}")
            if value is None:
                where.append(f"{name} IS NULL")
            else:
                where.append(f"{name} = ?")
                params.append(value)
        order = "DESC" if descending else "ASC"
        sql_where = " AND ".join(where)
        column = "seq" if sort_by == "added" else sort_by
        sql = (f"SELECT doc, file FROM recordings WHERE {sql_where} "
               f"ORDER BY {column} {order}, seq {order}")
        with self._lock:
            if match is None:
                total = self._db.execute(f"SELECT COUNT(*) FROM recordings WHERE {sql_where}",
                                         params).fetchone()[0]
                rows = self._db.execute(sql + " LIMIT ? OFFSET ?",
                                        (*params, limit, offset)).fetchall()
                return [self._load(row) for row in rows], total
            found: list[dict] = []
            total = 0
            for row in self._db.execute(sql, params).fetchall():
                document = self._load(row)
                if match(document):
                    if offset <= total < offset + limit:
                        found.append(document)
                    total += 1
            return found, total

    def delete(self, record_id: str, *, soft: bool = False, kind: str | None = None) -> bool:
        """Delete one recording; ``soft`` keeps it (hidden, its bytes counted) until
        :meth:`vacuum`. False when unknown (or, with ``soft``, already soft-deleted; or not of
        ``kind`` when given)."""
        where, params = "id = ?", (record_id,)
        if kind is not None:
            where, params = "id = ? AND kind = ?", (record_id, kind)
        with self._lock:
            if soft:
                row = self._db.execute(
                    f"SELECT kind FROM recordings WHERE {where} AND deleted = 0",
                    params).fetchone()
                if row is None:
                    return False
                self._db.execute(f"UPDATE recordings SET deleted = 1 WHERE {where}", params)
                self._totals[row["kind"]][0] -= 1
                return True
            return self._remove(where, params) > 0

    def totals(self, kind: str) -> tuple[int, int]:
        """``(visible recordings, bytes)`` of ``kind``, without a query (bytes count the
        soft-deleted ones too)."""
        _check_kind(kind)
        with self._lock:
            count, size = self._totals[kind]
            return count, size

    def drop_oldest(self, kind: str) -> bool:
        """Drop the oldest recording of ``kind`` (soft-deleted or not), counted in
        ``stats()["dropped"]``: for a caller keeping its own bound. False when there is
        none."""
        _check_kind(kind)
        with self._lock:
            row = self._db.execute(
                "SELECT seq FROM recordings WHERE kind = ? ORDER BY seq LIMIT 1",
                (kind,)).fetchone()
            if row is None:
                return False
            self._remove("seq = ?", (row["seq"],))
            self._count_dropped(kind, 1)
            return True

    def clear(self, kind: str, *, session_id: str | None = None) -> int:
        """Delete every recording of ``kind`` (of ``session_id`` when given), soft-deleted
        ones too; answers how many visible ones went."""
        _check_kind(kind)
        with self._lock:
            if session_id is None:
                where, params = "kind = ?", (kind,)
            else:
                where, params = "kind = ? AND session_id = ?", (kind, session_id)
            visible = self._db.execute(
                f"SELECT COUNT(*) FROM recordings WHERE {where} AND deleted = 0",
                params).fetchone()[0]
            self._remove(where, params)
            return visible

    def vacuum(self, kind: str | None = None) -> int:
        """Remove the soft-deleted recordings (of ``kind`` when given); answers how many."""
        with self._lock:
            if kind is None:
                return self._remove("deleted = 1", ())
            _check_kind(kind)
            return self._remove("deleted = 1 AND kind = ?", (kind,))

    def stats(self, kind: str | None = None) -> dict:
        """``{count, deleted, bytes, maxBytes, warnPercent, usedPercent, warning, dropped}``:
        ``count`` visible and ``deleted`` soft-deleted recordings, their ``bytes`` and the
        ``dropped`` count (of ``kind`` when given); ``usedPercent`` (of every kind against
        ``maxBytes``, 0 without a cap) and ``warning`` (at or above ``warnPercent``)."""
        with self._lock:
            where, params = ("WHERE kind = ?", (kind,)) if kind is not None else ("", ())
            row = self._db.execute(
                f"SELECT COALESCE(SUM(deleted = 0), 0), COALESCE(SUM(deleted), 0), "
                f"COALESCE(SUM(size), 0) FROM recordings {where}", params).fetchone()
            if kind is None:
                dropped = self._db.execute(
                    "SELECT COALESCE(SUM(value), 0) FROM meta WHERE key LIKE 'dropped:%'"
                ).fetchone()[0]
            else:
                dropped = self._meta(f"dropped:{kind}")
            used = self._used_percent()
            return {"count": row[0], "deleted": row[1], "bytes": row[2],
                    "maxBytes": self.max_bytes, "warnPercent": self.warn_percent,
                    "usedPercent": round(used, 2),
                    "warning": self.max_bytes > 0 and used >= self.warn_percent,
                    "dropped": dropped}

    def close(self) -> None:
        """Close the database (a second call does nothing)."""
        with self._lock:
            if not self._closed:
                self._closed = True
                self._db.close()

    # -- internals --------------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise ValueError("the recording store is closed")

    def _place(self, record_id: str, data: bytes) -> tuple[bytes | None, str | None]:
        """``(doc, file)`` of a document: inline, or written to ``<files_dir>/<id>.json``."""
        if self.files_dir is None or len(data) <= self.inline_limit:
            return data, None
        _private_dir(self.files_dir)
        name = f"{record_id}.json"
        if "/" in record_id or "\\" in record_id or record_id.startswith("."):
            name = f"{_new_id('doc')}.json"
        _write_private(self.files_dir / name, data)
        return None, name

    def _load(self, row: sqlite3.Row) -> dict:
        if row["file"]:
            try:
                return orjson.loads((self.files_dir / row["file"]).read_bytes())
            except (OSError, orjson.JSONDecodeError) as error:
                log.warning("recording document %s unreadable: %s", row["file"], error)
                return {"error": "unreadable", "file": row["file"]}
        return orjson.loads(row["doc"])

    def _unlink(self, name: str) -> None:
        if self.files_dir is not None:
            try:
                (self.files_dir / name).unlink()
            except FileNotFoundError:
                pass

    def _remove(self, where: str, params: tuple) -> int:
        """Delete the recordings matching ``where`` with their files; answers how many."""
        rows = self._db.execute(
            f"SELECT seq, kind, size, deleted, file FROM recordings WHERE {where}",
            params).fetchall()
        if not rows:
            return 0
        self._db.execute(f"DELETE FROM recordings WHERE {where}", params)
        for row in rows:
            if row["file"]:
                self._unlink(row["file"])
        self._bytes -= sum(row["size"] for row in rows)
        for row in rows:
            self._totals[row["kind"]][0] -= 0 if row["deleted"] else 1
            self._totals[row["kind"]][1] -= row["size"]
        if self._warned and self._used_percent() < self.warn_percent:
            self._warned = False
        return len(rows)

    def _oldest(self, keep: int | None) -> Iterator[sqlite3.Row]:
        while True:
            row = self._db.execute(
                "SELECT seq, kind FROM recordings WHERE seq != ? ORDER BY seq LIMIT 1",
                (keep if keep is not None else -1,)).fetchone()
            if row is None:
                return
            yield row

    def _make_room(self, growth: int, keep: int | None, kind: str | None) -> bool:
        """Drop the oldest recordings (never ``keep``) until ``growth`` more bytes fit;
        False (nothing dropped; a newcomer of ``kind`` counted as dropped) when they never
        could."""
        if self.max_bytes <= 0 or self._bytes + growth <= self.max_bytes:
            return True
        kept = 0
        if keep is not None:
            kept = self._db.execute("SELECT size FROM recordings WHERE seq = ?",
                                    (keep,)).fetchone()[0]
        if kept + growth > self.max_bytes:
            log.warning("a recording of %d bytes is larger than the recording storage cap "
                        "(%d bytes) and is not kept", kept + growth, self.max_bytes)
            if kind is not None:
                self._count_dropped(kind, 1)
            return False
        dropped: dict[str, int] = {}
        for row in self._oldest(keep):
            if self._bytes + growth <= self.max_bytes:
                break
            self._remove("seq = ?", (row["seq"],))
            dropped[row["kind"]] = dropped.get(row["kind"], 0) + 1
        for kind, count in dropped.items():
            self._count_dropped(kind, count)
        if dropped:
            log.info("recording storage cap reached: %d oldest recording(s) dropped",
                     sum(dropped.values()))
        return True

    def _count_dropped(self, kind: str, count: int) -> None:
        self._db.execute(
            "INSERT INTO meta (key, value) VALUES (?, ?) "
            "ON CONFLICT(key) DO UPDATE SET value = value + excluded.value",
            (f"dropped:{kind}", count))

    def _meta(self, key: str) -> int:
        row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return int(row[0]) if row is not None else 0

    def _used_percent(self) -> float:
        return self._bytes * 100.0 / self.max_bytes if self.max_bytes > 0 else 0.0

    def _after_growth(self) -> None:
        if (self.max_bytes > 0 and not self._warned
                and self._used_percent() >= self.warn_percent):
            self._warned = True
            log.warning("recording storage at %.1f%% of its %d-byte cap (warning at %s%%); "
                        "the oldest recordings are dropped at 100%%",
                        self._used_percent(), self.max_bytes, self.warn_percent)


def _check_kind(kind: str) -> None:
    if kind not in KINDS:
        raise ValueError(f"unknown recording kind {kind!r}: one of {', '.join(KINDS)}")


def _columns(columns: dict | None) -> dict[str, Any]:
    values = dict(columns or {})
    unknown = set(values) - set(COLUMNS)
    if unknown:
        raise ValueError(f"unknown column(s) {', '.join(sorted(unknown))}: "
                         f"one of {', '.join(COLUMNS)}")
    if values.get("status") is not None:
        values["status"] = int(values["status"])
    return values


class KindRecordings:
    """The recordings of one kind as the protocols that record (SOAP, MQTT) use them: a
    view of the process-wide store (or ``store``) with its own bounds, ``max_entries``
    recordings and ``max_bytes`` document bytes of this kind, the oldest dropped first.

    Entries are dicts with an ``id`` (the protocol decides the rest); keys starting with
    ``_`` are private. ``dropped`` counts the recordings of this kind dropped by either
    bound (this one or the store's cap).

    Source: behavior notes §1 (``/mqtt-recordings`` and ``/soap-recordings``).
    """

    def __init__(self, kind: str, *, max_entries: int = 10_000,
                 max_bytes: int = 16 * 1024 * 1024, store: RecordingStore | None = None):
        _check_kind(kind)
        self.kind = kind
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._store = store

    @property
    def store(self) -> RecordingStore:
        """The store in use: the one given, else the process-wide one (:func:`current`)."""
        return self._store if self._store is not None else current()

    @property
    def entries(self) -> list[dict[str, Any]]:
        """Every entry of the kind, oldest first (at most ``max_entries``)."""
        found, _ = self.store.query(self.kind, sort_by="added", limit=max(self.max_entries, 1))
        return [_without_session(entry) for entry in found]

    @property
    def bytes(self) -> int:
        """The stored bytes of the kind (the JSON documents)."""
        return self.store.stats(self.kind)["bytes"]

    @property
    def dropped(self) -> int:
        """How many entries of the kind were dropped by a bound."""
        return self.store.stats(self.kind)["dropped"]

    def add(self, entry: dict[str, Any]) -> None:
        """Keep ``entry``, then drop the oldest of the kind beyond the bounds (``entry``
        itself when it alone is larger than ``max_bytes``)."""
        store = self.store
        store.add(self.kind, entry)
        entry.pop("sessionId", None)
        while True:
            count, size = store.totals(self.kind)
            if count <= self.max_entries and size <= self.max_bytes:
                return
            if not store.drop_oldest(self.kind):
                return

    def find(self, recording_id: str) -> dict[str, Any] | None:
        """One entry (private keys included); None when absent."""
        found = self.store.get(recording_id, kind=self.kind)
        return _without_session(found) if found is not None else None

    def remove(self, recording_id: str) -> bool:
        """Delete one entry; False when absent."""
        return self.store.delete(recording_id, kind=self.kind)

    def clear(self) -> int:
        """Delete every entry of the kind; answers how many there were."""
        return self.store.clear(self.kind)


def _without_session(entry: dict[str, Any]) -> dict[str, Any]:
    if entry.get("sessionId", "") is None:
        del entry["sessionId"]
    return entry


_current: RecordingStore | None = None
_current_lock = threading.Lock()


def current() -> RecordingStore:
    """The process-wide store: the one given to :func:`install`, else an in-memory one made
    on first use."""
    global _current
    with _current_lock:
        if _current is None:
            _current = RecordingStore()
        return _current


def install(store: RecordingStore) -> None:
    """Make ``store`` the process-wide store (:func:`current`)."""
    global _current
    with _current_lock:
        _current = store


@contextmanager
def installed(store: RecordingStore) -> Iterator[RecordingStore]:
    """``with installed(store):`` makes ``store`` the process-wide one for the block, then
    puts the previous one back (tests, tools)."""
    before = current()
    install(store)
    try:
        yield store
    finally:
        install(before)


def open_store(data_dir: Path, *, max_bytes: int | None = None,
               warn_percent: float | None = None) -> RecordingStore:
    """The store of a data dir: ``<data_dir>/recordings.sqlite3``, large documents under
    ``<data_dir>/recordings/`` (None bounds: the SPEC defaults, 500 MiB and 80 %)."""
    data_dir = Path(data_dir)
    return RecordingStore(
        data_dir / DATABASE_NAME, files_dir=data_dir / FILES_DIR_NAME,
        max_bytes=DEFAULT_MAX_BYTES if max_bytes is None else max_bytes,
        warn_percent=DEFAULT_WARN_PERCENT if warn_percent is None else warn_percent)
