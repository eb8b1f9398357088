"""Table validation: rules checked on create, update and patch bodies.

Rule keys (behavior notes §7): ``type`` (``string``, ``number``, ``integer`` = whole number,
``boolean``, ``array``, ``object``), ``required``, ``nullable``, ``minLength``/``maxLength``
(characters), ``pattern``, ``format``, ``min``, ``max``, ``exclusiveMin``, ``exclusiveMax``,
``minItems``, ``maxItems``, ``uniqueItems``, ``items``, ``enum``, ``properties``, ``message``.
Formats: ``email``, ``uuid``, ``date``, ``datetime`` (= ``date-time``), ``uri`` (= ``url``),
``ipv4``, ``ipv6``, ``ip``, ``hostname``; unknown formats pass.

Field names are dot paths that reach nested fields and every element of an array on the way
(``address.city``, ``items.sku``). A patch is partial: ``required`` is not checked.

Modes: ``strict`` rejects any issue; ``warn`` never rejects (the HTTP binding reports the
issues in ``X-Mockd-Validation-Warnings``); ``permissive`` rejects only ``required`` issues.

An issue is ``{field, location, code, message, received?, expected?, hint?}`` with the codes
``required``, ``type``, ``min_length``, ``max_length``, ``pattern``, ``format``, ``min``,
``max``, ``exclusive_min``, ``exclusive_max``, ``min_items``, ``max_items``, ``unique_items``,
``enum`` and locations ``body`` or ``path`` (tables) plus ``query`` and ``header`` (per-mock
``http.validation``, :mod:`mocks.protocols.http.validation`, which reuses :func:`check_document`,
:func:`check_parameters` and :func:`mode_rejects`).

No Django. Rules compile once (:class:`TableValidator`); checking never raises.
"""
from __future__ import annotations

import ipaddress
import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tables.rules import FieldRule

if TYPE_CHECKING:  # annotations only
    from tables.config import TableValidation

_EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+\Z")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}\Z")
_DATETIME = re.compile(
    r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:?\d{2})\Z")
_URI = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://[^\s]+\Z")
_HOSTNAME_LABEL = re.compile(r"(?!-)[A-Za-z0-9-]{1,63}(?<!-)\Z")
_JSON_TYPES = {"string": "string", "number": "number", "integer": "integer",
               "boolean": "boolean", "array": "array", "object": "object"}


@dataclass(frozen=True, slots=True)
class ValidationIssue:
    """One failed rule.

    Attributes:
        field: the concrete path (``items[1].sku``, ``address.city``).
        location: ``body``, ``path``, ``query`` or ``header``.
        code: ``required``, ``type``, ``min_length``, ... (see the module docstring).
        message: what is wrong, in words.
        received: the offending value when useful (not for ``required``).
        expected: what the rule wanted, as text.
        hint: how to fix the request (set by ``http.validation``; tables leave it None).
    """

    field: str
    location: str
    code: str
    message: str
    received: Any = None
    expected: str | None = None
    hint: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """``{field, location, code, message, received?, expected?, hint?}``."""
        out: dict[str, Any] = {"field": self.field, "location": self.location,
                               "code": self.code, "message": self.message}
        if self.received is not None:
            out["received"] = self.received
        if self.expected is not None:
            out["expected"] = self.expected
        if self.hint is not None:
            out["hint"] = self.hint
        return out


# ---------------------------------------------------------------------------- values


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def type_matches(kind: str, value: Any) -> bool:
    """Whether ``value`` is of rule type ``kind`` (``integer`` accepts ``3.0``)."""
    if kind == "string":
        return isinstance(value, str)
    if kind == "number":
        return _is_number(value)
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool) or (
            isinstance(value, float) and value.is_integer())
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "array":
        return isinstance(value, list)
    if kind == "object":
        return isinstance(value, dict)
    return True


def format_matches(name: str, text: str) -> bool:
    """Whether ``text`` has format ``name``; unknown formats pass."""
    name = name.lower()
    if name == "email":
        return bool(_EMAIL.match(text))
    if name == "uuid":
        try:
            uuid.UUID(text)
        except ValueError:
            return False
        return len(text) == 36
    if name == "date":
        return bool(_DATE.match(text)) and _valid_date(text)
    if name in ("datetime", "date-time"):
        return bool(_DATETIME.match(text)) and _valid_date(text[:10])
    if name in ("uri", "url"):
        return bool(_URI.match(text))
    if name in ("ipv4", "ipv6", "ip"):
        try:
            address = ipaddress.ip_address(text)
        except ValueError:
            return False
        return name == "ip" or address.version == int(name[-1])
    if name == "hostname":
        labels = text.rstrip(".").split(".")
        return 0 < len(text) <= 253 and all(_HOSTNAME_LABEL.match(label) for label in labels)
    return True


def _valid_date(text: str) -> bool:
    import datetime

    try:
        datetime.date.fromisoformat(text)
    except ValueError:
        return False
    return True


def _same_value(left: Any, right: Any) -> bool:
    # `True == 1` in Python; JSON keeps booleans and numbers apart.
    if isinstance(left, bool) or isinstance(right, bool):
        return type(left) is type(right) and left == right
    return left == right


def _number_text(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


# ---------------------------------------------------------------------------- rules


def check_value(rule: FieldRule, present: bool, value: Any, path: str, location: str,
                partial: bool, issues: list[ValidationIssue]) -> None:
    """Check one value against ``rule``; append issues. ``partial`` skips ``required``."""

    def fail(code: str, message: str, expected: str | None = None,
             received: Any = None) -> None:
        issues.append(ValidationIssue(path, location, code, rule.message or message,
                                      received, expected))

    if not present or value is None:
        if present and rule.nullable:
            return
        if rule.required and not partial:
            fail("required", f"{path} is required")
        return
    if rule.type is not None and not type_matches(rule.type, value):
        fail("type", f"{path} must be of type {rule.type}", rule.type, value)
        return
    if isinstance(value, str):
        length = len(value)
        if rule.min_length is not None and length < rule.min_length:
            fail("min_length", f"{path} must be at least {rule.min_length} characters",
                 str(rule.min_length), value)
        if rule.max_length is not None and length > rule.max_length:
            fail("max_length", f"{path} must be at most {rule.max_length} characters",
                 str(rule.max_length), value)
        if rule.pattern is not None and re.search(rule.pattern, value) is None:
            fail("pattern", f"{path} must match pattern {rule.pattern}", rule.pattern, value)
        if rule.format is not None and not format_matches(rule.format, value):
            fail("format", f"{path} must be a valid {rule.format}", rule.format, value)
    if _is_number(value):
        if rule.min is not None and value < rule.min:
            fail("min", f"{path} must be at least {_number_text(rule.min)}",
                 _number_text(rule.min), value)
        if rule.max is not None and value > rule.max:
            fail("max", f"{path} must be at most {_number_text(rule.max)}",
                 _number_text(rule.max), value)
        if rule.exclusive_min is not None and value <= rule.exclusive_min:
            fail("exclusive_min", f"{path} must be greater than "
                                  f"{_number_text(rule.exclusive_min)}",
                 _number_text(rule.exclusive_min), value)
        if rule.exclusive_max is not None and value >= rule.exclusive_max:
            fail("exclusive_max", f"{path} must be less than {_number_text(rule.exclusive_max)}",
                 _number_text(rule.exclusive_max), value)
    if isinstance(value, list):
        if rule.min_items is not None and len(value) < rule.min_items:
            fail("min_items", f"{path} must have at least {rule.min_items} items",
                 str(rule.min_items), len(value))
        if rule.max_items is not None and len(value) > rule.max_items:
            fail("max_items", f"{path} must have at most {rule.max_items} items",
                 str(rule.max_items), len(value))
        if rule.unique_items and not _all_unique(value):
            fail("unique_items", f"{path} must not contain duplicate items")
        if rule.items is not None:
            for index, element in enumerate(value):
                check_value(rule.items, True, element, f"{path}[{index}]", location, partial,
                            issues)
    if rule.enum is not None and not any(_same_value(value, allowed) for allowed in rule.enum):
        fail("enum", f"{path} must be one of {', '.join(map(str, rule.enum))}",
             ", ".join(map(str, rule.enum)), value)
    if rule.properties and isinstance(value, dict):
        for name, child in rule.properties.items():
            check_value(child, name in value, value.get(name), f"{path}.{name}", location,
                        partial, issues)


def _all_unique(values: list[Any]) -> bool:
    import orjson

    seen: set[bytes] = set()
    for value in values:
        try:
            key = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
        except TypeError:
            key = repr(value).encode()
        if key in seen:
            return False
        seen.add(key)
    return True


def resolve_path(value: Any, segments: list[str], prefix: str) -> list[tuple[str, bool, Any]]:
    """Every ``(concrete path, present, value)`` a dot path reaches: arrays on the way fan out
    to each element (``items.sku`` -> ``items[0].sku``, ``items[1].sku``); a digit segment
    indexes an array."""
    if not segments:
        return [(prefix, True, value)]
    segment, rest = segments[0], segments[1:]
    if isinstance(value, list):
        if segment.isdigit():
            index = int(segment)
            if index < len(value):
                return resolve_path(value[index], rest, f"{prefix}[{index}]")
            return [(f"{prefix}[{index}]", False, None)]
        out: list[tuple[str, bool, Any]] = []
        for index, element in enumerate(value):
            out += resolve_path(element, segments, f"{prefix}[{index}]")
        return out
    path = f"{prefix}.{segment}" if prefix else segment
    if isinstance(value, Mapping) and segment in value:
        return resolve_path(value[segment], rest, path)
    missing = ".".join([path, *rest]) if rest else path
    return [(missing, False, None)]


# ---------------------------------------------------------------------------- validators


def rules_from_schema(schema: Mapping[str, Any]) -> tuple[dict[str, FieldRule], list[str]]:
    """``(fields, required)`` from a JSON Schema object's ``properties`` and ``required``
    (keywords mapped to rule keys; ``type: [x, "null"]`` becomes ``nullable``)."""
    required = [name for name in schema.get("required") or [] if isinstance(name, str)]
    fields = {name: FieldRule.model_validate(_rule_of_schema(child))
              for name, child in (schema.get("properties") or {}).items()
              if isinstance(child, Mapping)}
    return fields, required


def _rule_of_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    rule: dict[str, Any] = {}
    kind = schema.get("type")
    if isinstance(kind, list):
        rule["nullable"] = "null" in kind
        kind = next((item for item in kind if item != "null"), None)
    if kind in _JSON_TYPES:
        rule["type"] = kind
    for source, target in (("minLength", "minLength"), ("maxLength", "maxLength"),
                           ("pattern", "pattern"), ("format", "format"),
                           ("minimum", "min"), ("maximum", "max"),
                           ("exclusiveMinimum", "exclusiveMin"),
                           ("exclusiveMaximum", "exclusiveMax"), ("minItems", "minItems"),
                           ("maxItems", "maxItems"), ("uniqueItems", "uniqueItems"),
                           ("enum", "enum")):
        value = schema.get(source)
        if value is not None and not isinstance(value, bool) or source == "uniqueItems" \
                and isinstance(value, bool):
            rule[target] = value
    if isinstance(schema.get("items"), Mapping):
        rule["items"] = _rule_of_schema(schema["items"])
    if isinstance(schema.get("properties"), Mapping):
        required = set(schema.get("required") or [])
        rule["properties"] = {}
        for name, child in schema["properties"].items():
            if isinstance(child, Mapping):
                child_rule = _rule_of_schema(child)
                if name in required:
                    child_rule["required"] = True
                rule["properties"][name] = child_rule
    return rule


def inferred_rules(seed_data: list[dict[str, Any]]) -> dict[str, FieldRule]:
    """``auto``: a ``type`` rule for each top-level seed field whose values share one type."""
    kinds: dict[str, set[str]] = {}
    for item in seed_data:
        for name, value in item.items():
            if value is None:
                continue
            kinds.setdefault(name, set()).add(_kind_of(value))
    rules: dict[str, FieldRule] = {}
    for name, found in kinds.items():
        if found == {"integer"}:
            rules[name] = FieldRule(type="integer")
        elif found <= {"integer", "number"}:
            rules[name] = FieldRule(type="number")
        elif len(found) == 1:
            rules[name] = FieldRule(type=next(iter(found)))
    return rules


def _kind_of(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


@dataclass(frozen=True, slots=True)
class _RuleSet:
    mode: str
    fields: tuple[tuple[str, tuple[str, ...], FieldRule], ...]
    required: tuple[str, ...]


class TableValidator:
    """A table's ``validation`` block, compiled: one rule set for creates and one for
    updates (the base with ``onCreate`` / ``onUpdate`` merged over it).

    Attributes:
        mode: the base mode (``strict``, ``warn`` or ``permissive``).
    """

    __slots__ = ("mode", "_create", "_update", "_path_params")

    def __init__(self, config: TableValidation, seed_data: list[dict[str, Any]] | None = None):
        self.mode = config.mode
        base_fields: dict[str, FieldRule] = {}
        base_required: list[str] = list(config.required)
        if config.auto and seed_data:
            base_fields.update(inferred_rules(seed_data))
        if config.json_schema:
            schema_fields, schema_required = rules_from_schema(config.json_schema)
            base_fields.update(schema_fields)
            base_required += schema_required
        base_fields.update(config.fields)
        self._create = self._merge(config.mode, base_fields, base_required, config.on_create)
        self._update = self._merge(config.mode, base_fields, base_required, config.on_update)
        self._path_params = tuple(config.path_params.items())

    @staticmethod
    def _merge(mode: str, fields: dict[str, FieldRule], required: list[str],
               overlay: Any) -> _RuleSet:
        merged = dict(fields)
        names = list(required)
        if overlay is not None:
            merged.update(overlay.fields)
            names += [name for name in overlay.required if name not in names]
            mode = overlay.mode or mode
        return _RuleSet(mode, compile_fields(merged), tuple(names))

    def mode_for(self, action: str) -> str:
        """The mode in force for ``action`` (``create``, ``update`` or ``patch``)."""
        return (self._create if action == "create" else self._update).mode

    def check(self, body: Mapping[str, Any], action: str,
              path_params: Mapping[str, str] | None = None) -> list[ValidationIssue]:
        """Every issue of ``body`` for ``action`` (``create``, ``update``, ``patch``), plus
        path-parameter issues. Never raises."""
        rules = self._create if action == "create" else self._update
        issues: list[ValidationIssue] = []
        check_document(body, rules.fields, rules.required, action == "patch", issues)
        if self._path_params and path_params is not None:
            check_parameters(self._path_params, path_params, "path", issues)
        return issues

    def rejects(self, issues: list[ValidationIssue], action: str) -> bool:
        """Whether ``issues`` reject the write under the mode in force."""
        return mode_rejects(self.mode_for(action), issues)


def compile_fields(fields: Mapping[str, FieldRule]
                   ) -> tuple[tuple[str, tuple[str, ...], FieldRule], ...]:
    """``{dot.path: rule}`` -> ``((dot.path, segments, rule), ...)`` for
    :func:`check_document` (the path is split once, at compile time)."""
    return tuple((name, tuple(name.split(".")), rule) for name, rule in fields.items())


def check_document(body: Any, fields: tuple[tuple[str, tuple[str, ...], FieldRule], ...],
                   required: tuple[str, ...] | list[str], partial: bool,
                   issues: list[ValidationIssue]) -> None:
    """Check a JSON document (location ``body``): every dot path of ``required`` must be
    present and not null (skipped when ``partial``), every rule of ``fields`` (from
    :func:`compile_fields`) must hold wherever its path reaches. Appends to ``issues``."""
    if not partial:
        for name in required:
            for path, present, value in resolve_path(body, name.split("."), ""):
                if not present or value is None:
                    issues.append(ValidationIssue(path, "body", "required",
                                                  f"{path} is required"))
    for name, segments, rule in fields:
        for path, present, value in resolve_path(body, list(segments), ""):
            check_value(rule, present, value, path, "body", partial, issues)


def check_parameters(rules: tuple[tuple[str, FieldRule], ...] | list[tuple[str, FieldRule]],
                     values: Mapping[str, str], location: str,
                     issues: list[ValidationIssue]) -> None:
    """Check text parameters (``path``, ``query`` or ``header`` ``location``): each
    ``(name, rule)`` reads ``values[name]``, coerced by :func:`value_from_text` so that
    ``type: integer`` accepts ``"42"``. Appends to ``issues``."""
    for name, rule in rules:
        check_value(rule, name in values, value_from_text(rule, values.get(name)), name,
                    location, False, issues)


def mode_rejects(mode: str, issues: list[ValidationIssue]) -> bool:
    """Whether ``issues`` reject a request under ``mode``: ``strict`` any issue, ``warn``
    never, ``permissive`` only a ``required`` issue."""
    if not issues:
        return False
    if mode == "warn":
        return False
    if mode == "permissive":
        return any(issue.code == "required" for issue in issues)
    return True


def value_from_text(rule: FieldRule, text: str | None) -> Any:
    """A text parameter as the rule's type (path, query and header values arrive as text):
    ``integer``/``number`` parse as numbers, ``boolean`` accepts ``true``/``false``; text that
    does not parse stays text, so the ``type`` check reports it."""
    if text is None or rule.type not in ("integer", "number", "boolean"):
        return text
    if rule.type == "boolean":
        return {"true": True, "false": False}.get(text, text)
    try:
        return int(text)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            return text


def compile_validator(config: TableValidation | None,
                      seed_data: list[dict[str, Any]] | None = None) -> TableValidator | None:
    """A :class:`TableValidator`, or None when the table has no validation."""
    return TableValidator(config, seed_data) if config is not None else None
