"""gRPC recordings (calls through the recording proxy) -> ``grpc`` mocks.

:func:`convert_grpc_recordings` takes recording documents (see :mod:`proxy.grpc`), asks each
recorded upstream for its descriptors through gRPC server reflection
(``grpc.reflection.v1alpha``, as grpcurl does), decodes the recorded messages to JSON with
them and returns ``{"mocks": [...]}``: one ``grpc`` mock per upstream, a fragment that
``mockd start -c`` loads as it is.

Rules:

* **Proto.** The files declaring the recorded services, and the files they import (except
  the well-known ``google/protobuf/*`` ones, which mockd ships), are printed back to
  ``.proto`` text (:func:`descriptor_to_proto`) into ``protoSources``; ``protoFile`` (one
  file) or ``protoFiles`` names the files of the services. ``reflection: true``.
* **Port.** The mock listens on ``port`` when given, else on the upstream's port.
* **Methods.** Calls of one method are grouped by their first request message (as JSON).
  The newest call of each group answers it: its response messages (one: ``response``;
  a server stream, or none: ``responses``), or ``error: {code, message}`` for a status
  other than OK. With one group the method has that answer; with several, the method's own
  entry and its ``variants`` ``match`` on the request's top-level scalar fields, and a
  last variant without ``match`` answers any other request with the newest call.
* **Skipped** (named in ``warnings``): a recording that is not a gRPC call, a compressed
  message, a truncated call, a method the reflected descriptors do not know, a message
  that does not decode; an upstream whose reflection cannot be reached skips its calls.

Errors: :class:`ValueError` for input that is not a list of recordings.

Source: SPEC "Proxy" (recordings become mocks); behavior notes §10 (``grpc`` mock shape);
``mocks/protocols/grpc/config.py``.
"""
from __future__ import annotations

import base64
import re
from dataclasses import dataclass, field
from typing import Any, Callable

#: Calls converted at most.
MAX_RECORDINGS = 5000
#: Seconds for one upstream's reflection.
REFLECTION_TIMEOUT = 10.0
_WELL_KNOWN = "google/protobuf/"

_TYPES = {1: "double", 2: "float", 3: "int64", 4: "uint64", 5: "int32", 6: "fixed64",
          7: "fixed32", 8: "bool", 9: "string", 13: "uint32", 15: "sfixed32", 16: "sfixed64",
          17: "sint32", 18: "sint64", 12: "bytes"}
_STATUS = {0: "OK", 1: "CANCELLED", 2: "UNKNOWN", 3: "INVALID_ARGUMENT",
           4: "DEADLINE_EXCEEDED", 5: "NOT_FOUND", 6: "ALREADY_EXISTS", 7: "PERMISSION_DENIED",
           8: "RESOURCE_EXHAUSTED", 9: "FAILED_PRECONDITION", 10: "ABORTED", 11: "OUT_OF_RANGE",
           12: "UNIMPLEMENTED", 13: "INTERNAL", 14: "UNAVAILABLE", 15: "DATA_LOSS",
           16: "UNAUTHENTICATED"}


# ---------------------------------------------------------------------- descriptors -> .proto
def _type_name(field_proto: Any) -> str:
    if field_proto.type in (11, 14):  # message, enum
        return field_proto.type_name
    if field_proto.type == 10:
        return field_proto.type_name  # group (proto2): printed as its message type
    return _TYPES.get(field_proto.type, "bytes")


def _field_line(field_proto: Any, syntax: str, maps: dict[str, Any], in_oneof: bool) -> str:
    type_name = _type_name(field_proto)
    label = ""
    if field_proto.label == 3:  # repeated
        entry = maps.get(field_proto.type_name)
        if entry is not None:
            key, value = entry.field[0], entry.field[1]
            return f"map<{_type_name(key)}, {_type_name(value)}> {field_proto.name} = " \
                   f"{field_proto.number};"
        label = "repeated "
    elif not in_oneof:
        if syntax == "proto2":
            label = "required " if field_proto.label == 2 else "optional "
        elif field_proto.proto3_optional:
            label = "optional "
    options = []
    if syntax == "proto2" and field_proto.HasField("default_value"):
        value = field_proto.default_value
        if field_proto.type in (9, 12):
            value = '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
        options.append(f"default = {value}")
    if field_proto.options.HasField("packed"):
        options.append(f"packed = {'true' if field_proto.options.packed else 'false'}")
    if field_proto.json_name and field_proto.json_name != _camel(field_proto.name):
        options.append(f'json_name = "{field_proto.json_name}"')
    suffix = f" [{', '.join(options)}]" if options else ""
    return f"{label}{type_name} {field_proto.name} = {field_proto.number}{suffix};"


def _camel(name: str) -> str:
    parts = name.split("_")
    return parts[0] + "".join(part[:1].upper() + part[1:] for part in parts[1:])


def _enum_lines(enum: Any, indent: str) -> list[str]:
    lines = [f"{indent}enum {enum.name} {{"]
    if enum.options.allow_alias:
        lines.append(f"{indent}  option allow_alias = true;")
    lines += [f"{indent}  {value.name} = {value.number};" for value in enum.value]
    lines.append(f"{indent}}}")
    return lines


def _message_lines(message: Any, scope: str, syntax: str, indent: str) -> list[str]:
    full = f"{scope}.{message.name}"
    maps = {f"{full}.{nested.name}": nested for nested in message.nested_type
            if nested.options.map_entry}
    lines = [f"{indent}message {message.name} {{"]
    inner = indent + "  "
    real_oneofs = {index for index, _ in enumerate(message.oneof_decl)}
    synthetic = {item.oneof_index for item in message.field
                 if item.proto3_optional and item.HasField("oneof_index")}
    real_oneofs -= synthetic
    done: set[int] = set()
    for item in message.field:
        if item.HasField("oneof_index") and item.oneof_index in real_oneofs:
            if item.oneof_index in done:
                continue
            done.add(item.oneof_index)
            lines.append(f"{inner}oneof {message.oneof_decl[item.oneof_index].name} {{")
            lines += [f"{inner}  {_field_line(member, syntax, maps, True)}"
                      for member in message.field
                      if member.HasField("oneof_index")
                      and member.oneof_index == item.oneof_index]
            lines.append(f"{inner}}}")
        else:
            lines.append(inner + _field_line(item, syntax, maps, False))
    for nested in message.nested_type:
        if not nested.options.map_entry:
            lines += _message_lines(nested, full, syntax, inner)
    for enum in message.enum_type:
        lines += _enum_lines(enum, inner)
    for reserved in message.reserved_range:
        end = reserved.end - 1
        lines.append(f"{inner}reserved {reserved.start}" +
                     (f" to {end}" if end != reserved.start else "") + ";")
    if message.reserved_name:
        lines.append(f"{inner}reserved " +
                     ", ".join(f'"{name}"' for name in message.reserved_name) + ";")
    lines.append(f"{indent}}}")
    return lines


def descriptor_to_proto(file_proto: Any) -> str:
    """``.proto`` text of a ``FileDescriptorProto`` (proto2 / proto3: messages, nested
    types, enums, maps, oneofs, optional fields, services with streaming methods, the
    ``go_package`` / ``java_package`` options; other options are left out). Type names are
    written fully qualified (``.pkg.Type``), which protoc accepts."""
    syntax = file_proto.syntax or "proto2"
    lines = [f'syntax = "{syntax}";', ""]
    if file_proto.package:
        lines += [f"package {file_proto.package};", ""]
    for dependency in file_proto.dependency:
        lines.append(f'import "{dependency}";')
    if file_proto.dependency:
        lines.append("")
    for option in ("go_package", "java_package"):
        if file_proto.options.HasField(option):
            lines.append(f'option {option} = "{getattr(file_proto.options, option)}";')
    scope = f".{file_proto.package}" if file_proto.package else ""
    for enum in file_proto.enum_type:
        lines += _enum_lines(enum, "")
    for message in file_proto.message_type:
        lines += _message_lines(message, scope, syntax, "")
    for service in file_proto.service:
        lines.append(f"service {service.name} {{")
        for method in service.method:
            request = ("stream " if method.client_streaming else "") + method.input_type
            reply = ("stream " if method.server_streaming else "") + method.output_type
            lines.append(f"  rpc {method.name} ({request}) returns ({reply});")
        lines.append("}")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------- reflection
@dataclass
class Reflected:
    """One upstream's descriptors: ``pool`` (a ``DescriptorPool``) and the files by name."""

    pool: Any
    files: dict[str, Any] = field(default_factory=dict)

    def add_file(self, name: str) -> None:
        """Keep the ``FileDescriptorProto`` of ``name`` and of its imports."""
        if name in self.files or name.startswith(_WELL_KNOWN):
            return
        from google.protobuf import descriptor_pb2

        proto = descriptor_pb2.FileDescriptorProto()
        self.pool.FindFileByName(name).CopyToProto(proto)
        self.files[name] = proto
        for dependency in proto.dependency:
            self.add_file(dependency)


def reflect(target: str, secure: bool, root_certificates: bytes | None = None) -> Reflected:
    """A :class:`Reflected` fed lazily by the server reflection of ``target`` (host:port),
    over TLS when ``secure`` (trusting ``root_certificates`` PEM, else the system store).
    Raises :class:`RuntimeError` naming the target when reflection cannot be reached."""
    import grpc
    from google.protobuf import descriptor_pool
    from grpc_reflection.v1alpha.proto_reflection_descriptor_database import (
        ProtoReflectionDescriptorDatabase)

    options = [("grpc.enable_http_proxy", 0)]
    if secure:
        channel = grpc.secure_channel(target, grpc.ssl_channel_credentials(root_certificates),
                                      options=options)
    else:
        channel = grpc.insecure_channel(target, options=options)
    try:
        grpc.channel_ready_future(channel).result(timeout=REFLECTION_TIMEOUT)
    except grpc.FutureTimeoutError:
        channel.close()
        raise RuntimeError(f"the upstream {target} cannot be reached for reflection") from None
    database = ProtoReflectionDescriptorDatabase(channel)
    reflected = Reflected(descriptor_pool.DescriptorPool(database))
    reflected.channel = channel  # type: ignore[attr-defined]
    return reflected


# ---------------------------------------------------------------------- conversion
def _decode(message_class: Any, items: list[Any]) -> list[Any]:
    from google.protobuf import json_format

    decoded = []
    for item in items:
        message = message_class.FromString(base64.b64decode(item))
        decoded.append(json_format.MessageToDict(message, preserving_proto_field_name=True))
    return decoded


def _scalars(request: Any) -> dict[str, Any]:
    if not isinstance(request, dict):
        return {}
    return {key: value for key, value in request.items()
            if isinstance(value, (str, int, float, bool))}


def _answer(call: dict[str, Any], server_streaming: bool) -> dict[str, Any]:
    status = call["status"]
    answer: dict[str, Any] = {}
    responses = call["responses"]
    if server_streaming or len(responses) != 1:
        if responses or status["code"] == 0:
            answer["responses"] = responses
    else:
        answer["response"] = responses[0]
    if status["code"] != 0:
        answer["error"] = {"code": _STATUS.get(status["code"], "UNKNOWN"),
                           "message": status.get("message") or ""}
    return answer


def _method_entry(calls: list[dict[str, Any]], server_streaming: bool) -> dict[str, Any]:
    groups: dict[str, list[dict[str, Any]]] = {}
    for call in calls:
        import orjson

        key = orjson.dumps(call["requests"][:1], option=orjson.OPT_SORT_KEYS).decode()
        groups.setdefault(key, []).append(call)
    if len(groups) == 1:
        return _answer(calls[-1], server_streaming)
    entries = []
    for group in groups.values():
        newest = group[-1]
        entry = _answer(newest, server_streaming)
        first = newest["requests"][0] if newest["requests"] else {}
        entry["match"] = {"request": _scalars(first)}
        entries.append(entry)
    fallback = _answer(calls[-1], server_streaming)
    method = dict(entries[0])
    method["variants"] = entries[1:] + [fallback]
    return method


def _mock_id(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "-", text).strip("-").lower()[:100] or "grpc"


def convert_grpc_recordings(records: list[dict[str, Any]], *, port: int | None = None,
                            reflector: Callable[[str, bool], Reflected] | None = None,
                            ) -> tuple[dict[str, Any], list[str]]:
    """``({"mocks": [...]}, warnings)`` of gRPC recording documents (see the module
    docstring). ``port``: the mocks' port (default: each upstream's); ``reflector(target,
    secure)`` answers a :class:`Reflected` (default :func:`reflect`). Raises ValueError for
    input that is not a list of objects."""
    if not isinstance(records, list) or not all(isinstance(item, dict) for item in records):
        raise ValueError("recordings must be a list of gRPC recording objects")
    from google.protobuf import message_factory

    reflector = reflector or reflect
    warnings: list[str] = []
    by_target: dict[tuple[str, int, bool], list[dict[str, Any]]] = {}
    ordered = sorted(enumerate(records[:MAX_RECORDINGS]),
                     key=lambda pair: (str(pair[1].get("timestamp") or ""), pair[0]))
    for _, record in ordered:
        label = record.get("id") or "a recording"
        if not record.get("service") or not record.get("method") or \
                not isinstance(record.get("status"), dict):
            warnings.append(f"{label} is not a gRPC call; skipped")
            continue
        if record.get("compressed"):
            warnings.append(f"{label}: compressed messages are not converted; skipped")
            continue
        if record.get("messagesTruncated"):
            warnings.append(f"{label}: its messages were cut by the recorder; skipped")
            continue
        key = (str(record.get("host") or "127.0.0.1"), int(record.get("port") or 0),
               record.get("scheme") == "https")
        by_target.setdefault(key, []).append(record)
    mocks: list[dict[str, Any]] = []
    for (host, upstream_port, secure), calls in by_target.items():
        target = f"{host}:{upstream_port}"
        try:
            reflected = reflector(target, secure)
        except Exception as error:  # noqa: BLE001 - one upstream never stops the others
            warnings.append(f"{len(calls)} call(s) to {target} skipped: {error}")
            continue
        services: dict[str, dict[str, Any]] = {}
        proto_files: list[str] = []
        methods_calls: dict[tuple[str, str], list[dict[str, Any]]] = {}
        kinds: dict[tuple[str, str], bool] = {}
        try:
            for record in calls:
                name = f"{record['service']}.{record['method']}"
                try:
                    method = reflected.pool.FindServiceByName(
                        record["service"]).methods_by_name[record["method"]]
                except KeyError:
                    warnings.append(f"{record.get('id')}: {name} is not served by {target}'s "
                                    f"reflection; skipped")
                    continue
                try:
                    requests = _decode(message_factory.GetMessageClass(method.input_type),
                                       record.get("requestMessages") or [])
                    responses = _decode(message_factory.GetMessageClass(method.output_type),
                                        record.get("responseMessages") or [])
                except Exception as error:  # noqa: BLE001 - a bad message skips its call
                    warnings.append(f"{record.get('id')}: a message of {name} does not "
                                    f"decode ({type(error).__name__}); skipped")
                    continue
                file_name = method.containing_service.file.name
                reflected.add_file(file_name)
                if file_name not in proto_files:
                    proto_files.append(file_name)
                pair = (record["service"], record["method"])
                kinds[pair] = method.server_streaming
                methods_calls.setdefault(pair, []).append(
                    {"requests": requests, "responses": responses,
                     "status": record["status"]})
        finally:
            channel = getattr(reflected, "channel", None)
            if channel is not None:
                channel.close()
        if not methods_calls:
            continue
        for (service, method_name), method_calls in methods_calls.items():
            services.setdefault(service, {"methods": {}})["methods"][method_name] = \
                _method_entry(method_calls, kinds[(service, method_name)])
        block: dict[str, Any] = {
            "port": port or upstream_port,
            "protoSources": {name: descriptor_to_proto(proto)
                             for name, proto in reflected.files.items()},
            "reflection": True,
            "services": services,
        }
        if len(proto_files) == 1:
            block["protoFile"] = proto_files[0]
        else:
            block["protoFiles"] = proto_files
        name = f"gRPC {target}"
        mocks.append({"id": _mock_id(f"grpc-{host}-{upstream_port}"), "name": name,
                      "type": "grpc", "grpc": block})
    return {"mocks": mocks}, warnings
