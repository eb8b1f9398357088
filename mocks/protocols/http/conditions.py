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


def compile_text_test(operator: str, expected: str, case_insensitive: bool,
                      key_path: str) -> Callable[[str], bool]:
    """A test of one text value for a value or body matcher object.

    ``operator`` is ``equalTo`` (whole text), ``contains`` (substring), ``matches`` (regular
    expression over the WHOLE text) or ``doesNotMatch`` (its negation); ``case_insensitive``
    compares without case (``re.IGNORECASE`` for the regular expressions).

    Raises :class:`ConfigError` at ``<key_path>`` for a bad regular expression.
    Source: SPEC "Matcher"; WireMock import.
    """
    if operator in ("matches", "doesNotMatch"):
        try:
            regex = re.compile(expected, re.IGNORECASE if case_insensitive else 0)
        except re.error as error:
            raise ConfigError(key_path, f"{error}") from None
        fullmatch = regex.fullmatch
        if operator == "matches":
            return lambda actual: fullmatch(actual) is not None
        return lambda actual: fullmatch(actual) is None
    if operator == "contains":
        if case_insensitive:
            folded = expected.casefold()
            return lambda actual: folded in actual.casefold()
        return lambda actual: expected in actual
    if case_insensitive:
        folded = expected.casefold()
        return lambda actual: actual.casefold() == folded
    return expected.__eq__


def _value_operator(spec: Any) -> tuple[str, Any, bool]:
    """``(operator, value, case_insensitive)`` of a :class:`ValueMatch`-shaped object (the
    pydantic model or its camelCase dict)."""
    if hasattr(spec, "model_dump"):
        spec = spec.model_dump(by_alias=True, exclude_none=True)
    insensitive = bool(spec.get("caseInsensitive"))
    for operator in ("equalTo", "contains", "matches", "doesNotMatch", "absent"):
        if operator in spec:
            return operator, spec[operator], insensitive
    raise ConfigError("", f"no operator in {spec!r}")


def _describe(operator: str, value: Any, insensitive: bool) -> str:
    """Near-miss text of a value matcher object: ``matches "a.*"`` / ``absent``."""
    if operator == "absent":
        return "absent"
    return f"{operator} {_quote(value)}" + (" (case-insensitive)" if insensitive else "")


class _KeyedCondition(Condition):
    """Shared evaluation of multi-key conditions (headers, query params).

    Each key compiles to ``(lookup, test, absent)`` for serving, plus ``(display, expected,
    shown)`` for near misses: ``absent`` keys pass only when missing; every other key fails
    when missing and else runs ``test``.
    """

    per_key_score = 0
    label = ""
    cost = 2

    def __init__(self, expected: dict[str, Any], key_path: str, lower: bool,
                 text_test: Callable[[str], Callable[[str], bool]]):
        self.expected = expected
        self.weight = len(expected)
        self.max_score = self.per_key_score * len(expected)
        self._tests: list[tuple[str, Callable[[str], bool], bool]] = []
        #: ``(display name, expected as listed in details, expected in the mismatch text)``
        self._shown: list[tuple[str, str, str]] = []
        for name, value in expected.items():
            lookup = name.lower() if lower else name
            if isinstance(value, str):
                self._tests.append((lookup, text_test(value), False))
                self._shown.append((name, value, _quote(value)))
                continue
            operator, operand, insensitive = _value_operator(value)
            if operator == "absent":
                self._tests.append((lookup, _never, True))
            else:
                self._tests.append((lookup, compile_text_test(
                    operator, operand, insensitive, f"{key_path}[{name!r}].{operator}"), False))
            text = _describe(operator, operand, insensitive)
            self._shown.append((name, text, text))
        super().__init__()

    def _source(self, request: MockRequest) -> dict[str, str]:
        raise NotImplementedError

    def evaluate(self, request: MockRequest, explain: bool = False) -> ConditionResult:
        source = self._source(request)
        if not explain:
            for lookup, test, absent in self._tests:
                actual = source.get(lookup)
                if actual is None:
                    if not absent:
                        return self._miss
                elif absent or not test(actual):
                    return self._miss
            return self._hit
        details, mismatch, score = [], None, 0
        for (lookup, test, absent), (display, expected, shown) in zip(self._tests,
                                                                       self._shown):
            actual = source.get(lookup)
            ok = absent if actual is None else (not absent and test(actual))
            score += self.per_key_score if ok else 0
            details.append({"key": display, "expected": expected,
                            "actual": "(missing)" if actual is None else actual, "matched": ok})
            if not ok and mismatch is None:
                mismatch = (f"{self.label} {display} expected {shown}, got "
                            + ("(missing)" if actual is None else _quote(actual)))
        return ConditionResult(mismatch is None, score, details=details, mismatch=mismatch)


def _never(actual: str) -> bool:
    return False


class HeaderCondition(_KeyedCondition):
    """``matcher.headers``: names case-insensitive; text values case-sensitive with
    wildcards, object values as :func:`compile_text_test` (or ``absent``)."""

    field = "headers"
    per_key_score = scores.HEADER
    label = "header"

    def __init__(self, expected: dict[str, Any], key_path: str = "headers"):
        super().__init__(expected, key_path, True, compile_value_matcher)

    def _source(self, request: MockRequest) -> dict[str, str]:
        return request.headers


class QueryParamCondition(_KeyedCondition):
    """``matcher.queryParams``: each listed parameter's first value must be equal (text), or
    satisfy the value matcher object (or be ``absent``)."""

    field = "queryParams"
    per_key_score = scores.QUERY_PARAM
    label = "query param"

    def __init__(self, expected: dict[str, Any], key_path: str = "queryParams"):
        super().__init__(expected, key_path, False, _equals)

    def _source(self, request: MockRequest) -> dict[str, str]:
        return request.query


def _equals(expected: str) -> Callable[[str], bool]:
    return expected.__eq__


class ClientCertCondition(_KeyedCondition):
    """``matcher.clientCert``: fields of the certificate the client presented over HTTPS
    (``cn``, ``ou`` (the first OU), ``o``, ``subject``, ``issuer``, ``serial``), tested like
    header values: text is exact with ``prefix*``/``*suffix``/``*contains*`` wildcards, an
    object is a value matcher (or ``absent``). Without a client certificate (plain HTTP, or none
    sent) every field is missing, so only ``absent`` holds.

    Source: SPEC "TLS configuration of the mock server" (``server.tls.clientAuth``).
    """

    field = "clientCert"
    per_key_score = scores.CLIENT_CERT
    label = "client certificate"

    def __init__(self, expected: dict[str, Any], key_path: str = "clientCert"):
        super().__init__(expected, key_path, True, compile_value_matcher)

    def _source(self, request: MockRequest) -> dict[str, str]:
        return request.client_cert_fields


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


# --------------------------------------------------------------------------- bodyMatchers


class _BodyMatcherCondition(Condition):
    """Base of the ``matcher.bodyMatchers`` entries: one condition per entry."""

    field = "bodyMatchers"
    description = ""

    def _holds(self, request: MockRequest) -> bool:
        raise NotImplementedError

    def evaluate(self, request: MockRequest, explain: bool = False) -> ConditionResult:
        if self._holds(request):
            return self._hit
        if not explain:
            return self._miss
        return ConditionResult(False, 0, expected=self.description, actual=_clip(request.text),
                               mismatch=f"body expected to satisfy {self.description}")


class BodyTextCondition(_BodyMatcherCondition):
    """A ``bodyMatchers`` entry ``equalTo``, ``contains``, ``matches`` or ``doesNotMatch``
    over the body text (UTF-8), optionally ``caseInsensitive``; the regular expressions
    must match the WHOLE body. Raises :class:`ConfigError` for a bad regex."""

    cost = 4
    _SCORES = {"equalTo": scores.BODY_EQUALS, "contains": scores.BODY_CONTAINS,
               "matches": scores.BODY_PATTERN, "doesNotMatch": scores.BODY_PATTERN}

    def __init__(self, operator: str, expected: str, case_insensitive: bool, key_path: str):
        self.max_score = self._SCORES[operator]
        self._test = compile_text_test(operator, expected, case_insensitive,
                                       f"{key_path}.{operator}")
        self.description = _describe(operator, _clip(expected), case_insensitive)
        super().__init__()

    def _holds(self, request: MockRequest) -> bool:
        return self._test(request.text)


#: ``${json-unit.*}`` placeholders of an expected JSON value -> what they accept.
_JSON_PLACEHOLDERS: dict[str, Callable[[Any], bool]] = {
    "${json-unit.ignore}": lambda actual: True,
    "${json-unit.any-string}": lambda actual: isinstance(actual, str),
    "${json-unit.any-number}": lambda actual: (isinstance(actual, (int, float))
                                               and not isinstance(actual, bool)),
    "${json-unit.any-boolean}": lambda actual: isinstance(actual, bool),
}


def json_semantically_equal(expected: Any, actual: Any, ignore_array_order: bool = False,
                            ignore_extra_elements: bool = False) -> bool:
    """Whether the JSON value ``actual`` equals ``expected`` as JSON (not as text).

    Numbers compare by value (``1`` equals ``1.0``; booleans are never numbers). With
    ``ignore_array_order`` arrays compare as multisets; with ``ignore_extra_elements`` the
    actual objects may hold more keys and the actual arrays more items, at every depth. A
    string placeholder of :data:`_JSON_PLACEHOLDERS` in ``expected`` accepts any value of its
    kind (the key must still be present). Source: SPEC "Matcher" (``equalToJson``).
    """
    if isinstance(expected, str):
        accepts = _JSON_PLACEHOLDERS.get(expected)
        if accepts is not None:
            return accepts(actual)
        return isinstance(actual, str) and expected == actual
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return False
        if not ignore_extra_elements and len(actual) != len(expected):
            return False
        for key, value in expected.items():
            if key not in actual or not json_semantically_equal(
                    value, actual[key], ignore_array_order, ignore_extra_elements):
                return False
        return True
    if isinstance(expected, list):
        if not isinstance(actual, list):
            return False
        if len(actual) != len(expected) and not (ignore_extra_elements
                                                 and len(actual) > len(expected)):
            return False

        def same(one: Any, other: Any) -> bool:
            return json_semantically_equal(one, other, ignore_array_order,
                                           ignore_extra_elements)
        if ignore_array_order:
            return _unordered_match(expected, actual, same)
        if len(actual) == len(expected):
            return all(same(one, other) for one, other in zip(expected, actual))
        # Extra items allowed, order kept: ``expected`` must be a subsequence of ``actual``.
        position = 0
        for item in expected:
            while position < len(actual) and not same(item, actual[position]):
                position += 1
            if position == len(actual):
                return False
            position += 1
        return True
    if isinstance(expected, bool) or isinstance(actual, bool):
        return isinstance(expected, bool) and isinstance(actual, bool) and expected is actual
    if expected is None or actual is None:
        return expected is None and actual is None
    if isinstance(expected, (int, float)) and isinstance(actual, (int, float)):
        return expected == actual
    return False


def _unordered_match(expected: list[Any], actual: list[Any],
                     same: Callable[[Any, Any], bool]) -> bool:
    """Every expected item paired with a different actual item (bipartite matching by
    augmenting paths, so placeholders and partial objects never pair greedily wrong)."""
    candidates = [[index for index, item in enumerate(actual) if same(wanted, item)]
                  for wanted in expected]
    owner: dict[int, int] = {}

    def assign(wanted: int, seen: set[int]) -> bool:
        for index in candidates[wanted]:
            if index in seen:
                continue
            seen.add(index)
            if index not in owner or assign(owner[index], seen):
                owner[index] = wanted
                return True
        return False

    return all(assign(wanted, set()) for wanted in range(len(expected)))


class JsonEqualsCondition(_BodyMatcherCondition):
    """A ``bodyMatchers`` entry ``equalToJson``: the JSON body equals the expected value
    semantically (:func:`json_semantically_equal`); a body that is not JSON fails.

    ``expected`` is JSON text (parsed here, once) or a JSON value. Raises
    :class:`ConfigError` at ``<key_path>.equalToJson`` for text that is not JSON.
    """

    max_score = scores.BODY_EQUALS
    cost = 5

    def __init__(self, expected: Any, ignore_array_order: bool, ignore_extra_elements: bool,
                 key_path: str):
        if isinstance(expected, str):
            try:
                expected = orjson.loads(expected)
            except orjson.JSONDecodeError as error:
                raise ConfigError(f"{key_path}.equalToJson",
                                  f"not valid JSON text: {error}") from None
        self.expected = expected
        self.ignore_array_order = ignore_array_order
        self.ignore_extra_elements = ignore_extra_elements
        options = [name for name, on in (("ignoreArrayOrder", ignore_array_order),
                                         ("ignoreExtraElements", ignore_extra_elements)) if on]
        self.description = (f"equalToJson {_clip(orjson.dumps(expected).decode())}"
                            + (f" ({', '.join(options)})" if options else ""))
        super().__init__()

    def _holds(self, request: MockRequest) -> bool:
        document = request.json
        return document is not INVALID_JSON and json_semantically_equal(
            self.expected, document, self.ignore_array_order, self.ignore_extra_elements)


def _xml_parser() -> Any:
    """A bounded, safe lxml parser: no entity expansion, no network, no DTD loading, no huge
    trees; comments and processing instructions dropped."""
    from lxml import etree

    return etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False,
                           load_dtd=False, dtd_validation=False, remove_comments=True,
                           remove_pis=True)


def xml_canonical(data: bytes, parser: Any = None) -> Any:
    """A comparable form of an XML document: each element as ``(namespace URI + local name,
    sorted attributes, children)`` where children are elements and the non-blank text
    pieces (stripped) in document order. Prefixes, attribute order, comments and white
    space between elements do not show. Raises ``lxml.etree.XMLSyntaxError`` (a
    ``ValueError``-like error) when ``data`` is not well-formed XML."""
    from lxml import etree

    root = etree.fromstring(data, parser if parser is not None else _xml_parser())

    def node(element: Any) -> tuple[Any, ...]:
        children: list[Any] = []
        if element.text and element.text.strip():
            children.append(element.text.strip())
        for child in element:
            if isinstance(child.tag, str):
                children.append(node(child))
            elif isinstance(child, etree._Entity):
                children.append(child.text)  # an unexpanded `&name;` stays as written
            if child.tail and child.tail.strip():
                children.append(child.tail.strip())
        return (element.tag, tuple(sorted(element.attrib.items())), tuple(children))

    return node(root)


class XmlEqualsCondition(_BodyMatcherCondition):
    """A ``bodyMatchers`` entry ``equalToXml``: the body is XML equal to the expected
    document (:func:`xml_canonical`); a body that does not parse fails.

    Raises :class:`ConfigError` at ``<key_path>.equalToXml`` when the expected text is not
    well-formed XML.
    """

    max_score = scores.BODY_EQUALS
    cost = 6
    _parser: Any = None

    def __init__(self, expected: str, key_path: str):
        try:
            self.expected = xml_canonical(expected.encode("utf-8"))
        except Exception as error:  # lxml's XMLSyntaxError and friends
            raise ConfigError(f"{key_path}.equalToXml", f"not well-formed XML: {error}") \
                from None
        self.description = f"equalToXml {_quote(_clip(expected))}"
        super().__init__()

    def _holds(self, request: MockRequest) -> bool:
        if not request.body:
            return False
        if XmlEqualsCondition._parser is None:
            # One parser for the data plane (its event loop is the only caller).
            XmlEqualsCondition._parser = _xml_parser()
        try:
            return xml_canonical(request.body, XmlEqualsCondition._parser) == self.expected
        except Exception:  # noqa: BLE001 - a body that is not XML simply does not match
            return False


class JsonPathMatchCondition(_BodyMatcherCondition):
    """A ``bodyMatchers`` entry ``matchesJsonPath``: the JSONPath finds something in the
    JSON body (the same JSONPath code as ``bodyJsonPath``); a body that is not JSON fails.
    Raises :class:`ConfigError` for a bad JSONPath."""

    max_score = scores.BODY_JSON_PATH
    cost = 5

    def __init__(self, expression: str, key_path: str):
        self.query = _JsonPathQuery(expression, f"{key_path}.matchesJsonPath")
        self.description = f"matchesJsonPath {_quote(expression)}"
        super().__init__()

    def _holds(self, request: MockRequest) -> bool:
        document = request.json
        return document is not INVALID_JSON and bool(self.query.find(document))


def body_matcher_condition(entry: Any, key_path: str) -> Condition:
    """The condition of one ``matcher.bodyMatchers`` entry (a ``BodyMatch`` model).

    Raises :class:`ConfigError` naming ``<key_path>.<operator>`` for a bad regex, JSON
    text, XML text or JSONPath. Source: SPEC "Matcher"; WireMock import (``bodyPatterns``).
    """
    operator = entry.operator
    if operator == "equalToJson":
        return JsonEqualsCondition(entry.equal_to_json, bool(entry.ignore_array_order),
                                   bool(entry.ignore_extra_elements), key_path)
    if operator == "equalToXml":
        return XmlEqualsCondition(entry.equal_to_xml, key_path)
    if operator == "matchesJsonPath":
        return JsonPathMatchCondition(entry.matches_json_path, key_path)
    value = {"equalTo": entry.equal_to, "contains": entry.contains, "matches": entry.matches,
             "doesNotMatch": entry.does_not_match}[operator]
    return BodyTextCondition(operator, value, bool(entry.case_insensitive), key_path)


# --------------------------------------------------------------------------- scenario


class ScenarioStateCondition(Condition):
    """``http.scenario.requiredState``: the mock's scenario is in that state.

    ``states`` is the engine's live ``{(workspace, scenario): state}`` dict (a missing key
    means ``Started``), shared by reference, so serving costs one dict lookup.
    """

    field = "scenario"
    max_score = scores.SCENARIO_STATE
    cost = 0

    def __init__(self, states: dict[tuple[str, str], str], key: tuple[str, str],
                 required: str, started: str):
        self.states = states
        self.key = key
        self.required = required
        self.started = started
        super().__init__()

    def evaluate(self, request: MockRequest, explain: bool = False) -> ConditionResult:
        state = self.states.get(self.key, self.started)
        if state == self.required:
            return self._hit
        if not explain:
            return self._miss
        return ConditionResult(False, 0, expected=self.required, actual=state,
                               mismatch=f"scenario {_quote(self.key[1])} expected in state "
                                        f"{_quote(self.required)}, is in {_quote(state)}")


def path_condition(raw: str, key_path: str) -> Condition:
    """The right path condition class for one ``matcher.path``."""
    form = compile_path(raw, key_path)
    if form.literal is not None:
        return ExactPathCondition(form)
    return TemplatePathCondition(form, raw)


def json_path_query(expression: str, key_path: str) -> Any:
    """A compiled JSONPath for other protocols' matchers (WebSocket ``json`` matches): an
    object with ``find(document) -> [values]``; plain ``$.a.b[0]`` paths are walked
    directly, others go through jsonpath-ng. Raises :class:`ConfigError` naming
    ``key_path`` for a bad expression. Source: SPEC "Matcher" (``bodyJsonPath``)."""
    return _JsonPathQuery(expression, key_path)


def json_values_equal(expected: Any, actual: Any) -> bool:
    """JSON value equality as ``bodyJsonPath`` compares: booleans only equal booleans (or
    the text ``"true"``/``"false"``), numbers compare by value (and equal their JSON text),
    null only equals null. Source: SPEC "Matcher" (``bodyJsonPath``)."""
    return _json_equal(expected, actual)
