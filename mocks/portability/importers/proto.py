""".proto`` -> gRPC mocks (``type: grpc``), one per service, answering fake messages.

The file is compiled by the same in-process protoc the gRPC handler uses
(:func:`mocks.protocols.grpc.protos.inline_protos`), so import and serving agree. Each service
becomes::

    {id: "grpc-<service>", type: "grpc", name: "<service>",
     grpc: {port: 50051, protoContent | protoFile + protoSources, reflection: true,
            services: {"<pkg.Service>": {methods: {}}}}}

``protoContent`` (the document text) when the file imports nothing but the built-in includes
(Google's well-known and common protos); else ``protoFile`` (its import name) and
``protoSources`` holding it and every file it imports from its own folder or the
``--import-path`` folders (:attr:`ImportOptions.import_paths`), so the mock works on any
server, which reads no file of the user's. Every method answers a schema-typed fake message
until it is given an answer; all services share one port (:data:`DEFAULT_PORT`, or
``--grpc-port``: :attr:`ImportOptions.grpc_port`), served by one server.

Errors: ``proto: users.proto line 4: "strin" is not defined.``; an import that is not found
names the folder above the file that holds it, to pass as ``--import-path``.

Source: issue "gRPC mocks" item 7 (``mockd import`` accepts a ``.proto``); behavior notes §10;
docs/grpc.md "Protos from the wild".
"""
from __future__ import annotations

import re
from pathlib import Path

from mocks.core.errors import ConfigError
from mocks.portability.importers.common import IdAllocator, safe_id
from mocks.portability.importers.result import (DocumentProbe, ImportDocumentError,
                                                ImportOptions, ImportResult)

FORMAT = "proto"
#: Port of imported gRPC mocks.
DEFAULT_PORT = 50051
_SYNTAX = re.compile(r'^\s*(syntax|edition)\s*=\s*"', re.M)
_SERVICE = re.compile(r"^\s*service\s+\w+\s*\{", re.M)


class ProtoImporter:
    """Protocol Buffers service definitions (``.proto``)."""

    format = FORMAT
    title = "Protocol Buffers (.proto) gRPC service definition"
    detection = "a .proto file, or text with a syntax line and a service block"

    def detects(self, probe: DocumentProbe) -> bool:
        """A ``.proto`` file, or text with ``syntax = "..."`` and a ``service X {`` block."""
        if probe.extension == ".proto":
            return True
        text = probe.text or ""
        return bool(_SYNTAX.search(text[:4096]) and _SERVICE.search(text))

    def convert(self, probe: DocumentProbe, options: ImportOptions) -> ImportResult:
        """One ``grpc`` mock per service (see the module docstring)."""
        from mocks.protocols.grpc.protos import inline_protos

        text = probe.text or ""
        path = (probe.base_dir / Path(probe.filename).name
                if probe.base_dir is not None and probe.filename else None)
        name = Path(probe.filename).stem if probe.filename else "proto"
        try:
            keys, protos = inline_protos(path, options.import_paths, text=text, key=FORMAT,
                                         mock_id=safe_id(name))
        except ConfigError as error:
            reason = error.errors[0].reason if error.errors else str(error)
            raise ImportDocumentError(FORMAT, probe.filename or "", reason) from None
        if not protos.services:
            raise ImportDocumentError(FORMAT, probe.filename or "",
                                      "the file defines no service (nothing to serve)")
        block = {"port": options.grpc_port or DEFAULT_PORT, **keys, "reflection": True}
        ids = IdAllocator()
        result = ImportResult(format=FORMAT)
        for service in protos.services:
            methods = [info.name for info in protos.methods.values() if info.service == service]
            result.mocks.append({
                "id": ids.claim(safe_id(f"grpc-{service}")), "type": "grpc", "name": service,
                "grpc": {**block, "services": {service: {"methods": {}}}}})
            options.report(len(result.mocks), len(protos.services))
            if not methods:
                result.warnings.append(f"service {service} has no methods")
        return result
