"""Port sharing of MQTT mocks on the admin side: an MQTT mock posted for a port that an MQTT
mock of the same workspace already uses is merged into that mock (its topics join the
broker of the port).

``POST /mocks`` calls :func:`merge_into_port_owner` after the gRPC one; it answers None when
the body is not an MQTT mock or its port is free, so the mock is created as usual. Otherwise:

* another protocol on the port (a gRPC server) -> 409 ``port_conflict``;
* an MQTT mock of another workspace on the port -> 409 ``port_conflict``;
* a topic the posted mock configures that the port's mock configures too -> 409
  ``service_conflict`` naming it;
* else the port's mock takes the posted topics (and its ``auth``/``tls`` when it has none),
  and the answer is 200 ``{id, action: "merged", message, targetMockId, addedServices,
  totalServices, mock}`` (the topics added; every topic of the port after the merge).

Source: SPEC "Mocks" (port merging and its 409 answers); behavior notes §1 (``merged``
answer; ``service_conflict``).
"""
from __future__ import annotations

import copy
from typing import Any

from django.utils import timezone as django_timezone

from mocks import services
from mocks.models import DEFAULT_WORKSPACE_ID, Mock


def _port_of(config: dict[str, Any]) -> int | None:
    port = (config or {}).get("port")
    return port if isinstance(port, int) else None


def _topics(config: dict[str, Any]) -> list[str]:
    return [topic.get("topic") for topic in (config or {}).get("topics") or ()
            if isinstance(topic, dict)]


def merge_into_port_owner(body: Any, workspace_id: str | None) -> dict[str, Any] | None:
    """Merge a posted MQTT mock into the mock that owns its port (see the module docstring);
    None when the mock is to be created as usual. Raises :class:`~mocks.services.AdminError`
    (400 for an invalid body, 409 ``port_conflict``/``service_conflict``)."""
    if not isinstance(body, dict):
        return None
    declared = body.get("type") or ("mqtt" if isinstance(body.get("mqtt"), dict) else None)
    if declared != "mqtt" or not isinstance(body.get("mqtt"), dict):
        return None
    port = _port_of(body["mqtt"])
    if port is None:
        return None
    owners = [row for row in Mock.objects.filter(type__in=("grpc", "mqtt"))
              if _port_of(row.config) == port and row.id != body.get("id")]
    if not owners:
        return None
    mock = services.parse_mock(body)
    workspace = mock.workspace_id or workspace_id or DEFAULT_WORKSPACE_ID
    other_protocol = next((row for row in owners if row.type != "mqtt"), None)
    if other_protocol is not None:
        raise services.AdminError(409, "port_conflict",
                                  f"port {port} is used by {other_protocol.type} mock "
                                  f"{other_protocol.id!r}; give the MQTT mock another port")
    same = [row for row in owners if row.workspace_id == workspace]
    if not same:
        row = owners[0]
        raise services.AdminError(409, "port_conflict",
                                  f"port {port} is used by MQTT mock {row.id!r} of workspace "
                                  f"{row.workspace_id!r}; mocks of two workspaces cannot share "
                                  f"a broker: use another port")
    target = same[0]
    before = _topics(target.config)
    incoming = body["mqtt"]
    added = [topic.topic for topic in mock.mqtt.topics]
    conflicts = [name for name in added if name in before]
    if conflicts:
        raise services.AdminError(409, "service_conflict",
                                  f"mock {target.id!r} on port {port} already has topic(s) "
                                  + ", ".join(conflicts)
                                  + f"; change that mock (PUT/PATCH /mocks/{target.id}) or use "
                                    "another port")
    merged = copy.deepcopy(target.config)
    merged.setdefault("topics", []).extend(copy.deepcopy(incoming.get("topics") or []))
    for key in ("auth", "tls"):
        if incoming.get(key) and not merged.get(key):
            merged[key] = copy.deepcopy(incoming[key])
    document = services.mock_document(target)
    document["mqtt"] = merged
    checked = services.parse_mock(document, mock_id=target.id)

    def change() -> Mock:
        row = services.get_mock_row(target.id)
        row.config = checked.model_dump(mode="json", by_alias=True,
                                         exclude_unset=True).get("mqtt") or merged
        row.updated_at = django_timezone.now()
        row.save()
        return row

    saved = services.commit_change(change, touched={target.id})
    return {"id": target.id, "action": "merged",
            "message": f"Merged {len(added)} topic(s) into MQTT mock {target.id!r} on port "
                       f"{port}",
            "targetMockId": target.id, "addedServices": added,
            "totalServices": before + added, "mock": services.mock_document(saved)}
