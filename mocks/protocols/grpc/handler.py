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
from mocks.protocols.grpc.config import GrpcMethod, GrpcMock
from mocks.protocols.grpc.protos import load_protos
from mocks.protocols.grpc.server import GrpcPortService, PortTable
from tables.binding import member_bindings


class GrpcHandler:
    """Compiles ``grpc`` mocks (see the module docstring)."""

    mock_type = "grpc"
    config_model = GrpcMock

    @staticmethod
    def binding_member(text: str) -> str | None:
        """``/package.Service/Method`` of an ``extend`` reference ``<mock id>.<text>`` where
        ``text`` is ``package.Service.Method``, ``package.Service/Method`` or
        ``/package.Service/Method``; None when it names no method."""
        text = text.lstrip("/")
        service, slash, method = text.rpartition("/")
        if not slash:
            service, _, method = text.rpartition(".")
        if not service or not method or "/" in service or "." in method:
            return None
        return f"/{service}/{method}"

    def compile(self, mock: Any, context: CompileContext) -> CompiledMock:
        """One :class:`~mocks.protocols.grpc.server.GrpcPortService` for ``grpc.port``.

        Raises :class:`~mocks.core.errors.ConfigError` naming the key:
        ``mocks[0].grpc.protoFile: greeter.proto line 4: "strin" is not defined.``,
        ``mocks[0].grpc.services.pkg.Nope: the .proto defines no service 'pkg.Nope' ...``,
        ``mocks[0].grpc.services.pkg.Svc.methods.Nope: ...``,
        ``mocks[0].grpc.services.pkg.Svc.methods.Get.response: not a valid pkg.Reply: ...``,
        ``extend[0].mock: ...`` for a binding of a method the ``.proto`` lacks or of the whole
        mock, ``extend[0].response: ...`` for a binding with a response transform.
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
        _bind_methods(mock.id, context.binding, protos.methods, configured)
        methods = {}
        for path, info in protos.methods.items():
            method, key = configured.get(path, (None, f"{key_path}.services"))
            methods[path] = CompiledMethod(info, mock.id, protos, method, key, tables, state)
        table = PortTable(config.port, methods, protos.files, (mock.id,),
                          tuple(protos.services), config.reflection, (protos.digest,))
        return CompiledMock(services=(GrpcPortService(table, shared),))


#: The registered handler object (:data:`mocks.protocols.PROTOCOLS`).
HANDLER = GrpcHandler()


def _bind_methods(mock_id: str, binding: Any, known: dict[str, Any],
                  configured: dict[str, Any]) -> None:
    """Make each method an ``extend`` entry binds (``context.binding``: ``{"/pkg.Svc/Method":
    BindingSpec}``) answer from its table, as ``statefulResource``/``statefulAction`` on
    the method would; the method keeps its ``match``, ``variants`` and ``delay``, and the
    table's result replaces its ``response`` (SPEC "Extend binding" rule 1).

    Raises :class:`~mocks.core.errors.ConfigError` at ``extend[i].mock`` for a binding of
    the whole mock or of a method the ``.proto`` lacks, at ``extend[i].response`` for a
    response transform (a reply is shaped by its message type)."""
    bound = member_bindings(binding, mock_id, "gRPC", "method", "<package.Service>.<Method>",
                            known, "a gRPC reply is shaped by its message type")
    for path, spec in bound.items():
        method, key = configured.get(path, (None, spec.source))
        configured[path] = ((method if method is not None else GrpcMethod()).model_copy(
            update={"response": None, "responses": None, "error": None,
                    "stateful_resource": spec.table or None, "stateful_action": spec.action,
                    "operation": spec.operation}), key)
