"""Recorded traffic of the protocols that record (MQTT, SOAP): the paging and convert-body
checks of the ``/<kind>-recordings`` admin routes, and their engine-control port dispatch.

The entries themselves live in the one recording store (:mod:`recordings.store`, kinds
``soap`` and ``mqtt``), seen through :class:`RecordingEntries`. :func:`page` reads ``limit`` / ``offset``,
:func:`convert_body` the common keys of a convert body, :func:`route_recordings` answers the
``/<kind>-recordings…`` routes of the engine-control port from a :class:`RecordingRoutes`.
Errors in a query or body raise :class:`RecordingQueryError` (400 ``validation_error``).

Source: behavior notes §1 (``/mqtt-recordings`` and ``/soap-recordings`` routes); SPEC
"WebSocket, gRPC, MQTT and SOAP administration". Django-free.
"""
from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

import orjson

from mocks.core.queryparams import MAX_LIMIT, QueryParameterError, parse_int

#: Recordings kept per protocol (oldest dropped first) and their total bytes.
MAX_RECORDINGS = 10_000
MAX_RECORDING_BYTES = 16 * 1024 * 1024
#: ``limit`` when the query has none (the largest accepted is the admin-wide ``MAX_LIMIT``).
DEFAULT_LIMIT = 100


class RecordingQueryError(ValueError):
    """A filter or convert option that is not valid; ``str()`` is the message of the 400
    ``validation_error`` answer."""


class RecordingEntries(Protocol):
    """The recordings of one protocol (the shared recording store's view of one kind,
    :class:`recordings.store.KindRecordings`): ``entries`` (dicts with an ``id``, oldest
    first), ``bytes``, ``dropped``, ``max_entries``, ``max_bytes``, and ``add(entry)``,
    ``find(id)``, ``remove(id)``, ``clear()``."""

    entries: list[dict[str, Any]]
    bytes: int
    dropped: int
    max_entries: int
    max_bytes: int

    def add(self, entry: dict[str, Any]) -> None: ...
    def find(self, recording_id: str) -> dict[str, Any] | None: ...
    def remove(self, recording_id: str) -> bool: ...
    def clear(self) -> int: ...


def public(entry: dict[str, Any]) -> dict[str, Any]:
    """A recording entry without its private keys."""
    return {key: value for key, value in entry.items() if not key.startswith("_")}


def export(store: RecordingEntries, exported_at: str) -> dict[str, Any]:
    """``POST /<kind>-recordings/export``: ``{version: "1.0", exportedAt, count, dropped,
    recordings}`` (every entry, oldest first, without private keys)."""
    rows = [public(entry) for entry in store.entries]
    return {"version": "1.0", "exportedAt": exported_at, "count": len(rows),
            "dropped": store.dropped, "recordings": rows}


def page(found: list[dict[str, Any]], query: dict[str, str]) -> dict[str, Any]:
    """``{recordings, total, limit, offset}`` of the matching entries ``found`` (oldest
    first), cut by the query's ``limit`` (1-10000, default 100) and ``offset`` (0 to
    :data:`~mocks.core.queryparams.MAX_QUERY_INTEGER`); ``total`` counts every match. Raises
    :class:`RecordingQueryError` ``"<parameter>: <reason>"`` for a bad value."""
    try:
        limit = parse_int(query, "limit", DEFAULT_LIMIT, minimum=1, maximum=MAX_LIMIT)
        offset = parse_int(query, "offset", 0)
    except QueryParameterError as problem:
        raise RecordingQueryError(str(problem)) from None
    return {"recordings": [public(entry) for entry in found[offset:offset + limit]],
            "total": len(found), "limit": limit, "offset": offset}


def convert_body(body: Any, flags: dict[str, str],
                 texts: tuple[str, ...] = ()) -> tuple[dict[str, Any], dict[str, Any]]:
    """The common part of a convert body: ``(options, body)`` where ``options`` holds
    ``recording_ids`` (``recordingIds``: a list of ids, or None) and every flag of ``flags``
    (body key -> option name) the body sets to true or false, and ``body`` is the body as a
    dict (``{}`` when None). Keys named in ``texts`` must be strings when given. Raises
    :class:`RecordingQueryError` naming the bad key."""
    if body is None:
        body = {}
    if not isinstance(body, dict):
        raise RecordingQueryError("the body must be a JSON object")
    ids = body.get("recordingIds")
    if ids is not None and not (isinstance(ids, list)
                                and all(isinstance(item, str) for item in ids)):
        raise RecordingQueryError("recordingIds must be a list of recording ids")
    options: dict[str, Any] = {"recording_ids": ids}
    for key, name in flags.items():
        value = body.get(key)
        if value is not None and not isinstance(value, bool):
            raise RecordingQueryError(f"{key} must be true or false")
        if value is not None:
            options[name] = value
    for key in texts:
        if body.get(key) is not None and not isinstance(body[key], str):
            raise RecordingQueryError(f"{key} must be a str")
    return options, body


def json_body(raw: bytes | None) -> Any:
    """A request body as JSON (None when empty); raises :class:`RecordingQueryError`."""
    if not raw or not raw.strip():
        return None
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        raise RecordingQueryError("the body is not valid JSON") from None


Handler = Callable[..., Awaitable[Any]]


@dataclass(frozen=True)
class RecordingRoutes:
    """The engine-side operations behind one protocol's ``<prefix>…`` routes; each takes the
    ``EngineControl`` first. ``listing(control, query)``, ``clear(control)``,
    ``stats(control)``, ``export(control)``, ``convert(control, body, recording_id|None)``
    (None when the id is unknown), ``get`` / ``delete(control, recording_id)`` (None when
    unknown); ``not_found`` is the 404 payload of an unknown recording."""

    prefix: str
    not_found: dict[str, str]
    listing: Handler
    clear: Handler
    stats: Handler
    export: Handler
    convert: Handler
    get: Handler
    delete: Handler


def hub_routes(prefix: str, not_found: dict[str, str], hub: Callable[[Any], Any],
               select: Callable[..., dict[str, Any]], statistics: Callable[..., dict[str, Any]],
               options: Callable[[Any], dict[str, Any]], convert: Callable[..., dict[str, Any]],
               timestamp: Callable[[float], str]) -> RecordingRoutes:
    """The :class:`RecordingRoutes` of a protocol whose ``hub(control)`` holds ``recording``
    (ids recording now) and ``recordings`` (a :class:`RecordingEntries`):

    * listing: ``select(entries, query)`` (raises :class:`RecordingQueryError`);
    * get: the entry without private keys; delete: ``{message: "Recording deleted", id}``;
      clear: ``{deleted: n}`` (None for an unknown id);
    * stats: ``statistics(entries, stored_bytes=, dropped=, max_entries=, max_bytes=,
      recording=)``;
    * export: :func:`export` stamped ``timestamp(now)`` (RFC 3339 text of epoch seconds);
    * convert: ``convert(entries, **options(body))``, of one entry when an id is given (its
      ``recordingIds`` replaced; None for an unknown id); ``options`` raises
      :class:`RecordingQueryError`, ``convert`` :class:`LookupError` (``no_recordings``).
    """
    async def listing(control: Any, query: dict[str, str]) -> dict[str, Any]:
        return select(hub(control).recordings.entries, query)

    async def get(control: Any, recording_id: str) -> dict[str, Any] | None:
        entry = hub(control).recordings.find(recording_id)
        return public(entry) if entry is not None else None

    async def delete(control: Any, recording_id: str) -> dict[str, Any] | None:
        if not hub(control).recordings.remove(recording_id):
            return None
        return {"message": "Recording deleted", "id": recording_id}

    async def clear(control: Any) -> dict[str, Any]:
        return {"deleted": hub(control).recordings.clear()}

    async def stats(control: Any) -> dict[str, Any]:
        found = hub(control)
        store = found.recordings
        return statistics(store.entries, stored_bytes=store.bytes, dropped=store.dropped,
                          max_entries=store.max_entries, max_bytes=store.max_bytes,
                          recording=found.recording)

    async def export_all(control: Any) -> dict[str, Any]:
        return export(hub(control).recordings, timestamp(time.time()))

    async def convert_some(control: Any, body: Any,
                           recording_id: str | None = None) -> dict[str, Any] | None:
        chosen = options(body)
        store = hub(control).recordings
        if recording_id is not None:
            if store.find(recording_id) is None:
                return None
            chosen["recording_ids"] = [recording_id]
        return convert(list(store.entries), **chosen)

    return RecordingRoutes(prefix, not_found, listing, clear, stats, export_all, convert_some,
                           get, delete)


async def route_recordings(routes: RecordingRoutes, control: Any, method: str, path: str,
                           query: dict[str, str], body: Callable[[], Awaitable[bytes]],
                           answer: Callable[[int, Any], Awaitable[None]]) -> bool:
    """Answer ``<prefix>``, ``<prefix>/stats|export|convert``, ``<prefix>/{id}`` and
    ``<prefix>/{id}/convert`` on the engine-control port (400 ``validation_error`` /
    ``no_recordings``, 404, 405 as on the admin API); False when ``path`` is not under
    ``routes.prefix``."""
    prefix = routes.prefix
    if path != prefix and not path.startswith(prefix + "/"):
        return False
    rest = path[len(prefix) + 1:].split("/") if path != prefix else []
    one = rest[0] if rest and rest[0] and len(rest) <= 2 and rest[1:] in ([], ["convert"]) \
        else None
    try:
        if path == prefix and method == "GET":
            await answer(200, await routes.listing(control, query))
        elif path == prefix and method == "DELETE":
            await answer(200, await routes.clear(control))
        elif rest == ["stats"] and method == "GET":
            await answer(200, await routes.stats(control))
        elif rest == ["export"] and method == "POST":
            await answer(200, await routes.export(control))
        elif rest == ["convert"] and method == "POST":
            await answer(200, await routes.convert(control, json_body(await body()), None))
        elif one is not None and len(rest) == 2 and method == "POST":
            found = await routes.convert(control, json_body(await body()), one)
            await (answer(200, found) if found is not None else answer(404, routes.not_found))
        elif one is not None and len(rest) == 1 and method in ("GET", "DELETE"):
            found = await (routes.get if method == "GET" else routes.delete)(control, one)
            await (answer(200, found) if found is not None else answer(404, routes.not_found))
        elif path == prefix or one is not None:
            await answer(405, {"error": "method_not_allowed",
                               "message": f"{method} not allowed"})
        else:
            await answer(404, {"error": "not_found", "message": "Resource not found"})
    except RecordingQueryError as problem:
        await answer(400, {"error": "validation_error", "message": str(problem)})
    except LookupError as problem:
        await answer(400, {"error": "no_recordings", "message": str(problem)})
    return True
