"""Errors of the engine's compile step.

Source: ARCHITECTURE seam 1 ("a bad file fails with the path of the offending key").
"""
from __future__ import annotations

from typing import Any


class ConfigError(ValueError):
    """A config value that cannot be compiled or validated.

    Attributes:
        path: the config key path, e.g. ``mocks[3].http.matcher.pathPattern`` (may be empty).
        reason: what is wrong and, where useful, what to try.

    ``str(error)`` is ``"<path>: <reason>"`` — the line printed after ``config error:``.
    """

    def __init__(self, path: str, reason: str):
        self.path = path
        self.reason = reason
        super().__init__(f"{path}: {reason}" if path else reason)


def format_location(location: tuple[Any, ...]) -> str:
    """``("mocks", 3, "http", "matcher")`` -> ``"mocks[3].http.matcher"``."""
    out = ""
    for part in location:
        if isinstance(part, int):
            out += f"[{part}]"
        elif str(part).startswith(("function-", "tagged-union", "literal[", "union[")):
            continue  # pydantic's internal validator steps say nothing to a user
        else:
            out += f".{part}" if out else str(part)
    return out
