"""The offline checks of ``mockd stateful custom validate``: each operation of a file validated
against the config model, its steps checked against the known tables, optionally run once on an
in-memory copy of the tables, and the report printed or returned as JSON.

Kept apart from :mod:`tables.operations_cli` so that the commands that only talk to a running
server (``list``, ``run``, ``delete``, ``add``) do not load pydantic, the config models or the
table store: a client command stays under 300 ms (issue "a CLI that answers at once").

Source: SPEC "Command-line surface" (``stateful custom validate`` and its options), "Custom
operation"; behavior notes §19 (checks at load, naming the step).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import click
from pydantic import ValidationError

from mocks.core.errors import ConfigError
from tables.config import TableConfig
from tables.errors import TableError
from tables.operations import (OperationError, OperationProblem, apply_operations, check_operation,
                         run_custom_operation, validation_message)
from tables.operations_config import CustomOperationConfig
from tables.store import TableStore, compile_tables


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
