"""``mockd import`` and ``mockd export``: client commands for the import/export path.

``mockd import <file>`` converts the document locally (:func:`mocks.portability.importers.import_path`:
detection, conversion, schema validation, compile check) and posts the result to the admin
API's ``POST /config``, the same validate+merge service every other way in uses (STYLE §10).
Flags: ``--format`` (name or alias), ``--dry-run`` (convert and report; the server is not
contacted), ``--replace`` (replace all mocks of the workspace instead of merging),
``--json``, ``--include-static`` (HAR), ``--as`` (id namespace). A document that cannot be
imported prints one line ``Error: <format>: <where>: <reason>`` and exits with status 2;
nothing is imported. Imports that take longer than a second show a rich progress bar on
stderr (terminals only).

Output with ``--json`` (behavior notes §13): ``{imported, total, format, replace, source}``;
with ``--dry-run --json``: ``{dryRun: true, format, count, mocks: [{id, name, method,
path}]}``. Warnings go to stderr.

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


class DelayedProgress:
    """A rich progress bar on stderr that appears only once the work has taken longer than
    ``delay`` seconds (short imports print nothing extra), and only on a terminal."""

    def __init__(self, description: str, delay: float = PROGRESS_DELAY_SECONDS):
        self.description = description
        self.delay = delay
        self._lock = threading.Lock()
        self._progress: Any = None
        self._task: Any = None
        self._state = (0, None)
        self._timer: threading.Timer | None = None

    def __enter__(self) -> "DelayedProgress":
        from rich.console import Console

        console = Console(stderr=True)
        if console.is_terminal:
            self._timer = threading.Timer(self.delay, self._show, args=(console,))
            self._timer.daemon = True
            self._timer.start()
        return self

    def _show(self, console: Any) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

        with self._lock:
            if self._timer is None:
                return
            self._progress = Progress(TextColumn("{task.description}"), BarColumn(),
                                      MofNCompleteColumn(), console=console, transient=True)
            done, total = self._state
            self._task = self._progress.add_task(self.description, total=total,
                                                 completed=done)
            self._progress.start()

    def update(self, done: int, total: int | None) -> None:
        """Record progress (called from the importer)."""
        with self._lock:
            self._state = (done, total)
            if self._progress is not None:
                self._progress.update(self._task, completed=done, total=total)

    def phase(self, description: str) -> None:
        """Name the current step (``Sending to the server``)."""
        with self._lock:
            self.description = description
            if self._progress is not None:
                self._progress.update(self._task, description=description)

    def __exit__(self, *exc: Any) -> None:
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            if self._progress is not None:
                self._progress.stop()
                self._progress = None


def _convert(file: str, format_name: str | None, as_prefix: str | None, include_static: bool,
             progress: DelayedProgress, compile: bool) -> Any:
    from mocks.portability.importers import ImportDocumentError, import_document, import_path

    try:
        if file == "-":
            return import_document(sys.stdin.read(), format_name, as_prefix, source="<stdin>",
                                   include_static=include_static, progress=progress.update,
                                   compile=compile)
        return import_path(Path(file), format_name, as_prefix, include_static=include_static,
                           progress=progress.update, source=file, compile=compile)
    except ImportDocumentError as error:
        raise BadDocument(str(error)) from None


@click.command("import")
@click.argument("file", metavar="FILE")
@click.option("-f", "--format", "format_name", default=None, metavar="FORMAT",
              help="openapi (swagger, oas), postman, har, wiremock, mockoon, wsdl, curl or "
                   "mockd (native, json, yaml); detected from the content when omitted.")
@click.option("--dry-run", is_flag=True, help="Convert and report; import nothing.")
@click.option("--replace", is_flag=True, help="Replace all mocks instead of merging.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.option("--include-static", is_flag=True,
              help="HAR: keep static assets (scripts, styles, images, fonts).")
@click.option("--as", "as_prefix", default=None, metavar="NAME",
              help="Id namespace: OpenAPI operations become NAME.<operationId>.")
@client_options
def import_command(file: str, format_name: str | None, dry_run: bool, replace: bool,
                   as_json: bool, include_static: bool, as_prefix: str | None,
                   admin_url: str | None, api_key: str | None) -> None:
    """Import mocks from an OpenAPI/Swagger, Postman, HAR, WireMock, Mockoon, WSDL, curl or
    mockd file (a directory of WireMock mappings works too)."""
    with DelayedProgress("Importing") as progress:
        # Without --dry-run the server compiles what it receives (a compile error comes back
        # as a 400 and exits 2 all the same), so the local check stops at the schema.
        result = _convert(file, format_name, as_prefix, include_static, progress,
                          compile=dry_run)
        for warning in result.warnings:
            click.echo(f"Warning: {warning}", err=True)
        if dry_run:
            _print_dry_run(result, as_json)
            return
        progress.phase("Sending to the server")
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
    imported = answer.get("imported", len(result.mocks)) if isinstance(answer, dict) \
        else len(result.mocks)
    total = answer.get("total", imported) if isinstance(answer, dict) else imported
    if as_json:
        click.echo(json.dumps({"imported": imported, "total": total, "format": result.format,
                               "replace": replace, "source": result.source}, indent=2))
        return
    verb = "Replaced all mocks with" if replace else "Imported"
    click.echo(f"{verb} {imported} mock{'s' if imported != 1 else ''} from {result.source} "
               f"(format: {result.format}); {total} mock{'s' if total != 1 else ''} in total")


def _import_client(admin_url: str | None, api_key: str | None) -> Any:
    """An admin client whose requests may take as long as storing a large import does."""
    from mockd_project.cli_client import AdminClient, resolve_admin_url, resolve_api_key

    context = click.get_current_context()
    return AdminClient(resolve_admin_url(context, admin_url),
                       resolve_api_key(context, api_key), timeout=IMPORT_TIMEOUT_SECONDS)


def _json_body(payload: Any) -> bytes:
    import orjson

    return orjson.dumps(payload)


def post_config(client: Any, document: dict[str, Any], replace: bool,
                progress: DelayedProgress | None = None) -> Any:
    """``POST /config`` of an imported config; returns the server's answer.

    A body over :data:`MAX_REQUEST_BYTES` (the admin API takes at most 10 MiB, behavior
    notes §18) is sent in batches of mocks, the last batch carrying the tables, bindings,
    operations and every table-bound mock (the server compiles the whole configuration after
    each batch, so bindings must arrive with or after their mocks). To stay all or nothing,
    the workspace's configuration is read first and put back (``replace``) when a batch
    fails; the error is then raised.
    """
    body = _json_body({"config": document, "replace": replace})
    if len(body) <= MAX_REQUEST_BYTES:
        return client.request("POST", "/config", content=body,
                              headers={"Content-Type": "application/json"})
    batches = split_config(document)
    before = client.request("GET", "/config")
    answer: Any = None
    try:
        for number, batch in enumerate(batches):
            if progress is not None:
                progress.phase(f"Sending batch {number + 1} of {len(batches)}")
            answer = client.request(
                "POST", "/config", headers={"Content-Type": "application/json"},
                content=_json_body({"config": batch, "replace": replace and number == 0}))
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
                               "mocks": rows}, indent=2))
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


def register(group: click.Group) -> None:
    """Add ``import`` and ``export`` to the ``mockd`` command group."""
    group.add_command(import_command)
    group.add_command(export_command)
