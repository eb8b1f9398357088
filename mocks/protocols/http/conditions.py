"""One small class per matcher condition (STYLE §3).

Every condition has ``field`` (the config key it came from, as named in near misses),
``max_score`` (points from :mod:`mocks.core.scores`), ``weight`` (how many conditions it counts
for in precedence) and ``evaluate(request, explain=False) -> ConditionResult``. Serving calls
``evaluate`` without ``explain`` and stops at the first miss; near misses call the *same* method
with ``explain=True`` to get expected/actual text. There is no second copy of the logic.

Source: SPEC "Matcher"; behavior notes §4 (near-miss fields and texts) and §5 (points, paths,
header wildcards, query first value, JSONPath rules).
"""
from __future__ import annotations

import re
from typing import Any, Callable

import orjson

from mocks.core import scores
from mocks.core.errors import ConfigError
from mocks.core.paths import PathForm, compile_path, path_captures
from mocks.core.request import INVALID_JSON, MockRequest

_NO_CAPTURES: dict[str, str] = {}


class ConditionResult:
    """The outcome of one condition on one request.

    Attributes:
        matched: whether the condition holds.
        score: points earned (``max_score`` when matched; partial for multi-key conditions).
        captures: path parameters captured (path conditions only).
        expected, actual: display text for near misses (only with ``explain=True``).
        details: per-key rows for headers/query params
            (``[{key, expected, actual, matched}]``, only with ``explain=True``).
        mismatch: the near-miss reason text for the first failing key (explain only).
    """

    __slots__ = ("matched", "score", "captures", "expected", "actual", "details", "mismatch")

    def __init__(self, matched: bool, score: int, captures: dict[str, str] = _NO_CAPTURES,
                 expected: str | None = None, actual: str | None = None,
                 details: list[dict[str, Any]] | None = None, mismatch: str | None = None):
        self.matched = matched
        self.score = score
        self.captures = captures
        self.expected = expected
        self.actual = actual
        self.details = details
        self.mismatch = mismatch


class Condition:
    """Base of all conditions; subclasses set ``field``, ``max_score``, ``weight``, ``cost``."""

    field = ""
    max_score = 0
    weight = 1
    #: Relative cost; the matcher evaluates cheap conditions first.
    cost = 0

    def __init__(self) -> None:
        self._hit = ConditionResult(True, self.max_score)
        self._miss = ConditionResult(False, 0)

    def evaluate(self, request: MockRequest, explain: bool = False) -> ConditionResult:
        raise NotImplementedError


def _quote(value: Any) -> str:
    return '"' + str(value) + '"'


# --------------------------------------------------------------------------- method / path


class MethodCondition(Condition):
    """``matcher.method``: the request method, compared upper-case."""

    field = "method"
    max_score = scores.METHOD
    cost = 0

    def __init__(self, method: str):
        self.method = method.upper()
        super().__init__()

    def evaluate(self, request: MockRequest, explain: bool = False) -> ConditionResult:
        if request.method == self.method:
            return self._hit
        if not explain:
            return self._miss
        return ConditionResult(False, 0, expected=self.method, actual=request.method,
                               mismatch=f"method expected {_quote(self.method)}, "
                                        f"got {_quote(request.method)}")


class _PathConditionBase(Condition):
    weight = 0  # specificity ranks paths; they do not count as extra conditions
    cost = 1
    expected_text = ""

    def _miss_result(self, request: MockRequest, explain: bool) -> ConditionResult:
        if not explain:
            return self._miss
        return ConditionResult(False, 0, expected=self.expected_text, actual=request.path,
                               mismatch=f"{self.field} expected {_quote(self.expected_text)}, "
                                        f"got {_quote(request.path)}")


class ExactPathCondition(_PathConditionBase):
    """``matcher.path`` without placeholders: the decoded path must be equal."""

    field = "path"
    max_score = scores.PATH_EXACT
    specificity = scores.SPECIFICITY_EXACT

    def __init__(self, form: PathForm):
        self.form = form
        self.expected_text = form.literal or ""
        super().__init__()

    def evaluate(self, request: MockRequest, explain: bool = False) -> ConditionResult:
        if request.path == self.form.literal:
            return self._hit
        return self._miss_result(request, explain)


class TemplatePathCondition(_PathConditionBase):
    """``matcher.path`` with ``{name}``, ``{name:.*}`` or ``*``: captures path parameters."""

    field = "path"

    def __init__(self, form: PathForm, raw: str):
        self.form = form
        self.expected_text = raw
        self.specificity = form.specificity
        self.max_score = (scores.PATH_TEMPLATE if form.specificity == scores.SPECIFICITY_TEMPLATE
                          else scores.PATH_GLOB)
        super().__init__()

    def evaluate(self, request: MockRequest, explain: bool = False) -> ConditionResult:
        assert self.form.regex is not None
        match = self.form.regex.fullmatch(request.path)
        if match is None:
            return self._miss_result(request, explain)
        return ConditionResult(True, self.max_score, path_captures(self.form, match))


class PathPatternCondition(_PathConditionBase):
    """``matcher.pathPattern``: a regex searched in the path; named groups become captures."""

    field = "pathPattern"
    max_score = scores.PATH_PATTERN
    specificity = scores.SPECIFICITY_PATTERN

    def __init__(self, pattern: str, key_path: str):
        try:
            self.regex = re.compile(pattern)
        except re.error as error:
            raise ConfigError(key_path, f"{error}") from None
        self.expected_text = pattern
        super().__init__()

    def evaluate(self, request: MockRequest, explain: bool = False) -> ConditionResult:
        match = self.regex.search(request.path)
        if match is None:
            return self._miss_result(request, explain)
        captures = {name: value or "" for name, value in match.groupdict().items()}
        return ConditionResult(True, self.max_score, captures) if captures else self._hit


# --------------------------------------------------------------------------- headers / query


def compile_value_matcher(expected: str) -> Callable[[str], bool]:
    """Header value matcher: exact, ``prefix*``, ``*suffix``, ``*contains*`` (notes §5)."""
    if len(expected) >= 2 and expected.startswith("*") and expected.endswith("*"):
        needle = expected[1:-1]
        return lambda actual: needle in actual
    if expected.endswith("*"):
        prefix = expected[:-1]
        return lambda actual: actual.startswith(prefix)
    if expected.startswith("*"):
        suffix = expected[1:]
        return lambda actual: actual.endswith(suffix)
    return expected.__eq__


class _KeyedCondition(Condition):
    """Shared evaluation of multi-key conditions (headers, query params)."""

    per_key_score = 0
    label = ""
    cost = 2

    def __init__(self, expected: dict[str, str]):
        self.expected = expected
        self.weight = len(expected)
        self.max_score = self.per_key_score * len(expected)
        super().__init__()

    def _pairs(self) -> list[tuple[str, str, Callable[[str], bool]]]:
        raise NotImplementedError

    def _source(self, request: MockRequest) -> dict[str, str]:
        raise NotImplementedError

    def evaluate(self, request: MockRequest, explain: bool = False) -> ConditionResult:
        source = self._source(request)
        if not explain:
            for lookup, _, test in self._pairs():
                actual = source.get(lookup)
                if actual is None or not test(actual):
                    return self._miss
            return self._hit
        details, mismatch, score = [], None, 0
        for lookup, display, test in self._pairs():
            actual = source.get(lookup)
            ok = actual is not None and test(actual)
            score += self.per_key_score if ok else 0
            expected = self.expected[display]
            details.append({"key": display, "expected": expected,
                            "actual": "(missing)" if actual is None else actual, "matched": ok})
            if not ok and mismatch is None:
                mismatch = (f"{self.label} {display} expected {_quote(expected)}, got "
                            + ("(missing)" if actual is None else _quote(actual)))
        return ConditionResult(mismatch is None, score, details=details, mismatch=mismatch)


class HeaderCondition(_KeyedCondition):
    """``matcher.headers``: names case-insensitive, values case-sensitive with wildcards."""

    field = "headers"
    per_key_score = scores.HEADER
    label = "header"

    def __init__(self, expected: dict[str, str]):
        self._compiled = [(name.lower(), name, compile_value_matcher(value))
                          for name, value in expected.items()]
        super().__init__(expected)

    def _pairs(self):
        return self._compiled

    def _source(self, request: MockRequest) -> dict[str, str]:
        return request.headers


class QueryParamCondition(_KeyedCondition):
    """``matcher.queryParams``: each listed parameter's first value must be equal."""

    field = "queryParams"
    per_key_score = scores.QUERY_PARAM
    label = "query param"

    def __init__(self, expected: dict[str, str]):
        self._compiled = [(name, name, value.__eq__) for name, value in expected.items()]
        super().__init__(expected)

    def _pairs(self):
        return self._compiled

    def _source(self, request: MockRequest) -> dict[str, str]:
        return request.query


# --------------------------------------------------------------------------- body


class BodyEqualsCondition(Condition):
    """``matcher.bodyEquals``: the whole body equals the string."""

    field = "bodyEquals"
    max_score = scores.BODY_EQUALS
    cost = 3

    def __init__(self, expected: str):
        self.expected = expected
        self._expected_bytes = expected.encode()
        super().__init__()

    def evaluate(self, request: MockRequest, explain: bool = False) -> ConditionResult:
        if request.body == self._expected_bytes:
            return self._hit
        if not explain:
            return self._miss
        return ConditionResult(False, 0, expected=self.expected, actual=_clip(request.text),
                               mismatch=f"body expected to equal {_quote(_clip(self.expected))}")


class BodyContainsCondition(Condition):
    """``matcher.bodyContains``: a plain substring of the body."""

    field = "bodyContains"
    max_score = scores.BODY_CONTAINS
    cost = 3

    def __init__(self, expected: str):
        self.expected = expected
        self._expected_bytes = expected.encode()
        super().__init__()

    def evaluate(self, request: MockRequest, explain: bool = False) -> ConditionResult:
        if self._expected_bytes in request.body:
            return self._hit
        if not explain:
            return self._miss
        return ConditionResult(False, 0, expected=self.expected, actual=_clip(request.text),
                               mismatch=f"body expected to contain {_quote(self.expected)}")


class BodyPatternCondition(Condition):
    """``matcher.bodyPattern``: a regex searched in the body; inline flags work."""

    field = "bodyPattern"
    max_score = scores.BODY_PATTERN
    cost = 4

    def __init__(self, pattern: str, key_path: str):
        try:
            self.regex = re.compile(pattern)
        except re.error as error:
            raise ConfigError(key_path, f"{error}") from None
        self.expected = pattern
        super().__init__()

    def evaluate(self, request: MockRequest, explain: bool = False) -> ConditionResult:
        if self.regex.search(request.text) is not None:
            return self._hit
        if not explain:
            return self._miss
        return ConditionResult(False, 0, expected=self.expected, actual=_clip(request.text),
                               mismatch=f"body expected to match pattern {_quote(self.expected)}")


def _clip(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


# --------------------------------------------------------------------------- JSONPath

_MISSING: Any = object()
_SIMPLE_PATH = re.compile(r"^\$((?:\.[A-Za-z_][A-Za-z0-9_-]*|\[\d+\]|\['[^']*'\]|\[\"[^\"]*\"\])*)$")
_SIMPLE_STEP = re.compile(r"\.([A-Za-z_][A-Za-z0-9_-]*)|\[(\d+)\]|\['([^']*)'\]|\[\"([^\"]*)\"\]")


class _JsonPathQuery:
    """A compiled JSONPath: direct traversal for plain ``$.a.b[0]`` paths, jsonpath-ng else."""

    def __init__(self, expression: str, key_path: str):
        self.expression = expression
        self._steps: list[str | int] | None = None
        self._parsed: Any = None
        if _SIMPLE_PATH.match(expression):
            steps: list[str | int] = []
            for name, index, single, double in _SIMPLE_STEP.findall(expression):
                steps.append(int(index) if index else (name or single or double))
            self._steps = steps
            return
        try:
            from jsonpath_ng.ext import parse
            self._parsed = parse(expression)
        except Exception as error:  # jsonpath-ng raises several exception types
            raise ConfigError(key_path, f"invalid JSONPath {expression!r}: {error}") from None

    def find(self, document: Any) -> list[Any]:
        if self._steps is not None:
            node = document
            for step in self._steps:
                if isinstance(step, int):
                    if not isinstance(node, list) or step >= len(node):
                        return []
                    node = node[step]
                else:
                    if not isinstance(node, dict) or step not in node:
                        return []
                    node = node[step]
            return [node]
        return [match.value for match in self._parsed.find(document)]


def _json_equal(expected: Any, actual: Any) -> bool:
    if isinstance(expected, bool) or isinstance(actual, bool):
        if isinstance(expected, bool) and isinstance(actual, bool):
            return expected is actual
        if isinstance(expected, str) and isinstance(actual, bool):
            return expected == ("true" if actual else "false")
        return False
    if expected is None or actual is None:
        return expected is None and actual is None
    if isinstance(expected, (int, float)) and isinstance(actual, (int, float)):
        return expected == actual
    if isinstance(expected, str):
        if isinstance(actual, str):
            return expected == actual
        if isinstance(actual, (int, float)):
            return expected == orjson.dumps(actual).decode()
    return expected == actual


class JsonPathCondition(Condition):
    """``matcher.bodyJsonPath``: every entry must hold on the parsed JSON body.

    Values: a scalar (equal to any value the path finds) or ``{exists: true|false}``.
    A body that is not JSON fails every entry except ``{exists: false}`` (notes §5).
    """

    field = "bodyJSONPath"
    cost = 5

    def __init__(self, entries: dict[str, Any], key_path: str):
        self._entries: list[tuple[_JsonPathQuery, Any, bool | None]] = []
        for expression, value in entries.items():
            query = _JsonPathQuery(expression, f"{key_path}[{expression!r}]")
            exists = getattr(value, "exists", None)
            if isinstance(value, dict) and set(value) == {"exists"}:
                exists = bool(value["exists"])
            self._entries.append((query, value, exists))
        self.weight = len(entries)
        self.max_score = scores.BODY_JSON_PATH * len(entries)
        super().__init__()

    def _entry_holds(self, document: Any, query: _JsonPathQuery, value: Any,
                     exists: bool | None) -> bool:
        found = [] if document is INVALID_JSON else query.find(document)
        if exists is not None:
            return bool(found) is exists
        return any(_json_equal(value, item) for item in found)

    def evaluate(self, request: MockRequest, explain: bool = False) -> ConditionResult:
        document = request.json
        if not explain:
            for query, value, exists in self._entries:
                if not self._entry_holds(document, query, value, exists):
                    return self._miss
            return self._hit
        score, details, mismatch = 0, [], None
        for query, value, exists in self._entries:
            ok = self._entry_holds(document, query, value, exists)
            score += scores.BODY_JSON_PATH if ok else 0
            expected = {"exists": exists} if exists is not None else value
            details.append({"key": query.expression, "expected": expected, "matched": ok})
            if not ok and mismatch is None:
                mismatch = "body JSONPath condition not satisfied"
        return ConditionResult(mismatch is None, score, details=details, mismatch=mismatch)


def path_condition(raw: str, key_path: str) -> Condition:
    """The right path condition class for one ``matcher.path``."""
    form = compile_path(raw, key_path)
    if form.literal is not None:
        return ExactPathCondition(form)
    return TemplatePathCondition(form, raw)
