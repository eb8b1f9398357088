"""What gRPC and MQTT port merging share on the admin side: finding the mock that owns the
posted mock's port (with the 409 ``port_conflict`` answers) and saving the merged config.

A protocol's merge module (:mod:`mocks.protocols.grpc.port_sharing`,
:mod:`mocks.protocols.mqtt.port_sharing`) calls :func:`port_owner` for a posted body, checks
its own conflicts, builds the merged block and calls :func:`save_merged`, which answers the
200 ``merged`` document.

Source: SPEC "Mocks" (port merging and its 409 answers); behavior notes §1 (``merged``
answer).
"""
from __future__ import annotations

from typing import Any

from django.utils import timezone as django_timezone

from mocks.control import commit, documents, errors, mock_changes
from mocks.models import DEFAULT_WORKSPACE_ID, Mock

#: Mock types that own a port of their own.
PORT_TYPES = ("grpc", "mqtt")
#: How the answers name each type and what sharing a port means for it.
LABELS = {"grpc": ("gRPC", "a gRPC port"), "mqtt": ("MQTT", "a broker")}


def port_of(config: dict[str, Any]) -> int | None:
    """The ``port`` of a protocol block, or None."""
    port = (config or {}).get("port")
    return port if isinstance(port, int) else None


def port_owner(body: Any, mock_type: str,
               workspace_id: str | None) -> tuple[Any, Mock, int] | None:
    """``(parsed posted mock, row of the port's mock, port)`` when ``body`` is a ``mock_type``
    mock for a port that a mock of the same workspace already uses; None when it is to be
    created as usual (another type, no port, or a free port).

    Raises :class:`~mocks.control.errors.AdminError`: 400 for an invalid body, 409
    ``port_conflict`` when another protocol or another workspace uses the port.
    """
    if not isinstance(body, dict) or not isinstance(body.get(mock_type), dict):
        return None
    declared = body.get("type") or mock_type
    if declared != mock_type:
        return None
    port = port_of(body[mock_type])
    if port is None:
        return None
    owners = [row for row in Mock.objects.filter(type__in=PORT_TYPES)
              if port_of(row.config) == port and row.id != body.get("id")]
    if not owners:
        return None
    mock = documents.parse_mock(body)
    workspace = mock.workspace_id or workspace_id or DEFAULT_WORKSPACE_ID
    label, shared = LABELS[mock_type]
    other_protocol = next((row for row in owners if row.type != mock_type), None)
    if other_protocol is not None:
        raise errors.AdminError(409, "port_conflict",
                                f"port {port} is used by {other_protocol.type} mock "
                                f"{other_protocol.id!r}; give the {label} mock another port")
    same = [row for row in owners if row.workspace_id == workspace]
    if not same:
        row = owners[0]
        raise errors.AdminError(409, "port_conflict",
                                f"port {port} is used by {label} mock {row.id!r} of workspace "
                                f"{row.workspace_id!r}; mocks of two workspaces cannot share "
                                f"{shared}: use another port")
    return mock, same[0], port


def save_merged(target: Mock, merged: dict[str, Any], port: int, added: list[str],
                total: list[str], what: str) -> dict[str, Any]:
    """Validate and store ``merged`` as ``target``'s protocol block; the 200 answer ``{id,
    action: "merged", message, targetMockId, addedServices, totalServices, mock}``
    (``what`` names the added items: ``service(s)``, ``topic(s)``). Raises
    :class:`~mocks.control.errors.AdminError` (400) when the merged block does not validate."""
    document = documents.mock_document(target)
    document[target.type] = merged
    checked = documents.parse_mock(document, mock_id=target.id)

    def change() -> Mock:
        row = mock_changes.get_mock_row(target.id)
        row.config = checked.model_dump(mode="json", by_alias=True,
                                         exclude_unset=True).get(target.type) or merged
        row.updated_at = django_timezone.now()
        row.save()
        return row

    saved = commit.commit_change(change, touched={target.id})
    label = LABELS[target.type][0]
    return {"id": target.id, "action": "merged",
            "message": f"Merged {len(added)} {what} into {label} mock {target.id!r} on port "
                       f"{port}",
            "targetMockId": target.id, "addedServices": added, "totalServices": total,
            "mock": documents.mock_document(saved)}
