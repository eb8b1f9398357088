"""Verification wording and judgement (behavior notes §1 "Verification")."""
from __future__ import annotations

import pytest

from mocks.engine.verification import CallCriteria, verify_calls


@pytest.mark.parametrize("criteria, actual, passed, expected, message", [
    pytest.param(CallCriteria(exactly=2), 2, True, "exactly 2 time(s)",
                 "Mock was called 2 time(s), matching expectations", id="exactly met"),
    pytest.param(CallCriteria(exactly=2), 1, False, "exactly 2 time(s)",
                 "Verification failed: expected exactly 2 call(s) but got 1", id="exactly missed"),
    pytest.param(CallCriteria(at_least=1, at_most=3), 2, True,
                 "at least 1 time(s) and at most 3 time(s)",
                 "Mock was called 2 time(s), matching expectations", id="range met"),
    pytest.param(CallCriteria(at_least=3), 1, False, "at least 3 time(s)",
                 "Verification failed: expected at least 3 call(s) but got 1", id="at least"),
    pytest.param(CallCriteria(at_most=0), 4, False, "at most 0 time(s)",
                 "Verification failed: expected at most 0 call(s) but got 4", id="at most"),
    pytest.param(CallCriteria(never=True), 0, True, "never (0 times)",
                 "Mock was called 0 time(s), matching expectations", id="never met"),
])
def test_verify_calls(criteria, actual, passed, expected, message):
    result = verify_calls(actual, criteria)
    assert result == {"success": passed, "passed": passed, "actual": actual,
                      "expected": expected, "message": message}


def test_no_criterion_is_empty():
    assert CallCriteria().empty and CallCriteria(never=False).empty
    assert not CallCriteria(at_least=0).empty
