"""``mockd import`` and ``mockd export``: client commands for the import/export path.

``mockd import <file>`` converts the document locally (:func:`mocks.portability.importers.import_path`:
detection, conversion, schema validation, compile check) and posts the result to the admin
API's ``POST /config``, the same validate+merge service every other way in uses (STYLE §10).
Flags: ``--format`` (name or alias), ``--dry-run`` (convert and report; the server is not
contacted), ``--replace`` (replace all mocks of the workspace instead of merging),
``--json``, ``--include-static`` (HAR), ``--as`` (id namespace), ``--var NAME=VALUE``
(Postman variables, repeatable), ``-I/--import-path DIR`` (``.proto``: folders searched for
its imports, repeatable; the files used travel inline in the mocks, see docs/grpc.md),
``--grpc-port`` (``.proto``: the mocks' port, default 50051). A document that cannot be
imported prints one line ``Error: <format>: <where>: <reason>`` and exits with status 2;
nothing is imported.

Progress: on a terminal, an import that takes longer than a second shows a rich progress bar
on stderr naming the stage (reading, parsing, converting with a count of operations or
entries, checking, uploading) and erased when it ends; a pipe, a file or a CI log gets no
bar and no escape codes. Either way the import ends with one summary line on stdout
(``Imported 10000 mocks from api.json (format: openapi) in 12.8 s; 10000 mocks in total``),
or the JSON object with ``--json``.

Partial imports: an item of the document that cannot be converted (one operation, request,
entry or mapping) is skipped with a warning naming it and why; the rest is imported. An
import that converts nothing exits with status 2.

Output with ``--json`` (behavior notes §13): ``{imported, total, format, replace, source,
skipped: [{item, reason}]}``; with ``--dry-run --json``: ``{dryRun: true, format, count,
mocks: [{id, name, method, path}], skipped}``. Warnings go to stderr.

``mockd export`` fetches ``GET /config`` and writes it as a mockd collection (YAML by
default, ``--format json``), or as an OpenAPI 3.0 document (``--format openapi``); ``-o``
writes a file (the format follows its extension when ``--format`` is not given); ``-n``
names the collection (default ``exported-config``). Tables and bindings are exported in
resolved form (``statefulResources`` + ``http.statefulBinding``).

Both accept ``--admin-url`` / ``--api-key`` anywhere, like the other client commands.

Source: SPEC "Command-line surface" (``import``, ``export``), "Import and export";
behavior notes §13.
"""
from __future__ import annotations

import json
import sys
import threading
import time
from pathlib import Path
from typing import Any

import click

from mockd_project.cli_client import ClientError, client_options, make_client

#: Exit status of a document that cannot be imported (and of a bad export choice).
EXIT_BAD_DOCUMENT = 2
#: Largest ``POST /config`` body sent in one request: the admin API accepts 10 MiB (behavior
#: notes §18); the margin leaves room for the request line and headers.
MAX_REQUEST_BYTES = 10 * 1024 * 1024 - 64 * 1024
#: Seconds one ``POST /config`` of an import may take (the server stores and compiles it).
IMPORT_TIMEOUT_SECONDS = 600.0
#: Seconds an import may take before a progress bar appears.
PROGRESS_DELAY_SECONDS = 1.0

EXPORT_FORMATS = ("yaml", "json", "openapi", "mockd", "native", "own", "yml")


class BadDocument(click.ClickException):
    """A document that cannot be imported: ``Error: <message>`` on stderr, exit 2."""

    exit_code = EXIT_BAD_DOCUMENT

    def show(self, file: Any = None) -> None:
        """Print the one-line error."""
        click.echo(f"Error: {self.format_message()}", err=True)


#: How each stage is named on the progress bar.
STAGE_LABELS = {"read": "Reading", "parse": "Parsing", "convert": "Converting",
                "check": "Checking mocks", "upload": "Uploading to the server"}
#: Stages that report only their start and end (one parser call, one schema validation).
UNCOUNTED_STAGES = ("parse", "check")


def draws_progress(stream: Any) -> bool:
    """Whether a progress bar may be drawn on ``stream``: a real terminal that rich would
    animate (not ``TERM=dumb``, not ``TTY_INTERACTIVE=0``). A pipe, a file or a CI log never
    gets a bar, whatever ``FORCE_COLOR`` says: it would only fill the log with escape codes."""
    isatty = getattr(stream, "isatty", None)
    try:
        if isatty is None or not isatty():
            return False
    except ValueError:  # closed stream
        return False
    from rich.console import Console

    return Console(file=stream).is_interactive


class ImportProgress:
    """The progress of one ``mockd import``: the import path's stage callback plus the
    upload, shown as a rich progress bar on stderr.

    The bar appears only on a terminal (:func:`draws_progress`) and only once the import has
    taken longer than ``delay`` seconds, so short imports print nothing extra; it is
    transient (erased when the import ends, leaving the one-line summary). Elsewhere nothing
    is drawn at all.

    Concurrency: the importing thread calls :meth:`__call__` and :meth:`upload`; a timer
    thread shows the bar and rich redraws it on its own thread; one lock guards the state.
    """

    def __init__(self, delay: float = PROGRESS_DELAY_SECONDS, stream: Any = None):
        self.delay = delay
        self.stream = stream if stream is not None else sys.stderr
        self.started = time.monotonic()
        self._lock = threading.Lock()
        self._state: tuple[str, int, int | None] = ("read", 0, None)
        self._progress: Any = None
        self._task: Any = None
        self._task_stage = ""
        self._timer: threading.Timer | None = None

    @property
    def seconds(self) -> float:
        """Seconds since the import began."""
        return time.monotonic() - self.started

    def __enter__(self) -> "ImportProgress":
        if draws_progress(self.stream):
            self._timer = threading.Timer(self.delay, self._show)
            self._timer.daemon = True
            self._timer.start()
        return self

    def __call__(self, stage: str, done: int, total: int | None) -> None:
        """The import path's :data:`~mocks.portability.importers.StageCallback`."""
        with self._lock:
            self._state = (stage, done, total)
            if self._progress is not None:
                self._draw()

    def upload(self, done: int, total: int) -> None:
        """``done`` of ``total`` requests to the admin API have been answered."""
        self("upload", done, total)

    def warn(self, message: str) -> None:
        """Print ``Warning: message`` on stderr (above the bar while it is shown)."""
        with self._lock:
            if self._progress is not None:
                self._progress.console.print(f"Warning: {message}", markup=False,
                                             highlight=False, soft_wrap=True)
                return
        click.echo(f"Warning: {message}", err=True)

    def _draw(self) -> None:
        """Show the current state; each stage is a task of its own (a stage whose total is
        not known yet shows a pulsing bar, which an earlier stage's total would hide)."""
        fields = self._fields()
        if self._task is not None and self._task_stage == self._state[0]:
            self._progress.update(self._task, **fields)
            return
        if self._task is not None:
            self._progress.remove_task(self._task)
        self._task_stage = self._state[0]
        self._task = self._progress.add_task(fields.pop("description"), **fields)

    def _fields(self) -> dict[str, Any]:
        stage, done, total = self._state
        if stage == "read" and total:
            count = f"{done / 1_000_000:.1f}/{total / 1_000_000:.1f} MB"
        elif stage == "upload" and total and total > 1:
            count = f"request {min(done + 1, total)} of {total}"
        elif stage == "convert" and total:
            count = f"{done}/{total}"
        elif stage == "check" and total:
            count = f"{total} mock{'s' if total != 1 else ''}"
        else:
            count = ""
        if done < (total or 0) and (stage in UNCOUNTED_STAGES or stage == "upload"
                                    and total == 1):
            total = None  # only its start and end are known: pulse rather than sit at 0 %
        return {"description": STAGE_LABELS.get(stage, stage), "completed": done,
                "total": total or None, "count": count}

    def _show(self) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, Progress, ProgressColumn, SpinnerColumn, TextColumn
        from rich.text import Text

        started = self.started

        class ImportClock(ProgressColumn):
            """Time since the import began (not since the stage or since the bar appeared)."""

            def render(self, task: Any) -> Text:
                minutes, seconds = divmod(int(time.monotonic() - started), 60)
                return Text(f"{minutes}:{seconds:02d}", style="progress.elapsed")

        with self._lock:
            if self._timer is None:
                return
            self._progress = Progress(
                SpinnerColumn(), TextColumn("{task.description:<24}"), BarColumn(),
                TextColumn("{task.fields[count]}"), ImportClock(),
                console=Console(file=self.stream), transient=True)
            self._draw()
            self._progress.start()

    def __exit__(self, *exc: Any) -> None:
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            if self._progress is not None:
                self._progress.stop()
                self._progress = None


def _convert(file: str, format_name: str | None, as_prefix: str | None, include_static: bool,
             progress: ImportProgress, compile: bool,
             variables: dict[str, str] | None = None, import_paths: tuple[str, ...] = (),
             grpc_port: int | None = None) -> Any:
    from mocks.portability.importers import ImportDocumentError, import_document, import_path

    try:
        if file == "-":
            progress("read", 0, None)
            text = sys.stdin.read()
            progress("read", len(text), len(text))
            return import_document(text, format_name, as_prefix, source="<stdin>",
                                   include_static=include_static, progress=progress,
                                   compile=compile, variables=variables,
                                   import_paths=import_paths, grpc_port=grpc_port)
        return import_path(Path(file), format_name, as_prefix, include_static=include_static,
                           progress=progress, source=file, compile=compile,
                           variables=variables, import_paths=import_paths,
                           grpc_port=grpc_port)
    except ImportDocumentError as error:
        raise BadDocument(str(error)) from None


def parse_variables(pairs: tuple[str, ...]) -> dict[str, str]:
    """``("name=value", ...)`` of ``--var`` as a dict; raises :class:`click.BadParameter`
    (exit 2) for an item without ``=`` or with an empty name."""
    values: dict[str, str] = {}
    for pair in pairs:
        name, separator, value = pair.partition("=")
        if not separator or not name.strip():
            raise click.BadParameter(f"expected NAME=VALUE, got {pair!r}", param_hint="--var")
        values[name.strip()] = value
    return values


@click.command("import")
@click.argument("file", metavar="FILE")
@click.option("-f", "--format", "format_name", default=None, metavar="FORMAT",
              help="openapi (swagger, oas), postman, har, wiremock, mockoon, wsdl, curl, "
                   "proto or mockd (native, json, yaml); detected from the content when "
                   "omitted.")
@click.option("--dry-run", is_flag=True, help="Convert and report; import nothing.")
@click.option("--replace", is_flag=True, help="Replace all mocks instead of merging.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.option("--include-static", is_flag=True,
              help="HAR: keep static assets (scripts, styles, images, fonts).")
@click.option("--as", "as_prefix", default=None, metavar="NAME",
              help="Id namespace: OpenAPI operations become NAME.<operationId>.")
@click.option("--var", "variables", multiple=True, metavar="NAME=VALUE",
              help="Postman: a value for {{NAME}} (repeatable); wins over the collection's "
                   "own variables.")
@click.option("-I", "--import-path", "import_paths", multiple=True, metavar="DIR",
              type=click.Path(exists=True, file_okay=False),
              help=".proto: a folder searched for its imports (repeatable), as protoc -I; "
                   "the files used are sent with the mocks.")
@click.option("--grpc-port", type=click.IntRange(1, 65535), default=None,
              help=".proto: port of the gRPC mocks (default 50051).")
@client_options
def import_command(file: str, format_name: str | None, dry_run: bool, replace: bool,
                   as_json: bool, include_static: bool, as_prefix: str | None,
                   variables: tuple[str, ...], import_paths: tuple[str, ...],
                   grpc_port: int | None, admin_url: str | None,
                   api_key: str | None) -> None:
    """Import mocks from an OpenAPI/Swagger, Postman, HAR, WireMock, Mockoon, WSDL, curl,
    .proto or mockd file (a directory of WireMock mappings works too)."""
    values = parse_variables(variables)
    with ImportProgress() as progress:
        # Compiled here too, so that an item that does not compile is skipped (partial
        # import) rather than failing the whole upload.
        result = _convert(file, format_name, as_prefix, include_static, progress,
                          compile=True, variables=values, import_paths=import_paths,
                          grpc_port=grpc_port)
        for warning in result.warnings:
            progress.warn(warning)
        if not dry_run:
            client = _import_client(admin_url, api_key)
            try:
                answer = post_config(client, result.config_document(), replace, progress)
            except ClientError as error:
                if "(HTTP 400)" in error.format_message():
                    # The server rejected the converted document: still a document problem.
                    raise BadDocument(f"{result.format}: {error.format_message()}") from None
                raise
            finally:
                client.close()
    # The bar is gone (transient) before the result is printed.
    if dry_run:
        _print_dry_run(result, as_json)
        return
    imported = answer.get("imported", len(result.mocks)) if isinstance(answer, dict) \
        else len(result.mocks)
    total = answer.get("total", imported) if isinstance(answer, dict) else imported
    if as_json:
        click.echo(json.dumps({"imported": imported, "total": total, "format": result.format,
                               "replace": replace, "source": result.source,
                               "skipped": result.skipped}, indent=2))
        return
    verb = "Replaced all mocks with" if replace else "Imported"
    click.echo(f"{verb} {imported} mock{'s' if imported != 1 else ''} from {result.source} "
               f"(format: {result.format}) in {_duration(progress.seconds)}; {total} "
               f"mock{'s' if total != 1 else ''} in total")


def _duration(seconds: float) -> str:
    """``0.4 s``, ``12.8 s``, ``2 min 5 s``."""
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest} s"


def _import_client(admin_url: str | None, api_key: str | None) -> Any:
    """An admin client whose requests may take as long as storing a large import does."""
    return make_client(admin_url, api_key, timeout=IMPORT_TIMEOUT_SECONDS)


def _json_body(payload: Any) -> bytes:
    import orjson

    return orjson.dumps(payload)


def post_config(client: Any, document: dict[str, Any], replace: bool,
                progress: ImportProgress | None = None) -> Any:
    """``POST /config`` of an imported config; returns the server's answer.

    A body over :data:`MAX_REQUEST_BYTES` (the admin API takes at most 10 MiB, behavior
    notes §18) is sent in batches of mocks, the last batch carrying the tables, bindings,
    operations and every table-bound mock (the server compiles the whole configuration after
    each batch, so bindings must arrive with or after their mocks). To stay all or nothing,
    the workspace's configuration is read first and put back (``replace``) when a batch
    fails; the error is then raised. ``progress`` hears each answered request.
    """
    body = _json_body({"config": document, "replace": replace})
    answer: Any = None
    if len(body) <= MAX_REQUEST_BYTES:
        if progress is not None:
            progress.upload(0, 1)
        answer = client.request("POST", "/config", content=body,
                                headers={"Content-Type": "application/json"})
        if progress is not None:
            progress.upload(1, 1)
        return answer
    batches = split_config(document)
    before = client.request("GET", "/config")
    try:
        for number, batch in enumerate(batches):
            if progress is not None:
                progress.upload(number, len(batches))
            answer = client.request(
                "POST", "/config", headers={"Content-Type": "application/json"},
                content=_json_body({"config": batch, "replace": replace and number == 0}))
        if progress is not None:
            progress.upload(len(batches), len(batches))
    except ClientError:
        restore = {key: value for key, value in before.items()
                   if key not in ("kind", "name", "metadata")}
        client.request("POST", "/config", headers={"Content-Type": "application/json"},
                       content=_json_body({"config": restore, "replace": True}))
        raise
    if isinstance(answer, dict):
        answer = {**answer, "imported": len(document.get("mocks") or [])}
    return answer


def split_config(document: dict[str, Any],
                 limit: int | None = None) -> list[dict[str, Any]]:
    """``document`` as several config documents whose JSON stays under ``limit`` bytes
    (default :data:`MAX_REQUEST_BYTES`); the last holds everything table-related."""
    limit = limit or MAX_REQUEST_BYTES
    bound = {binding.get("mock") for binding in document.get("extend") or []}
    last_mocks, batches, current, size = [], [], [], 0
    for mock in document.get("mocks") or []:
        http = mock.get("http") if isinstance(mock.get("http"), dict) else {}
        if mock.get("id") in bound or http.get("statefulBinding") is not None:
            last_mocks.append(mock)
            continue
        mock_size = len(_json_body(mock)) + 1
        if current and size + mock_size > limit:
            batches.append({"version": "1.0", "mocks": current})
            current, size = [], 0
        current.append(mock)
        size += mock_size
    final = {key: value for key, value in document.items() if key != "mocks"}
    final["mocks"] = current + last_mocks
    batches.append({"version": "1.0", **final})
    return batches


def _print_dry_run(result: Any, as_json: bool) -> None:
    rows = result.summary()
    if as_json:
        click.echo(json.dumps({"dryRun": True, "format": result.format, "count": len(rows),
                               "mocks": rows, "skipped": result.skipped}, indent=2))
        return
    click.echo(f"Dry run: {len(rows)} mock{'s' if len(rows) != 1 else ''} from "
               f"{result.source} (format: {result.format}); nothing imported")
    for row in rows:
        click.echo(f"  {row['method'] or '*':<7} {row['path'] or '-':<40} {row['id']}")


@click.command("export")
@click.option("-f", "--format", "format_name", default=None,
              type=click.Choice(EXPORT_FORMATS, case_sensitive=False),
              help="yaml (default), json, or openapi (an OpenAPI 3.0 document).")
@click.option("-o", "--output", default=None, type=click.Path(dir_okay=False),
              help="Write to this file (its extension picks the format when --format is "
                   "omitted).")
@click.option("-n", "--name", default=None, help="Collection name (default exported-config).")
@client_options
def export_command(format_name: str | None, output: str | None, name: str | None,
                   admin_url: str | None, api_key: str | None) -> None:
    """Export the server's mocks as a mockd collection (YAML or JSON) or OpenAPI 3.0."""
    from mocks.portability.exporters import DEFAULT_EXPORT_NAME, dump_collection, native_collection
    from mocks.portability.exporters.openapi import openapi_document

    label = name or DEFAULT_EXPORT_NAME
    suffix = Path(output).suffix.lower() if output else ""
    wanted = (format_name or "").lower()
    if not wanted:
        wanted = "json" if suffix == ".json" else "yaml"
    client = make_client(admin_url, api_key)
    try:
        document = client.request("GET", "/config", params={"name": label})
    finally:
        client.close()
    if wanted == "openapi":
        from mocks.portability.exporters import resolve_bindings

        payload: Any = openapi_document(resolve_bindings(document), label)
        text_format = "json" if suffix == ".json" else "yaml"
    else:
        payload = native_collection(document, label)
        text_format = "json" if wanted == "json" else "yaml"
    text = dump_collection(payload, text_format)
    if output:
        Path(output).write_text(text, encoding="utf-8")
        count = len(document.get("mocks") or [])
        click.echo(f"Exported {count} mock{'s' if count != 1 else ''} to {output}")
    else:
        click.echo(text, nl=False)
