"""MQTT recordings: filtering, statistics, export and conversion into an ``mqtt`` mock config.

Pure functions over the entries of :class:`~recordings.store.KindRecordings`
(``{id, brokerId, port, topic, payload, payloadBase64?, qos, retain, clientId, direction:
publish | subscribe, timestamp (epoch s)}``); the admin routes are in
:mod:`mocks.protocols.mqtt.control`.

Conversion (``POST /mqtt-recordings/convert``, ``POST /mqtt-recordings/{id}/convert``) turns
recorded client *publishes* into a mock whose broker publishes the same payloads on the same
topics, in the recorded order: one ``topics`` entry per topic (first-seen order), each message
with ``delay`` = ms since the first converted publish (so the replay keeps the recorded
spacing). Subscribe entries and payloads that are not UTF-8 text (``payloadBase64``) are
skipped and counted. Payloads are used as they were recorded, so a payload holding ``{{`` is
a template of the converted mock.

Source: behavior notes §1 (``/mqtt-recordings`` routes); SPEC "WebSocket, gRPC, MQTT and SOAP
administration" (filters ``topicPattern`` with ``+``/``#``, ``clientId``, ``direction``,
``limit``, ``offset``; convert body ``{recordingIds, topicPattern, deduplicate, includeQoS,
includeRetain}``). Django-free.
"""
from __future__ import annotations

from typing import Any, Iterable

from mocks.core.recordings import RecordingQueryError, page
from mocks.protocols.mqtt.config import topic_filter_problem
from mocks.protocols.mqtt.topics import match

DIRECTIONS = ("publish", "subscribe")


def _matches(entry: dict[str, Any], topic_pattern: str | None, client_id: str | None,
             direction: str | None, broker_id: str | None) -> bool:
    if topic_pattern and match(topic_pattern, entry["topic"]) is None:
        return False
    if client_id and entry["clientId"] != client_id:
        return False
    if direction and entry["direction"] != direction:
        return False
    return not broker_id or entry["brokerId"] == broker_id


def check_pattern(topic_pattern: str | None) -> None:
    """Raises :class:`RecordingQueryError` when ``topic_pattern`` is not a valid filter."""
    if topic_pattern:
        problem = topic_filter_problem(topic_pattern)
        if problem is not None:
            raise RecordingQueryError(f"topicPattern: {problem}")


def select(entries: Iterable[dict[str, Any]], query: dict[str, str]) -> dict[str, Any]:
    """``GET /mqtt-recordings``: the entries matching ``query`` (``topicPattern``,
    ``clientId``, ``direction``, ``brokerId``; ``limit`` 1-10000, default 100; ``offset``),
    oldest first, as ``{recordings, total, limit, offset}`` (``total`` counts every match).
    Raises :class:`RecordingQueryError` for a bad pattern, direction, limit or offset."""
    pattern = query.get("topicPattern") or None
    check_pattern(pattern)
    direction = query.get("direction") or None
    if direction is not None and direction not in DIRECTIONS:
        raise RecordingQueryError("direction must be publish or subscribe")
    found = [entry for entry in entries
             if _matches(entry, pattern, query.get("clientId") or None, direction,
                         query.get("brokerId") or None)]
    return page(found, query)


def statistics(entries: Iterable[dict[str, Any]], *, stored_bytes: int, dropped: int,
               max_entries: int, max_bytes: int, recording: Iterable[str]) -> dict[str, Any]:
    """``GET /mqtt-recordings/stats``: ``{total, bytes, dropped, maxRecordings, maxBytes,
    byDirection: {publish, subscribe}, byBroker: {id: n}, byTopic: {topic: n}, uniqueClients,
    recordingBrokers: [id], oldest?, newest? (epoch s)}``."""
    rows = list(entries)
    by_direction = {"publish": 0, "subscribe": 0}
    by_broker: dict[str, int] = {}
    by_topic: dict[str, int] = {}
    for entry in rows:
        by_direction[entry["direction"]] = by_direction.get(entry["direction"], 0) + 1
        by_broker[entry["brokerId"]] = by_broker.get(entry["brokerId"], 0) + 1
        by_topic[entry["topic"]] = by_topic.get(entry["topic"], 0) + 1
    stats: dict[str, Any] = {
        "total": len(rows), "bytes": stored_bytes, "dropped": dropped,
        "maxRecordings": max_entries, "maxBytes": max_bytes, "byDirection": by_direction,
        "byBroker": by_broker, "byTopic": by_topic,
        "uniqueClients": len({entry["clientId"] for entry in rows}),
        "recordingBrokers": sorted(recording)}
    if rows:
        stats["oldest"] = rows[0]["timestamp"]
        stats["newest"] = rows[-1]["timestamp"]
    return stats


def convert(entries: list[dict[str, Any]], *, recording_ids: list[str] | None = None,
            topic_pattern: str | None = None, deduplicate: bool = False,
            include_qos: bool = True, include_retain: bool = True,
            port: int | None = None, name: str | None = None) -> dict[str, Any]:
    """An ``mqtt`` mock config from recorded publishes (see the module docstring).

    ``recording_ids`` (None = every entry) and ``topic_pattern`` select the entries;
    ``deduplicate`` keeps the first of equal payloads of a topic; ``include_qos`` /
    ``include_retain`` copy the recorded QoS (the highest of the topic) and retain flag (any
    retained publish of the topic). ``port`` defaults to the recorded broker's port.

    Answers ``{mock: {type: "mqtt", name, mqtt: {port, topics}}, recordingCount,
    topicCount, skipped}``. Raises :class:`RecordingQueryError` (400) for a bad pattern and
    :class:`LookupError` (400 ``no_recordings``) when no recorded publish is selected.
    """
    check_pattern(topic_pattern)
    wanted = set(recording_ids) if recording_ids else None
    chosen = [entry for entry in entries
              if (wanted is None or entry["id"] in wanted)
              and (not topic_pattern or match(topic_pattern, entry["topic"]) is not None)]
    usable = [entry for entry in chosen
              if entry["direction"] == "publish" and "payloadBase64" not in entry]
    if not usable:
        raise LookupError("no recorded publishes match")
    start = usable[0]["timestamp"]
    topics: dict[str, dict[str, Any]] = {}
    seen: set[tuple[str, str]] = set()
    used = 0
    for entry in usable:
        key = (entry["topic"], entry["payload"])
        if deduplicate and key in seen:
            continue
        seen.add(key)
        used += 1
        row = topics.setdefault(entry["topic"], {"topic": entry["topic"], "messages": []})
        if include_qos:
            row["qos"] = max(row.get("qos", 0), int(entry["qos"]))
        if include_retain and entry["retain"]:
            row["retain"] = True
        row["messages"].append({"payload": entry["payload"],
                                "delay": max(0, round((entry["timestamp"] - start) * 1000))})
    mock = {"type": "mqtt", "name": name or f"Recorded MQTT ({used} messages)",
            "mqtt": {"port": port or usable[0]["port"], "topics": list(topics.values())}}
    return {"mock": mock, "recordingCount": used, "topicCount": len(topics),
            "skipped": len(chosen) - len(usable)}
