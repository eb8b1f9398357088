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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click
import yaml
from pydantic import ValidationError

from mockd_project.cli_client import ClientError, client_options, make_client
from mocks.core.environment import expand_environment
from mocks.core.errors import ConfigError
from mocks.core.yamldoc import DocumentTooLarge, safe_load_bounded

from tables.config import TableConfig
from tables.errors import TableError
from tables.operations import (OperationError, OperationProblem, apply_operations, check_operation,
                         run_custom_operation, validation_message)
from tables.operations_config import CustomOperationConfig
from tables.store import TableStore, compile_tables


# ---------------------------------------------------------------------------- reading files


def read_document(path: str, what: str) -> Any:
    """The YAML/JSON content of ``path`` (environment variables expanded); a
    :class:`click.ClickException` naming the file and line for unreadable input."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as error:
        raise click.ClickException(f"cannot read {what} {path!r}: {error.strerror or error}") \
            from None
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


def table_store(documents: list[Any]) -> TableStore:
    """An in-memory store holding ``documents`` (table configs) from their seed data."""
    try:
        configs = [(TableConfig.model_validate(document), f"tables[{index}]")
                   for index, document in enumerate(documents)]
        store = TableStore()
        store.apply_definitions(compile_tables(configs))
    except ValidationError as error:
        raise click.ClickException(f"fixtures: {validation_message(error)}") from None
    except ConfigError as error:
        raise click.ClickException(f"fixtures: {error}") from None
    return store


# ---------------------------------------------------------------------------- the report


@dataclass
class OperationReport:
    """What ``validate`` found for one operation.

    Attributes:
        label: the operation's name, else its place in the file.
        problems: what makes it invalid.
        warnings: things worth a look that do not make it invalid.
        steps, consistency: of a valid operation.
        run: the runtime check's outcome (``{ok, result}`` or ``{ok, kind, status,
            message, step}``), when asked for.
    """

    label: str
    problems: list[OperationProblem | str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    steps: int = 0
    consistency: str = ""
    run: dict[str, Any] | None = None

    @property
    def valid(self) -> bool:
        """No problems (warnings allowed)."""
        return not self.problems

    def as_dict(self) -> dict[str, Any]:
        """The JSON form of ``--json``."""
        problems = []
        for problem in self.problems:
            if isinstance(problem, OperationProblem):
                problems.append({"location": problem.location, "step": problem.step,
                                 "stepType": problem.step_type,
                                 "expression": problem.expression, "reason": problem.reason,
                                 "message": str(problem)})
            else:
                problems.append({"location": "", "step": None, "stepType": None,
                                 "expression": None, "reason": problem, "message": problem})
        out: dict[str, Any] = {"name": self.label, "valid": self.valid, "problems": problems,
                               "warnings": self.warnings}
        if self.valid:
            out.update(steps=self.steps, consistency=self.consistency)
        if self.run is not None:
            out["run"] = self.run
        return out


def _input_warnings(operation: Any, input_value: Any) -> list[str]:
    """``input has no field "x" (read by steps[2].condition)`` for each field the operation
    reads by name that ``input_value`` lacks."""
    if not isinstance(input_value, dict):
        return [f"the input is {type(input_value).__name__}, not an object; input.<field> "
                f"reads give nil"]
    readers: dict[str, list[str]] = {}
    for location, expression in _expressions(operation):
        for name in sorted(expression.input_fields):
            if name not in input_value:
                readers.setdefault(name, []).append(location)
    return [f'input has no field "{name}" (read by {", ".join(locations)}); it reads as nil'
            for name, locations in readers.items()]


def _expressions(operation: Any) -> list[tuple[str, Any]]:
    found = []
    for step in operation.steps:
        prefix = f"steps[{step.index}]"
        for attribute in ("id", "value", "condition"):
            expression = getattr(step, attribute, None)
            if expression is not None and hasattr(expression, "input_fields"):
                found.append((f"{prefix}.{attribute}", expression))
        for name, expression in getattr(step, "assignments", ()):
            found.append((f"{prefix}.set.{name}", expression))
        for _, name, expression in getattr(step, "filters", ()):
            found.append((f"{prefix}.filter.{name}", expression))
    for name, expression in operation.response or ():
        found.append((f"response.{name}", expression))
    return found


def _run_outcome(store: TableStore, name: str, input_value: Any) -> dict[str, Any]:
    try:
        return {"ok": True, "result": run_custom_operation(store, name, input_value)}
    except OperationError as error:
        return {"ok": False, "kind": error.kind, "status": error.status,
                "message": error.message, "step": error.step}
    except TableError as error:
        return {"ok": False, "kind": "execution_failed", "status": error.status,
                "message": error.message, "step": None}


def validate_operations(documents: list[tuple[str, Any]], *, tables: list[Any],
                        known_tables: set[str] | None, input_value: Any,
                        check_input: bool, run: bool) -> list[OperationReport]:
    """Check each operation document; see the module docstring for the options."""
    reports: list[OperationReport] = []
    store = table_store(tables) if run else None
    for label, document in documents:
        name = document.get("name") if isinstance(document, dict) else None
        report = OperationReport(str(name) if name else label)
        reports.append(report)
        try:
            config = CustomOperationConfig.model_validate(document)
        except ValidationError as error:
            report.problems.append(validation_message(error))
            continue
        operation, problems = check_operation(config, known_tables)
        report.problems.extend(problems)
        if operation is None:
            continue
        report.steps, report.consistency = len(operation.steps), operation.consistency
        if check_input:
            report.warnings.extend(_input_warnings(operation, input_value))
        if store is not None:
            apply_operations(store, [operation])
            # Each operation runs on fresh fixtures: one run's writes never feed the next.
            for table in store.tables.values():
                table.reset()
            report.run = _run_outcome(store, operation.name, input_value)
            if report.run.get("kind") == "execution_failed":
                report.problems.append(f"run failed: {report.run['message']}")
    return reports


def print_report(reports: list[OperationReport]) -> None:
    """The human form: one line per operation, one indented line per problem or warning."""
    for report in reports:
        if report.valid:
            click.echo(f"✓ {report.label}: valid ({report.steps} steps, "
                       f"{report.consistency})")
        else:
            count = len(report.problems)
            click.echo(f"✗ {report.label}: {count} problem{'s' if count != 1 else ''}")
            for problem in report.problems:
                click.echo(f"    {problem}")
        for warning in report.warnings:
            click.echo(f"    warning: {warning}")
        if report.run is not None:
            outcome = report.run
            if outcome["ok"]:
                click.echo(f"    run: ok -> {json.dumps(outcome['result'], sort_keys=False)}")
            elif outcome["kind"] != "execution_failed":
                click.echo(f"    run: stopped ({outcome['kind']}, HTTP {outcome['status']}): "
                           f"{outcome['message']}")
    invalid = sum(1 for report in reports if not report.valid)
    total = len(reports)
    if invalid:
        click.echo(f"{invalid} of {total} custom operation{'s' if total != 1 else ''} invalid")
    else:
        click.echo(f"{total} custom operation{'s' if total != 1 else ''} valid")


# ---------------------------------------------------------------------------- commands


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
