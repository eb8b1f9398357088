"""Server reflection of a gRPC port: ``grpc.reflection.v1`` and ``grpc.reflection.v1alpha``.

Both services are served with one :class:`ReflectionIndex` built from the port's serialized
``FileDescriptorProto`` files (the mocks' ``.proto`` files and everything they import) plus
the files of the services every port serves: ``grpc.health.v1.Health`` and the two
reflection services themselves. So every listed service resolves, and ``grpcurl list``,
``grpcurl describe``, ``grpcurl describe pkg.Service.Method`` and grpcui work.

Answers (one response per request of the stream, in order):

* ``list_services``: the mocks' services, ``grpc.health.v1.Health``,
  ``grpc.reflection.v1.ServerReflection`` and ``grpc.reflection.v1alpha.ServerReflection``,
  sorted;
* ``file_containing_symbol``: the file declaring a service, method (``pkg.Service.Method``),
  message, nested message, enum, enum value, field, oneof or extension, and
  ``file_by_filename``: that file, then the files it imports, transitively. The file asked for
  is always sent; a dependency already sent on the same stream is not sent again (as
  grpc-go does), a dependency the port lacks is left out;
* ``file_containing_extension``: the file declaring extension ``number`` of a message;
* ``all_extension_numbers_of_type``: the numbers of every extension of a message (possibly
  none), sorted;
* anything unknown: an ``error_response`` with ``NOT_FOUND`` (5) naming it; a request with
  none of these fields: ``INVALID_ARGUMENT`` (3).

The v1 and v1alpha messages are the same on the wire (v1 is v1alpha renamed), so both
services use grpcio-reflection's v1alpha message classes. grpcio-reflection ships only the
v1alpha descriptor; the v1 file (``grpc/reflection/v1/reflection.proto``) is that descriptor
with its package renamed. The built-in files carry their canonical names
(``grpc/health/v1/health.proto``, ``grpc/reflection/v1alpha/reflection.proto``), as grpc-go
and grpc-java serve them. When two files of a port declare the same name, the first one
(the mocks' files come first) answers.

Source: behavior notes §10 (``grpc.reflection``: ``reflection`` (false)); the gRPC server
reflection protocol (``grpc.reflection.v1.ServerReflection``). Django-free; used by
:class:`~mocks.protocols.grpc.server.GrpcPortService` on the engine loop.
"""
from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Iterable
from typing import Any

from google.protobuf import descriptor_pb2

#: Full names of the services reflection serves itself.
REFLECTION_V1 = "grpc.reflection.v1.ServerReflection"
REFLECTION_V1ALPHA = "grpc.reflection.v1alpha.ServerReflection"
#: Full name of the health service every port serves.
HEALTH = "grpc.health.v1.Health"

#: gRPC status numbers used in ``error_response``.
_NOT_FOUND = 5
_INVALID_ARGUMENT = 3


class ReflectionIndex:
    """Everything a reflection request can ask about one port, built once per server start.

    Attributes:
        files: file name -> serialized ``FileDescriptorProto``.
        dependencies: file name -> names of the files it imports, in order.
        symbols: fully qualified name (no leading dot) -> name of the file declaring it.
        extensions: extended message's full name -> ``{number: file name}``.
        messages: full names of every message (for the extension requests).
        services: the names ``list_services`` answers, sorted.
    """

    def __init__(self, files: Iterable[bytes], services: Iterable[str]):
        self.files: dict[str, bytes] = {}
        self.dependencies: dict[str, tuple[str, ...]] = {}
        self.symbols: dict[str, str] = {}
        self.extensions: dict[str, dict[int, str]] = {}
        self.messages: set[str] = set()
        for serialized in (*files, *builtin_files()):
            proto = descriptor_pb2.FileDescriptorProto.FromString(serialized)
            if proto.name in self.files:
                continue
            self.files[proto.name] = serialized
            self.dependencies[proto.name] = tuple(proto.dependency)
            self._index(proto)
        self.services = tuple(sorted({*services, HEALTH, REFLECTION_V1, REFLECTION_V1ALPHA}))

    def _add(self, name: str, file_name: str) -> None:
        self.symbols.setdefault(name, file_name)

    def _index(self, proto: Any) -> None:
        file_name = proto.name
        scope = f"{proto.package}." if proto.package else ""
        for message in proto.message_type:
            self._index_message(message, scope, file_name)
        for enum in proto.enum_type:
            self._index_enum(enum, scope, file_name)
        for extension in proto.extension:
            self._index_extension(extension, scope, file_name)
        for service in proto.service:
            service_name = scope + service.name
            self._add(service_name, file_name)
            for method in service.method:
                self._add(f"{service_name}.{method.name}", file_name)

    def _index_message(self, message: Any, scope: str, file_name: str) -> None:
        full_name = scope + message.name
        self._add(full_name, file_name)
        self.messages.add(full_name)
        inner = full_name + "."
        for field in message.field:
            self._add(inner + field.name, file_name)
        for oneof in message.oneof_decl:
            self._add(inner + oneof.name, file_name)
        for nested in message.nested_type:
            self._index_message(nested, inner, file_name)
        for enum in message.enum_type:
            self._index_enum(enum, inner, file_name)
        for extension in message.extension:
            self._index_extension(extension, inner, file_name)

    def _index_enum(self, enum: Any, scope: str, file_name: str) -> None:
        self._add(scope + enum.name, file_name)
        # Enum values are siblings of their enum (C++ scoping), as protoc resolves them.
        for value in enum.value:
            self._add(scope + value.name, file_name)

    def _index_extension(self, extension: Any, scope: str, file_name: str) -> None:
        self._add(scope + extension.name, file_name)
        extended = extension.extendee.lstrip(".")
        self.extensions.setdefault(extended, {}).setdefault(extension.number, file_name)

    def file_with_dependencies(self, name: str, sent: set[str]) -> list[bytes]:
        """``name`` first, then the files it imports (breadth first, transitively) that are
        not in ``sent``; ``sent`` is updated. Empty when the port has no file ``name``."""
        if name not in self.files:
            return []
        answer = []
        queue = [name]
        seen = set()
        while queue:
            current = queue.pop(0)
            if current in seen or current not in self.files:
                continue
            seen.add(current)
            if current == name or current not in sent:
                sent.add(current)
                answer.append(self.files[current])
            queue.extend(self.dependencies[current])
        return answer

    def answer(self, request: Any, sent: set[str]) -> Any:
        """The ``ServerReflectionResponse`` to one ``ServerReflectionRequest`` (v1alpha
        classes; v1 is the same on the wire). ``sent`` holds the files already sent on the
        stream."""
        from grpc_reflection.v1alpha import reflection_pb2 as messages

        response = messages.ServerReflectionResponse(valid_host=request.host,
                                                     original_request=request)
        kind = request.WhichOneof("message_request")
        if kind in ("file_by_filename", "file_containing_symbol"):
            value = getattr(request, kind)
            name = value if kind == "file_by_filename" else self.symbols.get(value, "")
            files = self.file_with_dependencies(name, sent) if name else []
            if not files:
                what = "file" if kind == "file_by_filename" else "symbol"
                return _error(response, _NOT_FOUND, f"{what} not found: {value}")
            response.file_descriptor_response.file_descriptor_proto.extend(files)
        elif kind == "file_containing_extension":
            wanted = request.file_containing_extension
            name = self.extensions.get(wanted.containing_type, {}).get(wanted.extension_number)
            if name is None:
                return _error(response, _NOT_FOUND,
                              f"extension {wanted.extension_number} of "
                              f"{wanted.containing_type} not found")
            response.file_descriptor_response.file_descriptor_proto.extend(
                self.file_with_dependencies(name, sent))
        elif kind == "all_extension_numbers_of_type":
            type_name = request.all_extension_numbers_of_type
            if type_name not in self.messages:
                return _error(response, _NOT_FOUND, f"message type not found: {type_name}")
            numbers = response.all_extension_numbers_response
            numbers.base_type_name = type_name
            numbers.extension_number.extend(sorted(self.extensions.get(type_name, {})))
        elif kind == "list_services":
            response.list_services_response.service.extend(
                messages.ServiceResponse(name=name) for name in self.services)
        else:
            return _error(response, _INVALID_ARGUMENT,
                          "the request names none of file_by_filename, "
                          "file_containing_symbol, file_containing_extension, "
                          "all_extension_numbers_of_type, list_services")
        return response


def _error(response: Any, code: int, message: str) -> Any:
    response.error_response.error_code = code
    response.error_response.error_message = message
    return response


@functools.cache
def builtin_files() -> tuple[bytes, ...]:
    """Serialized files of the services every port serves: ``grpc/health/v1/health.proto``,
    ``grpc/reflection/v1/reflection.proto`` and ``grpc/reflection/v1alpha/reflection.proto``
    (canonical names; from the descriptors grpcio-health-checking and grpcio-reflection
    ship)."""
    from grpc_health.v1 import health_pb2
    from grpc_reflection.v1alpha import reflection_pb2

    health = descriptor_pb2.FileDescriptorProto.FromString(health_pb2.DESCRIPTOR.serialized_pb)
    health.name = "grpc/health/v1/health.proto"
    v1alpha = descriptor_pb2.FileDescriptorProto.FromString(
        reflection_pb2.DESCRIPTOR.serialized_pb)
    v1alpha.name = "grpc/reflection/v1alpha/reflection.proto"
    v1 = descriptor_pb2.FileDescriptorProto()
    v1.CopyFrom(v1alpha)
    _rename_package(v1, "grpc.reflection.v1alpha", "grpc.reflection.v1")
    v1.name = "grpc/reflection/v1/reflection.proto"
    v1.options.Clear()
    # The options of grpc-proto's grpc/reflection/v1/reflection.proto.
    v1.options.go_package = "google.golang.org/grpc/reflection/grpc_reflection_v1"
    v1.options.java_multiple_files = True
    v1.options.java_package = "io.grpc.reflection.v1"
    v1.options.java_outer_classname = "ServerReflectionProto"
    return tuple(proto.SerializeToString() for proto in (health, v1, v1alpha))


def _rename_package(proto: Any, old: str, new: str) -> None:
    """Move every declaration and type reference of ``proto`` from package ``old`` to
    ``new``."""
    proto.package = new
    prefix, replacement = f".{old}.", f".{new}."

    def renamed(type_name: str) -> str:
        return replacement + type_name[len(prefix):] if type_name.startswith(prefix) \
            else type_name

    def fix_message(message: Any) -> None:
        for field in message.field:
            if field.type_name.startswith(prefix):  # assigning "" would mark it as set
                field.type_name = renamed(field.type_name)
        for nested in message.nested_type:
            fix_message(nested)

    for message in proto.message_type:
        fix_message(message)
    for service in proto.service:
        for method in service.method:
            method.input_type = renamed(method.input_type)
            method.output_type = renamed(method.output_type)


def reflection_handlers(index: ReflectionIndex) -> tuple[Any, ...]:
    """``grpc.GenericRpcHandler`` objects serving ``ServerReflectionInfo`` of
    :data:`REFLECTION_V1` and of :data:`REFLECTION_V1ALPHA` from ``index`` (a bidirectional
    stream, one response per request)."""
    import grpc
    from google.protobuf.message import DecodeError
    from grpc_reflection.v1alpha import reflection_pb2 as messages

    async def reflection_info(requests: AsyncIterator[bytes],
                              context: Any) -> AsyncIterator[Any]:
        sent: set[str] = set()
        async for data in requests:
            # Parsed here: a corrupt request gets INTERNAL, not a logged traceback and UNKNOWN.
            try:
                request = messages.ServerReflectionRequest.FromString(data)
            except DecodeError as error:
                await context.abort(grpc.StatusCode.INTERNAL, "cannot parse the request as a "
                                    f"ServerReflectionRequest: {error}")
            yield index.answer(request, sent)

    method = grpc.stream_stream_rpc_method_handler(
        reflection_info,
        response_serializer=messages.ServerReflectionResponse.SerializeToString)
    return tuple(grpc.method_handlers_generic_handler(service, {"ServerReflectionInfo": method})
                 for service in (REFLECTION_V1, REFLECTION_V1ALPHA))
