"""SOAP recordings: the engine-wide recording state, the capture of one served request, and
pure functions for filtering, statistics and conversion into a ``soap`` mock config.

While a ``soap`` mock's id is in the hub's ``recording`` set, every envelope it answers (a
``POST`` to its path, faults included; ``?wsdl`` reads are not recorded) becomes one entry of
the one recording store (:class:`recordings.store.KindRecordings`, kind ``soap``: at most
``MAX_RECORDINGS`` entries and ``MAX_RECORDING_BYTES`` bytes of stored JSON, the oldest
dropped first; on disk in ``mockd start``'s data dir):

``{id ("soaprec_…"), endpoint (the mock id), path (its soap.path), operation ("" when the
request named none that exists), soapAction, soapVersion ("1.1" | "1.2"), requestBody
(text), responseBody (text), statusCode, fault (bool), durationMs, timestamp (epoch s)}``.

Conversion (``POST /soap-recordings/convert``, ``POST /soap-recordings/{id}/convert``) turns
recorded answers into a mock serving the same ones: one operation per recorded operation name
(first-seen order; ``deduplicate`` keeps the first recording of each, otherwise the last one
wins), its ``soapAction`` the recorded one, its ``response`` the XML inside the recorded
response envelope's ``Body``; with ``preserveFaults`` a recorded fault becomes the
operation's ``fault: {code, string, detail?}`` (otherwise faults are skipped); with
``includeDelay`` the recorded ``durationMs`` becomes ``delay``. Recordings without an
operation name or whose response is not a readable envelope are skipped and counted. The
recorded XML is used as it is, so text holding ``{{`` is a template of the converted mock.

Source: behavior notes §1 (``/soap-recordings`` routes); SPEC "WebSocket, gRPC, MQTT and SOAP
administration" (SOAP: start and stop recording; list with ``endpoint``, ``operation``,
``soapAction``, ``hasFault``, ``limit``, ``offset``; convert body ``{recordingIds, endpoint,
operation, deduplicate, includeDelay, preserveFaults}``). Django-free.
"""
from __future__ import annotations

import copy
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Iterable

from mocks.core.recordings import (MAX_RECORDING_BYTES, MAX_RECORDINGS, RecordingQueryError,
                                   page)
from mocks.core.xmldoc import XmlRefused, local_name, parse_xml


@dataclass
class SoapHub:
    """Engine-wide SOAP state (``shared["soap"]``): ``recording`` (mock ids recording now)
    and ``recordings`` (the ``soap`` recordings of the shared store)."""

    recording: set[str] = field(default_factory=set)
    recordings: Any = field(default_factory=lambda: _soap_recordings())


def _soap_recordings() -> Any:
    from recordings.store import KindRecordings

    return KindRecordings("soap", max_entries=MAX_RECORDINGS, max_bytes=MAX_RECORDING_BYTES)


def hub_of(shared: dict[str, Any] | None) -> SoapHub:
    """The engine's :class:`SoapHub` (made on first use); a private one without ``shared``."""
    return SoapHub() if shared is None else shared.setdefault("soap", SoapHub())


def recording_send(hub: SoapHub, mock_id: str, path: str, request: Any, send: Any,
                   details: dict[str, Any]) -> Any:
    """A ``send`` that passes every ASGI message on to ``send`` and, once the response body
    has gone, records the exchange in ``hub.recordings`` (see the module docstring) as
    served by mock ``mock_id`` at its ``soap.path`` ``path``. ``details`` is the endpoint's
    per-request dict (``soapAction``, ``soapVersion``, ``soapOperation``), read when the
    body is sent; ``durationMs`` runs from this call to the body's send."""
    started = time.perf_counter()
    status = [0]

    async def wrapper(message: dict[str, Any]) -> None:
        await send(message)
        if message["type"] == "http.response.start":
            status[0] = message["status"]
        elif message["type"] == "http.response.body" and not message.get("more_body"):
            body = message.get("body", b"")
            request_body = request.body or b""
            hub.recordings.add({
                "id": f"soaprec_{uuid.uuid4().hex[:16]}", "endpoint": mock_id,
                "path": path, "operation": details.get("soapOperation", ""),
                "soapAction": details.get("soapAction", ""),
                "soapVersion": details.get("soapVersion", "1.1"),
                "requestBody": request_body.decode("utf-8", "replace"),
                "responseBody": body.decode("utf-8", "replace"),
                "statusCode": status[0], "fault": status[0] >= 500,
                "durationMs": round((time.perf_counter() - started) * 1000, 3),
                "timestamp": time.time()})

    return wrapper


def _has_fault(query: dict[str, str]) -> bool | None:
    value = query.get("hasFault")
    if not value:
        return None
    if value.lower() not in ("true", "false"):
        raise RecordingQueryError("hasFault must be true or false")
    return value.lower() == "true"


def select(entries: Iterable[dict[str, Any]], query: dict[str, str]) -> dict[str, Any]:
    """``GET /soap-recordings``: the entries matching ``query`` (``endpoint``, ``operation``,
    ``soapAction``: equal; ``hasFault``: true | false; ``limit`` 1-10000, default 100;
    ``offset``), oldest first, as ``{recordings, total, limit, offset}``. Raises
    :class:`RecordingQueryError` for a bad ``hasFault``, limit or offset."""
    fault = _has_fault(query)
    wanted = [(key, query[key]) for key in ("endpoint", "operation", "soapAction")
              if query.get(key)]
    found = [entry for entry in entries
             if (fault is None or entry["fault"] == fault)
             and all(entry[key] == value for key, value in wanted)]
    return page(found, query)


def statistics(entries: Iterable[dict[str, Any]], *, stored_bytes: int, dropped: int,
               max_entries: int, max_bytes: int, recording: Iterable[str]) -> dict[str, Any]:
    """``GET /soap-recordings/stats``: ``{total, bytes, dropped, maxRecordings, maxBytes,
    faults, byEndpoint: {id: n}, byOperation: {name: n}, averageDurationMs,
    recordingEndpoints: [id], oldest?, newest? (epoch s)}``."""
    rows = list(entries)
    by_endpoint: dict[str, int] = {}
    by_operation: dict[str, int] = {}
    for entry in rows:
        by_endpoint[entry["endpoint"]] = by_endpoint.get(entry["endpoint"], 0) + 1
        by_operation[entry["operation"]] = by_operation.get(entry["operation"], 0) + 1
    stats: dict[str, Any] = {
        "total": len(rows), "bytes": stored_bytes, "dropped": dropped,
        "maxRecordings": max_entries, "maxBytes": max_bytes,
        "faults": sum(1 for entry in rows if entry["fault"]),
        "byEndpoint": by_endpoint, "byOperation": by_operation,
        "averageDurationMs": round(sum(entry["durationMs"] for entry in rows) / len(rows), 3)
        if rows else 0,
        "recordingEndpoints": sorted(recording)}
    if rows:
        stats["oldest"] = rows[0]["timestamp"]
        stats["newest"] = rows[-1]["timestamp"]
    return stats


def _body_children(text: str) -> list[Any] | None:
    """The elements inside the ``Body`` of a recorded envelope; None when it is not one."""
    try:
        root = parse_xml(text)
    except XmlRefused:
        return None
    if local_name(root.tag) != "Envelope":
        return None
    for child in root:
        if local_name(child.tag) == "Body":
            return [element for element in child if isinstance(element.tag, str)]
    return None


def _xml(element: Any) -> str:
    """``element`` as XML text, without namespace declarations it does not use."""
    from lxml import etree

    clean = copy.deepcopy(element)
    clean.tail = None
    etree.cleanup_namespaces(clean)
    return etree.tostring(clean, encoding="unicode")


def _child(element: Any, *names: str) -> Any:
    """The first descendant path ``names`` (local names) below ``element``, or None."""
    for name in names:
        element = next((child for child in element if local_name(child.tag) == name), None)
        if element is None:
            return None
    return element


def _fault(element: Any) -> dict[str, Any]:
    """``{code, string, detail?}`` of a SOAP 1.1 or 1.2 ``Fault`` element (a 1.2 subcode
    is the code when there is one)."""
    code = _child(element, "faultcode")
    if code is not None:  # SOAP 1.1
        string, detail = _child(element, "faultstring"), _child(element, "detail")
    else:
        code = _child(element, "Code", "Subcode", "Value")
        if code is None:
            code = _child(element, "Code", "Value")
        string, detail = _child(element, "Reason", "Text"), _child(element, "Detail")
    fault: dict[str, Any] = {
        "code": (code.text or "").strip() if code is not None else "soap:Server",
        "string": (string.text or "") if string is not None else ""}
    if detail is not None:
        inner = "".join(_xml(child) for child in detail if isinstance(child.tag, str))
        inner = inner or (detail.text or "").strip()
        if inner:
            fault["detail"] = inner
    return fault


def _operation(entry: dict[str, Any], include_delay: bool,
               preserve_faults: bool) -> dict[str, Any] | None:
    """The ``operations`` entry answering like ``entry``; None when it cannot."""
    children = _body_children(entry["responseBody"])
    if children is None:
        return None
    if entry["fault"]:
        fault = next((child for child in children if local_name(child.tag) == "Fault"), None)
        if not preserve_faults or fault is None:
            return None
        operation: dict[str, Any] = {"fault": _fault(fault)}
    else:
        operation = {"response": "".join(_xml(child) for child in children)}
    if entry["soapAction"]:
        operation = {"soapAction": entry["soapAction"], **operation}
    if include_delay:
        operation["delay"] = max(0, round(entry["durationMs"]))
    return operation


def convert(entries: list[dict[str, Any]], *, recording_ids: list[str] | None = None,
            endpoint: str | None = None, operation: str | None = None,
            deduplicate: bool = False, include_delay: bool = False,
            preserve_faults: bool = False, path: str | None = None,
            name: str | None = None) -> dict[str, Any]:
    """A ``soap`` mock config from recorded answers (see the module docstring).

    ``recording_ids`` (None = every entry), ``endpoint`` and ``operation`` select the
    entries; ``path`` defaults to the first selected recording's path.

    Answers ``{mock: {type: "soap", name, soap: {path, operations}}, recordingCount,
    operationCount, skipped}``. Raises :class:`LookupError` (400 ``no_recordings``) when no
    convertible recording is selected.
    """
    wanted = set(recording_ids) if recording_ids else None
    chosen = [entry for entry in entries
              if (wanted is None or entry["id"] in wanted)
              and (not endpoint or entry["endpoint"] == endpoint)
              and (not operation or entry["operation"] == operation)]
    operations: dict[str, dict[str, Any]] = {}
    used: list[dict[str, Any]] = []
    for entry in chosen:
        if not entry["operation"] or (deduplicate and entry["operation"] in operations):
            continue
        answer = _operation(entry, include_delay, preserve_faults)
        if answer is not None:
            operations[entry["operation"]] = answer
            used.append(entry)
    if not used:
        raise LookupError("no recorded SOAP answers match")
    count = f"{len(operations)} operation{'' if len(operations) == 1 else 's'}"
    mock = {"type": "soap", "name": name or f"Recorded SOAP ({count})",
            "soap": {"path": path or used[0]["path"], "operations": operations}}
    return {"mock": mock, "recordingCount": len(used), "operationCount": len(operations),
            "skipped": len(chosen) - len(used)}
