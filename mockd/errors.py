"""The exceptions of the mockd library (``from mockd import MockConfigError, ...``).

Every error the library raises on purpose derives from :class:`MockdError`, except
:class:`VerificationError`, which is an :class:`AssertionError` so that test runners report a
failed verification as a test failure, not as an error.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["MockConfigError", "MockdError", "ServerNotRunning", "ServerStartError",
           "TableOperationError", "VerificationError"]


class MockdError(Exception):
    """Base class of the library's errors (other than :class:`VerificationError`)."""


class MockConfigError(MockdError, ValueError):
    """A config, mock or chaos definition the engine refuses.

    Attributes:
        path: the key path of the first problem (``mocks[0].http.matcher.method``; may be
            empty).
        problems: every problem as ``(path, reason)`` pairs, first one first.

    ``str(error)`` names the key and what is wrong with it, one problem per line.
    """

    def __init__(self, message: str, path: str = "",
                 problems: list[tuple[str, str]] | None = None):
        super().__init__(message)
        self.path = path
        self.problems: list[tuple[str, str]] = problems or [(path, message)]


class ServerStartError(MockdError, RuntimeError):
    """The server could not start (a port taken, a config that does not compile, a protocol
    listener that failed); the message says why."""


class ServerNotRunning(MockdError, RuntimeError):
    """An operation that needs the running server was called before ``start()`` or after
    ``stop()``."""


class TableOperationError(MockdError):
    """A table operation the engine refused.

    Attributes:
        status: the HTTP status the admin API would answer (404 unknown table or item, 409
            conflict, 400 validation error, 507 table full).
        code: the admin error code (``not_found``, ``conflict``, ``validation_error``, ...).
    """

    def __init__(self, status: int, code: str, message: str):
        super().__init__(message)
        self.status = status
        self.code = code


@dataclass
class NearMiss:
    """Why one unmatched request missed the verified mock.

    Attributes:
        request: ``"GET /path?query"`` of the request.
        status: the status code it was answered with.
        match_percentage: how much of the mock's matcher it satisfied (0-100).
        reason: one line (``method matched, but path ...``).
        mismatches: ``(field, expected, actual)`` of every condition it failed.
    """

    request: str
    status: int
    match_percentage: int = 0
    reason: str = ""
    mismatches: list[tuple[str, Any, Any]] = field(default_factory=list)


class VerificationError(AssertionError):
    """A mock was not called as often as expected (``MockServer.verify``).

    Attributes:
        mock_id: the verified mock.
        expected: the expectation in words (``exactly 1 time(s)``).
        actual: how many retained requests the mock answered.
        near_misses: the unmatched requests and how they missed the mock (newest first, at
            most :data:`mockd.server.MAX_REPORTED_MISSES`).

    ``str(error)`` names the mock, the expected and actual counts, and each near miss with
    what the request had against what the mock expected.
    """

    def __init__(self, message: str, *, mock_id: str, expected: str, actual: int,
                 near_misses: list[NearMiss] | None = None):
        super().__init__(message)
        self.mock_id = mock_id
        self.expected = expected
        self.actual = actual
        self.near_misses = near_misses or []
