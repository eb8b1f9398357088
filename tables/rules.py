"""The base of the table config models and the validation rule (:class:`FieldRule`).

A small module so that an HTTP mock's ``validation`` block (whose rules are table rules) is
typed without importing the rest of the table schema (:mod:`tables.config`): an HTTP-only
config never imports the table, binding or transform models. :mod:`tables.config` re-exports
both names.

Every model built on :class:`ConfigModel` is built (its pydantic core schema) on its first
validation, not at import (``defer_build``), so importing the table schema costs little for
an engine whose config has no tables.

No Django here: the engine imports this module.

Source: SPEC "Validation"; behavior notes §7 (validation rule keys, modes, formats).
"""
from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

#: Rule ``type`` values (behavior notes §7).
RULE_TYPES = ("string", "number", "integer", "boolean", "array", "object")


class ConfigModel(BaseModel):
    """Base of every table config object: unknown keys are errors, camelCase aliases; the
    model is built on its first use (``defer_build``)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, defer_build=True)


class FieldRule(ConfigModel):
    """One validation rule (behavior notes §7). Every key is optional.

    Attributes:
        type: ``string``, ``number``, ``integer`` (whole number), ``boolean``, ``array``,
            ``object``.
        required: the field must be present and not null.
        nullable: null is accepted (other checks are skipped for null).
        min_length, max_length: string length in characters.
        pattern: regular expression searched in the string.
        format: ``email``, ``uuid``, ``date``, ``datetime``/``date-time``, ``uri``/``url``,
            ``ipv4``, ``ipv6``, ``ip``, ``hostname``; unknown formats pass.
        min, max, exclusive_min, exclusive_max: number bounds.
        min_items, max_items, unique_items, items: array rules (``items`` checks every element).
        enum: allowed values.
        properties: rules of an object's fields.
        message: replaces the generated message of any failure of this rule.
    """

    type: str | None = None
    required: bool = False
    nullable: bool = False
    min_length: int | None = Field(None, alias="minLength", ge=0)
    max_length: int | None = Field(None, alias="maxLength", ge=0)
    pattern: str | None = None
    format: str | None = None
    min: float | None = None
    max: float | None = None
    exclusive_min: float | None = Field(None, alias="exclusiveMin")
    exclusive_max: float | None = Field(None, alias="exclusiveMax")
    min_items: int | None = Field(None, alias="minItems", ge=0)
    max_items: int | None = Field(None, alias="maxItems", ge=0)
    unique_items: bool = Field(False, alias="uniqueItems")
    items: FieldRule | None = None
    enum: list[Any] | None = None
    properties: dict[str, FieldRule] | None = None
    message: str | None = None

    @field_validator("type")
    @classmethod
    def _type_known(cls, value: str | None) -> str | None:
        if value is not None and value not in RULE_TYPES:
            raise ValueError(f"unknown type {value!r}; use one of {', '.join(RULE_TYPES)}")
        return value

    @field_validator("pattern")
    @classmethod
    def _pattern_compiles(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                re.compile(value)
            except re.error as error:
                raise ValueError(f"pattern does not compile: {error}") from None
        return value
