"""The types every importer shares: the document probe, options, result and error.

:class:`ImportResult` is the one shape every way in produces (STYLE §10): mocks, tables and
bindings as config documents (camelCase dicts that validate against :mod:`mocks.config`),
plus warnings, the format name and the source. The CLI posts it to ``POST /config``; the
config loader merges it into the file's own config; both end in the same schema validation.

No Django. Pure data: safe to build in any thread.

Source: STYLE §10; SPEC "Import and export"; behavior notes §13.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

#: Called by an importer with (done, total) while a long conversion runs: operations,
#: entries or files converted so far, out of ``total``.
ProgressCallback = Callable[[int, int], None]

#: The stages of one import, in order, as named to a :data:`StageCallback`:
#: ``read`` (bytes of the file), ``parse`` (JSON or YAML text into data), ``convert``
#: (operations, entries or files of the document; what the importer reports), ``check``
#: (the converted mocks against the config schema), ``upload`` (requests to the admin API;
#: reported by the ``mockd import`` command, not by the import path).
STAGES = ("read", "parse", "convert", "check", "upload")

#: Called with (stage, done, total) as an import goes through :data:`STAGES`; ``total`` is
#: None while unknown. Within one stage ``done`` never decreases, and each stage ends with
#: ``done == total``. Runs on the importing thread: keep it cheap (the CLI only records the
#: numbers; its progress bar redraws on its own thread).
StageCallback = Callable[[str, int, "int | None"], None]

#: An importer reports at most one call in this many items (the last one is always reported).
REPORT_EVERY = 200

_MISSING = object()


class ImportDocumentError(Exception):
    """A document that cannot be imported; nothing is imported (all or nothing).

    Rendered as one line ``<format>: <location>: <reason>``, for example
    ``openapi: paths./users.get.responses: expected a mapping``.

    Attributes:
        format: the format that was tried (``openapi``, ``har``, ...; ``unknown`` when
            detection found none).
        location: dot path inside the document where it failed ("" for the whole document).
        reason: what is wrong and, where useful, what to try.
    """

    def __init__(self, format: str, location: str, reason: str):
        self.format = format
        self.location = location
        self.reason = reason
        super().__init__(str(self))

    def __str__(self) -> str:
        if self.location:
            return f"{self.format}: {self.location}: {self.reason}"
        return f"{self.format}: {self.reason}"


@dataclass
class ImportOptions:
    """Options of one import.

    Attributes:
        as_prefix: namespace of generated ids (``imports[].as``, ``--as``): an OpenAPI
            operation becomes the mock ``<as>.<operationId>``.
        include_static: HAR only: keep static assets (scripts, styles, images, fonts).
        progress: optional ``(done, total)`` callback for long conversions.
        variables: Postman only: ``{name: value}`` for ``{{name}}`` in the collection
            (``--var name=value``, ``imports[].variables``); they win over the collection's
            own variable defaults.
        import_paths: ``.proto`` only: folders searched for its imports (``--import-path``).
        grpc_port: ``.proto`` only: the port of the gRPC mocks (``--grpc-port``; None:
            50051).
    """

    as_prefix: str | None = None
    include_static: bool = False
    progress: ProgressCallback | None = None
    variables: dict[str, str] = field(default_factory=dict)
    import_paths: tuple[str, ...] = ()
    grpc_port: int | None = None

    def report(self, done: int, total: int) -> None:
        """Tell :attr:`progress` (if any) that ``done`` of ``total`` items are converted.

        Cheap enough for a per-item call in an importer's loop: only every
        :data:`REPORT_EVERY`-th item and the last one reach the callback.
        """
        if self.progress is not None and (done % REPORT_EVERY == 0 or done >= total):
            self.progress(done, total)


@dataclass
class DocumentProbe:
    """One input document, parsed at most once and shared by detection and conversion.

    Attributes:
        text: the document text (None for a directory).
        filename: the file or directory name as given ("" for text without a file); only its
            extension is used for detection.
        directory: set when the input is a directory (WireMock mappings).
        base_dir: the folder of the file the text was read from (None for text, stdin or
            a URL); OpenAPI reads files its relative ``$ref`` values name from there.
    """

    text: str | None
    filename: str = ""
    directory: Path | None = None
    base_dir: Path | None = None
    _parsed: Any = field(default=_MISSING, repr=False)
    _parse_error: str | None = field(default=None, repr=False)

    @property
    def extension(self) -> str:
        """Lower-case file extension with its dot (``.json``), or ""."""
        return Path(self.filename).suffix.lower() if self.filename else ""

    @property
    def stripped(self) -> str:
        """The text without leading white space and byte-order mark."""
        return (self.text or "").lstrip("\ufeff \t\r\n")

    def looks_like_xml(self) -> bool:
        """Whether the text starts like an XML document."""
        return self.stripped.startswith("<")

    def structured(self) -> Any:
        """The parsed JSON/YAML value, or None when the text does not parse (detection)."""
        if self._parsed is _MISSING:
            self._parse()
        return None if self._parse_error is not None else self._parsed

    def data(self, format: str) -> Any:
        """The parsed JSON/YAML value; raises :class:`ImportDocumentError` naming ``format``
        with the line and column of a syntax error."""
        if self._parsed is _MISSING:
            self._parse()
        if self._parse_error is not None:
            raise ImportDocumentError(format, "", self._parse_error)
        return self._parsed

    def _parse(self) -> None:
        text = self.stripped
        self._parsed = None
        if self.text is None:
            self._parse_error = "expected a file, got a directory"
            return
        if text[:1] in ("{", "["):
            # JSON first: orjson parses a 10 MB spec many times faster than YAML would.
            try:
                import orjson

                self._parsed = orjson.loads(text)
                return
            except ValueError:
                pass  # maybe YAML flow style; the YAML parser reports the position
        self._parsed, self._parse_error = parse_yaml(text)


def parse_yaml(text: str) -> tuple[Any, str | None]:
    """``(value, None)`` or ``(None, "not valid JSON or YAML at line L, column C: ...")``
    (``(None, "refused: ...")`` for an alias bomb, a cycle or too deep a nesting; see
    :mod:`mocks.core.yamldoc`)."""
    import yaml

    from mocks.core.yamldoc import DocumentTooLarge, safe_load_bounded

    try:
        return safe_load_bounded(text), None
    except DocumentTooLarge as error:
        return None, f"refused: {error}"
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        return None, f"not valid JSON or YAML{where}: {problem}"


@dataclass
class ImportResult:
    """What every importer returns (STYLE §10).

    Attributes:
        mocks: mock documents in the config-file shape (``{id, type, name?, http: {...}}``).
        tables: table documents (``tables[]``), e.g. from Mockoon CRUD routes.
        extend: extend bindings (``extend[]``) wiring ``mocks`` to ``tables``.
        stateful_resources: legacy ``statefulResources[]`` (mockd documents only).
        custom_operations: ``customOperations[]`` (mockd documents only).
        warnings: what was skipped or approximated, one sentence each.
        format: the canonical format name (``openapi``, ``postman``, ``har``, ``wiremock``,
            ``mockoon``, ``wsdl``, ``curl``, ``mockd``).
        source: where the document came from (file path, URL or ``<text>``).
        name: the document's own title (OpenAPI ``info.title``, collection name), if any.
        operation_ids: ``{reference: mock id}`` for references an extend binding may use
            (``operationId`` and ``<as>.<operationId>``).
        skipped: ``[{item, reason}]``, one per item of the document that could not be
            converted (``paths./users.get``, ``item[2].item[0] (Get user)``,
            ``mappings/users.json[3]``); the rest is imported (partial import).
        origins: ``{id(mock document): item}``, where each mock came from, so that a mock the
            schema check rejects is reported by its item (:meth:`item`).
    """

    mocks: list[dict[str, Any]] = field(default_factory=list)
    tables: list[dict[str, Any]] = field(default_factory=list)
    extend: list[dict[str, Any]] = field(default_factory=list)
    stateful_resources: list[dict[str, Any]] = field(default_factory=list)
    custom_operations: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    format: str = ""
    source: str = ""
    name: str | None = None
    operation_ids: dict[str, str] = field(default_factory=dict)
    skipped: list[dict[str, str]] = field(default_factory=list)
    origins: dict[int, str] = field(default_factory=dict)

    def skip(self, item: str, reason: str) -> None:
        """Record that ``item`` (where it is in the document) was not converted, and why;
        also adds the warning ``skipped <item>: <reason>``."""
        self.skipped.append({"item": item, "reason": reason})
        self.warnings.append(f"skipped {item}: {reason}")

    def item(self, name: str) -> "ItemConversion":
        """A ``with`` block converting one item of the document (one operation, request,
        entry or mapping)::

            with result.item(f"paths.{path}.{method}"):
                result.mocks.append(convert(operation))

        Mocks appended inside the block are remembered as coming from ``name``; an
        :class:`ImportDocumentError` raised inside it skips the item (:meth:`skip`, with
        the error's location and reason) instead of failing the whole import."""
        return ItemConversion(self, name)

    def origin(self, index: int) -> str:
        """The item that ``mocks[index]`` came from, or ``mocks[<index>] (<id>)``."""
        mock = self.mocks[index]
        known = self.origins.get(id(mock))
        if known:
            return known
        label = mock.get("id") or mock.get("name") if isinstance(mock, dict) else None
        return f"mocks[{index}]" + (f" ({label})" if label else "")

    def config_document(self) -> dict[str, Any]:
        """The result as a config file: ``{version: "1.0", mocks, tables?, extend?,
        statefulResources?, customOperations?}`` (the body of ``POST /config``)."""
        document: dict[str, Any] = {"version": "1.0", "mocks": self.mocks}
        for key, items in (("tables", self.tables), ("extend", self.extend),
                           ("statefulResources", self.stateful_resources),
                           ("customOperations", self.custom_operations)):
            if items:
                document[key] = items
        return document

    def summary(self) -> list[dict[str, Any]]:
        """``[{id, name, method, path}]`` of the mocks (``mockd import --dry-run --json``)."""
        rows = []
        for mock in self.mocks:
            mock_type = mock.get("type", "http")
            config = mock.get(mock_type) or {}
            matcher = config.get("matcher") or {}
            rows.append({"id": mock.get("id", ""), "name": mock.get("name", ""),
                         "method": matcher.get("method", "SOAP" if mock_type == "soap" else ""),
                         "path": matcher.get("path") or matcher.get("pathPattern")
                         or config.get("path", "")})
        return rows

    def to_json(self) -> str:
        """The config document as indented JSON text (golden files, debugging)."""
        return json.dumps(self.config_document(), indent=2, ensure_ascii=False)


class ItemConversion:
    """The ``with`` block of :meth:`ImportResult.item`."""

    def __init__(self, result: ImportResult, name: str):
        self.result = result
        self.name = name
        self.start = 0

    def __enter__(self) -> "ItemConversion":
        self.start = len(self.result.mocks)
        return self

    def __exit__(self, kind: Any, error: Any, traceback: Any) -> bool:
        mocks = self.result.mocks
        if isinstance(error, ImportDocumentError):
            del mocks[self.start:]  # nothing half-converted stays
            # "item[0]" + "item[0].request" -> "request: ..." (the item is named already)
            base = self.name.split(" (", 1)[0]
            where = error.location
            if where == base or where.startswith((base + ".", base + "[")):
                where = where[len(base):].lstrip(".")
            reason = f"{where}: {error.reason}" if where else error.reason
            self.result.skip(self.name, reason)
            return True
        for mock in mocks[self.start:]:
            self.result.origins[id(mock)] = self.name
        return False
