"""Custom operations: multi-step business logic over tables, compiled once, run per request.

Compile (:func:`compile_operation`, :func:`compile_operations`, :func:`check_operation`):
every expression of a :class:`~tables.operations_config.CustomOperationConfig` is parsed and
checked once (:mod:`tables.expressions`) against the names known at its step (``input`` and
the ``as``/``var`` names of earlier steps; the ``response`` sees them all). A problem is a
:class:`~mocks.core.errors.ConfigError` naming the field
(``customOperations[2].steps[1].condition: expression "frm.balance > 0": unknown name
"frm" (known here: from, input)``); :func:`check_operation` collects every problem for the
CLI validator instead of stopping at the first.

Run (:meth:`CustomOperation.run`; input in, result out, no protocol): steps run in order
against ``variables = {"input": <input>, ...}``; every table access is an
:class:`~tables.store.OperationRequest` through :meth:`TableStore.execute
<tables.store.TableStore.execute>` (STYLE §6):

============  =================================================================================
``read``      ``get`` of ``id`` into ``as``; a missing item fails with 404
``create``    ``create`` with the ``set`` map as the body; the new item into ``as``
``update``    ``patch`` of ``id`` with the ``set`` map (other fields kept); the item into ``as``
``delete``    ``delete`` of ``id``; the removed item into ``as``
``set``       ``var`` = ``value``
``list``      every item (oldest first, no pagination) whose ``filter`` fields equal the
              values (text comparison, like list query filters) into ``as``
``validate``  halts when ``condition`` is false or nil: ``errorStatus`` (400) with
              ``errorMessage`` (``validation failed: <condition>``)
============  =================================================================================

The result is the ``response`` map evaluated after the last step, or None (entry points
answer ``{"success": true}``). ``now()`` is one instant for the whole run.

Failures are :class:`OperationError` (a :class:`~tables.errors.TableError`, so every protocol
adapter maps it like any table error): ``validation_failed`` (the step's status and
message), ``not_found`` (a ``read`` of a missing item, 404) and ``execution_failed`` (400:
anything else, e.g. a type error in an expression, a write the table refused; the message
names the step). With ``consistency: atomic`` a failed run first restores every table it
wrote (items and id sequence), so creates, updates and deletes of that run are all undone;
``best_effort`` leaves the changes of earlier steps in place.

Entry points all reach :meth:`OperationRegistry.__call__`, installed as the store's
``custom_runner``: an extend binding with ``action: custom`` + ``operation``, an HTTP mock's
``statefulOperation`` (:func:`operation_binding`), ``POST /state/operations/{name}/execute``
(:mod:`tables.control`), ``mockd stateful custom run``, and SOAP's ``statefulAction:
custom`` (through :func:`run_custom_operation`).

Concurrency: single owner, the engine loop. A run never awaits, so two runs (and any other
request) never interleave half-way.

No Django.

Source: SPEC "Custom operation", "Errors" (validate status), "Limits" (``list`` step);
behavior notes §1 "State (tables) and custom operations", §6 (``custom``), §19.
"""
from __future__ import annotations

import time
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from mocks.core.errors import ConfigError
from mocks.core.errors import listed_text, validation_issues

from tables import errors
from tables.binding import BindingSpec
from tables.errors import TableError
from tables.expressions import (EvaluationError, Expression, ExpressionError, compile_expression,
                          text_of, type_name)
from tables.ids import format_nanoseconds, value_text
from tables.operations_config import CustomOperationConfig, StepConfig
from tables.query import matches_filters
from tables.store import OperationRequest, RuntimeTable, TableStore

#: Error code of a failed run that is neither a failed ``validate`` nor a missing ``read``.
EXECUTION_FAILED = "EXECUTION_FAILED"
#: The result of an operation without ``response`` (behavior notes §6).
SUCCESS: dict[str, Any] = {"success": True}
#: Message of a registered operation (behavior notes §1).
REGISTERED_MESSAGE = "Custom operation registered"

#: ``OperationError.kind`` -> the admin ``error`` code (behavior notes §1).
ADMIN_CODES = {"validation_failed": "validation_error", "not_found": "not_found",
               "execution_failed": "execution_failed"}


# ---------------------------------------------------------------------------- errors


class OperationError(TableError):
    """A run that failed (rolled back first under ``atomic``).

    Attributes:
        kind: ``validation_failed``, ``not_found`` or ``execution_failed``.
        status: the HTTP status: the step's ``errorStatus`` (default 400), 404 or 400.
        message: for ``validation_failed`` the step's ``errorMessage``; else what failed,
            naming the step (``steps[2] (update accounts): ...``).
        operation: the operation name.
        step: the index of the failed step, or None (the ``response``).
        code: the table error code (``VALIDATION_ERROR``, ``NOT_FOUND``,
            ``EXECUTION_FAILED``) for error transforms.
    """

    def __init__(self, kind: str, message: str, *, status: int, operation: str,
                 step: int | None = None, table: str = "", item_id: str = "", hint: str = ""):
        code = {"validation_failed": errors.VALIDATION_ERROR,
                "not_found": errors.NOT_FOUND}.get(kind, EXECUTION_FAILED)
        super().__init__(code, message, table=table, item_id=item_id, hint=hint)
        self.kind = kind
        self.status = status
        self.operation = operation
        self.step = step

    @property
    def admin_code(self) -> str:
        """The admin ``error`` code: ``validation_error``, ``not_found``,
        ``execution_failed``."""
        return ADMIN_CODES[self.kind]

    def admin_body(self) -> dict[str, Any]:
        """``{"error": <admin code>, "message"}`` (behavior notes §1)."""
        return {"error": self.admin_code, "message": self.message}


def operation_not_found(name: str) -> TableError:
    """404 ``custom operation "<name>" not found``."""
    return TableError(errors.NOT_FOUND, f'custom operation "{name}" not found',
                      hint="Define it under 'customOperations' or register it with POST "
                           "/state/operations")


# ---------------------------------------------------------------------------- static problems


@dataclass(frozen=True, slots=True)
class OperationProblem:
    """One thing wrong with an operation, found before it runs.

    Attributes:
        location: the key inside the operation (``steps[1].condition``,
            ``response.total``, ``steps[0].resource``).
        reason: why (``unknown name "frm" (known here: input)``).
        step: the step index, or None.
        step_type: the step's ``type``, or None.
        expression: the expression text when the problem is in one, else None.
    """

    location: str
    reason: str
    step: int | None = None
    step_type: str | None = None
    expression: str | None = None

    @property
    def detail(self) -> str:
        """``expression "<text>": <reason>`` (or the reason alone)."""
        if self.expression is not None:
            return f'expression "{self.expression}": {self.reason}'
        return self.reason

    def __str__(self) -> str:
        label = f"{self.location} ({self.step_type})" if self.step_type else self.location
        return f"{label}: {self.detail}"


# ---------------------------------------------------------------------------- runs


class Journal:
    """What ``atomic`` needs to undo a run: each written table's items and id sequence as
    they were before the run's first write to it.

    The store never changes a stored item in place (writes put new dicts), so a shallow copy
    of ``items`` restores creates, updates and deletes exactly, in their original order.
    """

    __slots__ = ("_saved",)

    def __init__(self) -> None:
        self._saved: dict[str, tuple[RuntimeTable, dict[str, dict[str, Any]], int]] = {}

    def remember(self, store: TableStore, name: str) -> None:
        """Save table ``name`` before its first write of the run (unknown tables: nothing)."""
        if name in self._saved:
            return
        table = store.tables.get(name)
        if table is not None:
            self._saved[name] = (table, dict(table.items), table.sequence)

    def roll_back(self) -> None:
        """Put every saved table back as it was."""
        for table, items, sequence in reversed(self._saved.values()):
            table.items = items
            table.sequence = sequence
        self._saved.clear()


class Run:
    """One execution of an operation: its variables, the store, the undo journal.

    Attributes:
        operation: the operation running.
        store: the table store every step goes through.
        variables: ``input`` and the step variables.
        journal: the undo journal (``atomic``), else None.
    """

    __slots__ = ("operation", "store", "variables", "journal", "_now")

    def __init__(self, operation: CustomOperation, store: TableStore, input_value: Any):
        self.operation = operation
        self.store = store
        self.variables: dict[str, Any] = {"input": input_value}
        self.journal = Journal() if operation.consistency == "atomic" else None
        self._now: str | None = None

    def now(self) -> str:
        """The run's one instant (RFC 3339), fixed on first use."""
        if self._now is None:
            self._now = format_nanoseconds(time.time_ns())
        return self._now

    def failure(self, step: CompiledStep | None, message: str, **details: Any) -> OperationError:
        """An ``execution_failed`` error naming the step (``message`` names the ``response``
        field itself when ``step`` is None)."""
        text = f"{step.label}: {message}" if step is not None else message
        return OperationError("execution_failed", text, status=400,
                              operation=self.operation.name,
                              step=step.index if step is not None else None, **details)

    def evaluate(self, step: CompiledStep | None, field: str, expression: Expression) -> Any:
        """``expression``'s value; a type error becomes an ``execution_failed`` error naming
        the step, the field and the expression."""
        try:
            return expression.evaluate(self.variables, self.now)
        except EvaluationError as error:
            raise self.failure(step, f'{field} "{expression.source}": {error}') from None

    def item_id(self, step: CompiledStep, expression: Expression) -> str:
        """The text id of ``expression`` (numbers as decimal text)."""
        value = self.evaluate(step, "id", expression)
        if value is None or value == "":
            raise self.failure(step, f'id "{expression.source}" is {text_of(value) or "empty"}'
                                     f"; give the item id (for example input.id)")
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            raise self.failure(step, f'id "{expression.source}" must be a string or a number, '
                                     f"got {type_name(value)}")
        return value_text(value)

    def execute(self, step: CompiledStep, request: OperationRequest) -> Any:
        """Run one table operation for ``step``; returns the result. A table error becomes
        ``not_found`` (a ``read``) or ``execution_failed`` (anything else)."""
        if self.journal is not None and request.action in ("create", "patch", "delete"):
            self.journal.remember(self.store, request.table)
        result = self.store.execute(request)
        error = result.error
        if error is None:
            return result
        if step.type == "read" and error.code == errors.NOT_FOUND:
            raise OperationError("not_found", error.message, status=404,
                                 operation=self.operation.name, step=step.index,
                                 table=error.table, item_id=error.item_id, hint=error.hint)
        message = error.message
        if error.details:
            first = error.details[0]
            message += f" ({first.get('field') or 'body'}: {first.get('message')})"
        raise self.failure(step, message, table=error.table, item_id=error.item_id)


# ---------------------------------------------------------------------------- steps


class CompiledStep:
    """A compiled step: ``run(run)`` does its work on the run's variables and store.

    Attributes:
        index: position in ``steps``.
        type: the step type.
        label: ``steps[<index>] (<type> <resource>)`` for messages.
    """

    __slots__ = ("index", "type", "label")

    def __init__(self, index: int, step_type: str, resource: str | None = None):
        self.index = index
        self.type = step_type
        self.label = f"steps[{index}] ({step_type}{' ' + resource if resource else ''})"

    def run(self, run: Run) -> None:  # pragma: no cover - every step overrides it
        raise NotImplementedError


class ReadStep(CompiledStep):
    """``read``: the item ``id`` of ``resource`` into ``as``."""

    __slots__ = ("resource", "id", "variable")

    def __init__(self, index: int, resource: str, item_id: Expression, variable: str | None):
        super().__init__(index, "read", resource)
        self.resource = resource
        self.id = item_id
        self.variable = variable

    def run(self, run: Run) -> None:
        result = run.execute(self, OperationRequest("get", self.resource,
                                                    run.item_id(self, self.id)))
        if self.variable:
            run.variables[self.variable] = result.item


def _body(run: Run, step: CompiledStep,
          assignments: Sequence[tuple[str, Expression]]) -> dict[str, Any]:
    return {name: run.evaluate(step, f"set.{name}", expression)
            for name, expression in assignments}


class CreateStep(CompiledStep):
    """``create``: a new item of ``resource`` from the ``set`` map, into ``as``."""

    __slots__ = ("resource", "assignments", "variable")

    def __init__(self, index: int, resource: str,
                 assignments: Sequence[tuple[str, Expression]], variable: str | None):
        super().__init__(index, "create", resource)
        self.resource = resource
        self.assignments = tuple(assignments)
        self.variable = variable

    def run(self, run: Run) -> None:
        body = _body(run, self, self.assignments)
        result = run.execute(self, OperationRequest("create", self.resource, body=body))
        if self.variable:
            run.variables[self.variable] = result.item


class UpdateStep(CompiledStep):
    """``update``: merge the ``set`` map into item ``id`` of ``resource`` (a ``patch``:
    fields not named keep their values); the item into ``as``."""

    __slots__ = ("resource", "id", "assignments", "variable")

    def __init__(self, index: int, resource: str, item_id: Expression,
                 assignments: Sequence[tuple[str, Expression]], variable: str | None):
        super().__init__(index, "update", resource)
        self.resource = resource
        self.id = item_id
        self.assignments = tuple(assignments)
        self.variable = variable

    def run(self, run: Run) -> None:
        item_id = run.item_id(self, self.id)
        body = _body(run, self, self.assignments)
        result = run.execute(self, OperationRequest("patch", self.resource, item_id, body))
        if self.variable:
            run.variables[self.variable] = result.item


class DeleteStep(CompiledStep):
    """``delete``: remove item ``id`` of ``resource``; the removed item into ``as``."""

    __slots__ = ("resource", "id", "variable")

    def __init__(self, index: int, resource: str, item_id: Expression, variable: str | None):
        super().__init__(index, "delete", resource)
        self.resource = resource
        self.id = item_id
        self.variable = variable

    def run(self, run: Run) -> None:
        result = run.execute(self, OperationRequest("delete", self.resource,
                                                    run.item_id(self, self.id)))
        if self.variable:
            run.variables[self.variable] = result.item


class SetStep(CompiledStep):
    """``set``: ``var`` = ``value``."""

    __slots__ = ("variable", "value")

    def __init__(self, index: int, variable: str, value: Expression):
        super().__init__(index, "set")
        self.variable = variable
        self.value = value

    def run(self, run: Run) -> None:
        run.variables[self.variable] = run.evaluate(self, "value", self.value)


class ListStep(CompiledStep):
    """``list``: every item of ``resource`` (oldest first, no pagination) whose ``filter``
    fields equal the values, as an array into ``as`` (SPEC "Limits": all matches)."""

    __slots__ = ("resource", "filters", "variable")

    def __init__(self, index: int, resource: str,
                 filters: Sequence[tuple[str, Expression]], variable: str):
        super().__init__(index, "list", resource)
        self.resource = resource
        self.filters = tuple((tuple(name.split(".")), name, expression)
                             for name, expression in filters)
        self.variable = variable

    def run(self, run: Run) -> None:
        table = run.store.tables.get(self.resource)
        # One page as large as the table: the list step has no pagination.
        size = str(max(len(table.items), 1)) if table is not None else "1"
        result = run.execute(self, OperationRequest(
            "list", self.resource, query={"sort": ["createdAt"], "order": ["asc"],
                                          "limit": [size]}))
        wanted = [(path, value_text(run.evaluate(self, f"filter.{name}", expression)))
                  for path, name, expression in self.filters]
        items = result.items or []
        run.variables[self.variable] = [item for item in items
                                        if matches_filters(item, wanted)] if wanted else items


class ValidateStep(CompiledStep):
    """``validate``: halt when ``condition`` is false or nil, with ``status`` and
    ``message``."""

    __slots__ = ("condition", "message", "status")

    def __init__(self, index: int, condition: Expression, message: str, status: int):
        super().__init__(index, "validate")
        self.condition = condition
        self.message = message
        self.status = status

    def run(self, run: Run) -> None:
        value = run.evaluate(self, "condition", self.condition)
        if value is True:
            return
        if value is False or value is None:
            raise OperationError("validation_failed", self.message, status=self.status,
                                 operation=run.operation.name, step=self.index)
        raise run.failure(self, f'condition "{self.condition.source}" must be true or false, '
                                f"got {type_name(value)} ({text_of(value)})")


# ---------------------------------------------------------------------------- operations


class CustomOperation:
    """A compiled custom operation (immutable).

    Attributes:
        config: the operation as configured.
        name, consistency: from the config.
        steps: the compiled steps, in order.
        response: ``((name, expression), ...)``, or None for ``{"success": true}``.
        resources: the tables its steps name, in order of first use.
    """

    __slots__ = ("config", "name", "consistency", "steps", "response", "resources")

    def __init__(self, config: CustomOperationConfig, steps: Sequence[CompiledStep],
                 response: Sequence[tuple[str, Expression]] | None):
        self.config = config
        self.name = config.name
        self.consistency = config.consistency
        self.steps = tuple(steps)
        self.response = tuple(response) if response is not None else None
        self.resources = tuple(dict.fromkeys(step.resource for step in config.steps
                                             if step.resource))

    def run(self, store: TableStore, input_value: Any) -> dict[str, Any] | None:
        """Run every step against ``store``; returns the ``response`` map's values (None
        without a ``response``). Raises :class:`OperationError`; under ``atomic`` every
        table the run wrote is restored first."""
        run = Run(self, store, {} if input_value is None else input_value)
        try:
            for step in self.steps:
                step.run(run)
            if self.response is None:
                return None
            return {name: run.evaluate(None, f"response.{name}", expression)
                    for name, expression in self.response}
        except OperationError:
            if run.journal is not None:
                run.journal.roll_back()
            raise
        except Exception as error:  # noqa: BLE001 - a bug must not leave half a transfer
            if run.journal is not None:
                run.journal.roll_back()
            raise run.failure(None, f"internal error: {type(error).__name__}: {error}") \
                from error

    def summary(self) -> dict[str, Any]:
        """``{name, stepCount, consistency}`` (``GET /state/operations``)."""
        return {"name": self.name, "stepCount": len(self.steps),
                "consistency": self.consistency}

    def document(self) -> dict[str, Any]:
        """The definition as a camelCase document (``GET /state/operations/{name}``)."""
        return self.config.model_dump(mode="json", by_alias=True, exclude_none=True)


def _compile(source: str, known: Collection[str], location: str, step: int | None,
             step_type: str | None, problems: list[OperationProblem]) -> Expression | None:
    try:
        return compile_expression(source, known)
    except ExpressionError as error:
        problems.append(OperationProblem(location, error.reason, step, step_type, source))
        return None


def _compile_step(index: int, step: StepConfig, known: Collection[str],
                  problems: list[OperationProblem]) -> CompiledStep | None:
    where = f"steps[{index}]"
    count = len(problems)

    def expression(field: str, source: str) -> Expression | None:
        return _compile(source, known, f"{where}.{field}", index, step.type, problems)

    def assignments(field: str, mapping: Mapping[str, str] | None
                    ) -> list[tuple[str, Expression]]:
        compiled = []
        for name, source in (mapping or {}).items():
            value = expression(f"{field}.{name}", source)
            if value is not None:
                compiled.append((name, value))
        return compiled

    kind = step.type
    if kind == "set":
        value = expression("value", step.value)
        return SetStep(index, step.var, value) if len(problems) == count else None
    if kind == "validate":
        condition = expression("condition", step.condition)
        if len(problems) != count:
            return None
        message = step.error_message or f"validation failed: {step.condition}"
        return ValidateStep(index, condition, message, step.error_status or 400)
    resource = step.resource
    if kind == "create":
        body = assignments("set", step.assignments)
        return CreateStep(index, resource, body, step.variable) \
            if len(problems) == count else None
    if kind == "list":
        filters = assignments("filter", step.filter)
        return ListStep(index, resource, filters, step.variable) \
            if len(problems) == count else None
    item_id = expression("id", step.id)
    if kind == "read":
        return ReadStep(index, resource, item_id, step.variable) \
            if len(problems) == count else None
    if kind == "delete":
        return DeleteStep(index, resource, item_id, step.variable) \
            if len(problems) == count else None
    body = assignments("set", step.assignments)
    return UpdateStep(index, resource, item_id, body, step.variable) \
        if len(problems) == count else None


def check_operation(config: CustomOperationConfig, tables: Collection[str] | None = None
                    ) -> tuple[CustomOperation | None, list[OperationProblem]]:
    """Compile ``config``, collecting every problem instead of stopping at the first.

    ``tables``: when given, each step's ``resource`` must be one of them. Returns
    ``(operation, [])`` or ``(None, problems)``.
    """
    problems: list[OperationProblem] = []
    known: set[str] = {"input"}
    steps: list[CompiledStep] = []
    for index, step in enumerate(config.steps):
        if tables is not None and step.resource and step.resource not in tables:
            listed = ", ".join(sorted(tables)) or "none"
            problems.append(OperationProblem(f"steps[{index}].resource",
                                             f'no table named "{step.resource}" (tables: '
                                             f"{listed})", index, step.type))
        compiled = _compile_step(index, step, frozenset(known), problems)
        if compiled is not None:
            steps.append(compiled)
        # A later step may use this step's variable even when this step has a problem, so
        # one typo is reported once, not again in every step after it.
        for name in (step.variable, step.var):
            if name:
                known.add(name)
    response: list[tuple[str, Expression]] | None = None
    if config.response is not None:
        response = []
        for name, source in config.response.items():
            value = _compile(source, frozenset(known), f"response.{name}", None, None,
                             problems)
            if value is not None:
                response.append((name, value))
    if problems:
        return None, problems
    return CustomOperation(config, steps, response), problems


def compile_operation(config: CustomOperationConfig, key_path: str = "",
                      tables: Collection[str] | None = None) -> CustomOperation:
    """A :class:`CustomOperation`; raises :class:`ConfigError` for the first problem,
    naming ``<key_path>.steps[i].<field>``."""
    operation, problems = check_operation(config, tables)
    if operation is None:
        first = problems[0]
        path = f"{key_path}.{first.location}" if key_path else first.location
        raise ConfigError(path, first.detail)
    return operation


def compile_operations(configs: Iterable[CustomOperationConfig],
                       key_path: str = "customOperations") -> tuple[CustomOperation, ...]:
    """Compile ``customOperations[]``; a duplicate name is a :class:`ConfigError` on the
    second occurrence."""
    operations: list[CustomOperation] = []
    seen: dict[str, int] = {}
    for index, config in enumerate(configs):
        if config.name in seen:
            raise ConfigError(f"{key_path}[{index}].name",
                              f'duplicate custom operation name "{config.name}" (also '
                              f"{key_path}[{seen[config.name]}])")
        seen[config.name] = index
        operations.append(compile_operation(config, f"{key_path}[{index}]"))
    return tuple(operations)


def operation_config_of(document: Any) -> CustomOperationConfig:
    """A :class:`CustomOperationConfig` from an admin body; raises :class:`TableError` 400
    whose message names the field (``steps[1]: a read step needs id``)."""
    if not isinstance(document, dict):
        raise errors.bad_request("", "body: a custom operation must be a JSON object")
    try:
        return CustomOperationConfig.model_validate(document)
    except ValidationError as error:
        raise errors.bad_request("", validation_message(error)) from None


def validation_message(error: ValidationError, prefix: str = "") -> str:
    """Every problem of a pydantic validation as ``"<field path>: <reason>"`` joined by
    ``"; "`` (``steps[1]: a read step needs id``), worded as config files word them
    (``unknown key``, ``required field is missing``)."""
    return listed_text(validation_issues(error, prefix), "; ")


# ---------------------------------------------------------------------------- the registry


class OperationRegistry:
    """Every custom operation of one engine; installed as the store's ``custom_runner``.

    Operations from the config are replaced whole on each load (:meth:`apply`); those
    registered at runtime (:meth:`register`, the engine-control ``POST /state/operations``
    of a headless engine) stay until unregistered or until the config defines the same name.

    Attributes:
        operations: ``{name: CustomOperation}``.
        runtime_names: names registered at runtime.
    """

    def __init__(self) -> None:
        self.operations: dict[str, CustomOperation] = {}
        self.runtime_names: set[str] = set()

    def apply(self, operations: Iterable[CustomOperation]) -> None:
        """Make ``operations`` the config-defined operations (after a successful compile)."""
        current = {operation.name: operation for operation in operations}
        for name in list(self.runtime_names):
            if name in current:
                self.runtime_names.discard(name)
            else:
                current[name] = self.operations[name]
        self.operations = current

    def register(self, operation: CustomOperation) -> bool:
        """Add or replace an operation at runtime; returns whether one was replaced."""
        replaced = operation.name in self.operations
        self.operations[operation.name] = operation
        self.runtime_names.add(operation.name)
        return replaced

    def unregister(self, name: str) -> bool:
        """Remove an operation; returns whether it existed."""
        self.runtime_names.discard(name)
        return self.operations.pop(name, None) is not None

    def get(self, name: str) -> CustomOperation | None:
        """The operation ``name``, or None."""
        return self.operations.get(name)

    def __call__(self, request: OperationRequest, store: TableStore) -> Any:
        """The store's ``custom_runner``: run ``request.operation`` with ``request.body`` as
        the input. Raises :class:`TableError` 404 for an unknown name, else
        :class:`OperationError`."""
        name = request.operation or request.table
        operation = self.operations.get(name)
        if operation is None:
            raise operation_not_found(name)
        return operation.run(store, request.body)


def operations_of(store: TableStore) -> OperationRegistry:
    """The store's :class:`OperationRegistry`, installed as its ``custom_runner`` on first
    use."""
    runner = store.custom_runner
    if isinstance(runner, OperationRegistry):
        return runner
    registry = OperationRegistry()
    store.custom_runner = registry
    return registry


def apply_operations(store: TableStore, operations: Iterable[CustomOperation]) -> None:
    """Make the config's compiled ``operations`` live on ``store`` (the engine calls it when
    it swaps a snapshot in)."""
    operations_of(store).apply(operations)


def run_custom_operation(store: TableStore, name: str, input_value: Any) -> Any:
    """Run operation ``name`` through the store's entry point, for any protocol.

    Returns the result (``{"success": true}`` without a ``response``); raises
    :class:`TableError` (404 unknown operation) or :class:`OperationError`.
    """
    result = store.execute(OperationRequest("custom", "", body=input_value, operation=name))
    if result.error is not None:
        raise result.error
    return SUCCESS if result.value is None else result.value


async def run_custom_operation_async(store: TableStore, name: str, input_value: Any) -> Any:
    """:func:`run_custom_operation` through the store's async entry point (a shared state
    store, where the run is one transaction)."""
    result = await store.execute_async(OperationRequest("custom", "", body=input_value,
                                                        operation=name))
    if result.error is not None:
        raise result.error
    return SUCCESS if result.value is None else result.value


def operation_binding(name: str, source: str) -> BindingSpec:
    """The binding of an HTTP mock's ``statefulOperation: <name>``: the same ``custom``
    action an extend binding with ``operation`` gives (path parameters join the input; the
    result or ``{"success": true}`` answers 200)."""
    return BindingSpec("", "custom", name, None, source)
