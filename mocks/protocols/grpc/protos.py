"""``.proto`` files compiled at run time into a private descriptor pool.

:func:`load_protos` runs protoc in process (``grpc_tools._protoc_compiler``: no external
binary, no generated module is ever imported) over ``protoFile``/``protoFiles``/
``protoContent``/``protoSources`` with the mock's ``importPaths`` plus the built-in includes
(:func:`builtin_includes`): the well-known types (``google/protobuf/*.proto``) and Google's
common protos (``google/api``, ``google/rpc``, ``google/type``, ``google/longrunning``, ...)
that the installed packages ship as ``.proto`` sources.
protoc hands back, per file, the Python source it would generate; the serialized
``FileDescriptorProto`` is read out of it as a literal (:func:`_descriptor_of`, via
:mod:`ast`: the source is parsed, never run). The files go into a fresh
``DescriptorPool``; message classes come from ``message_factory.GetMessageClass`` over it,
so the generated-code version check of protobuf never applies.

Results are cached by (file names, sizes, modification times, content, include folders), so
recompiling a snapshot whose protos did not change costs a dictionary lookup plus a ``stat``
of every file read (an imported file that changed on disk is compiled again).

:func:`inline_protos` is the command line's side: it compiles a ``.proto`` on the user's
machine with the folders they name (``--import-path``) and gives the ``grpc`` keys that carry
it and every file it imports inline (``protoContent`` or ``protoFile`` + ``protoSources``),
so the server reads no file of theirs.

A file protoc rejects is a :class:`~mocks.core.errors.ConfigError` naming the key, the file,
the line and protoc's message: ``mocks[0].grpc.protoFile: greeter.proto line 4: "strin" is
not defined.``

Source: behavior notes §10 (``grpc``: ``protoFile | protoFiles[] | protoContent``,
``importPaths[]``); docs/grpc.md "Protos from the wild". Django-free.
"""
from __future__ import annotations

import ast
import hashlib
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
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
        own_files: names of the mock's own files (``protoFile``, ``protoFiles``, the
            ``protoContent`` file), in that order.
        read_from: file name -> the file on disk it was compiled from, for the files of the
            mock's own folders and ``importPaths`` (not the built-in includes, not inline
            sources).

    Raises ``ValueError`` when two files declare the same symbol.
    """

    def __init__(self, files: list[bytes], own: Sequence[str],
                 read_from: dict[str, Path] | None = None):
        self.files = tuple(files)
        self.pool = descriptor_pool.DescriptorPool()
        self.methods: dict[str, MethodInfo] = {}
        self.services: list[str] = []
        self.own_files = tuple(own)
        self.read_from = dict(read_from or {})
        self.stamps = tuple(_file_stamp(path) for path in self.read_from.values())
        digest = hashlib.sha256()
        for serialized in files:
            digest.update(serialized)
            try:
                self.pool.AddSerializedFile(serialized)
            except (TypeError, ValueError) as error:
                name = descriptor_pb2.FileDescriptorProto.FromString(serialized).name
                raise ValueError(f"{name} cannot be loaded with the other files: {error}") \
                    from None
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
    """Folders holding ``google/protobuf/*.proto`` (grpc_tools) and Google's common protos
    (googleapis-common-protos ships ``google/api``, ``google/rpc``, ``google/type``,
    ``google/longrunning``, ... as ``.proto`` next to its modules)."""
    folders = []
    import grpc_tools

    folders.append(str(Path(grpc_tools.__file__).parent / "_proto"))
    try:
        import google.rpc.status_pb2 as status_module

        folders.append(str(Path(status_module.__file__).resolve().parents[2]))
    except ImportError:  # pragma: no cover - a dependency of grpcio-status
        pass
    return folders


#: Import names googleapis files use -> the name googleapis-common-protos ships the same
#: file under (its ``operations.proto`` is renamed to avoid a module clash in Python).
BUILTIN_ALIASES = {
    "google/longrunning/operations.proto": "google/longrunning/operations_proto.proto",
}


def builtin_includes(scratch: Path) -> list[str]:
    """The include folders every compile ends with: :func:`_well_known_includes`, then a
    folder made in ``scratch`` holding, for each :data:`BUILTIN_ALIASES` name those folders
    lack, a file that publicly imports the name they have (so ``import
    "google/longrunning/operations.proto"`` works without a path). A user's own copy of such
    a file (in ``importPaths``) comes first and wins."""
    folders = _well_known_includes()
    aliases = scratch / "aliases"
    for name, shipped in BUILTIN_ALIASES.items():
        if any((Path(folder) / name).is_file() for folder in folders) or \
                not any((Path(folder) / shipped).is_file() for folder in folders):
            continue
        target = aliases / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(f'syntax = "proto3";\nimport public "{shipped}";\n',
                          encoding="utf-8")
    if aliases.is_dir():
        folders.append(str(aliases))
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


def _compile(target: str, includes: list[str], key: str, shown: dict[str, str],
             near: Path | None = None) -> list[bytes]:
    """Serialized file descriptors of ``target`` (a path relative to one of ``includes``)
    and its imports, dependencies first. Raises :class:`ConfigError` at ``key``; an import
    that is not found but lies under a folder above ``near`` (the entry file's folder) is
    named with that folder (:func:`_import_hint`)."""
    from grpc_tools import _protoc_compiler

    with _protoc_lock:
        try:
            generated = _protoc_compiler.get_protos(
                target.encode(), [folder.encode() for folder in includes])
        except _protoc_compiler.ProtocErrors as failure:
            raise ConfigError(key, _protoc_message(failure, shown)
                              + _import_hint(failure, near)) from None
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


def _import_hint(failure: Any, near: Path | None) -> str:
    """`` (found in <folder>: add it to importPaths or --import-path)`` for the first import
    protoc did not find that exists below a folder above ``near``; ``""`` otherwise."""
    if near is None:
        return ""
    for error in failure.errors():
        text = error.message.decode("utf-8", "replace") if isinstance(error.message, bytes) \
            else str(error.message)
        name = error.filename.decode("utf-8", "replace") if isinstance(error.filename, bytes) \
            else str(error.filename)
        if text.strip() != "File not found." or not name.endswith(".proto"):
            continue
        for folder in (near, *near.parents):
            if (folder / name).is_file():
                return (f" ({name} is in {folder}: add that folder to importPaths, or "
                        f"--import-path {folder} on the command line)")
    return ""


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
    system include folders :data:`SYSTEM_PROTO_INCLUDES`. ``protoSources`` files are written
    to a private folder searched first (a ``protoFile``/``protoFiles`` entry naming one of
    them compiles it); the built-in includes (:func:`builtin_includes`) are searched last.

    Raises :class:`ConfigError` naming ``protoFile``/``protoFiles[i]``/``protoContent``/
    ``importPaths[i]``: a file outside the allowed folders, a missing file, or protoc's
    error with file and line; at ``key_path`` when two files declare the same symbol.
    """
    include_roots = (FileRoots((*roots, *SYSTEM_PROTO_INCLUDES), roots.denied)
                     if isinstance(roots, FileRoots) and roots else roots)
    imports = [str(body_file_path(folder, base_dir, include_roots,
                                  f"{key_path}.importPaths[{index}]"))
               for index, folder in enumerate(config.import_paths)]
    inline: dict[str, str] = dict(getattr(config, "proto_sources", None) or {})
    entries = ([(f"{key_path}.protoFile", config.proto_file)] if config.proto_file else [])
    entries += [(f"{key_path}.protoFiles[{index}]", name)
                for index, name in enumerate(config.proto_files)]
    sources: list[tuple[str, Path | str]] = []
    for key, name in entries:
        if name in inline:
            sources.append((key, name))
            continue
        path = _proto_path(name, base_dir, roots, key)
        if not path.is_file():
            raise ConfigError(key, f"{str(path)!r} is not a readable file (paths are relative "
                                   f"to the config file's folder)")
        sources.append((key, path))
    content_name = content_file_name(mock_id) if config.proto_content else ""
    if content_name in inline:
        raise ConfigError(f"{key_path}.protoContent",
                          f"protoSources has a file named {content_name} too; rename it")
    cache_key = (tuple(_file_stamp(item) if isinstance(item, Path) else item
                       for _, item in sources), config.proto_content,
                 tuple(sorted(inline.items())), tuple(imports), content_name)
    with _cache_lock:
        cached = _cache.get(cache_key)
        if cached is not None and cached.stamps == tuple(_file_stamp(path) for path in
                                                          cached.read_from.values()):
            _cache.move_to_end(cache_key)
            return cached
    with tempfile.TemporaryDirectory(prefix="mockd-proto-") as scratch_name:
        scratch = Path(scratch_name)
        inline_folder = scratch / "inline"
        for name, text in inline.items():
            (inline_folder / name).parent.mkdir(parents=True, exist_ok=True)
            (inline_folder / name).write_text(text, encoding="utf-8")
        if content_name:
            inline_folder.mkdir(exist_ok=True)
            (inline_folder / content_name).write_text(config.proto_content, encoding="utf-8")
            sources.append((f"{key_path}.protoContent", content_name))
        proto_set = _compile_sources(sources, imports, str(inline_folder), scratch,
                                     {content_name: "protoContent"}, key_path)
    with _cache_lock:
        _cache[cache_key] = proto_set
        while len(_cache) > CACHE_SIZE:
            _cache.popitem(last=False)
    return proto_set


def _compile_sources(sources: list[tuple[str, Path | str]], imports: list[str],
                     inline_folder: str, scratch: Path, shown: dict[str, str],
                     key_path: str) -> ProtoSet:
    """Compile each entry of ``sources`` (``(key, disk path | inline name)``) and collect
    the files into one :class:`ProtoSet`, noting where each file was read from."""
    builtins = builtin_includes(scratch)
    first = [inline_folder] if Path(inline_folder).is_dir() else []
    collected: dict[str, bytes] = {}
    read_from: dict[str, Path] = {}
    own: list[str] = []
    for key, item in sources:
        near = None
        if isinstance(item, Path):
            resolved = item.resolve()
            target = None
            includes: list[str] = []
            for folder in imports:
                if resolved.is_relative_to(Path(folder).resolve()):
                    target = resolved.relative_to(Path(folder).resolve()).as_posix()
                    break
            if target is None:
                target = resolved.name
                includes.append(str(resolved.parent))
            near = resolved.parent
            names = {target: item.name}
        else:
            target, includes, names = item, [], {item: shown.get(item, item)}
        includes += [*first, *imports, *builtins]
        for serialized in _compile(target, includes, key, names, near):
            name = descriptor_pb2.FileDescriptorProto.FromString(serialized).name
            if name in collected:
                continue
            collected[name] = serialized
            folder = next((folder for folder in includes if (Path(folder) / name).is_file()),
                          None)
            if folder is not None and folder != inline_folder and folder not in builtins:
                read_from[name] = Path(folder) / name
        if target not in own:
            own.append(target)
    try:
        return ProtoSet(list(collected.values()), own, read_from)
    except ValueError as error:
        raise ConfigError(key_path, str(error)) from None


def inline_protos(path: Path | None, import_paths: Sequence[str | Path] = (), *,
                  text: str | None = None, key: str = "proto",
                  mock_id: str = "inline") -> tuple[dict[str, Any], ProtoSet]:
    """The ``.proto`` keys of a ``grpc`` block that carry a file and every file it imports
    inline, and the compiled :class:`ProtoSet`. For the command line (``mockd grpc add``,
    ``mockd import``): the files are read here, with the folders the user names, so the
    server needs no access to them.

    ``path`` is the ``.proto`` file (None: ``text`` is its content, e.g. from stdin);
    ``import_paths`` are the include folders (``--import-path``; the file's own folder is
    searched too when it lies in none of them). The keys are ``{"protoContent": text}`` when
    the file imports nothing but the built-in includes; else ``{"protoFile": <its import
    name>, "protoSources": {import name: text, ...}}`` (with ``path`` None: ``protoContent``
    plus ``protoSources``).

    Raises :class:`ConfigError` (protoc's message, at ``<key>.protoFile`` or
    ``<key>.protoContent``; at ``<key>.importPaths[i]`` for a folder that is not one).
    """
    folders = []
    for index, folder in enumerate(import_paths):
        resolved = Path(folder).expanduser().resolve()
        if not resolved.is_dir():
            raise ConfigError(f"{key}.importPaths[{index}]", f"{str(folder)!r} is not a folder")
        folders.append(str(resolved))
    config = SimpleNamespace(proto_file=str(path.resolve()) if path is not None else None,
                             proto_files=[], proto_content=text if path is None else None,
                             proto_sources={}, import_paths=folders)
    protos = load_protos(config, key, Path("."), (), mock_id)
    texts = {name: file.read_text(encoding="utf-8") for name, file in protos.read_from.items()}
    if path is None:
        return ({"protoContent": text, "protoSources": texts} if texts
                else {"protoContent": text}), protos
    entry = protos.own_files[0]
    if set(texts) == {entry}:
        return {"protoContent": texts[entry]}, protos
    return {"protoFile": entry, "protoSources": texts}, protos


def _proto_path(text: str, base_dir: Path, roots: tuple[Path, ...], key: str) -> Path:
    """The file a ``protoFile`` names (relative to ``base_dir``). A ``.proto`` file may lie
    anywhere: it is a schema, never served as bytes, and only what protoc accepts as one is
    used; any other name is confined to ``roots`` like a ``bodyFile``."""
    if text.endswith(".proto"):
        return body_file_path(text, base_dir, FileRoots((), getattr(roots, "denied", ())), key)
    return body_file_path(text, base_dir, roots, key)


def content_file_name(mock_id: str) -> str:
    """The file name a ``protoContent`` compiles as (``<mock id>.proto``, characters other
    than letters, digits, ``_`` and ``-`` turned into ``_``): what reflection's
    ``file_by_filename`` knows it by."""
    return f"{_safe_name(mock_id)}.proto"


def _safe_name(text: str) -> str:
    return "".join(char if char.isalnum() or char in "_-" else "_" for char in text) or "inline"


def split_method_path(path: str) -> tuple[str, str]:
    """``/pkg.Service/Method`` -> ``("pkg.Service", "Method")`` (``("", path)`` when it has no
    service part)."""
    service, _, method = path.lstrip("/").rpartition("/")
    return service, method


