"""``mockd stateful custom …``: validate, register, run, list and delete custom operations.

* ``validate --file FILE`` checks operations offline and prints a report naming, for each
  problem, the step, the expression and why (exit 1 when any operation is invalid):

  - ``--input <json>``: the input to check against (fields read as ``input.<name>`` but
    missing from it are reported as warnings) and to run with;
  - ``--check-expressions-runtime``: run each valid operation once on an in-memory copy of
    the tables (``--fixtures-file`` or the file's own ``tables``) with ``--input``; an
    expression that fails at run time (``"a" - 1``) is a problem, a failed ``validate`` or a
    missing item is reported as the run's outcome;
  - ``--fixtures-file FILE``: tables for the checks: a config-like ``{tables: [...]}`` (or
    ``statefulResources``) or a map ``{<table>: [items]}``; a fixture table replaces the
    file's table of the same name;
  - ``--check-resources``: every step's ``resource`` must be a known table (from the
    fixtures or the file; with neither, the running server's ``GET /state``);
  - ``--json``: the report as JSON.

  FILE holds one operation, a list of operations, or a config file with
  ``customOperations`` (and ``tables``).
* ``add --file FILE`` registers each operation of FILE (``POST /state/operations``; a
  same-named one is replaced).
* ``run NAME [--input <json>]`` runs one (``POST /state/operations/NAME/execute``) and prints
  the result as JSON.
* ``list`` and ``delete NAME``.

Source: SPEC "Command-line surface" (``stateful custom validate/add/run`` and the validate
options), "Custom operation"; behavior notes §19 (checks at load, naming the step).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from mockd_project.cli_client import ClientError, client_options, make_client


# ---------------------------------------------------------------------------- reading files


def read_document(path: str, what: str) -> Any:
    """The YAML/JSON content of ``path`` (environment variables expanded); a
    :class:`click.ClickException` naming the file and line for unreadable input."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as error:
        raise click.ClickException(f"cannot read {what} {path!r}: {error.strerror or error}") \
            from None
    import yaml

    from mocks.core.environment import expand_environment
    from mocks.core.yamldoc import DocumentTooLarge, safe_load_bounded

    try:
        return safe_load_bounded(expand_environment(text))
    except DocumentTooLarge as error:
        raise click.ClickException(f"{what} {path!r} is refused: {error}") from None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise click.ClickException(f"{what} {path!r} is not valid YAML or JSON{where}") \
            from None


def operation_documents(document: Any) -> tuple[list[tuple[str, Any]], list[Any]]:
    """``([(label, operation document)], [table documents])`` of an operations file: one
    operation, a list of them, or a config with ``customOperations`` (and ``tables``)."""
    if isinstance(document, list):
        return [(f"[{index}]", item) for index, item in enumerate(document)], []
    if isinstance(document, dict) and ("customOperations" in document or "mocks" in document
                                       or "tables" in document):
        operations = document.get("customOperations") or []
        if not isinstance(operations, list):
            raise click.ClickException("customOperations must be a list")
        tables = [*(document.get("tables") or []), *(document.get("statefulResources") or [])]
        return ([(f"customOperations[{index}]", item) for index, item in enumerate(operations)],
                tables)
    if isinstance(document, dict):
        return [("operation", document)], []
    raise click.ClickException("the file must hold a custom operation, a list of them or a "
                               "config with customOperations")


def fixture_tables(document: Any) -> list[Any]:
    """Table documents of a fixtures file: ``{tables: [...]}``/``{statefulResources: [...]}``
    or ``{<table>: [items]}``."""
    if not isinstance(document, dict):
        raise click.ClickException("the fixtures file must be a mapping: {tables: [...]} or "
                                   "{<table>: [items]}")
    if "tables" in document or "statefulResources" in document:
        return [*(document.get("tables") or []), *(document.get("statefulResources") or [])]
    tables = []
    for name, items in document.items():
        if not isinstance(items, list):
            raise click.ClickException(f"fixtures: {name!r} must be a list of items")
        tables.append({"name": str(name), "seedData": items})
    return tables


def _json_option(text: str | None, option: str) -> Any:
    if text is None:
        return {}
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise click.BadParameter(f"not valid JSON: {error.msg} at column {error.colno}",
                                 param_hint=option) from None


@click.group("custom")
def custom_group() -> None:
    """Custom operations (multi-step logic over tables)."""


@custom_group.command("validate")
@click.option("--file", "file_path", required=True, metavar="FILE",
              help="Operation(s) to check: one operation, a list, or a config file.")
@click.option("--input", "input_text", default=None, metavar="JSON",
              help="Input to check against (and to run with).")
@click.option("--check-expressions-runtime", is_flag=True,
              help="Run each operation once on in-memory fixtures with --input.")
@click.option("--fixtures-file", default=None, metavar="FILE",
              help="Tables for the checks: {tables: [...]} or {<table>: [items]}.")
@click.option("--check-resources", is_flag=True,
              help="Every step's resource must be a known table.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@client_options
def custom_validate(file_path: str, input_text: str | None, check_expressions_runtime: bool,
                    fixtures_file: str | None, check_resources: bool, as_json: bool,
                    admin_url: str | None, api_key: str | None) -> None:
    """Validate custom operations; exit 1 when any is invalid."""
    from tables.operations_check import print_report, validate_operations

    input_value = _json_option(input_text, "--input")
    documents, file_tables = operation_documents(read_document(file_path, "file"))
    tables = list(file_tables)
    if fixtures_file:
        fixtures = fixture_tables(read_document(fixtures_file, "fixtures file"))
        # A fixture table replaces the file's table of the same name.
        replaced = {table.get("name") for table in fixtures if isinstance(table, dict)}
        tables = [table for table in tables
                  if not (isinstance(table, dict) and table.get("name") in replaced)]
        tables += fixtures
    known_tables: set[str] | None = None
    if check_resources:
        if tables:
            known_tables = {str(table.get("name")) for table in tables
                            if isinstance(table, dict)}
        else:
            client = make_client(admin_url, api_key)
            try:
                known_tables = set(client.request("GET", "/state")["resourceList"])
            finally:
                client.close()
    reports = validate_operations(documents, tables=tables, known_tables=known_tables,
                                  input_value=input_value, check_input=input_text is not None,
                                  run=check_expressions_runtime)
    if as_json:
        click.echo(json.dumps({"valid": all(report.valid for report in reports),
                               "operations": [report.as_dict() for report in reports]},
                              indent=2))
    else:
        print_report(reports)
    if not all(report.valid for report in reports):
        click.get_current_context().exit(1)


@custom_group.command("add")
@click.option("--file", "file_path", required=True, metavar="FILE",
              help="Operation(s) to register: one operation, a list, or a config file.")
@client_options
def custom_add(file_path: str, admin_url: str | None, api_key: str | None) -> None:
    """Register the custom operations of FILE (a same-named one is replaced)."""
    documents, _ = operation_documents(read_document(file_path, "file"))
    if not documents:
        raise ClientError(f"{file_path} holds no custom operation")
    client = make_client(admin_url, api_key)
    try:
        for _, document in documents:
            answer = client.request("POST", "/state/operations", json=document)
            click.echo(f"Registered custom operation: {answer['name']}")
    finally:
        client.close()


@custom_group.command("run")
@click.argument("name")
@click.option("--input", "input_text", default=None, metavar="JSON",
              help="The operation's input (a JSON object; default {}).")
@client_options
def custom_run(name: str, input_text: str | None, admin_url: str | None,
               api_key: str | None) -> None:
    """Run custom operation NAME and print its result."""
    input_value = _json_option(input_text, "--input")
    client = make_client(admin_url, api_key)
    try:
        result = client.request("POST", f"/state/operations/{name}/execute", json=input_value)
    finally:
        client.close()
    click.echo(json.dumps(result, indent=2))


@custom_group.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print the answer as JSON.")
@client_options
def custom_list(as_json: bool, admin_url: str | None, api_key: str | None) -> None:
    """List the registered custom operations."""
    client = make_client(admin_url, api_key)
    try:
        answer = client.request("GET", "/state/operations")
    finally:
        client.close()
    if as_json:
        click.echo(json.dumps(answer, indent=2))
        return
    if not answer["operations"]:
        click.echo("No custom operations")
    for operation in answer["operations"]:
        click.echo(f"{operation['name']}  steps: {operation['stepCount']}  "
                   f"consistency: {operation['consistency']}")


@custom_group.command("delete")
@click.argument("name")
@client_options
def custom_delete(name: str, admin_url: str | None, api_key: str | None) -> None:
    """Delete custom operation NAME."""
    client = make_client(admin_url, api_key)
    try:
        client.request("DELETE", f"/state/operations/{name}")
    finally:
        client.close()
    click.echo(f"Deleted custom operation: {name}")
