"""Compiled HTTP matchers, the precedence rule and match candidates.

An ``http`` mock's ``matcher`` compiles to a :class:`CompiledMatcher` (one condition object per
field, cheapest first); the HTTP handler wraps it with the mock's action in a
:class:`Candidate`, which the engine's :class:`~mocks.engine.matching.MatchIndex` serves.

Source: SPEC "Matcher" and "Matching rules"; behavior notes §5 (precedence, points). STYLE §3:
the serving loop and the near-miss explanation run the *same* condition objects.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from mocks.core import scores
from mocks.core.errors import ConfigError
from mocks.core.request import MockRequest
from mocks.protocols.http.conditions import (
    BodyContainsCondition, BodyEqualsCondition, BodyPatternCondition, Condition,
    ClientCertCondition, ConditionResult, HeaderCondition, ExactPathCondition, JsonPathCondition, MethodCondition,
    PathPatternCondition, QueryParamCondition, _PathConditionBase, body_matcher_condition,
    path_condition)


class CompiledMatcher:
    """The conditions of one ``matcher``, cheapest first.

    Attributes:
        conditions: tuple of :class:`Condition`, ordered by ``cost``.
        specificity: path specificity rank (``scores.SPECIFICITY_*``).
        condition_count: conditions counted for precedence (method, each header, each query
            param, each body condition, each ``bodyJsonPath`` and ``bodyMatchers`` entry, a
            scenario's required state).
        max_score: sum of the conditions' points (for near-miss percentages).
        method: the required method, or None.
    """

    __slots__ = ("conditions", "specificity", "condition_count", "max_score", "method",
                 "path_condition", "residual")

    def __init__(self, conditions: list[Condition]):
        self.conditions = tuple(sorted(conditions, key=lambda condition: condition.cost))
        path_conditions = [c for c in conditions if isinstance(c, _PathConditionBase)]
        self.path_condition = max(path_conditions, key=lambda c: c.specificity, default=None)
        self.specificity = (self.path_condition.specificity if self.path_condition
                            else scores.SPECIFICITY_NONE)
        self.condition_count = sum(condition.weight for condition in conditions)
        self.max_score = sum(condition.max_score for condition in conditions)
        self.method = next((c.method for c in conditions if isinstance(c, MethodCondition)), None)
        #: Conditions left to check once the exact-path index has found the mock: its bucket
        #: key already guarantees the method and the literal path.
        self.residual = tuple(c for c in self.conditions
                              if not isinstance(c, (MethodCondition, ExactPathCondition)))

    def match(self, request: MockRequest) -> dict[str, str] | None:
        """Captured path parameters when every condition holds, else None (stops early)."""
        captures: dict[str, str] | None = None
        for condition in self.conditions:
            result = condition.evaluate(request)
            if not result.matched:
                return None
            if result.captures:
                captures = result.captures if captures is None else {**captures,
                                                                     **result.captures}
        return captures if captures is not None else {}

    def quick_score(self, request: MockRequest) -> tuple[int, bool]:
        """``(score, whether any condition matched)`` without building explanations.

        The same points as :meth:`explain`: a multi-key condition (headers, query params,
        JSONPath entries) that misses is re-run in explain mode for its partial score.
        """
        score = 0
        any_matched = False
        for condition in self.conditions:
            result = condition.evaluate(request)
            if result.matched:
                score += result.score
                any_matched = True
            elif condition.weight > 1:
                score += condition.evaluate(request, explain=True).score
        return score, any_matched

    def explain(self, request: MockRequest) -> tuple[int, list[tuple[Condition, ConditionResult]]]:
        """Every condition evaluated with explanations: ``(score, [(condition, result)])``."""
        results = [(condition, condition.evaluate(request, explain=True))
                   for condition in self.conditions]
        return sum(result.score for _, result in results), results


def compile_matcher(matcher: Any, key_path: str,
                    extra: Sequence[Condition] = ()) -> CompiledMatcher:
    """Build a :class:`CompiledMatcher` from a validated ``config.Matcher``.

    ``extra`` adds conditions that come from outside the matcher (the mock's
    ``http.scenario.requiredState``). Each ``bodyMatchers`` entry is one condition.

    Raises :class:`ConfigError` (with the key path) for a bad path, regex, JSONPath, JSON or
    XML text, or a matcher with no condition at all (behavior notes §5: "a matcher needs ≥1
    criterion").
    """
    conditions: list[Condition] = []
    if matcher.method:
        conditions.append(MethodCondition(matcher.method))
    if matcher.path is not None:
        conditions.append(path_condition(matcher.path, f"{key_path}.path"))
    if matcher.path_pattern is not None:
        conditions.append(PathPatternCondition(matcher.path_pattern, f"{key_path}.pathPattern"))
    if matcher.query_params:
        conditions.append(QueryParamCondition(matcher.query_params,
                                              f"{key_path}.queryParams"))
    if matcher.headers:
        conditions.append(HeaderCondition(matcher.headers, f"{key_path}.headers"))
    if matcher.client_cert:
        conditions.append(ClientCertCondition(matcher.client_cert, f"{key_path}.clientCert"))
    if matcher.body_equals is not None:
        conditions.append(BodyEqualsCondition(matcher.body_equals))
    if matcher.body_contains is not None:
        conditions.append(BodyContainsCondition(matcher.body_contains))
    if matcher.body_pattern is not None:
        conditions.append(BodyPatternCondition(matcher.body_pattern, f"{key_path}.bodyPattern"))
    if matcher.body_json_path:
        conditions.append(JsonPathCondition(matcher.body_json_path, f"{key_path}.bodyJsonPath"))
    for index, entry in enumerate(matcher.body_matchers or ()):
        conditions.append(body_matcher_condition(entry, f"{key_path}.bodyMatchers[{index}]"))
    if not conditions:
        raise ConfigError(key_path, "a matcher needs at least one condition "
                                    "(method, path, pathPattern, headers, ...)")
    return CompiledMatcher([*conditions, *extra])


def precedence_key(specificity: int, condition_count: int, priority: int,
                   order: int) -> tuple[int, int, int, int]:
    """Sort key of a candidate mock; the smallest key wins.

    The rule (SPEC "Matching rules" as settled in behavior notes §5), highest first:
    "1. path specificity: exact `path` > `pathPattern` > `path` with `{param}` > `path` with `*`
    or `{name:.*}` > no path condition; 2. number of conditions (method, each header, each query
    param, each body condition, each `bodyJsonPath` entry); 3. `http.priority` (integer ≥ 0,
    default 0; higher wins; a tie-breaker only); 4. the earlier mock in the file (or the earlier
    created)."
    """
    return (-specificity, -condition_count, -priority, order)


@dataclass(slots=True)
class Candidate:
    """One enabled, matchable HTTP mock inside a snapshot.

    Attributes:
        mock_id, name: the mock's identity (for logs and near misses).
        matcher: its compiled matcher.
        key: :func:`precedence_key` of the mock.
        action: what answers a match (a compiled response today; bindings, streams and
            protocol handlers plug in here later). Opaque to the matcher.
        path_template: the ``matcher.path`` text (or pattern) used as a low-cardinality label.
    """

    mock_id: str
    name: str | None
    matcher: CompiledMatcher
    key: tuple[int, int, int, int]
    action: Any
    path_template: str
