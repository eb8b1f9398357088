"""``.proto`` files compiled at run time into a private descriptor pool.

:func:`load_protos` runs protoc in process (``grpc_tools._protoc_compiler``: no external
binary, no generated module is ever imported) over ``protoFile``/``protoFiles``/
``protoContent`` with the mock's ``importPaths`` plus the bundled well-known types
(``google/protobuf/*.proto``) and Google's common protos (``google/rpc/status.proto``, ...).
protoc hands back, per file, the Python source it would generate; the serialized
``FileDescriptorProto`` is read out of it as a literal (:func:`_descriptor_of`, via
:mod:`ast`: the source is parsed, never run). The files go into a fresh
``DescriptorPool``; message classes come from ``message_factory.GetMessageClass`` over it,
so the generated-code version check of protobuf never applies.

Results are cached by (file names, sizes, modification times, content, include folders), so
recompiling a snapshot whose protos did not change costs a dictionary lookup.

A file protoc rejects is a :class:`~mocks.core.errors.ConfigError` naming the key, the file,
the line and protoc's message: ``mocks[0].grpc.protoFile: greeter.proto line 4: "strin" is
not defined.``

Source: behavior notes §10 (``grpc``: ``protoFile | protoFiles[] | protoContent``,
``importPaths[]``). Django-free.
"""
from __future__ import annotations

import ast
import hashlib
import tempfile
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from mocks.core.errors import ConfigError
from mocks.core.responses import FileRoots, body_file_path

#: Compiled proto sets kept (least recently used dropped first).
CACHE_SIZE = 64

_cache: OrderedDict[tuple[Any, ...], "ProtoSet"] = OrderedDict()
_cache_lock = threading.Lock()
#: protoc's compiler keeps global state: one compile at a time.
_protoc_lock = threading.Lock()


@dataclass(frozen=True)
class MethodInfo:
    """One RPC of a loaded service.

    Attributes:
        service: the service's full name (``helloworld.Greeter``).
        name: the method name (``SayHello``).
        path: the call path ``/helloworld.Greeter/SayHello``.
        kind: ``unary``, ``server_stream``, ``client_stream`` or ``bidi``.
        input: descriptor of the request message; output: of the reply message.
    """

    service: str
    name: str
    path: str
    kind: str
    input: Any
    output: Any


class ProtoSet:
    """The compiled ``.proto`` files of one mock.

    Attributes:
        pool: the private ``DescriptorPool`` holding every file (imports included).
        files: serialized ``FileDescriptorProto`` of each file, dependencies first.
        methods: ``/pkg.Service/Method`` -> :class:`MethodInfo` of every service defined
            in the mock's own files.
        services: service full names defined in the mock's own files, in file order.
        digest: a hash of ``files`` (changes exactly when the descriptors change).
    """

    def __init__(self, files: list[bytes], own: set[str]):
        self.files = tuple(files)
        self.pool = descriptor_pool.DescriptorPool()
        self.methods: dict[str, MethodInfo] = {}
        self.services: list[str] = []
        digest = hashlib.sha256()
        for serialized in files:
            digest.update(serialized)
            self.pool.AddSerializedFile(serialized)
        self.digest = digest.hexdigest()
        self._classes: dict[str, Any] = {}
        for serialized in files:
            proto = descriptor_pb2.FileDescriptorProto.FromString(serialized)
            if proto.name not in own:
                continue
            file_descriptor = self.pool.FindFileByName(proto.name)
            for service in file_descriptor.services_by_name.values():
                self.services.append(service.full_name)
                for method in service.methods:
                    kind = {(False, False): "unary", (False, True): "server_stream",
                            (True, False): "client_stream", (True, True): "bidi"}[
                        (method.client_streaming, method.server_streaming)]
                    path = f"/{service.full_name}/{method.name}"
                    self.methods[path] = MethodInfo(service.full_name, method.name, path,
                                                    kind, method.input_type,
                                                    method.output_type)

    def message_class(self, descriptor: Any) -> Any:
        """The dynamic message class of ``descriptor`` (made once)."""
        cls = self._classes.get(descriptor.full_name)
        if cls is None:
            cls = self._classes[descriptor.full_name] = message_factory.GetMessageClass(
                descriptor)
        return cls

    def find_message(self, full_name: str) -> Any:
        """The descriptor of message ``full_name``; raises ``KeyError``."""
        return self.pool.FindMessageTypeByName(full_name)


def _well_known_includes() -> list[str]:
    """Folders holding ``google/protobuf/*.proto`` (grpc_tools) and ``google/rpc/*.proto``
    (googleapis-common-protos)."""
    folders = []
    import grpc_tools

    folders.append(str(Path(grpc_tools.__file__).parent / "_proto"))
    try:
        import google.rpc.status_pb2 as status_module

        folders.append(str(Path(status_module.__file__).resolve().parents[2]))
    except ImportError:  # pragma: no cover - a dependency of grpcio-status
        pass
    return folders


def _descriptor_of(generated: bytes) -> bytes | None:
    """The serialized ``FileDescriptorProto`` in protoc's generated Python source: the bytes
    literal passed to ``AddSerializedFile`` (read with :mod:`ast`; nothing is executed)."""
    tree = ast.parse(generated)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "AddSerializedFile":
            if node.args and isinstance(node.args[0], ast.Constant) and \
                    isinstance(node.args[0].value, bytes):
                return node.args[0].value
    return None


def _compile(target: str, includes: list[str], key: str, shown: dict[str, str]) -> list[bytes]:
    """Serialized file descriptors of ``target`` (a path relative to one of ``includes``)
    and its imports, dependencies first. Raises :class:`ConfigError` at ``key``."""
    from grpc_tools import _protoc_compiler

    with _protoc_lock:
        try:
            generated = _protoc_compiler.get_protos(
                target.encode(), [folder.encode() for folder in includes])
        except _protoc_compiler.ProtocErrors as failure:
            raise ConfigError(key, _protoc_message(failure, shown)) from None
    files = []
    for module_name, source in generated:
        serialized = _descriptor_of(source)
        if serialized is None:  # pragma: no cover - protoc's output format changed
            raise ConfigError(key, f"cannot read the descriptor protoc made for {module_name!r}")
        files.append(serialized)
    return files


def _protoc_message(failure: Any, shown: dict[str, str]) -> str:
    parts = []
    for error in failure.errors()[:5]:
        name = error.filename.decode("utf-8", "replace") if isinstance(error.filename, bytes) \
            else str(error.filename)
        name = shown.get(name, name)
        text = error.message.decode("utf-8", "replace") if isinstance(error.message, bytes) \
            else str(error.message)
        if error.line is not None and error.line >= 0:
            where = f"{name} line {error.line + 1}"
            if error.column is not None and error.column >= 0:
                where += f" column {error.column + 1}"
        else:
            where = name
        parts.append(f"{where}: {text}")
    return "; ".join(parts) or "protoc failed"


def _file_stamp(path: Path) -> tuple[Any, ...]:
    try:
        info = path.stat()
    except OSError:
        return (str(path), None)
    return (str(path), info.st_size, info.st_mtime_ns)


#: System-wide protobuf include folders ``importPaths`` may name besides the allowed folders
#: (where Debian's ``libprotobuf-dev`` and a hand-installed ``protoc`` put ``google/*``).
SYSTEM_PROTO_INCLUDES = (Path("/usr/include"), Path("/usr/local/include"))


def load_protos(config: Any, key_path: str, base_dir: Path, roots: tuple[Path, ...],
                mock_id: str) -> ProtoSet:
    """Compile the ``.proto`` sources of a ``grpc`` block (:class:`~mocks.protocols.grpc.
    config.GrpcMock`) into a :class:`ProtoSet`.

    ``key_path`` is the block's config path (``mocks[0].grpc``); files resolve against
    ``base_dir``; a file not named ``*.proto`` must lie inside ``roots`` (empty: anywhere),
    like a ``bodyFile`` (see :func:`_proto_path`); ``importPaths`` are folders protoc
    searches for ``.proto`` imports, confined to ``roots`` like a ``bodyFile`` plus the
    system include folders :data:`SYSTEM_PROTO_INCLUDES`.

    Raises :class:`ConfigError` naming ``protoFile``/``protoFiles[i]``/``protoContent``/
    ``importPaths[i]``: a file outside the allowed folders, a missing file, or protoc's
    error with file and line.
    """
    include_roots = (FileRoots((*roots, *SYSTEM_PROTO_INCLUDES), roots.denied)
                     if isinstance(roots, FileRoots) and roots else roots)
    imports = [str(body_file_path(folder, base_dir, include_roots,
                                  f"{key_path}.importPaths[{index}]"))
               for index, folder in enumerate(config.import_paths)]
    sources: list[tuple[str, Path]] = []
    if config.proto_file:
        sources.append((f"{key_path}.protoFile",
                        _proto_path(config.proto_file, base_dir, roots,
                                    f"{key_path}.protoFile")))
    for index, name in enumerate(config.proto_files):
        key = f"{key_path}.protoFiles[{index}]"
        sources.append((key, _proto_path(name, base_dir, roots, key)))
    for key, path in sources:
        if not path.is_file():
            raise ConfigError(key, f"{str(path)!r} is not a readable file (paths are relative "
                                   f"to the config file's folder)")
    cache_key = (tuple(_file_stamp(path) for _, path in sources), config.proto_content,
                 tuple(imports), mock_id if config.proto_content else "")
    with _cache_lock:
        cached = _cache.get(cache_key)
        if cached is not None:
            _cache.move_to_end(cache_key)
            return cached
    wells = _well_known_includes()
    collected: dict[str, bytes] = {}
    own: set[str] = set()

    def add(files: list[bytes]) -> None:
        for serialized in files:
            name = descriptor_pb2.FileDescriptorProto.FromString(serialized).name
            collected.setdefault(name, serialized)

    for key, path in sources:
        resolved = path.resolve()
        target = None
        includes: list[str] = []
        for folder in imports:
            folder_path = Path(folder).resolve()
            if resolved.is_relative_to(folder_path):
                target = resolved.relative_to(folder_path).as_posix()
                break
        if target is None:
            target = resolved.name
            includes.append(str(resolved.parent))
        includes += imports + wells
        files = _compile(target, includes, key, {target: path.name})
        own.add(target)
        add(files)
    if config.proto_content:
        name = f"{_safe_name(mock_id)}.proto"
        with tempfile.TemporaryDirectory(prefix="mockd-proto-") as folder:
            Path(folder, name).write_text(config.proto_content, encoding="utf-8")
            files = _compile(name, [folder, *imports, *wells], f"{key_path}.protoContent",
                             {name: "protoContent"})
        own.add(name)
        add(files)
    proto_set = ProtoSet(list(collected.values()), own)
    with _cache_lock:
        _cache[cache_key] = proto_set
        while len(_cache) > CACHE_SIZE:
            _cache.popitem(last=False)
    return proto_set


def _proto_path(text: str, base_dir: Path, roots: tuple[Path, ...], key: str) -> Path:
    """The file a ``protoFile`` names (relative to ``base_dir``). A ``.proto`` file may lie
    anywhere: it is a schema, never served as bytes, and only what protoc accepts as one is
    used; any other name is confined to ``roots`` like a ``bodyFile``."""
    if text.endswith(".proto"):
        return body_file_path(text, base_dir, FileRoots((), getattr(roots, "denied", ())), key)
    return body_file_path(text, base_dir, roots, key)


def _safe_name(text: str) -> str:
    return "".join(char if char.isalnum() or char in "_-" else "_" for char in text) or "inline"


def split_method_path(path: str) -> tuple[str, str]:
    """``/pkg.Service/Method`` -> ``("pkg.Service", "Method")`` (``("", path)`` when it has no
    service part)."""
    service, _, method = path.lstrip("/").rpartition("/")
    return service, method


