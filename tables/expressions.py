"""The expression language of custom operations: parsed once, evaluated per run.

Syntax (behavior notes §19; the expr-lang syntax the original tool uses), from loosest to
tightest binding:

======================================  ===================================================
``c ? a : b``, ``a ?: b``               conditional; ``?:`` answers ``a`` unless it is nil
                                        or false
``or`` ``||``                           logical or (booleans; nil counts as false)
``and`` ``&&``                          logical and
``== != < <= > >=``, ``in``,            comparison; chains (``1 < x < 10`` is ``1 < x and
``contains``, ``startsWith``,           x < 10``); ``not in``, ``not contains``, ... negate
``endsWith``, ``matches``
``+ -``                                 numbers; ``+`` also joins strings and arrays
``not`` ``!`` (prefix)                  negation: ``not a == b`` is ``(not a) == b``, as in
                                        expr-lang
``* / %``                               ``/`` always divides exactly (``7 / 2`` is 3.5);
                                        ``%`` takes integers
``-`` ``+`` (prefix)                    sign: ``-2 ** 2`` is -4
``**`` ``^``                            power (right-associative)
``??``                                  nil coalescing: the left value unless it is nil;
                                        like expr-lang, it binds tightest and cannot be the
                                        left operand of another operator without parentheses
``a.b``, ``a?.b``, ``a["k"]``, ``a[0]``   access; a missing field, key or index is nil
                                        (never an error); ``a[-1]`` is the last element
======================================  ===================================================

Values: ``input``; the variables named by earlier steps (``as``/``var``); literals ``42``,
``0x1F``, ``1_000``, ``3.14``, ``1e3``, ``true``, ``false``, ``nil``/``null``, strings in
double or single quotes (escapes ``\\n \\t \\r \\\\ \\" \\' \\uXXXX``) or backticks (raw);
arrays ``[1, 2]``; maps ``{name: "x", "other key": 1, (expression): 2}``. A bare name is
always a variable: in YAML, ``status: '"succeeded"'`` is the string and
``status: "pi.status"`` reads the variable.

Functions: ``string(x)``, ``int(x)``, ``float(x)``, ``len(x)``, ``upper(s)``,
``lower(s)``, ``now()`` (RFC 3339 UTC; one instant per run), ``first(array)``,
``last(array)``, and the predicate functions ``filter(array, predicate)``,
``map(array, expression)``, ``count(array[, predicate])``, ``sum(array[, expression])``,
``all``/``any``/``none(array, predicate)``, ``reduce(array, expression[, initial])``. Inside
a predicate ``#`` is the current element, ``.f`` is short for ``#.f``, ``#index`` its
position and, in ``reduce``, ``#acc`` the accumulator (the first element when no
``initial`` is given).

Not supported (a syntax error): pipes ``|``, ranges ``..``, slices ``a[1:2]``, ``let``,
method calls and predicates in braces.

Compile (:func:`compile_expression`): the grammar runs on lark's LALR parser (built once,
on first use); the parse tree becomes a small tree of evaluator nodes; names are checked
against the names known at that point (``unknown name "frm"``), function names and argument
counts, ``#``/``.f`` outside a predicate, and literal ``matches`` patterns. Errors are
:class:`ExpressionError` with the reason and, for syntax, the column. Nothing user-written is
ever given to Python's ``eval``.

Evaluate (:meth:`Expression.evaluate`): pure, never mutates its inputs; a type error
(``"a" - 1``, comparing a string with a number, ``sum`` of a non-array, ...) is an
:class:`EvaluationError` whose message says which operation and which types.

No Django. Safe to share between threads (nodes are immutable).

Source: SPEC "Custom operation" (Expressions); behavior notes §19.
"""
from __future__ import annotations

import functools
import math
import re
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import orjson

from tables.ids import format_nanoseconds

if TYPE_CHECKING:
    from lark import Lark, Token
    from lark.exceptions import UnexpectedInput

#: The grammar (lark, LALR). Operator levels follow expr-lang's precedence table
#: (``parser/operator/operator.go``): or 10, and 15, comparisons 20, + - 30, not 50,
#: * / % 60, unary sign 90, ** 100, ?? 500.
GRAMMAR = r"""
?start: expression

?expression: or_test
    | or_test "?" expression ":" expression   -> conditional
    | or_test "?" ":" expression              -> elvis

!?or_test: and_test | or_test ("or" | "||") and_test
!?and_test: comparison | and_test ("and" | "&&") comparison
?comparison: additive (comparison_operator additive)*
!comparison_operator: "==" | "!=" | "<" | "<=" | ">" | ">=" | "in" | "contains"
    | "startsWith" | "endsWith" | "matches" | "not" "in" | "not" "contains"
    | "not" "startsWith" | "not" "endsWith" | "not" "matches"
!?additive: negation | additive ("+" | "-") negation
!?negation: multiplicative | ("not" | "!") negation
!?multiplicative: sign | multiplicative ("*" | "/" | "%") sign
!?sign: power | ("-" | "+") sign
!?power: coalesce | coalesce ("**" | "^") sign
?coalesce: postfix | coalesce "??" postfix

?postfix: primary
    | postfix ("." | "?.") NAME               -> member
    | postfix "[" expression "]"              -> index
    | postfix "?." "[" expression "]"         -> index

?primary: INTEGER                             -> integer
    | FLOAT                                   -> float
    | STRING                                  -> string
    | "true"                                  -> true
    | "false"                                 -> false
    | ("nil" | "null")                        -> nil
    | NAME                                    -> variable
    | NAME "(" [expression ("," expression)* [","]] ")"   -> call
    | "(" expression ")"                      -> group
    | "[" [expression ("," expression)* [","]] "]"        -> array
    | "{" [pair ("," pair)* [","]] "}"        -> map
    | POINTER                                 -> pointer
    | "." NAME                                -> pointer_field

pair: (NAME | STRING | INTEGER) ":" expression
    | "(" expression ")" ":" expression

POINTER: /#[A-Za-z_][A-Za-z0-9_]*/ | "#"
NAME: /[A-Za-z_][A-Za-z0-9_]*/
FLOAT: /\d[\d_]*\.\d[\d_]*(?:[eE][+-]?\d+)?/ | /\d[\d_]*[eE][+-]?\d+/
INTEGER: /0[xX][0-9a-fA-F_]+/ | /\d[\d_]*/
STRING: /"(?:[^"\\]|\\.)*"/ | /'(?:[^'\\]|\\.)*'/ | /`[^`]*`/

%import common.WS
%ignore WS
"""

#: Words of the language that can never name a variable.
KEYWORDS = frozenset(("and", "or", "not", "in", "contains", "startsWith", "endsWith",
                      "matches", "true", "false", "nil", "null"))

_ESCAPE = re.compile(r"\\(u[0-9a-fA-F]{4}|x[0-9a-fA-F]{2}|.)", re.DOTALL)
_SIMPLE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "0": "\0",
                   "\\": "\\", '"': '"', "'": "'", "`": "`", "/": "/"}
#: Above this many result bits an integer power is computed as a float (guards ``9 ** 9 ** 9``).
_MAX_INTEGER_POWER_BITS = 4096


class ExpressionError(ValueError):
    """An expression that does not compile: a syntax error, an unknown name or function, a
    wrong argument count, ``#`` outside a predicate, a bad ``matches`` pattern.

    Attributes:
        reason: what is wrong (``unknown name "frm" (known here: input, from)``).
        source: the expression text.
        column: 1-based column of a syntax error, else None.
    """

    def __init__(self, reason: str, source: str = "", column: int | None = None):
        self.reason = reason
        self.source = source
        self.column = column
        super().__init__(reason)


class EvaluationError(Exception):
    """An expression that failed while running (a type error, division by zero, ...)."""


# ---------------------------------------------------------------------------- values


def type_name(value: Any) -> str:
    """The language's name of a value's type: nil, bool, int, float, string, array, map."""
    if value is None:
        return "nil"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "array"
    if isinstance(value, Mapping):
        return "map"
    return type(value).__name__


def is_number(value: Any) -> bool:
    """True for int and float values (never for booleans, which Python counts as ints)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def values_equal(left: Any, right: Any) -> bool:
    """Equality of the language: numbers by value (``1 == 1.0``), booleans only with
    booleans (``true != 1``), arrays and maps element by element."""
    if isinstance(left, bool) or isinstance(right, bool):
        return isinstance(left, bool) and isinstance(right, bool) and left == right
    if is_number(left) and is_number(right):
        return left == right
    if isinstance(left, (list, tuple)) and isinstance(right, (list, tuple)):
        return len(left) == len(right) and all(values_equal(a, b) for a, b in zip(left, right))
    if isinstance(left, Mapping) and isinstance(right, Mapping):
        return left.keys() == right.keys() and all(values_equal(left[key], right[key])
                                                   for key in left)
    return type(left) is type(right) and left == right


def text_of(value: Any) -> str:
    """``string(x)``: strings unchanged, ``nil``, ``true``/``false``, numbers in short form
    (``3.0`` -> ``"3"``), arrays and maps as compact JSON."""
    if isinstance(value, str):
        return value
    if value is None:
        return "nil"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isfinite(value) and value.is_integer() and abs(value) < 1e21:
            return str(int(value))
        return repr(value)
    try:
        return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()
    except TypeError:
        return str(value)


def truth(value: Any, what: str) -> bool:
    """A boolean operand: ``true``/``false``, nil counts as false; anything else is an
    :class:`EvaluationError` naming ``what`` needed it."""
    if value is None:
        return False
    if isinstance(value, bool):
        return value
    raise EvaluationError(f"{what} needs a boolean, got {type_name(value)} ({text_of(value)})")


def _array(value: Any, function: str) -> Sequence[Any]:
    if isinstance(value, (list, tuple)):
        return value
    raise EvaluationError(f"{function}() needs an array, got {type_name(value)}")


@functools.lru_cache(maxsize=256)
def _pattern(text: str) -> re.Pattern[str]:
    try:
        return re.compile(text)
    except re.error as error:
        raise EvaluationError(f"matches: bad regular expression {text!r}: {error}") from None


# ---------------------------------------------------------------------------- scope


class Scope:
    """What an expression sees while it runs.

    Attributes:
        variables: ``input`` and the variables of earlier steps.
        element: the current element inside a predicate (``#``).
        accumulator: ``#acc`` inside ``reduce``.
        index: ``#index`` inside a predicate.
        now: the run's current time as RFC 3339 text (``now()``).
    """

    __slots__ = ("variables", "element", "accumulator", "index", "now")

    def __init__(self, variables: Mapping[str, Any], now: Callable[[], str],
                 element: Any = None, accumulator: Any = None, index: int = 0):
        self.variables = variables
        self.now = now
        self.element = element
        self.accumulator = accumulator
        self.index = index

    def inner(self, element: Any, index: int, accumulator: Any = None) -> Scope:
        """The scope of one predicate call on ``element``."""
        return Scope(self.variables, self.now, element, accumulator, index)


def _current_time() -> str:
    return format_nanoseconds(time.time_ns())


# ---------------------------------------------------------------------------- nodes


class Node:
    """An evaluator node: ``evaluate(scope) -> value``; ``children()`` for static checks."""

    __slots__ = ()

    def evaluate(self, scope: Scope) -> Any:  # pragma: no cover - every node overrides it
        raise NotImplementedError

    def children(self) -> tuple[Node, ...]:
        """The nodes evaluated by this one."""
        return ()


class Constant(Node):
    """A literal (number, string, boolean, nil)."""

    __slots__ = ("value",)

    def __init__(self, value: Any):
        self.value = value

    def evaluate(self, scope: Scope) -> Any:
        return self.value


class Variable(Node):
    """A bare name: ``input`` or a step variable (nil when the run never set it)."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def evaluate(self, scope: Scope) -> Any:
        return scope.variables.get(self.name)


class Pointer(Node):
    """``#`` (the element), ``#index`` or ``#acc`` inside a predicate."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def evaluate(self, scope: Scope) -> Any:
        if self.name == "index":
            return scope.index
        if self.name == "acc":
            return scope.accumulator
        return scope.element


class Member(Node):
    """``target.name``, ``target[key]``: maps by string key, arrays and strings by integer
    position (negative counts from the end); anything missing is nil."""

    __slots__ = ("target", "key")

    def __init__(self, target: Node, key: Node):
        self.target = target
        self.key = key

    def children(self) -> tuple[Node, ...]:
        return (self.target, self.key)

    def evaluate(self, scope: Scope) -> Any:
        container = self.target.evaluate(scope)
        if container is None:
            return None
        key = self.key.evaluate(scope)
        if isinstance(container, Mapping):
            if isinstance(key, str):
                return container.get(key)
            if is_number(key):
                return container.get(text_of(key))
            return None
        if isinstance(container, (list, tuple, str)) and isinstance(key, int) \
                and not isinstance(key, bool):
            if -len(container) <= key < len(container):
                return container[key]
        return None


class Unary(Node):
    """``-x``, ``+x``, ``not x``, ``!x``."""

    __slots__ = ("operator", "operand")

    def __init__(self, operator: str, operand: Node):
        self.operator = operator
        self.operand = operand

    def children(self) -> tuple[Node, ...]:
        return (self.operand,)

    def evaluate(self, scope: Scope) -> Any:
        value = self.operand.evaluate(scope)
        if self.operator in ("not", "!"):
            return not truth(value, self.operator)
        if not is_number(value):
            raise EvaluationError(f"invalid operation: {self.operator}{type_name(value)} "
                                  f"(unary {self.operator} needs a number)")
        return -value if self.operator == "-" else value


def _remainder(left: int, right: int) -> int:
    # Go's % truncates toward zero (-7 % 3 == -1); Python's floors. Follow expr-lang.
    result = abs(left) % abs(right)
    return -result if left < 0 else result


def _power(left: Any, right: Any) -> Any:
    if isinstance(left, int) and isinstance(right, int) and right >= 0:
        if left in (0, 1, -1) or right * max(abs(left), 2).bit_length() <= \
                _MAX_INTEGER_POWER_BITS:
            return left ** right
    try:
        result = float(left) ** float(right)
    except (OverflowError, ZeroDivisionError) as error:
        raise EvaluationError(f"invalid operation: {text_of(left)} ** {text_of(right)} "
                              f"({error})") from None
    if isinstance(result, complex):
        raise EvaluationError(f"invalid operation: {text_of(left)} ** {text_of(right)} "
                              f"has no real result")
    return result


class _BinaryOperator(Node):
    """``left <operator> right``: the shape shared by arithmetic, logic and comparisons."""

    __slots__ = ("operator", "left", "right")

    def __init__(self, operator: str, left: Node, right: Node):
        self.operator = operator
        self.left = left
        self.right = right

    def children(self) -> tuple[Node, ...]:
        return (self.left, self.right)


class Arithmetic(_BinaryOperator):
    """``+ - * / % ** ^`` (``+`` also joins strings and arrays)."""

    __slots__ = ()

    def _fail(self, left: Any, right: Any, reason: str = "") -> EvaluationError:
        text = (f"invalid operation: {type_name(left)} {self.operator} {type_name(right)}")
        return EvaluationError(f"{text} ({reason})" if reason else text)

    def evaluate(self, scope: Scope) -> Any:
        left = self.left.evaluate(scope)
        right = self.right.evaluate(scope)
        operator = self.operator
        if operator == "+":
            if isinstance(left, str) and isinstance(right, str):
                return left + right
            if isinstance(left, (list, tuple)) and isinstance(right, (list, tuple)):
                return [*left, *right]
        if not (is_number(left) and is_number(right)):
            hint = "use string() to join text and numbers" if operator == "+" and (
                isinstance(left, str) or isinstance(right, str)) else ""
            raise self._fail(left, right, hint)
        if operator == "+":
            return left + right
        if operator == "-":
            return left - right
        if operator == "*":
            return left * right
        if operator == "/":
            if right == 0:
                raise self._fail(left, right, "division by zero")
            return left / right
        if operator == "%":
            if not (isinstance(left, int) and isinstance(right, int)):
                raise self._fail(left, right, "% needs integers")
            if right == 0:
                raise self._fail(left, right, "division by zero")
            return _remainder(left, right)
        return _power(left, right)


class Logical(_BinaryOperator):
    """``and``/``&&``, ``or``/``||``: short-circuit, boolean operands (nil is false)."""

    __slots__ = ()

    def evaluate(self, scope: Scope) -> bool:
        left = truth(self.left.evaluate(scope), self.operator)
        if self.operator in ("and", "&&"):
            return left and truth(self.right.evaluate(scope), self.operator)
        return left or truth(self.right.evaluate(scope), self.operator)


class _Fallback(Node):
    """``left <op> right``: ``left`` unless :meth:`falls_through` says to use ``right``
    (``right`` only runs then)."""

    __slots__ = ("left", "right")

    def __init__(self, left: Node, right: Node):
        self.left = left
        self.right = right

    def children(self) -> tuple[Node, ...]:
        return (self.left, self.right)

    def evaluate(self, scope: Scope) -> Any:
        value = self.left.evaluate(scope)
        return self.right.evaluate(scope) if self.falls_through(value) else value

    @staticmethod
    def falls_through(value: Any) -> bool:
        raise NotImplementedError


class Coalesce(_Fallback):
    """``left ?? right``: ``left`` unless it is nil."""

    __slots__ = ()

    @staticmethod
    def falls_through(value: Any) -> bool:
        return value is None


def _ordered(operator: str, left: Any, right: Any) -> bool:
    if not ((is_number(left) and is_number(right))
            or (isinstance(left, str) and isinstance(right, str))):
        raise EvaluationError(f"invalid operation: {type_name(left)} {operator} "
                              f"{type_name(right)} (compare numbers with numbers, strings "
                              f"with strings)")
    if operator == "<":
        return left < right
    if operator == "<=":
        return left <= right
    if operator == ">":
        return left > right
    return left >= right


def _texts(operator: str, left: Any, right: Any) -> None:
    if not (isinstance(left, str) and isinstance(right, str)):
        raise EvaluationError(f"invalid operation: {type_name(left)} {operator} "
                              f"{type_name(right)} ({operator} needs strings)")


class Comparison(_BinaryOperator):
    """One comparison: ``== != < <= > >= in contains startsWith endsWith matches`` (each but
    the first six may be negated with a leading ``not``)."""

    __slots__ = ("negate", "pattern")

    def __init__(self, operator: str, left: Node, right: Node, negate: bool = False):
        super().__init__(operator, left, right)
        self.negate = negate
        # A literal pattern is compiled once here; ExpressionError reports a bad one at load.
        self.pattern: re.Pattern[str] | None = None
        if operator == "matches" and isinstance(right, Constant) and isinstance(right.value,
                                                                                str):
            try:
                self.pattern = re.compile(right.value)
            except re.error as error:
                raise ExpressionError(f"matches: bad regular expression {right.value!r}: "
                                      f"{error}") from None

    def evaluate(self, scope: Scope) -> bool:
        left = self.left.evaluate(scope)
        right = self.right.evaluate(scope)
        result = self._compare(left, right)
        return not result if self.negate else result

    def _compare(self, left: Any, right: Any) -> bool:
        operator = self.operator
        if operator == "==":
            return values_equal(left, right)
        if operator == "!=":
            return not values_equal(left, right)
        if operator in ("<", "<=", ">", ">="):
            return _ordered(operator, left, right)
        if operator == "in":
            if right is None:
                return False
            if isinstance(right, (list, tuple)):
                return any(values_equal(left, element) for element in right)
            if isinstance(right, Mapping):
                return isinstance(left, str) and left in right
            raise EvaluationError(f"invalid operation: {type_name(left)} in "
                                  f"{type_name(right)} (in needs an array or a map)")
        _texts(operator, left, right)
        if operator == "contains":
            return right in left
        if operator == "startsWith":
            return left.startswith(right)
        if operator == "endsWith":
            return left.endswith(right)
        pattern = self.pattern or _pattern(right)
        return pattern.search(left) is not None


class Conditional(Node):
    """``condition ? then : otherwise`` (only the chosen branch runs)."""

    __slots__ = ("condition", "then", "otherwise")

    def __init__(self, condition: Node, then: Node, otherwise: Node):
        self.condition = condition
        self.then = then
        self.otherwise = otherwise

    def children(self) -> tuple[Node, ...]:
        return (self.condition, self.then, self.otherwise)

    def evaluate(self, scope: Scope) -> Any:
        if truth(self.condition.evaluate(scope), "?:"):
            return self.then.evaluate(scope)
        return self.otherwise.evaluate(scope)


class Elvis(_Fallback):
    """``left ?: right``: ``left`` unless it is nil or false."""

    __slots__ = ()

    @staticmethod
    def falls_through(value: Any) -> bool:
        return value is None or value is False


class ArrayLiteral(Node):
    """``[a, b, ...]``."""

    __slots__ = ("items",)

    def __init__(self, items: Sequence[Node]):
        self.items = tuple(items)

    def children(self) -> tuple[Node, ...]:
        return self.items

    def evaluate(self, scope: Scope) -> list[Any]:
        return [item.evaluate(scope) for item in self.items]


class MapLiteral(Node):
    """``{key: value, ...}``; keys are names, strings, numbers or ``(expression)``."""

    __slots__ = ("pairs",)

    def __init__(self, pairs: Sequence[tuple[Node, Node]]):
        self.pairs = tuple(pairs)

    def children(self) -> tuple[Node, ...]:
        return tuple(node for pair in self.pairs for node in pair)

    def evaluate(self, scope: Scope) -> dict[str, Any]:
        result: dict[str, Any] = {}
        for key_node, value_node in self.pairs:
            key = key_node.evaluate(scope)
            if not isinstance(key, str):
                if not is_number(key):
                    raise EvaluationError(f"a map key must be a string or a number, got "
                                          f"{type_name(key)}")
                key = text_of(key)
            result[key] = value_node.evaluate(scope)
        return result


# ---------------------------------------------------------------------------- functions


def _string(value: Any) -> str:
    return text_of(value)


def _int(value: Any) -> int:
    if isinstance(value, bool) or value is None:
        raise EvaluationError(f"int() cannot convert {type_name(value)}")
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise EvaluationError(f"int() cannot convert {text_of(value)}")
        return int(value)
    if isinstance(value, str):
        text = value.strip()
        try:
            return int(text)
        except ValueError:
            pass
        try:
            number = float(text)
        except ValueError:
            raise EvaluationError(f"int() cannot convert {value!r}: not a number") from None
        if not math.isfinite(number):
            raise EvaluationError(f"int() cannot convert {value!r}")
        return int(number)
    raise EvaluationError(f"int() cannot convert {type_name(value)}")


def _float(value: Any) -> float:
    if isinstance(value, bool) or value is None:
        raise EvaluationError(f"float() cannot convert {type_name(value)}")
    if is_number(value):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            raise EvaluationError(f"float() cannot convert {value!r}: not a number") from None
    raise EvaluationError(f"float() cannot convert {type_name(value)}")


def _len(value: Any) -> int:
    if value is None:
        return 0
    if isinstance(value, (str, list, tuple, Mapping)):
        return len(value)
    raise EvaluationError(f"len() needs a string, an array or a map, got {type_name(value)}")


def _text_function(name: str, method: Callable[[str], str]) -> Callable[[Any], str]:
    def function(value: Any) -> str:
        if not isinstance(value, str):
            raise EvaluationError(f"{name}() needs a string, got {type_name(value)}")
        return method(value)
    return function


def _first(value: Any) -> Any:
    items = _array(value, "first")
    return items[0] if items else None


def _last(value: Any) -> Any:
    items = _array(value, "last")
    return items[-1] if items else None


#: ``name -> (fewest arguments, most arguments, implementation)``; ``now`` is special (it
#: reads the run's clock from the scope).
FUNCTIONS: dict[str, tuple[int, int, Callable[..., Any] | None]] = {
    "string": (1, 1, _string),
    "int": (1, 1, _int),
    "float": (1, 1, _float),
    "len": (1, 1, _len),
    "upper": (1, 1, _text_function("upper", str.upper)),
    "lower": (1, 1, _text_function("lower", str.lower)),
    "first": (1, 1, _first),
    "last": (1, 1, _last),
    "now": (0, 0, None),
}

#: Functions whose second argument is a predicate (run once per element):
#: ``name -> (fewest arguments, most arguments)``.
PREDICATE_FUNCTIONS: dict[str, tuple[int, int]] = {
    "filter": (2, 2), "map": (2, 2), "count": (1, 2), "sum": (1, 2), "all": (2, 2),
    "any": (2, 2), "none": (2, 2), "reduce": (2, 3),
}


class Call(Node):
    """A plain function call (``string(x)``, ``len(x)``, ``now()``, ...)."""

    __slots__ = ("name", "arguments", "function")

    def __init__(self, name: str, arguments: Sequence[Node]):
        self.name = name
        self.arguments = tuple(arguments)
        self.function = FUNCTIONS[name][2]

    def children(self) -> tuple[Node, ...]:
        return self.arguments

    def evaluate(self, scope: Scope) -> Any:
        if self.function is None:
            return scope.now()
        return self.function(*(argument.evaluate(scope) for argument in self.arguments))


def _sum(values: Sequence[Any]) -> Any:
    total: Any = 0
    for value in values:
        if not is_number(value):
            raise EvaluationError(f"sum() needs numbers, got {type_name(value)} "
                                  f"({text_of(value)})")
        total += value
    return total


class PredicateCall(Node):
    """``filter``, ``map``, ``count``, ``sum``, ``all``, ``any``, ``none``, ``reduce``:
    the predicate (second argument) runs once per element with ``#``, ``#index`` (and
    ``#acc``) set."""

    __slots__ = ("name", "collection", "predicate", "initial")

    def __init__(self, name: str, collection: Node, predicate: Node | None,
                 initial: Node | None = None):
        self.name = name
        self.collection = collection
        self.predicate = predicate
        self.initial = initial

    def children(self) -> tuple[Node, ...]:
        return tuple(node for node in (self.collection, self.predicate, self.initial)
                     if node is not None)

    def _test(self, scope: Scope, element: Any, index: int) -> bool:
        return truth(self.predicate.evaluate(scope.inner(element, index)),
                     f"the predicate of {self.name}()")

    def evaluate(self, scope: Scope) -> Any:
        items = _array(self.collection.evaluate(scope), self.name)
        name = self.name
        predicate = self.predicate
        if name == "filter":
            return [element for index, element in enumerate(items)
                    if self._test(scope, element, index)]
        if name == "map":
            return [predicate.evaluate(scope.inner(element, index))
                    for index, element in enumerate(items)]
        if name == "count":
            if predicate is None:
                return sum(1 for element in items if truth(element, "count()"))
            return sum(1 for index, element in enumerate(items)
                       if self._test(scope, element, index))
        if name == "sum":
            if predicate is None:
                return _sum(items)
            return _sum([predicate.evaluate(scope.inner(element, index))
                         for index, element in enumerate(items)])
        if name == "all":
            return all(self._test(scope, element, index) for index, element in enumerate(items))
        if name == "any":
            return any(self._test(scope, element, index) for index, element in enumerate(items))
        if name == "none":
            return not any(self._test(scope, element, index)
                           for index, element in enumerate(items))
        # reduce: without an initial value the first element starts the accumulator.
        if self.initial is not None:
            accumulator, start = self.initial.evaluate(scope), 0
        elif items:
            accumulator, start = items[0], 1
        else:
            return None
        for index in range(start, len(items)):
            accumulator = predicate.evaluate(scope.inner(items[index], index, accumulator))
        return accumulator


# ---------------------------------------------------------------------------- parse tree -> nodes


class _Grouped:
    """A node written in parentheses (only while building: the ``??`` mixing rule needs to
    know)."""

    __slots__ = ("node",)

    def __init__(self, node: Node):
        self.node = node


def _plain(item: Any) -> Node:
    return item.node if isinstance(item, _Grouped) else item


def _check_not_coalesce(left: Any, operator: str) -> None:
    # expr-lang refuses `a ?? b + 1`: `??` binds tightest, which surprises readers; ask for
    # parentheses instead of guessing.
    if isinstance(left, Coalesce):
        raise ExpressionError(f"operator {operator} and ?? cannot be mixed: add parentheses, "
                              f"(a ?? b) {operator} c or a ?? (b {operator} c)")


def _decode_string(token: str) -> str:
    quote, body = token[0], token[1:-1]
    if quote == "`":
        return body

    def replace(match: re.Match[str]) -> str:
        escape = match.group(1)
        if escape[0] in "ux" and len(escape) > 1:
            return chr(int(escape[1:], 16))
        if escape in _SIMPLE_ESCAPES:
            return _SIMPLE_ESCAPES[escape]
        raise ExpressionError(f"unknown escape \\{escape} in string {token}")

    return _ESCAPE.sub(replace, body)


class _Builder:
    """Turns lark's parse tree into evaluator nodes, bottom-up: one method per rule (or
    alias) of :data:`GRAMMAR`, called with the already built children."""

    def build(self, tree: Any) -> Any:
        """The node of ``tree`` (a lark ``Tree``; tokens pass through as they are)."""
        children = [self.build(child) if hasattr(child, "data") else child
                    for child in tree.children]
        return getattr(self, str(tree.data))(children)

    def integer(self, children: list[Token]) -> Constant:
        return Constant(int(children[0].replace("_", ""), 0))

    def float(self, children: list[Token]) -> Constant:
        return Constant(float(children[0].replace("_", "")))

    def string(self, children: list[Token]) -> Constant:
        return Constant(_decode_string(str(children[0])))

    def true(self, children: list[Any]) -> Constant:
        return Constant(True)

    def false(self, children: list[Any]) -> Constant:
        return Constant(False)

    def nil(self, children: list[Any]) -> Constant:
        return Constant(None)

    def variable(self, children: list[Token]) -> Variable:
        return Variable(str(children[0]))

    def pointer(self, children: list[Token]) -> Pointer:
        name = str(children[0])[1:]
        if name not in ("", "acc", "index"):
            raise ExpressionError(f"unknown pointer #{name}: use #, #index or #acc")
        return Pointer(name or "element")

    def pointer_field(self, children: list[Token]) -> Member:
        return Member(Pointer("element"), Constant(str(children[0])))

    def group(self, children: list[Any]) -> _Grouped:
        return _Grouped(_plain(children[0]))

    def member(self, children: list[Any]) -> Member:
        return Member(_plain(children[0]), Constant(str(children[-1])))

    def index(self, children: list[Any]) -> Member:
        return Member(_plain(children[0]), _plain(children[-1]))

    def array(self, children: list[Any]) -> ArrayLiteral:
        return ArrayLiteral([_plain(child) for child in children])

    def pair(self, children: list[Any]) -> tuple[Node, Node]:
        key, value = children
        if isinstance(key, str):  # a lark Token (a str) for a name, string or number key
            if key.type == "STRING":
                key = Constant(_decode_string(str(key)))
            elif key.type == "INTEGER":
                key = Constant(text_of(int(key.replace("_", ""), 0)))
            else:
                key = Constant(str(key))
        return _plain(key), _plain(value)

    def map(self, children: list[Any]) -> MapLiteral:
        return MapLiteral(children)

    def call(self, children: list[Any]) -> Node:
        name = str(children[0])
        arguments = [_plain(child) for child in children[1:]]
        if name in PREDICATE_FUNCTIONS:
            fewest, most = PREDICATE_FUNCTIONS[name]
            _check_arity(name, len(arguments), fewest, most)
            return PredicateCall(name, arguments[0],
                                 arguments[1] if len(arguments) > 1 else None,
                                 arguments[2] if len(arguments) > 2 else None)
        if name not in FUNCTIONS:
            known = ", ".join(sorted([*FUNCTIONS, *PREDICATE_FUNCTIONS]))
            raise ExpressionError(f'unknown function "{name}" (functions: {known})')
        fewest, most, _ = FUNCTIONS[name]
        _check_arity(name, len(arguments), fewest, most)
        return Call(name, arguments)

    def _binary_chain(self, children: list[Any]) -> Node:
        # children: operand, operator token, operand (left-recursive rules give one step).
        left, operator, right = children
        operator = str(operator)
        _check_not_coalesce(left, operator)
        left, right = _plain(left), _plain(right)
        if operator in ("and", "&&", "or", "||"):
            return Logical(operator, left, right)
        return Arithmetic(operator, left, right)

    or_test = and_test = additive = multiplicative = _binary_chain

    def power(self, children: list[Any]) -> Node:
        return self._binary_chain(children)

    def negation(self, children: list[Any]) -> Unary:
        return Unary(str(children[0]), _plain(children[1]))

    sign = negation

    def coalesce(self, children: list[Any]) -> Coalesce:
        return Coalesce(_plain(children[0]), _plain(children[1]))

    def comparison_operator(self, children: list[Token]) -> tuple[str, bool]:
        words = [str(child) for child in children]
        return (words[-1], len(words) == 2)

    def comparison(self, children: list[Any]) -> Node:
        # `1 < x < 10` means `1 < x and x < 10` (expr-lang chains comparisons).
        operands = children[0::2]
        operators = children[1::2]
        _check_not_coalesce(operands[0], operators[0][0])
        result: Node | None = None
        for position, (operator, negate) in enumerate(operators):
            if position and isinstance(operands[position], Coalesce):
                _check_not_coalesce(operands[position], operator)
            step = Comparison(operator, _plain(operands[position]),
                              _plain(operands[position + 1]), negate)
            result = step if result is None else Logical("and", result, step)
        return result

    def conditional(self, children: list[Any]) -> Conditional:
        return Conditional(*(_plain(child) for child in children))

    def elvis(self, children: list[Any]) -> Elvis:
        return Elvis(_plain(children[0]), _plain(children[1]))


def _check_arity(name: str, count: int, fewest: int, most: int) -> None:
    if fewest <= count <= most:
        return
    expected = str(fewest) if fewest == most else f"{fewest} to {most}"
    raise ExpressionError(f"{name}() takes {expected} argument{'s' if most != 1 else ''}, "
                          f"got {count}")


@functools.lru_cache(maxsize=1)
def _parser() -> Lark:
    # lark is imported and the parser built on first use (about 0.2 s together): an engine
    # without custom operations never pays for it.
    from lark import Lark

    return Lark(GRAMMAR, parser="lalr", lexer="contextual", maybe_placeholders=False,
                propagate_positions=False)


def _syntax_error(error: UnexpectedInput, source: str) -> ExpressionError:
    from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedToken

    column = getattr(error, "column", None)
    if isinstance(error, UnexpectedEOF) or (isinstance(error, UnexpectedToken)
                                            and error.token.type == "$END"):
        return ExpressionError("syntax error: unexpected end of expression", source,
                               len(source) + 1)
    if isinstance(error, UnexpectedCharacters):
        character = source[error.pos_in_stream] if error.pos_in_stream < len(source) else ""
        return ExpressionError(f"syntax error: unexpected character {character!r} at column "
                               f"{column}", source, column)
    if isinstance(error, UnexpectedToken):
        return ExpressionError(f"syntax error: unexpected {str(error.token)!r} at column "
                               f"{column}", source, column)
    return ExpressionError(f"syntax error at column {column}", source, column)


# ---------------------------------------------------------------------------- static checks


def _check_pointers(node: Node, predicates: tuple[str, ...]) -> None:
    """``#``/``.f`` only inside a predicate, ``#acc`` only inside ``reduce``."""
    if isinstance(node, Pointer):
        if not predicates:
            raise ExpressionError("# and .field only work inside a predicate (the second "
                                  "argument of filter, map, count, sum, all, any, none, "
                                  "reduce)")
        if node.name == "acc" and predicates[-1] != "reduce":
            raise ExpressionError("#acc only works inside reduce()")
        return
    if isinstance(node, PredicateCall):
        _check_pointers(node.collection, predicates)
        if node.initial is not None:
            _check_pointers(node.initial, predicates)
        if node.predicate is not None:
            _check_pointers(node.predicate, (*predicates, node.name))
        return
    for child in node.children():
        _check_pointers(child, predicates)


def _walk(node: Node):
    yield node
    for child in node.children():
        yield from _walk(child)


def _input_reads(node: Node):
    """Top-level ``input`` fields read by name, except on the left of ``??`` (there a
    missing field is expected)."""
    if isinstance(node, Member) and isinstance(node.target, Variable) \
            and node.target.name == "input" and isinstance(node.key, Constant) \
            and isinstance(node.key.value, str):
        yield node.key.value
    children = node.children()
    if isinstance(node, Coalesce):
        children = (node.right,) if _reads_input_directly(node.left) else children
    for child in children:
        yield from _input_reads(child)


def _reads_input_directly(node: Node) -> bool:
    while isinstance(node, Member):
        if isinstance(node.target, Variable) and node.target.name == "input":
            return True
        node = node.target
    return False


# ---------------------------------------------------------------------------- compiled expressions


class Expression:
    """A compiled expression.

    Attributes:
        source: the text as written.
        root: the evaluator tree.
        names: the variables it reads (``input``, step variables).
        input_fields: top-level ``input`` fields it reads by name (``input.amount`` ->
            ``amount``), for the CLI validator's input check.
    """

    __slots__ = ("source", "root", "names", "input_fields")

    def __init__(self, source: str, root: Node):
        self.source = source
        self.root = root
        nodes = list(_walk(root))
        self.names = frozenset(node.name for node in nodes if isinstance(node, Variable))
        self.input_fields = frozenset(_input_reads(root))

    def evaluate(self, variables: Mapping[str, Any],
                 now: Callable[[], str] | None = None) -> Any:
        """The value against ``variables``; raises :class:`EvaluationError`.

        ``now`` gives ``now()`` its time (default: the current time at each call).
        """
        try:
            return self.root.evaluate(Scope(variables, now or _current_time))
        except RecursionError:
            raise EvaluationError("expression nests too deeply") from None

    def __repr__(self) -> str:
        return f"Expression({self.source!r})"


def compile_expression(source: str, known_names: Collection[str] | None = None) -> Expression:
    """Parse and check ``source`` once.

    ``known_names``: the variables defined at this point (``input`` and the names of earlier
    steps); a bare name outside it is ``unknown name "x" (known here: ...)``. None skips that
    check. Raises :class:`ExpressionError`.
    """
    if not isinstance(source, str) or not source.strip():
        raise ExpressionError("empty expression: write a value, a name or a quoted string "
                              "('\"text\"')", str(source or ""))
    parser = _parser()
    from lark.exceptions import LarkError, UnexpectedInput

    try:
        tree = parser.parse(source)
    except UnexpectedInput as error:
        raise _syntax_error(error, source) from None
    except LarkError as error:  # pragma: no cover - grammar-level failures
        raise ExpressionError(f"syntax error: {error}", source) from None
    try:
        root = _plain(_Builder().build(tree))
    except ExpressionError as error:
        raise ExpressionError(error.reason, source, error.column) from None
    except RecursionError:
        raise ExpressionError("expression nests too deeply", source) from None
    if not isinstance(root, Node):  # pragma: no cover - the grammar always yields a node
        raise ExpressionError("not an expression", source)
    try:
        _check_pointers(root, ())
    except ExpressionError as error:
        raise ExpressionError(error.reason, source) from None
    expression = Expression(source, root)
    if known_names is not None:
        for name in sorted(expression.names):
            if name not in known_names:
                known = ", ".join(sorted(known_names)) or "none"
                # A lone bare word is most often a string meant as a literal (notes §19).
                hint = " (a string literal needs inner quotes: '\"text\"')" \
                    if isinstance(root, Variable) else ""
                raise ExpressionError(f'unknown name "{name}" (known here: {known}){hint}',
                                      source)
    return expression
