"""Config schema of custom operations (``customOperations[]``; ARCHITECTURE seam 1).

:class:`CustomOperationConfig` is the ``customOperations[i]`` object of the config file, the
body of ``POST /state/operations`` and what ``mockd stateful custom validate|add`` read;
:mod:`mocks.config` uses it for ``ConfigFile.custom_operations``. Keys stay camelCase through
aliases, unknown keys are errors, and each step accepts only the fields of its ``type``.

Expression fields (``id``, ``set`` values, ``value``, ``filter`` values, ``condition``,
``response`` values) hold expression text (behavior notes §19); a YAML number or boolean
there (``value: 0``) is taken as the literal it spells. Their syntax and names are checked
when the operation is compiled (:func:`tables.operations.compile_operation`), not here.

No Django.

Source: SPEC "Custom operation"; behavior notes §19.
"""
from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator, \
    model_validator

#: Step types (SPEC "Custom operation").
STEP_TYPES = ("read", "create", "update", "delete", "set", "list", "validate")
#: Consistency modes: ``best_effort`` keeps earlier changes of a failed run, ``atomic``
#: rolls them back.
CONSISTENCY_MODES = ("best_effort", "atomic")

#: ``type -> (required fields, optional fields)`` by their config keys.
STEP_FIELDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "read": (("resource", "id"), ("as",)),
    "create": (("resource", "set"), ("as",)),
    "update": (("resource", "id", "set"), ("as",)),
    "delete": (("resource", "id"), ("as",)),
    "set": (("var", "value"), ()),
    "list": (("resource", "as"), ("filter",)),
    "validate": (("condition",), ("errorMessage", "errorStatus")),
}

_VARIABLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
#: Names a step may not bind: the input and the words of the expression language.
RESERVED_NAMES = frozenset(("input", "and", "or", "not", "in", "contains", "startsWith",
                            "endsWith", "matches", "true", "false", "nil", "null"))


def _expression_text(value: Any) -> Any:
    """A YAML/JSON scalar as expression text: ``0`` -> ``"0"``, ``true`` -> ``"true"``,
    ``null`` -> ``"nil"``; text unchanged; anything else is left for pydantic to refuse."""
    if value is None:
        return "nil"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, (dict, list)):
        raise ValueError("an expression must be text; write a map as {key: value} or an "
                         "array as [a, b] inside a string, and quote string literals "
                         "('\"text\"')")
    return value


#: Expression text (see :func:`_expression_text`).
ExpressionText = Annotated[str, BeforeValidator(_expression_text)]
#: An optional expression field: a given ``null`` is the literal nil, an absent key is None.
OptionalExpression = Annotated[str | None, BeforeValidator(_expression_text)]


class ConfigModel(BaseModel):
    """Base of the operation models: unknown keys are errors, camelCase aliases."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class StepConfig(ConfigModel):
    """One step of a custom operation (SPEC "Custom operation", step table).

    Attributes:
        type: ``read``, ``create``, ``update``, ``delete``, ``set``, ``list``, ``validate``.
        resource: the table (``read``, ``create``, ``update``, ``delete``, ``list``).
        id: expression of the item id (``read``, ``update``, ``delete``).
        variable: ``as``: the variable that receives the item (``read``, ``create``,
            ``update``, ``delete``) or the array of items (``list``).
        assignments: ``set``: ``{field: expression}`` written by ``create`` and ``update``
            (``update`` merges them into the item).
        var, value: the variable and the expression of a ``set`` step.
        filter: ``{field: expression}`` of a ``list`` step; an item matches when each
            field's text equals the value's (as list query filters compare); ``a.b`` reaches
            a nested field.
        condition: a ``validate`` step's boolean expression; false (or nil) halts the run.
        error_message: the message of a failed ``validate`` (default
            ``validation failed: <condition>``).
        error_status: the status of a failed ``validate`` (default 400).
    """

    type: Literal["read", "create", "update", "delete", "set", "list", "validate"]
    resource: str | None = Field(None, min_length=1)
    id: OptionalExpression = None
    variable: str | None = Field(None, alias="as")
    assignments: dict[str, ExpressionText] | None = Field(None, alias="set")
    var: str | None = None
    value: OptionalExpression = None
    filter: dict[str, ExpressionText] | None = None
    condition: OptionalExpression = None
    error_message: str | None = Field(None, alias="errorMessage")
    error_status: int | None = Field(None, alias="errorStatus")

    @field_validator("variable", "var")
    @classmethod
    def _name_usable(cls, value: str | None) -> str | None:
        if value is None:
            return value
        if not _VARIABLE_NAME.match(value):
            raise ValueError(f"{value!r} is not a usable variable name: use letters, digits "
                             f"and _ (not starting with a digit)")
        if value in RESERVED_NAMES:
            raise ValueError(f"{value!r} is reserved (the input or a word of the expression "
                             f"language); choose another name")
        return value

    @field_validator("error_status")
    @classmethod
    def _status_in_range(cls, value: int | None) -> int | None:
        if value is not None and not 100 <= value <= 599:
            raise ValueError(f"errorStatus must be an HTTP status between 100 and 599, got "
                             f"{value}")
        return value

    @model_validator(mode="after")
    def _fields_of_type(self) -> StepConfig:
        required, optional = STEP_FIELDS[self.type]
        fields = type(self).model_fields
        given = {fields[name].alias or name for name in self.model_fields_set}
        given.discard("type")
        missing = [key for key in required
                   if key not in given or getattr(self, _ATTRIBUTE_OF[key]) is None]
        if missing:
            raise ValueError(f"a {self.type} step needs {', '.join(missing)}")
        foreign = sorted(given - set(required) - set(optional))
        if foreign:
            raise ValueError(f"a {self.type} step does not take {', '.join(foreign)} (it "
                             f"takes {', '.join((*required, *optional))})")
        return self


#: Config key -> attribute name of :class:`StepConfig`.
_ATTRIBUTE_OF = {"resource": "resource", "id": "id", "as": "variable", "set": "assignments",
                 "var": "var", "value": "value", "filter": "filter", "condition": "condition",
                 "errorMessage": "error_message", "errorStatus": "error_status"}


class CustomOperationConfig(ConfigModel):
    """A custom operation (SPEC "Custom operation").

    Attributes:
        name: the operation name (bindings, ``statefulOperation`` and the admin routes use
            it).
        description: free text for people.
        consistency: ``best_effort`` (default: a failed step leaves earlier changes in
            place) or ``atomic`` (every change of the run is rolled back).
        steps: run in order.
        response: ``{name: expression}``: the result body; without it the result is
            ``{"success": true}``.
    """

    name: str = Field(min_length=1)
    description: str | None = None
    consistency: Literal["best_effort", "atomic"] = "best_effort"
    steps: list[StepConfig] = Field(default_factory=list)
    response: dict[str, ExpressionText] | None = None
