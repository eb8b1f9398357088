"""The control plane's error type and its common cases: :class:`AdminError` (status, ``error``
code, message), rendered as ``{error, message}`` by the one exception handler of the admin API
(SPEC "Errors"), and :class:`ConfigValidationError` for a document with several problems.

Django-free; every admin service and router raises these.
"""
from __future__ import annotations

from typing import Any

from mocks.core.errors import ConfigIssue, listed_text

class AdminError(Exception):
    """An admin request that cannot be served; rendered as ``{error, message}`` by the one
    exception handler of the admin API (SPEC "Errors").

    Attributes:
        status: HTTP status (400, 404, 409, ...).
        code: the ``error`` code (``not_found``, ``validation_error``, ``duplicate_id``, ...).
        message: what went wrong and what to try.
        details: optional extra object rendered as ``details``.
    """

    def __init__(self, status: int, code: str, message: str,
                 details: dict[str, Any] | None = None):
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.details = details


def not_found(message: str = "Resource not found") -> AdminError:
    """A 404 ``not_found`` error."""
    return AdminError(404, "not_found", message)


def validation_error(message: str) -> AdminError:
    """A 400 ``validation_error`` error (the message names the field)."""
    return AdminError(400, "validation_error", message)


class ConfigValidationError(AdminError):
    """400 ``validation_error`` for a mock or config document with one or more problems.

    ``message`` lists every problem as ``<path>: <reason>`` joined by ``"; "`` (the first
    one first, so a single problem reads as it always did); the body stays the plain
    ``{error, message}`` of SPEC "Errors". The reasons are worded as the config file loader
    words them (``unknown key``, ``required field is missing``), since both come from
    :func:`mocks.core.errors.validation_issues`.

    Attributes:
        issues: the problems (:class:`~mocks.core.errors.ConfigIssue`), first one first.
    """

    def __init__(self, issues: list[ConfigIssue]):
        super().__init__(400, "validation_error", listed_text(issues, "; "))
        self.issues = issues


def issues_below(prefix: str, issues: list[ConfigIssue]) -> list[ConfigIssue]:
    """``issues`` with their paths moved below ``prefix`` (``[2]`` + ``http`` -> ``[2].http``)."""
    if not prefix:
        return issues
    return [ConfigIssue(f"{prefix}.{issue.path}" if issue.path else prefix, issue.reason)
            for issue in issues]
