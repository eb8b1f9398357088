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

import orjson

from mocks.engine.core import ServeEvent, utc_timestamp
from mocks.core.queryparams import (MAX_LIMIT, MAX_STATUS, QueryParameterError, parse_bool,
                                    parse_int)
from mocks.core.redaction import DEFAULT_REDACTION, Redaction
from mocks.core.request import MockRequest

#: Default number of retained entries (behavior notes §1: "Capacity 1000 entries").
DEFAULT_CAPACITY = 1000

#: Request bodies and answers longer than this are kept truncated in the log (bytes); the
#: entry then says so with ``bodyTruncated`` / ``responseBodyTruncated`` next to the full size
#: in ``bodySize`` / ``responseBodySize``.
LOGGED_BODY_LIMIT = 64 * 1024

#: Histogram upper bounds in seconds (behavior notes §17).
DURATION_BUCKETS = (0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)

#: ``path`` label of requests that matched no mock (keeps label cardinality bounded).
UNMATCHED_PATH_LABEL = "unmatched"

#: ``method`` label values kept as sent: the HTTP methods of RFC 9110 and PATCH, the common
#: WebDAV ones, and the protocol names non-HTTP traffic puts in ``method`` (behavior notes
#: §17). Any other method a client sends (a method is any token) is labelled
#: :data:`OTHER_METHOD_LABEL`, so random methods cannot grow the metrics.
METHOD_LABELS = frozenset((
    "GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "CONNECT", "QUERY",
    "PROPFIND", "PROPPATCH", "MKCOL", "COPY", "MOVE", "LOCK", "UNLOCK", "REPORT", "SEARCH",
    "PURGE", "grpc", "sse", "mqtt", "websocket", "graphql", "soap"))

#: ``method`` label of a method outside :data:`METHOD_LABELS`.
OTHER_METHOD_LABEL = "other"

#: Most distinct ``(method, mock, path template, status)`` series kept. Matched requests
#: beyond it are counted under the ``path`` label :data:`OVERFLOW_PATH_LABEL` (no mock id);
#: only reached with tens of thousands of mocks, or many created and deleted over a run.
MAX_SERIES = 20_000

#: ``path`` label of matched requests counted past :data:`MAX_SERIES`.
OVERFLOW_PATH_LABEL = "other"

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
        event: the :class:`~mocks.engine.core.ServeEvent` as observed (its ``response_body``
            cut at :data:`LOGGED_BODY_LIMIT`).
        body: the request body as retained (truncated past :data:`LOGGED_BODY_LIMIT`).
        redaction: what the entry hides (:class:`~mocks.core.redaction.Redaction`).
    """

    __slots__ = ("number", "event", "body", "redaction", "_entry")

    def __init__(self, number: int, event: ServeEvent, body: bytes,
                 redaction: Redaction = DEFAULT_REDACTION):
        self.number = number
        self.event = event
        self.body = body
        self.redaction = redaction
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
        body?, bodySize, bodyTruncated?, remoteAddr, matchedMockId?, matchedMockID?,
        statusCode, responseStatus, responseBody?, responseBodySize?,
        responseBodyTruncated?, durationMs, error?, nearMisses?``. Header values, query
        parameters, form fields and near misses pass through :attr:`redaction`
        (SPEC "Admin-side records" redaction); ``*Truncated`` is present (true) only when the
        log kept the first :data:`LOGGED_BODY_LIMIT` bytes of a larger body.
        """
        if self._entry is None:
            self._entry = self._build(workspace_of or {})
        return self._entry

    def _build(self, workspace_of: dict[str, str]) -> dict[str, Any]:
        event = self.event
        request = event.request
        redaction = self.redaction
        headers: dict[str, list[str]] = {}
        for name, value in request.header_pairs:
            headers.setdefault(canonical_header_name(name), []).append(
                redaction.header(name, value))
        entry: dict[str, Any] = {"id": self.id}
        if event.mock_id is not None and event.mock_id in workspace_of:
            entry["workspaceId"] = workspace_of[event.mock_id]
        entry.update(timestamp=utc_timestamp(event.received_at), protocol=event.protocol,
                     method=request.method, path=request.path)
        if request.query_string:
            entry["queryString"] = redaction.query(request.query_string)
        entry["headers"] = headers
        form = _is_form(request)
        if self.body:
            entry["body"] = _logged_body(self.body, form, redaction)
        entry.update(bodySize=event.body_size if event.body_size is not None else len(request.body),
                     remoteAddr=request.client)
        if event.body_size is not None:
            entry["bodyTruncated"] = True
        if event.mock_id is not None:
            # Contract note (behavior notes §1): SPEC spells `matchedMockID`; emit both.
            entry["matchedMockId"] = event.mock_id
            entry["matchedMockID"] = event.mock_id
        entry["statusCode"] = event.status
        entry["responseStatus"] = event.status
        misses = event.near_misses
        if misses:
            misses, hidden = redaction.near_misses(misses, form)
        else:
            hidden = False
        answer = event.response_body
        if answer is not None:
            text = answer.decode("utf-8", "replace")
            if hidden:
                # The no-match answer quotes the near misses: show the redacted ones, or
                # nothing of it when it cannot be re-read (cut by the size limit).
                text = _with_near_misses(text, misses) or redaction.value
            entry["responseBody"] = text
            entry["responseBodySize"] = (event.response_size if event.response_size is not None
                                         else len(answer))
            if event.response_size is not None:
                entry["responseBodyTruncated"] = True
        entry["durationMs"] = round(event.duration_ms, 3)
        if event.error:
            entry["error"] = event.error
        if misses:
            entry["nearMisses"] = [_short_near_miss(miss) for miss in misses]
        if event.details:
            entry.update(event.details)
        return entry

    def invocation(self) -> dict[str, Any]:
        """The invocation view: ``{id, timestamp, method, path, headers?{name: first value},
        body?}`` (behavior notes §1 "Verification"), redacted as :meth:`entry` is."""
        request = self.event.request
        redaction = self.redaction
        out: dict[str, Any] = {"id": self.id, "timestamp": utc_timestamp(self.event.received_at),
                               "method": request.method, "path": request.path}
        headers: dict[str, str] = {}
        for name, value in request.header_pairs:
            headers.setdefault(canonical_header_name(name), redaction.header(name, value))
        if headers:
            out["headers"] = headers
        if self.body:
            out["body"] = _logged_body(self.body, _is_form(request), redaction)
        return out


def _is_form(request: MockRequest) -> bool:
    return request.headers.get("content-type", "").startswith(
        "application/x-www-form-urlencoded")


def _logged_body(body: bytes, form: bool, redaction: Redaction) -> str:
    """The body as logged: form bodies lose the values of secret fields (client secrets,
    passwords, codes, tokens; ``filterBodyKeys``)."""
    text = body.decode("utf-8", "replace")
    return redaction.form(text) if form else text


def _with_near_misses(text: str, misses: list[dict[str, Any]]) -> str | None:
    """The logged no-match answer ``text`` (a JSON object with ``nearMisses``) with its near
    misses replaced by the redacted ``misses``; None when it is not that shape."""
    try:
        document = orjson.loads(text)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(document, dict) or "nearMisses" not in document:
        return None
    document["nearMisses"] = misses
    return orjson.dumps(document).decode()


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
        protocol: ``http``, ``websocket``, ... (the event's protocol).
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


#: Protocol-specific filters of ``GET /requests`` (kept when the entry carries the value).
EXTRA_FILTERS = ("grpcService", "mqttTopic", "mqttClientId", "soapOperation", "graphqlOpType",
                 "wsConnectionId", "sseConnectionId")


def parse_request_filter(query: Any) -> RequestFilter:
    """Build a :class:`RequestFilter` from a query mapping (``.get(name)`` -> str or None).

    Raises :class:`QueryParameterError` naming the parameter: ``limit`` outside 0 to
    :data:`~mocks.core.queryparams.MAX_LIMIT`, ``offset`` outside 0 to
    :data:`~mocks.core.queryparams.MAX_QUERY_INTEGER`, ``status`` outside 0 to
    :data:`~mocks.core.queryparams.MAX_STATUS`, anything not a whole number, a non-boolean
    ``hasError``/``unmatchedOnly``.
    """
    extra = {name: query.get(name) for name in EXTRA_FILTERS if query.get(name)}
    return RequestFilter(
        limit=parse_int(query, "limit", 100, maximum=MAX_LIMIT),
        offset=parse_int(query, "offset", 0),
        method=query.get("method") or None, path=query.get("path") or None,
        matched=query.get("matched") or None,
        status=parse_int(query, "status", None, maximum=MAX_STATUS),
        protocol=query.get("protocol") or None, has_error=parse_bool(query, "hasError"),
        unmatched_only=bool(parse_bool(query, "unmatchedOnly")),
        workspace_id=query.get("workspaceId") or None, extra=extra or None)


class TrafficCounters:
    """Counters behind ``/metrics`` (behavior notes §17), updated in O(1) per request.

    One dict holds everything: ``(method, mock id, path template, status) -> [count, seconds,
    bucket counts..., +Inf count]`` (buckets not cumulative). One lookup and three list
    increments per request keep the hot path cheap; :meth:`snapshot` folds the series into the
    shapes the metrics need at scrape time.

    Every part of a key is bounded whatever clients send: the raw request path is never a
    key (a matched request is keyed by its mock's id and declared path template, an
    unmatched one by None), a method outside :data:`METHOD_LABELS` becomes
    :data:`OTHER_METHOD_LABEL`, and past :data:`MAX_SERIES` keys a matched request is
    counted under :data:`OVERFLOW_PATH_LABEL`. Those checks run only when a key is new.

    Attributes:
        series: the per-key cells described above.
        errors: ``error code -> count`` (rare: only answers the engine gave itself).
    """

    __slots__ = ("series", "errors")

    def __init__(self) -> None:
        self.series: dict[tuple[str, str | None, str | None, int], list[float]] = {}
        self.errors: dict[str, int] = {}

    def count(self, event: ServeEvent) -> None:
        """Add one serve event."""
        key = (event.request.method, event.mock_id, event.path_template, event.status)
        cell = self.series.get(key)
        if cell is None:
            cell = self._new_cell(key)
        seconds = event.duration_ms * 0.001
        cell[0] += 1
        cell[1] += seconds
        cell[2 + bisect_left(DURATION_BUCKETS, seconds)] += 1
        if event.error:
            self.errors[event.error] = self.errors.get(event.error, 0) + 1

    def _new_cell(self, key: tuple[str, str | None, str | None, int]) -> list[float]:
        """The cell of a key not seen yet, under its bounded form (see the class)."""
        method, mock_id, template, status = key
        if method not in METHOD_LABELS:
            method = OTHER_METHOD_LABEL
        if mock_id is None:
            template = None  # an unmatched request is never labelled by its path
        key = (method, mock_id, template, status)
        series = self.series
        cell = series.get(key)
        if cell is not None:
            return cell
        if len(series) >= MAX_SERIES and mock_id is not None:
            key = (method, "", OVERFLOW_PATH_LABEL, status)
            cell = series.get(key)
            if cell is not None:
                return cell
        cell = series[key] = [0] * (len(DURATION_BUCKETS) + 3)
        return cell

    @property
    def total(self) -> int:
        """Every observed request."""
        return int(sum(cell[0] for cell in self.series.values()))

    def snapshot(self) -> dict[str, Any]:
        """Aggregates safe to read elsewhere: ``{requests: {(method, path label, status):
        n}, durations: {(method, path label): [bucket counts..., +Inf]}, durationSums:
        {(method, path label): seconds}, matchHits: {mock id: n}, matchMisses, errors,
        total}``. The path label is the mock's path template, ``unmatched`` without a mock."""
        requests: dict[tuple[str, str, int], int] = {}
        durations: dict[tuple[str, str], list[int]] = {}
        sums: dict[tuple[str, str], float] = {}
        hits: dict[str, int] = {}
        misses = 0
        for (method, mock_id, template, status), cell in list(self.series.items()):
            label = template if mock_id is not None and template else UNMATCHED_PATH_LABEL
            count = int(cell[0])
            request_key = (method, label, status)
            requests[request_key] = requests.get(request_key, 0) + count
            series = (method, label)
            buckets = durations.setdefault(series, [0] * (len(DURATION_BUCKETS) + 1))
            for index, value in enumerate(cell[2:]):
                buckets[index] += int(value)
            sums[series] = sums.get(series, 0.0) + cell[1]
            if mock_id is None:
                misses += count
            elif mock_id:  # "" is the overflow series: no mock to credit
                hits[mock_id] = hits.get(mock_id, 0) + count
        return {"requests": requests, "durations": durations, "durationSums": sums,
                "matchHits": hits, "matchMisses": misses, "errors": dict(self.errors),
                "total": sum(requests.values())}


#: Cached views of a :class:`MockRequest` that can be rebuilt from its raw fields.
_DERIVED_VIEWS = ("json", "text", "query", "query_all", "headers", "xml_document")


class RequestLog:
    """Bounded log of data-plane requests (oldest dropped) with live subscribers.

    Attributes:
        capacity: maximum retained entries (``--max-log-entries``, default 1000; 0 keeps none).
        counters: the :class:`TrafficCounters` (they count every request, retained or not).
        workspace_of: ``mock id -> workspace id``, set by ``EngineControl`` on every load.
        redaction: what entries hide (:class:`~mocks.core.redaction.Redaction`), set from
            the config's ``recording`` block by :meth:`use_config` on every load.
    """

    def __init__(self, capacity: int = DEFAULT_CAPACITY):
        self.capacity = max(0, capacity)
        # Raw (number, event, body) tuples: the hot path builds no object of ours; a
        # LogRecord view is made only when somebody reads.
        self._raw: deque[tuple[int, ServeEvent, bytes]] = deque(maxlen=self.capacity)
        self._number = 0
        self._subscribers: list[asyncio.Queue[LogRecord]] = []
        self.counters = TrafficCounters()
        self._count = self.counters.count
        self.workspace_of: dict[str, str] = {}
        self.redaction: Redaction = DEFAULT_REDACTION

    def use_config(self, config: Any) -> None:
        """Take the redaction settings of a loaded config's ``recording`` block
        (``filterHeaders``, ``filterQueryParams``, ``filterBodyKeys``, ``redactValue``).

        A config without the block keeps the settings in force (the defaults until a config
        file gives them), like ``serverConfig``: the admin side rebuilds the engine's config
        from its stored mocks, which carry no file-level blocks. The settings apply to every
        entry read from then on, entries logged before included.
        """
        recording = getattr(config, "recording", None)
        if recording is not None:
            self.redaction = redaction_of(recording)

    # ------------------------------------------------------------------ hot path
    def observe(self, event: ServeEvent) -> None:
        """Serve-event observer: retain the event and count it (O(1); engine loop only)."""
        number = self._number = self._number + 1
        request = event.request
        body = request.body
        views = request.__dict__
        if views:
            # The decoded views (parsed JSON body, query dicts, header dict) are rebuilt if a
            # reader needs them. Freeing them now, while they are still in the CPU cache, is
            # cheaper than freeing them cold when the entry falls out of the log, and the log
            # then holds only raw bytes.
            for view in _DERIVED_VIEWS:
                views.pop(view, None)
        if len(body) > LOGGED_BODY_LIMIT:
            # The log keeps up to 1000 requests: holding every full body (10 MiB each at most)
            # could pin gigabytes. Keep the start and the size only.
            event.body_size = len(body)
            body = request.body = body[:LOGGED_BODY_LIMIT]
        answer = event.response_body
        if answer is not None and len(answer) > LOGGED_BODY_LIMIT:
            # The same bound for answers: a gRPC reply or an MQTT payload can be megabytes.
            event.response_size = len(answer)
            event.response_body = answer[:LOGGED_BODY_LIMIT]
        self._raw.append((number, event, body))
        self._count(event)
        if self._subscribers:
            record = LogRecord(number, event, body, self.redaction)
            for queue in self._subscribers:
                if queue.full():
                    queue.get_nowait()  # drop the oldest for a reader that fell behind
                queue.put_nowait(record)

    # ------------------------------------------------------------------ queries
    def __len__(self) -> int:
        return len(self._raw)

    def records(self) -> Iterator[LogRecord]:
        """Retained records, oldest first."""
        redaction = self.redaction
        return (LogRecord(*raw, redaction) for raw in self._raw)

    def newest_first(self) -> Iterator[LogRecord]:
        """Retained records, newest first."""
        redaction = self.redaction
        return (LogRecord(*raw, redaction) for raw in reversed(self._raw))

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
        if filters.protocol and filters.protocol.lower() != event.protocol:
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
        for record in self.records():
            if record.id == entry_id:
                return record.entry(self.workspace_of)
        return None

    def calls(self, mock_id: str) -> list[LogRecord]:
        """Retained records the mock ``mock_id`` answered, oldest first."""
        return [LogRecord(*raw, self.redaction) for raw in self._raw
                if raw[1].mock_id == mock_id]

    # ------------------------------------------------------------------ changes
    def clear(self, mock_id: str | None = None) -> int:
        """Drop every retained record (or only those ``mock_id`` answered); returns how many."""
        if mock_id is None:
            cleared = len(self._raw)
            self._raw.clear()
            return cleared
        kept = [raw for raw in self._raw if raw[1].mock_id != mock_id]
        cleared = len(self._raw) - len(kept)
        self._raw = deque(kept, maxlen=self.capacity)
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

    def close_subscribers(self) -> int:
        """Tell every subscriber the stream is over (a ``None`` in its queue), e.g. when the
        server stops, so live request streams end at once; returns how many."""
        closed = 0
        for queue in list(self._subscribers):
            if queue.full():
                queue.get_nowait()
            queue.put_nowait(None)  # type: ignore[arg-type]
            closed += 1
        self._subscribers.clear()
        return closed

    @property
    def subscriber_count(self) -> int:
        """Number of live request-stream subscribers."""
        return len(self._subscribers)


def redaction_of(recording: Any) -> Redaction:
    """The :class:`~mocks.core.redaction.Redaction` of a config's ``recording`` block (a
    :class:`mocks.config.RecordingConfig`; its absent keys keep their defaults)."""
    return Redaction.from_settings(
        filter_headers=recording.filter_headers,
        filter_query_params=recording.filter_query_params,
        filter_body_keys=recording.filter_body_keys, redact_value=recording.redact_value)


def records_between(records: Iterable[LogRecord]) -> tuple[str | None, str | None]:
    """``(first timestamp, last timestamp)`` of ``records`` in log order, or Nones."""
    first = last = None
    for record in records:
        if first is None:
            first = record.event.received_at
        last = record.event.received_at
    return (utc_timestamp(first) if first is not None else None,
            utc_timestamp(last) if last is not None else None)
