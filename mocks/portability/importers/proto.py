"""``.proto`` -> gRPC mocks (``type: grpc``), one per service, answering fake messages.

The file is compiled by the same in-process protoc the gRPC handler uses
(:func:`mocks.protocols.grpc.protos.load_protos`), so import and serving agree. Each service
becomes::

    {id: "grpc-<service>", type: "grpc", name: "<service>",
     grpc: {port: 50051, protoContent | protoFile, reflection: true,
            services: {"<pkg.Service>": {methods: {}}}}}

``protoContent`` (the document text) when the file imports nothing but Google's well-known
and common protos, so the mock works on any server; else ``protoFile`` with the file's
absolute path and its folder in ``importPaths``. Every method answers a schema-typed fake
message until it is given an answer; all services share port 50051 (mocks of one port are
served by one server).

Errors: ``proto: users.proto line 4: "strin" is not defined.``

Source: issue "gRPC mocks" item 7 (``mockd import`` accepts a ``.proto``); behavior notes §10.
"""
from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

from mocks.core.errors import ConfigError
from mocks.portability.importers.common import IdAllocator, safe_id
from mocks.portability.importers.result import (DocumentProbe, ImportDocumentError,
                                                ImportOptions, ImportResult)

FORMAT = "proto"
#: Port of imported gRPC mocks.
DEFAULT_PORT = 50051
_SYNTAX = re.compile(r'^\s*(syntax|edition)\s*=\s*"', re.M)
_SERVICE = re.compile(r"^\s*service\s+\w+\s*\{", re.M)
_IMPORT = re.compile(r'^\s*import\s+(?:public\s+|weak\s+)?"([^"]+)"', re.M)


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
        from mocks.protocols.grpc.protos import load_protos

        text = probe.text or ""
        own_imports = [name for name in _IMPORT.findall(text) if not name.startswith("google/")]
        path = (probe.base_dir / Path(probe.filename).name
                if probe.base_dir is not None and probe.filename else None)
        if own_imports and path is not None:
            block = {"port": DEFAULT_PORT, "protoFile": str(path.resolve()),
                     "importPaths": [str(path.resolve().parent)], "reflection": True}
        else:
            block = {"port": DEFAULT_PORT, "protoContent": text, "reflection": True}
        config = SimpleNamespace(proto_file=block.get("protoFile"), proto_files=[],
                                 proto_content=block.get("protoContent"),
                                 import_paths=block.get("importPaths", []))
        name = Path(probe.filename).stem if probe.filename else "proto"
        try:
            protos = load_protos(config, FORMAT, Path("."), (), safe_id(name))
        except ConfigError as error:
            reason = error.errors[0].reason if error.errors else str(error)
            raise ImportDocumentError(FORMAT, probe.filename or "", reason) from None
        if not protos.services:
            raise ImportDocumentError(FORMAT, probe.filename or "",
                                      "the file defines no service (nothing to serve)")
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
