"""Verification: did a mock get called as often as a test expected?

Counts come from the whole retained request log (behavior notes §1 "Verification"), so this
module is pure: it judges a call count against criteria and words the answer.

Source: SPEC "Verification"; behavior notes §1 (``{atLeast?, atMost?, exactly?, never?}`` ->
``{success, passed, actual, expected?, message}``, ``expected`` text such as ``exactly 2
time(s)`` and the failure text ``Verification failed: expected at least N call(s) but got M``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class CallCriteria:
    """What a test expects of a mock's call count; None means "not asked".

    Attributes:
        at_least, at_most, exactly: bounds on the number of calls (≥ 0).
        never: True asks for zero calls.
    """

    at_least: int | None = None
    at_most: int | None = None
    exactly: int | None = None
    never: bool | None = None

    @property
    def empty(self) -> bool:
        """True when no criterion is given (the admin answers 400 ``missing_criteria``)."""
        return (self.at_least is None and self.at_most is None and self.exactly is None
                and not self.never)


def verify_calls(actual: int, criteria: CallCriteria) -> dict[str, Any]:
    """Judge ``actual`` calls against ``criteria``.

    Returns ``{success, passed, actual, expected?, message}`` where ``success`` equals
    ``passed``. ``never`` is checked first, then ``exactly``, then ``atLeast`` and ``atMost``
    together.
    """
    expected: str | None
    failures: list[str] = []
    if criteria.never:
        expected = "never (0 times)"
        if actual != 0:
            failures.append(f"expected no calls but got {actual}")
    elif criteria.exactly is not None:
        expected = f"exactly {criteria.exactly} time(s)"
        if actual != criteria.exactly:
            failures.append(f"expected exactly {criteria.exactly} call(s) but got {actual}")
    else:
        parts = []
        if criteria.at_least is not None:
            parts.append(f"at least {criteria.at_least} time(s)")
            if actual < criteria.at_least:
                failures.append(f"expected at least {criteria.at_least} call(s) but got {actual}")
        if criteria.at_most is not None:
            parts.append(f"at most {criteria.at_most} time(s)")
            if actual > criteria.at_most:
                failures.append(f"expected at most {criteria.at_most} call(s) but got {actual}")
        expected = " and ".join(parts) or None
    passed = not failures
    if passed:
        message = f"Mock was called {actual} time(s), matching expectations"
    else:
        message = "Verification failed: " + "; ".join(failures)
    result: dict[str, Any] = {"success": passed, "passed": passed, "actual": actual}
    if expected:
        result["expected"] = expected
    result["message"] = message
    return result
