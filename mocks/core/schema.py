"""Base classes of every config model: strict (unknown keys are errors) or open (kept as
given), camelCase keys through aliases.

Source: ARCHITECTURE seam 1 ("one config schema"); behavior notes §14 (validator rules).
"""
from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict


class Strict(BaseModel):
    """Base for config objects: unknown keys are errors, camelCase aliases accepted."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=False)


class Open(BaseModel):
    """Base for config objects whose full shape belongs to a later feature: kept as given."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)


def scalar_text(value: Any) -> Any:
    """YAML scalars as the text a matcher compares: ``true`` -> ``"true"``, ``1`` -> ``"1"``;
    other values unchanged."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    return value
