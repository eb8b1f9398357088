"""The handler of ``grpc`` mocks: one mock -> the listener service of its port.

Compiling a mock compiles its ``.proto`` files (:func:`~mocks.protocols.grpc.protos.
load_protos`), checks every configured service and method against them, compiles every
method's answers (:class:`~mocks.protocols.grpc.compiled.CompiledMethod`; methods without an
entry answer fake messages) and returns one :class:`~mocks.protocols.grpc.server.
GrpcPortService` named ``grpc:<port>``. The snapshot merges the services of mocks that share
a port (:meth:`~mocks.protocols.grpc.server.GrpcPortService.merged`, the earlier mock keeping
a method both define); the engine's :class:`~mocks.protocols.grpc.server.GrpcHub` lives in
``context.shared["grpc"]``.

Source: behavior notes §10 (``grpc`` row); SPEC "Mock kinds", "Mocks" (gRPC mocks of one port
share it). Django-free.
"""
from __future__ import annotations

from typing import Any

from mocks.core.errors import ConfigError
from mocks.core.templating import TemplateState
from mocks.protocols import CompileContext, CompiledMock
from mocks.protocols.grpc.compiled import CompiledMethod
from mocks.protocols.grpc.config import GrpcMock
from mocks.protocols.grpc.protos import load_protos
from mocks.protocols.grpc.server import GrpcPortService, PortTable


class GrpcHandler:
    """Compiles ``grpc`` mocks (see the module docstring)."""

    mock_type = "grpc"
    config_model = GrpcMock

    def compile(self, mock: Any, context: CompileContext) -> CompiledMock:
        """One :class:`~mocks.protocols.grpc.server.GrpcPortService` for ``grpc.port``.

        Raises :class:`~mocks.core.errors.ConfigError` naming the key:
        ``mocks[0].grpc.protoFile: greeter.proto line 4: "strin" is not defined.``,
        ``mocks[0].grpc.services.pkg.Nope: the .proto defines no service 'pkg.Nope' ...``,
        ``mocks[0].grpc.services.pkg.Svc.methods.Nope: ...``,
        ``mocks[0].grpc.services.pkg.Svc.methods.Get.response: not a valid pkg.Reply: ...``.
        """
        config: GrpcMock = mock.grpc
        key_path = f"{context.key_path}.grpc"
        protos = load_protos(config, key_path, context.base_dir, context.body_file_roots,
                             mock.id)
        if not protos.services:
            raise ConfigError(key_path, "the .proto defines no service; add a 'service' with "
                                        "rpc methods to serve")
        shared = context.shared
        state = (shared.get("template_state") if shared is not None else None) or TemplateState()
        tables = context.tables
        configured: dict[str, Any] = {}
        for service_name, service in config.services.items():
            service_key = f"{key_path}.services.{service_name}"
            if service_name not in protos.services:
                raise ConfigError(service_key, f"the .proto defines no service "
                                               f"{service_name!r} (services: "
                                               f"{', '.join(protos.services)}); use the full "
                                               f"name package.Service")
            for method_name, method in service.methods.items():
                path = f"/{service_name}/{method_name}"
                if path not in protos.methods:
                    known = ", ".join(info.name for info in protos.methods.values()
                                      if info.service == service_name)
                    raise ConfigError(f"{service_key}.methods.{method_name}",
                                      f"service {service_name} has no method "
                                      f"{method_name!r} (methods: {known})")
                configured[path] = (method, f"{service_key}.methods.{method_name}")
        methods = {}
        for path, info in protos.methods.items():
            method, key = configured.get(path, (None, f"{key_path}.services"))
            methods[path] = CompiledMethod(info, mock.id, protos, method, key, tables, state)
        table = PortTable(config.port, methods, protos.files, (mock.id,),
                          tuple(protos.services), config.reflection, (protos.digest,))
        return CompiledMock(services=(GrpcPortService(table, shared),))


#: The registered handler object (:data:`mocks.protocols.PROTOCOLS`).
HANDLER = GrpcHandler()
