"""Errors of the engine's compile step.

Source: ARCHITECTURE seam 1 ("a bad file fails with the path of the offending key").
"""
from __future__ import annotations


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
