"""Port sharing of MQTT mocks on the admin side: an MQTT mock posted for a port that an MQTT
mock of the same workspace already uses is merged into that mock (its topics join the
broker of the port).

``POST /mocks`` calls :func:`merge_into_port_owner` after the gRPC one; it answers None when
the body is not an MQTT mock or its port is free, so the mock is created as usual. Otherwise:

* another protocol on the port (a gRPC server) -> 409 ``port_conflict``;
* an MQTT mock of another workspace on the port -> 409 ``port_conflict``;
* a topic the posted mock configures that the port's mock configures too -> 409
  ``service_conflict`` naming it;
* else the port's mock takes the posted topics (and its ``auth``/``tls``/``websocket`` when it
  has none),
  and the answer is 200 ``{id, action: "merged", message, targetMockId, addedServices,
  totalServices, mock}`` (the topics added; every topic of the port after the merge).

Source: SPEC "Mocks" (port merging and its 409 answers); behavior notes §1 (``merged``
answer; ``service_conflict``).
"""
from __future__ import annotations

import copy
from typing import Any

from mocks.control import errors
from mocks.control.port_sharing import port_owner, save_merged


def _topics(config: dict[str, Any]) -> list[str]:
    return [topic.get("topic") for topic in (config or {}).get("topics") or ()
            if isinstance(topic, dict)]


def merge_into_port_owner(body: Any, workspace_id: str | None) -> dict[str, Any] | None:
    """Merge a posted MQTT mock into the mock that owns its port (see the module docstring);
    None when the mock is to be created as usual. Raises :class:`~mocks.control.errors.AdminError`
    (400 for an invalid body, 409 ``port_conflict``/``service_conflict``)."""
    found = port_owner(body, "mqtt", workspace_id)
    if found is None:
        return None
    mock, target, port = found
    before = _topics(target.config)
    incoming = body["mqtt"]
    added = [topic.topic for topic in mock.mqtt.topics]
    conflicts = [name for name in added if name in before]
    if conflicts:
        raise errors.AdminError(409, "service_conflict",
                                f"mock {target.id!r} on port {port} already has topic(s) "
                                + ", ".join(conflicts)
                                + f"; change that mock (PUT/PATCH /mocks/{target.id}) or use "
                                  "another port")
    merged = copy.deepcopy(target.config)
    merged.setdefault("topics", []).extend(copy.deepcopy(incoming.get("topics") or []))
    for key in ("auth", "tls", "websocket"):
        if incoming.get(key) and not merged.get(key):
            merged[key] = copy.deepcopy(incoming[key])
    return save_merged(target, merged, port, added, before + added, "topic(s)")
