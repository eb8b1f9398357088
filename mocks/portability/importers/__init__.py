"""Import: every outside document becomes mocks through ONE path (STYLE §10).

Owns: the importer registry, format detection (:func:`detect_format`), and
:func:`import_document` / :func:`import_path`, which turn a document into an
:class:`ImportResult` (mocks, tables, bindings, warnings, format, source) and check that it
validates against the one config schema and compiles. Callers then merge it through the same
validate+merge service: the CLI posts it to ``POST /config``; the config loader folds
``imports:`` entries into the file (:mod:`mocks.portability.importers.config_imports`).

Importers (one module each, resolved lazily from import strings so that, for example, lxml
is only loaded for WSDL): ``openapi`` (OpenAPI 3.0/3.1, Swagger 2.0), ``postman``, ``har``,
``wiremock``, ``mockoon``, ``wsdl``, ``proto`` (gRPC services of a ``.proto``), ``curl``
(only when asked for), ``mockd`` (our own format, with its version-upgrade chain).

Who may call it: anyone; no Django, no I/O besides reading the given file or directory.
Pure functions: safe in any thread.

Progress: an optional ``progress(stage, done, total)`` callback (:data:`StageCallback`)
hears each of the stages ``read``, ``parse``, ``convert`` and ``check`` begin and end, and
the importer's per-item counts while it converts (:meth:`ImportOptions.report`); the
``mockd import`` command adds ``upload`` and draws the bar.

Errors: :class:`ImportDocumentError`, one line ``<format>: <where>: <reason>``; nothing is
imported when it is raised.

Source: SPEC "Import and export", "Import entry"; behavior notes §13 (detection order,
aliases, per-format rules); STYLE §10.
"""
from __future__ import annotations

import importlib
from pathlib import Path
from typing import Protocol

from mocks.portability.importers.result import (STAGES, DocumentProbe, ImportDocumentError,
                                                ImportOptions, ImportResult, ProgressCallback,
                                                StageCallback)

__all__ = ["DocumentProbe", "ImportDocumentError", "ImportOptions", "ImportResult",
           "ProgressCallback", "StageCallback", "STAGES", "FORMATS", "ALIASES",
           "canonical_format", "detect_format", "import_document", "import_path",
           "check_result"]


class Importer(Protocol):
    """One format. ``detects`` must be cheap (it runs in detection order on every import
    without ``--format``); ``convert`` raises :class:`ImportDocumentError`. ``title`` names
    the format to users and ``detection`` states the rule ``detects`` implements, in words
    (both listed by ``GET /formats``)."""

    format: str
    title: str
    detection: str

    def detects(self, probe: DocumentProbe) -> bool: ...

    def convert(self, probe: DocumentProbe, options: ImportOptions) -> ImportResult: ...


#: Canonical format name -> import string, in detection order (behavior notes §13: wsdl,
#: har, own, openapi, postman, mockoon, wiremock). curl is last and never auto-detected
#: (SPEC "Import and export": "only with --format curl").
FORMATS: dict[str, str] = {
    "wsdl": "mocks.portability.importers.wsdl:WsdlImporter",
    "har": "mocks.portability.importers.har:HarImporter",
    "mockd": "mocks.portability.importers.native:NativeImporter",
    "openapi": "mocks.portability.importers.openapi:OpenAPIImporter",
    "postman": "mocks.portability.importers.postman:PostmanImporter",
    "mockoon": "mocks.portability.importers.mockoon:MockoonImporter",
    "wiremock": "mocks.portability.importers.wiremock:WireMockImporter",
    "proto": "mocks.portability.importers.proto:ProtoImporter",
    "curl": "mocks.portability.importers.curl:CurlImporter",
}

#: Other names accepted by ``--format`` and ``imports[].format`` (behavior notes §13).
ALIASES: dict[str, str] = {
    "native": "mockd", "own": "mockd", "json": "mockd", "yaml": "mockd", "yml": "mockd",
    "swagger": "openapi", "oas": "openapi", "openapi3": "openapi", "postman2": "postman",
}

#: Formats detection may choose (curl needs ``--format curl``).
DETECTED = tuple(name for name in FORMATS if name != "curl")

_loaded: dict[str, Importer] = {}


def canonical_format(name: str) -> str:
    """The canonical name of ``name`` or an alias; raises :class:`ImportDocumentError`
    listing the known names."""
    key = (name or "").strip().lower()
    key = ALIASES.get(key, key)
    if key not in FORMATS:
        known = ", ".join([*FORMATS, *ALIASES])
        raise ImportDocumentError(name or "format", "", f"unknown format; use one of {known}")
    return key


def importer_for(format: str) -> Importer:
    """The importer instance of a canonical format name (loaded once)."""
    importer = _loaded.get(format)
    if importer is None:
        module_name, _, class_name = FORMATS[format].partition(":")
        importer = getattr(importlib.import_module(module_name), class_name)()
        _loaded[format] = importer
    return importer


def detect_format(text: str | None, filename: str = "", *,
                  probe: DocumentProbe | None = None) -> str | None:
    """The format of a document by its content (and extension), or None.

    Order (behavior notes §13): ``.wsdl`` or an XML ``definitions`` root -> wsdl; ``.har`` or
    a JSON ``log`` -> har; ``version`` with ``kind`` or ``mocks`` -> mockd; ``openapi`` or
    ``swagger`` -> openapi; ``info`` + ``item`` -> postman; ``routes`` with ``endpointPrefix``
    or ``port`` -> mockoon; ``request`` + ``response``, ``{mappings: [...]}`` or an array of
    mappings (or a directory) -> wiremock. A curl command is never detected: it needs
    ``--format curl`` (SPEC), and :func:`import_document` says so.
    """
    probe = probe or DocumentProbe(text, filename)
    for name in DETECTED:
        if importer_for(name).detects(probe):
            return name
    return None


def import_document(text_or_path: str | Path, format: str | None = None,
                    as_prefix: str | None = None, *, filename: str = "",
                    source: str | None = None, include_static: bool = False,
                    progress: StageCallback | None = None,
                    check: bool = True, compile: bool = True,
                    variables: dict[str, str] | None = None,
                    import_paths: tuple[str, ...] = (),
                    grpc_port: int | None = None) -> ImportResult:
    """Convert one document into an :class:`ImportResult`.

    Args:
        text_or_path: the document text (``str``), or a :class:`~pathlib.Path` to a file or
            to a directory of WireMock mappings.
        format: a format name or alias (``openapi``, ``swagger``, ``har``, ...); detected
            from the content when None.
        as_prefix: id namespace: OpenAPI operations become ``<as>.<operationId>``.
        filename: the file name for extension hints when ``text_or_path`` is text.
        source: how to name the document in the result (default: the path or ``<text>``).
        include_static: HAR: keep static assets.
        progress: ``(stage, done, total)`` callback (:data:`StageCallback`): the
            stages ``parse``, ``convert`` (with the importer's per-item counts) and
            ``check`` (plus ``read`` for a file).
        check: validate the result against the config schema (default).
        compile: with ``check``, also compile it like the engine would (regexes,
            templates, bindings); a caller that hands the result to a server or engine
            that compiles anyway may pass False to save the time (a 10 MB document).
        variables: Postman ``{{name}}`` values (:attr:`ImportOptions.variables`).
        import_paths, grpc_port: ``.proto`` include folders and gRPC port
            (:attr:`ImportOptions.import_paths`, :attr:`ImportOptions.grpc_port`).

    Raises:
        ImportDocumentError: unknown or malformed document, or a result that does not
            validate; the message names the format and where it failed.
    """
    if isinstance(text_or_path, Path):
        return import_path(text_or_path, format, as_prefix, include_static=include_static,
                           progress=progress, check=check, compile=compile, source=source,
                           variables=variables, import_paths=import_paths,
                           grpc_port=grpc_port)
    probe = DocumentProbe(text_or_path, filename)
    return _convert(probe, format, as_prefix, include_static, progress,
                    source or filename or "<text>", check, compile, variables,
                    import_paths, grpc_port)


def import_path(path: str | Path, format: str | None = None, as_prefix: str | None = None, *,
                include_static: bool = False, progress: StageCallback | None = None,
                check: bool = True, compile: bool = True,
                source: str | None = None,
                variables: dict[str, str] | None = None,
                import_paths: tuple[str, ...] = (),
                grpc_port: int | None = None) -> ImportResult:
    """:func:`import_document` for a file or a directory (WireMock mappings).

    Raises :class:`ImportDocumentError` (``<format>: cannot read <path>: ...``) for an
    unreadable file.
    """
    file_path = Path(path)
    if file_path.is_dir():
        probe = DocumentProbe(None, file_path.name, directory=file_path)
    else:
        try:
            size = file_path.stat().st_size
            if progress is not None:
                progress("read", 0, size)
            raw = file_path.read_bytes()
        except OSError as error:
            raise ImportDocumentError(format or "import", "",
                                      f"cannot read {str(file_path)!r}: "
                                      f"{error.strerror or error}") from None
        if progress is not None:
            progress("read", len(raw), len(raw))
        probe = DocumentProbe(decode_text(raw), file_path.name, base_dir=file_path.parent)
    return _convert(probe, format, as_prefix, include_static, progress, source or str(path),
                    check, compile, variables, import_paths, grpc_port)


def decode_text(raw: bytes) -> str:
    """Bytes of a document as text: UTF-8 (with or without BOM), else UTF-16 with a BOM,
    else Latin-1 (never fails: the parser then reports what is wrong)."""
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        return raw.decode("utf-16")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


def _convert(probe: DocumentProbe, format: str | None, as_prefix: str | None,
             include_static: bool, progress: StageCallback | None, source: str,
             check: bool, compile: bool,
             variables: dict[str, str] | None = None,
             import_paths: tuple[str, ...] = (),
             grpc_port: int | None = None) -> ImportResult:
    # The importer's last (done, total): the stage ends on its total, so that the count
    # never goes down when some items (static assets, repeats) made no mock.
    reported: list[int] = []

    def converted(done: int, total: int) -> None:
        reported[:] = [total]
        progress("convert", done, total)

    if progress is None:
        options = ImportOptions(as_prefix, include_static, variables=dict(variables or {}),
                                import_paths=tuple(import_paths), grpc_port=grpc_port)
    else:
        progress("parse", 0, 1)
        if probe.text is not None and not probe.looks_like_xml():
            # Parse now (the probe keeps the value or the error for detection and the
            # importer) so that parsing is its own stage rather than hidden in "convert".
            probe.structured()
        progress("parse", 1, 1)
        progress("convert", 0, None)
        options = ImportOptions(as_prefix, include_static, converted,
                                dict(variables or {}), tuple(import_paths), grpc_port)
    if format:
        name = canonical_format(format)
    else:
        name = detect_format(probe.text, probe.filename, probe=probe)
        if name is None:
            raise _undetected(probe)
    result = importer_for(name).convert(probe, options)
    result.format = name
    result.source = source
    count = len(result.mocks)
    if progress is not None:
        last = reported[0] if reported else count
        progress("convert", last, last)
    if check:
        if progress is not None:
            progress("check", 0, count)
        check_result(result, compile=compile, partial=name != "mockd")
        if progress is not None:
            progress("check", count, count)
    if not (result.mocks or result.tables or result.stateful_resources
            or result.custom_operations):
        raise _nothing_imported(result)
    return result


def _nothing_imported(result: ImportResult) -> ImportDocumentError:
    """An import that converted nothing is an error, never a silent success."""
    if result.skipped:
        first = result.skipped[0]
        more = len(result.skipped) - 1
        return ImportDocumentError(
            result.format, "", f"nothing could be imported: {len(result.skipped)} "
            f"item{'s' if len(result.skipped) != 1 else ''} skipped; first: {first['item']}: "
            f"{first['reason']}" + (f" (and {more} more)" if more else ""))
    return ImportDocumentError(result.format, "", "the document holds nothing to import "
                               "(no operations, requests, entries or mappings)")


def _undetected(probe: DocumentProbe) -> ImportDocumentError:
    text = probe.stripped
    if text.startswith(("curl ", "curl\t", "curl\n")):
        return ImportDocumentError("unknown", "", "this looks like a curl command; import it "
                                   "with --format curl")
    data = probe.structured()
    if text and data is None and not probe.looks_like_xml():
        try:
            probe.data("unknown")
        except ImportDocumentError as error:
            return ImportDocumentError("unknown", "", f"{error.reason}; pass --format to say "
                                       "what the document is")
    if isinstance(data, dict):
        keys = ", ".join(sorted(str(key) for key in data)[:8]) or "none"
        shape = f"top-level keys: {keys}"
    elif probe.looks_like_xml():
        shape = "an XML document whose root is not a WSDL 1.1 <definitions>"
    elif probe.directory is not None:
        shape = "a directory without WireMock mapping files"
    else:
        shape = {str: "plain text", list: "a list"}.get(type(data), "a scalar value") \
            if data is not None else "an empty document"
    return ImportDocumentError(
        "unknown", "", f"not a recognised document ({shape}); expected OpenAPI/Swagger, "
        "Postman collection, HAR, WireMock mappings, Mockoon environment, WSDL 1.1 or a mockd "
        "config; pass --format to choose")


def check_result(result: ImportResult, compile: bool = True, partial: bool = True) -> None:
    """Validate ``result`` against the config schema and (with ``compile``) compile it, so a
    bad conversion fails here and never half-way through a merge.

    Partial import: a mock that does not validate or compile is removed from ``result`` and
    recorded in ``result.skipped`` under the item it came from
    (:meth:`ImportResult.origin`), with the failing key and reason
    (``matcher.path: unbalanced '{' or '}' in path``); an ``extend`` binding that names a
    removed mock is removed the same way. The checks repeat until what is left is clean (at
    most once per mock). ``partial=False`` (mockd documents, which are configs rather than
    outside files) keeps it all or nothing.

    Raises :class:`ImportDocumentError` for a problem outside the mocks and bindings
    (``<format>: tables[0].name: ...``).
    """
    # Imported here: mocks.config imports this package's ImportEntry model at load time.
    from mocks.config import ConfigFile
    from mocks.core.errors import ConfigError
    from mocks.engine.snapshot import compile_snapshot
    from pydantic import ValidationError

    for _attempt in range(len(result.mocks) + len(result.extend) + 2):
        try:
            config = ConfigFile.model_validate(result.config_document())
        except ValidationError as error:
            problems = error.errors(include_url=False)
            if not partial or not _drop_invalid(result, problems):
                first = problems[0]
                raise ImportDocumentError(result.format, _location(first),
                                          f"converted mock is invalid: {_reason(first)}") \
                    from None
            continue
        if not compile:
            return
        try:
            compile_snapshot(config)
            return
        except ConfigError as error:
            location = error.path.lstrip(".")
            if not partial or not _drop_at(result, location, error.reason):
                raise ImportDocumentError(result.format, location,
                                          f"converted mock does not compile: {error.reason}") \
                    from None
    raise ImportDocumentError(result.format, "", "converted mocks do not check")  # unreachable


def _location(problem: dict) -> str:
    from mocks.core.errors import format_location

    return format_location(tuple(problem.get("loc", ())))


def _reason(problem: dict) -> str:
    return str(problem.get("msg", "invalid value")).removeprefix("Value error, ")


def _drop_invalid(result: ImportResult, problems: list[dict]) -> bool:
    """Remove the mocks and bindings that ``problems`` (pydantic errors) point at; False when
    one of them points elsewhere (nothing removed)."""
    reasons: dict[tuple[str, int], str] = {}
    for problem in problems:
        loc = tuple(problem.get("loc", ()))
        if len(loc) < 2 or loc[0] not in ("mocks", "extend") or not isinstance(loc[1], int):
            return False
        where = _location({"loc": loc[2:]})
        reasons.setdefault((loc[0], loc[1]), f"{where}: {_reason(problem)}" if where
                           else _reason(problem))
    for (key, index), reason in sorted(reasons.items(), key=lambda pair: -pair[0][1]):
        _remove(result, key, index, reason)
    return bool(reasons)


def _drop_at(result: ImportResult, location: str, reason: str) -> bool:
    """Remove the mock or binding at ``location`` (``mocks[3].http.matcher.path``); False
    when the location is elsewhere."""
    import re

    found = re.match(r"(mocks|extend)\[(\d+)\]\.?(.*)", location)
    if found is None:
        return False
    key, index, rest = found.group(1), int(found.group(2)), found.group(3)
    items = result.mocks if key == "mocks" else result.extend
    if index >= len(items):
        return False
    _remove(result, key, index, f"{rest}: {reason}" if rest else reason)
    return True


def _remove(result: ImportResult, key: str, index: int, reason: str) -> None:
    if key == "mocks":
        item = result.origin(index)
        mock = result.mocks.pop(index)
        result.origins.pop(id(mock), None)
        result.skip(item, reason)
    else:
        binding = result.extend.pop(index)
        label = binding.get("mock") if isinstance(binding, dict) else None
        result.skip(f"extend[{index}]" + (f" ({label})" if label else ""), reason)
