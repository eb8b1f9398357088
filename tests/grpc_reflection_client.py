"""A reflection-only gRPC client for tests, as grpcurl and grpcui work: grpcio-reflection's
``ProtoReflectionDescriptorDatabase`` under a ``DescriptorPool`` (over
``grpc.reflection.v1alpha``, or ``v1`` with its stub pointed at the v1 path), raw reflection
streams, and calls whose messages are built from the reflected descriptors alone
(``message_factory``) on a generic channel method.
"""
from __future__ import annotations

import time
from typing import Any, Callable

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from grpc_reflection.v1alpha import reflection_pb2
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import (
    ProtoReflectionDescriptorDatabase)

#: Seconds a call or a channel may take.
TIMEOUT = 10
#: Reflection versions served.
VERSIONS = ("v1", "v1alpha")


def reflection_path(version: str) -> str:
    """``/grpc.reflection.<version>.ServerReflection/ServerReflectionInfo``."""
    return f"/grpc.reflection.{version}.ServerReflection/ServerReflectionInfo"


def open_channel(port: int) -> grpc.Channel:
    """A ready channel to ``127.0.0.1:port`` (waits at most :data:`TIMEOUT` seconds)."""
    opened = grpc.insecure_channel(f"127.0.0.1:{port}")
    grpc.channel_ready_future(opened).result(timeout=TIMEOUT)
    return opened


def reflection_database(channel: grpc.Channel,
                        version: str = "v1") -> ProtoReflectionDescriptorDatabase:
    """grpcio-reflection's client; for v1 its stub is pointed at the v1 service (the
    messages are the same on the wire, only the path differs)."""
    database = ProtoReflectionDescriptorDatabase(channel)
    if version == "v1":
        database._stub.ServerReflectionInfo = channel.stream_stream(
            reflection_path("v1"),
            request_serializer=reflection_pb2.ServerReflectionRequest.SerializeToString,
            response_deserializer=reflection_pb2.ServerReflectionResponse.FromString)
    return database


def reflected_pool(channel: grpc.Channel, version: str = "v1") -> Any:
    """A ``DescriptorPool`` that learns every descriptor from the server's reflection."""
    return descriptor_pool.DescriptorPool(reflection_database(channel, version))


def ask(channel: grpc.Channel, version: str, *requests: Any) -> list[Any]:
    """The responses of one reflection stream carrying ``requests``."""
    stream = channel.stream_stream(
        reflection_path(version),
        request_serializer=reflection_pb2.ServerReflectionRequest.SerializeToString,
        response_deserializer=reflection_pb2.ServerReflectionResponse.FromString)
    return list(stream(iter(requests), timeout=TIMEOUT))


def file_names(response: Any) -> list[str]:
    """Names of the files in a ``file_descriptor_response``, in order."""
    return [descriptor_pb2.FileDescriptorProto.FromString(item).name
            for item in response.file_descriptor_response.file_descriptor_proto]


def dynamic_call(channel: grpc.Channel, pool: Any, method_name: str,
                 streaming: bool = False, **fields: Any) -> Any:
    """Call ``pkg.Service.Method`` with a request built from ``pool`` (reflection only);
    the reply message (a list of them for a server stream)."""
    method = pool.FindMethodByName(method_name)
    request_class = message_factory.GetMessageClass(method.input_type)
    reply_class = message_factory.GetMessageClass(method.output_type)
    path = f"/{method.containing_service.full_name}/{method.name}"
    make = channel.unary_stream if streaming else channel.unary_unary
    call = make(path, request_serializer=request_class.SerializeToString,
                response_deserializer=reply_class.FromString)
    answer = call(request_class(**fields), timeout=TIMEOUT)
    return list(answer) if streaming else answer


def until_served(call: Callable[[], Any], done: Callable[[Any], bool] = lambda reply: True,
                 attempts: int = 50, pause: float = 0.1) -> Any:
    """``call()``'s result once ``done(result)`` holds, retried while the port's server
    restarts (``UNAVAILABLE``, ``UNIMPLEMENTED``), still serves the previous set (its
    reflection does not know the method yet: ``KeyError``) or the previous answers, at most
    ``attempts`` times ``pause`` seconds apart; the last error or result is raised or
    returned."""
    for attempt in range(attempts):
        last = attempt == attempts - 1
        try:
            reply = call()
        except KeyError:
            if last:
                raise
        except grpc.RpcError as error:
            if error.code() not in (grpc.StatusCode.UNAVAILABLE,
                                    grpc.StatusCode.UNIMPLEMENTED) or last:
                raise
        else:
            if done(reply) or last:
                return reply
        time.sleep(pause)
    raise AssertionError("unreachable")
