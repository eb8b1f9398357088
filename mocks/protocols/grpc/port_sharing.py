"""Port sharing of gRPC mocks on the admin side: a gRPC mock posted for a port that a gRPC
mock of the same workspace already uses is merged into that mock.

``POST /mocks`` calls :func:`merge_into_port_owner` first; it answers None when the body is
not a gRPC mock or its port is free, so the mock is created as usual. Otherwise:

* another protocol on the port (an MQTT broker) -> 409 ``port_conflict``;
* a gRPC mock of another workspace on the port -> 409 ``port_conflict``;
* a method the posted mock configures that the port's mock configures too (same service and
  method), a service both serve from different ``.proto`` definitions, two different inline
  files of one name (``protoSources``), or files that cannot be loaded together (two
  declare one symbol) -> 409 ``service_conflict`` naming them;
* else the port's mock takes the posted mock's ``.proto`` files (``protoFiles``), inline
  files (``protoSources``; an inline ``protoContent`` other than its own becomes one of
  them, so mocks made by ``mockd import`` and ``mockd grpc add`` from different files
  merge), import folders, reflection flag and method entries, and the answer is 200 ``{id,
  action: "merged", message, targetMockId, addedServices, totalServices, mock}`` (services
  added or given new methods; every service the port serves after the merge). A method of a
  service the port's mock serves without configuring it (fake answers, as ``mockd import``
  leaves them) may be configured this way.

Source: SPEC "Mocks" (port merging and its 409 answers); behavior notes §1 (``merged``
answer; ``service_conflict``).
"""
from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from mocks.control import documents, errors
from mocks.core.errors import ConfigError
from mocks.control.port_sharing import port_owner, save_merged


def _served(mock_config: Any, mock_id: str, conflict: bool = False) -> dict[str, set[str]]:
    """Service full name -> method names served by a validated ``grpc`` block. A block that
    does not compile is 400 ``validation_error``, or 409 ``service_conflict`` with
    ``conflict`` (a merged block)."""
    from mocks.protocols.grpc.protos import load_protos  # protobuf, on a gRPC mock's merge

    try:
        protos = load_protos(mock_config, "grpc", Path("."), (), mock_id)
    except ConfigError as error:
        if conflict:
            raise errors.AdminError(409, "service_conflict",
                                    f"the merged mock's .proto files cannot be loaded "
                                    f"together: {error}") from None
        raise errors.validation_error(str(error)) from None
    served: dict[str, set[str]] = {}
    for info in protos.methods.values():
        served.setdefault(info.service, set()).add(info.name)
    return served


def _proto_files(config: dict[str, Any]) -> list[str]:
    files = [config["protoFile"]] if config.get("protoFile") else []
    return files + list(config.get("protoFiles") or [])


def merged_config(target: dict[str, Any], incoming: dict[str, Any],
                  incoming_id: str = "inline") -> dict[str, Any]:
    """The ``grpc`` block of the port's mock after taking ``incoming``'s protos and methods
    (no service conflict checks). An incoming ``protoContent`` the target does not hold
    becomes the inline file ``<incoming_id>.proto`` when the target has a ``protoContent`` of
    its own. Raises 409 ``service_conflict`` for two different inline files of one name."""
    out = copy.deepcopy(target)
    sources = dict(target.get("protoSources") or {})
    added = dict(incoming.get("protoSources") or {})
    incoming_files = _proto_files(incoming)
    content = incoming.get("protoContent")
    if content and not target.get("protoContent"):
        out["protoContent"] = content
    elif content and content != target["protoContent"]:
        from mocks.protocols.grpc.protos import content_file_name

        name = content_file_name(incoming_id)
        while name in sources or name in added:
            name = f"{name[:-len('.proto')]}-merged.proto"
        added[name] = content
        incoming_files.append(name)
    for name, text in added.items():
        if sources.get(name, text) != text:
            raise errors.AdminError(409, "service_conflict",
                                    f"both mocks carry an inline file {name} "
                                    f"(protoSources) with different text; rename one")
        sources[name] = text
    if sources:
        out["protoSources"] = sources
    files = _proto_files(target)
    for name in incoming_files:
        if name not in files:
            files.append(name)
    out.pop("protoFile", None)
    out.pop("protoFiles", None)
    if files:
        out["protoFile"] = files[0]
        if files[1:]:
            out["protoFiles"] = files[1:]
    imports = list(target.get("importPaths") or [])
    imports += [folder for folder in incoming.get("importPaths") or [] if folder not in imports]
    if imports:
        out["importPaths"] = imports
    out["reflection"] = bool(target.get("reflection") or incoming.get("reflection"))
    merged_services = out.setdefault("services", {})
    for service_name, service in (incoming.get("services") or {}).items():
        entry = merged_services.setdefault(service_name, {})
        methods = entry.setdefault("methods", {})
        methods.update(copy.deepcopy((service or {}).get("methods") or {}))
    return out


def merge_into_port_owner(body: Any, workspace_id: str | None) -> dict[str, Any] | None:
    """Merge a posted gRPC mock into the mock that owns its port (see the module docstring);
    None when the mock is to be created as usual. Raises :class:`~mocks.control.errors.AdminError`
    (400 for an invalid body, 409 ``port_conflict``/``service_conflict``)."""
    found = port_owner(body, "grpc", workspace_id)
    if found is None:
        return None
    mock, target, port = found
    incoming_config = body["grpc"]
    target_mock = documents.parse_mock(documents.mock_document(target))
    served_before = _served(target_mock.grpc, target.id)
    served_new = _served(mock.grpc, mock.id)
    conflicts = []
    for service_name, service in mock.grpc.services.items():
        existing = (target.config.get("services") or {}).get(service_name) or {}
        for method_name in service.methods:
            if method_name in (existing.get("methods") or {}):
                conflicts.append(f"{service_name}/{method_name}")
    for service_name, methods in served_new.items():
        before = served_before.get(service_name)
        if before is not None and before != methods:
            conflicts.append(f"{service_name} (defined differently by the two .proto files)")
    if conflicts:
        raise errors.AdminError(409, "service_conflict",
                                f"mock {target.id!r} on port {port} already serves "
                                + ", ".join(conflicts)
                                + "; change that mock (PUT/PATCH /mocks/"
                                f"{target.id}) or use another port")
    configured_before = {name: set((service.get("methods") or {}))
                         for name, service in (target.config.get("services") or {}).items()}
    merged = merged_config(target.config, incoming_config, mock.id)
    merged_mock = documents.parse_mock({**documents.mock_document(target), "grpc": merged})
    _served(merged_mock.grpc, target.id, conflict=True)
    added = sorted(name for name in served_new if name not in served_before
                   or set((mock.grpc.services.get(name).methods if name in mock.grpc.services
                           else {})) - configured_before.get(name, set()))
    total = sorted(set(served_before) | set(served_new))
    return save_merged(target, merged, port, added, total, "service(s)")
