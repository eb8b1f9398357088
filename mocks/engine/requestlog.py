"""The request log: a bounded ring buffer of data-plane requests, plus traffic counters.

Owns: the retained request-log entries (newest last in the buffer, served newest first), the
counters behind ``/metrics`` (requests by method, path template and status; the duration
histogram; match hits and misses), and the live subscribers of the admin request stream.

Who may call it: the engine (``observe`` is registered as a serve-event observer by
:class:`~mocks.engine.control.EngineControl`) and ``EngineControl`` itself. The admin side
reaches it only through ``EngineControl`` (ARCHITECTURE seam 5).

Concurrency: single owner, the engine's event loop. ``observe`` runs on the hot path after the
response went out, so it does O(1) work: it stores the serve event as it is and builds the
JSON entry only when somebody reads it.

Source: SPEC "Request log entry", "Request stream (admin)"; behavior notes §1 "Request log"
(entry shape, filters, capacity 1000, ``req-<base36 counter>`` ids, contract note: emit both
``matchedMockID``/``matchedMockId`` and ``responseStatus``/``statusCode``) and §17 (metrics).
"""
from __future__ import annotations

import asyncio
from bisect import bisect_left
from collections import deque
from dataclasses import dataclass
from typing import Any, Iterable, Iterator

from .core import ServeEvent, utc_timestamp

#: Default number of retained entries (behavior notes §1: "Capacity 1000 entries").
DEFAULT_CAPACITY = 1000

#: Request bodies longer than this are kept truncated in the log (bytes).
LOGGED_BODY_LIMIT = 64 * 1024

#: Histogram upper bounds in seconds (behavior notes §17).
DURATION_BUCKETS = (0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)

#: ``path`` label of requests that matched no mock (keeps label cardinality bounded).
UNMATCHED_PATH_LABEL = "unmatched"

#: Queue size of one request-stream subscriber; a slower reader loses the oldest surplus.
SUBSCRIBER_QUEUE_SIZE = 1000

_BASE36 = "0123456789abcdefghijklmnopqrstuvwxyz"


def base36(number: int) -> str:
    """``number`` (≥ 0) in lower-case base 36 (``36 -> "10"``)."""
    if number == 0:
        return "0"
    digits = []
    while number:
        number, remainder = divmod(number, 36)
        digits.append(_BASE36[remainder])
    return "".join(reversed(digits))


def canonical_header_name(name: str) -> str:
    """``content-type`` -> ``Content-Type`` (the spelling clients are used to)."""
    return "-".join(part[:1].upper() + part[1:] for part in name.split("-"))


class LogRecord:
    """One retained data-plane request: the serve event and its lazily built entry.

    Attributes:
        number: position in the log since the engine started (1, 2, ...); the entry id is
            ``req-<base36 number>``.
        event: the :class:`~mocks.engine.core.ServeEvent` as observed.
        body: the request body as retained (truncated past :data:`LOGGED_BODY_LIMIT`).
    """

    __slots__ = ("number", "event", "body", "_entry")

    def __init__(self, number: int, event: ServeEvent, body: bytes):
        self.number = number
        self.event = event
        self.body = body
        self._entry: dict[str, Any] | None = None

    @property
    def id(self) -> str:
        """The entry id ``req-<base36 counter>``."""
        return f"req-{base36(self.number)}"

    @property
    def mock_id(self) -> str | None:
        """Id of the mock that answered, or None when nothing matched."""
        return self.event.mock_id

    def entry(self, workspace_of: dict[str, str] | None = None) -> dict[str, Any]:
        """The request-log entry (behavior notes §1 shape), built once and cached.

        Keys: ``id, workspaceId?, timestamp, protocol, method, path, queryString?, headers,
        body?, bodySize, remoteAddr, matchedMockId?, matchedMockID?, statusCode,
        responseStatus, responseBody?, durationMs, error?, nearMisses?``.
        """
        if self._entry is None:
            self._entry = self._build(workspace_of or {})
        return self._entry

    def _build(self, workspace_of: dict[str, str]) -> dict[str, Any]:
        event = self.event
        request = event.request
        headers: dict[str, list[str]] = {}
        for name, value in request.header_pairs:
            headers.setdefault(canonical_header_name(name), []).append(value)
        entry: dict[str, Any] = {"id": self.id}
        if event.mock_id is not None and event.mock_id in workspace_of:
            entry["workspaceId"] = workspace_of[event.mock_id]
        entry.update(timestamp=utc_timestamp(event.received_at), protocol="http",
                     method=request.method, path=request.path)
        if request.query_string:
            entry["queryString"] = request.query_string
        entry["headers"] = headers
        if self.body:
            entry["body"] = self.body.decode("utf-8", "replace")
        entry.update(bodySize=len(request.body), remoteAddr=request.client)
        if event.mock_id is not None:
            # Contract note (behavior notes §1): SPEC spells `matchedMockID`; emit both.
            entry["matchedMockId"] = event.mock_id
            entry["matchedMockID"] = event.mock_id
        entry["statusCode"] = event.status
        entry["responseStatus"] = event.status
        if event.response_body is not None:
            entry["responseBody"] = event.response_body[:LOGGED_BODY_LIMIT].decode(
                "utf-8", "replace")
        entry["durationMs"] = round(event.duration_ms, 3)
        if event.error:
            entry["error"] = event.error
        if event.near_misses:
            entry["nearMisses"] = [_short_near_miss(miss) for miss in event.near_misses]
        return entry

    def invocation(self) -> dict[str, Any]:
        """The invocation view: ``{id, timestamp, method, path, headers?{name: first value},
        body?}`` (behavior notes §1 "Verification")."""
        request = self.event.request
        out: dict[str, Any] = {"id": self.id, "timestamp": utc_timestamp(self.event.received_at),
                               "method": request.method, "path": request.path}
        headers: dict[str, str] = {}
        for name, value in request.header_pairs:
            headers.setdefault(canonical_header_name(name), value)
        if headers:
            out["headers"] = headers
        if self.body:
            out["body"] = self.body.decode("utf-8", "replace")
        return out


def _short_near_miss(miss: dict[str, Any]) -> dict[str, Any]:
    out = {"mockId": miss["mockId"]}
    if miss.get("mockName"):
        out["mockName"] = miss["mockName"]
    out["matchPercentage"] = miss.get("matchPercentage", 0)
    out["reason"] = miss.get("reason", "")
    return out


@dataclass
class RequestFilter:
    """Filters of ``GET /requests`` (behavior notes §1 "Request log").

    Attributes:
        limit, offset: page (defaults 100 and 0).
        method: exact method, case-insensitive.
        path: path prefix.
        matched: id of the mock that answered.
        status: exact status code.
        protocol: ``http`` (other protocols arrive with their handlers).
        has_error: True keeps entries with an error (or a 5xx), False the others.
        unmatched_only: keep requests no mock answered.
        workspace_id: the answering mock's workspace (unmatched requests belong to ``local``).
        extra: protocol-specific filters (``grpcService``, ``mqttTopic``, ...): an entry is
            kept only when it carries the field with that value.
    """

    limit: int = 100
    offset: int = 0
    method: str | None = None
    path: str | None = None
    matched: str | None = None
    status: int | None = None
    protocol: str | None = None
    has_error: bool | None = None
    unmatched_only: bool = False
    workspace_id: str | None = None
    extra: dict[str, str] | None = None


class TrafficCounters:
    """Counters behind ``/metrics`` (behavior notes §17), updated in O(1) per request.

    Attributes:
        requests: ``(method, path label, status) -> count``.
        durations: ``(method, path label) -> [bucket counts..., +Inf count]`` (not cumulative).
        duration_sums: ``(method, path label) -> seconds``.
        match_hits: ``mock id -> count``.
        match_misses: requests no mock matched.
        errors: ``error code -> count``.
        total: every observed request.
    """

    __slots__ = ("requests", "durations", "duration_sums", "match_hits", "match_misses",
                 "errors", "total")

    def __init__(self) -> None:
        self.requests: dict[tuple[str, str, int], int] = {}
        self.durations: dict[tuple[str, str], list[int]] = {}
        self.duration_sums: dict[tuple[str, str], float] = {}
        self.match_hits: dict[str, int] = {}
        self.match_misses = 0
        self.errors: dict[str, int] = {}
        self.total = 0

    def count(self, event: ServeEvent) -> None:
        """Add one serve event."""
        label = event.path_template if event.mock_id is not None else UNMATCHED_PATH_LABEL
        method = event.request.method
        key = (method, label or UNMATCHED_PATH_LABEL, event.status)
        requests = self.requests
        requests[key] = requests.get(key, 0) + 1
        series = key[:2]
        seconds = event.duration_ms / 1000.0
        buckets = self.durations.get(series)
        if buckets is None:
            buckets = self.durations[series] = [0] * (len(DURATION_BUCKETS) + 1)
            self.duration_sums[series] = 0.0
        buckets[bisect_left(DURATION_BUCKETS, seconds)] += 1
        self.duration_sums[series] += seconds
        if event.mock_id is not None:
            self.match_hits[event.mock_id] = self.match_hits.get(event.mock_id, 0) + 1
        else:
            self.match_misses += 1
        if event.error:
            self.errors[event.error] = self.errors.get(event.error, 0) + 1
        self.total += 1

    def snapshot(self) -> dict[str, Any]:
        """A copy safe to read elsewhere: ``{requests, durations, durationSums, matchHits,
        matchMisses, errors, total}`` with tuple keys kept as tuples."""
        return {"requests": dict(self.requests),
                "durations": {key: list(value) for key, value in self.durations.items()},
                "durationSums": dict(self.duration_sums), "matchHits": dict(self.match_hits),
                "matchMisses": self.match_misses, "errors": dict(self.errors),
                "total": self.total}


class RequestLog:
    """Bounded log of data-plane requests (oldest dropped) with live subscribers.

    Attributes:
        capacity: maximum retained entries (``--max-log-entries``, default 1000; 0 keeps none).
        counters: the :class:`TrafficCounters` (they count every request, retained or not).
        workspace_of: ``mock id -> workspace id``, set by ``EngineControl`` on every load.
    """

    def __init__(self, capacity: int = DEFAULT_CAPACITY):
        self.capacity = max(0, capacity)
        self._records: deque[LogRecord] = deque(maxlen=self.capacity)
        self._number = 0
        self._subscribers: list[asyncio.Queue[LogRecord]] = []
        self.counters = TrafficCounters()
        self.workspace_of: dict[str, str] = {}

    # ------------------------------------------------------------------ hot path
    def observe(self, event: ServeEvent) -> None:
        """Serve-event observer: retain the event and count it (O(1); engine loop only)."""
        self._number += 1
        body = event.request.body
        if len(body) > LOGGED_BODY_LIMIT:
            body = body[:LOGGED_BODY_LIMIT]
        record = LogRecord(self._number, event, body)
        if self.capacity:
            self._records.append(record)
        self.counters.count(event)
        if self._subscribers:
            for queue in self._subscribers:
                if queue.full():
                    queue.get_nowait()  # drop the oldest for a reader that fell behind
                queue.put_nowait(record)

    # ------------------------------------------------------------------ queries
    def __len__(self) -> int:
        return len(self._records)

    def newest_first(self) -> Iterator[LogRecord]:
        """Retained records, newest first."""
        return reversed(self._records)

    def query(self, filters: RequestFilter) -> tuple[list[dict[str, Any]], int]:
        """``(entries of the page, number of entries that pass the filters)``, newest first."""
        kept = [record for record in self.newest_first() if self._keep(record, filters)]
        page = kept[filters.offset:filters.offset + filters.limit] if filters.limit >= 0 else []
        return [record.entry(self.workspace_of) for record in page], len(kept)

    def _keep(self, record: LogRecord, filters: RequestFilter) -> bool:
        event = record.event
        request = event.request
        if filters.method and request.method != filters.method.upper():
            return False
        if filters.path and not request.path.startswith(filters.path):
            return False
        if filters.matched and event.mock_id != filters.matched:
            return False
        if filters.status is not None and event.status != filters.status:
            return False
        if filters.protocol and filters.protocol.lower() != "http":
            return False
        if filters.unmatched_only and event.mock_id is not None:
            return False
        if filters.has_error is not None:
            failed = bool(event.error) or event.status >= 500
            if failed != filters.has_error:
                return False
        if filters.workspace_id:
            workspace = self.workspace_of.get(event.mock_id or "", "local")
            if workspace != filters.workspace_id:
                return False
        if filters.extra:
            entry = record.entry(self.workspace_of)
            for key, value in filters.extra.items():
                if str(entry.get(key, "")) != value:
                    return False
        return True

    def get(self, entry_id: str) -> dict[str, Any] | None:
        """The entry with id ``entry_id`` (``req-...``), or None."""
        for record in self._records:
            if record.id == entry_id:
                return record.entry(self.workspace_of)
        return None

    def calls(self, mock_id: str) -> list[LogRecord]:
        """Retained records the mock ``mock_id`` answered, oldest first."""
        return [record for record in self._records if record.event.mock_id == mock_id]

    # ------------------------------------------------------------------ changes
    def clear(self, mock_id: str | None = None) -> int:
        """Drop every retained record (or only those ``mock_id`` answered); returns how many."""
        if mock_id is None:
            cleared = len(self._records)
            self._records.clear()
            return cleared
        kept = [record for record in self._records if record.event.mock_id != mock_id]
        cleared = len(self._records) - len(kept)
        self._records = deque(kept, maxlen=self.capacity)
        return cleared

    def subscribe(self) -> asyncio.Queue[LogRecord]:
        """A queue that receives every new record from now on (call on the engine loop)."""
        queue: asyncio.Queue[LogRecord] = asyncio.Queue(maxsize=SUBSCRIBER_QUEUE_SIZE)
        self._subscribers.append(queue)
        return queue

    def unsubscribe(self, queue: asyncio.Queue[LogRecord]) -> None:
        """Stop feeding ``queue`` (no error when it is not subscribed)."""
        if queue in self._subscribers:
            self._subscribers.remove(queue)

    @property
    def subscriber_count(self) -> int:
        """Number of live request-stream subscribers."""
        return len(self._subscribers)


def records_between(records: Iterable[LogRecord]) -> tuple[str | None, str | None]:
    """``(first timestamp, last timestamp)`` of ``records`` in log order, or Nones."""
    first = last = None
    for record in records:
        if first is None:
            first = record.event.received_at
        last = record.event.received_at
    return (utc_timestamp(first) if first is not None else None,
            utc_timestamp(last) if last is not None else None)
