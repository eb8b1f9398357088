"""Response templates: ``{{expression}}`` in bodies and header values, compiled once.

Source: SPEC "Templating" (the expressions, "a substituted value is emitted as text"), SPEC
"Response" (``seed``), behavior-notes §4 ("Seed precedence") and §10 (``{{message}}`` and
``{{message.<json path>}}``: a message-based protocol renders with the incoming message as
the request body, so they read the same text as ``request.rawBody`` / ``request.body.<path>``).

Owns: the template language. :func:`compile_template` parses a string once into a
:class:`Template` (literal chunks interleaved with small evaluator closures);
:func:`compile_value` does the same for every string inside a JSON value. Rendering is a tight
loop over the compiled chunks against a :class:`RenderContext`, and never raises for any request
input: a missing field renders as ``""`` (or the ``default`` fallback).

Who may call it: the engine when it compiles a snapshot (compile side) and every responder on
the hot path (render side): HTTP responses, SSE, GraphQL, gRPC, SOAP, WebSocket and MQTT. A caller
renders like this::

    header = compile_template("req-{{uuid}}")           # at config load; TemplateError on bad syntax
    body = compile_value({"id": "{{request.pathParam.id}}", "n": 1})
    context = RenderContext(request, path_params, resolve_seed(request, response.seed), state)
    header.render(context)                              # -> "req-3f0c..."
    body.render(context)                                # -> {"id": "42", "n": 1}

Use one :class:`RenderContext` for all templates of one response: with a seed, the values are
drawn from one random stream in render order, so headers and body are reproducible together.

Concurrency: single owner (the engine's event loop). :class:`TemplateState` and the shared Faker
generator have no locks; rendering never awaits, so a render cannot interleave with another.
"""
from __future__ import annotations

import datetime
import os
import random
import re
import string
import time
from collections.abc import Callable
from typing import Any

import orjson

from mocks.core import fakedata
from mocks.core.request import INVALID_JSON, MockRequest

__all__ = [
    "RenderContext",
    "Template",
    "TemplateError",
    "TemplateState",
    "ValueTemplate",
    "compile_template",
    "compile_value",
    "resolve_seed",
]


class TemplateError(ValueError):
    """A template that cannot be compiled: bad syntax, unknown function or expression, bad argument.

    Raised only by :func:`compile_template` and :func:`compile_value`, never while rendering.
    ``str(error)`` is ``"<location>: <detail>"`` (or just the detail), for example
    ``unknown template function 'fooBar' at position 3``. The caller prefixes the config key path:
    ``f"{key_path}{error.location}: {error.detail}"`` gives
    ``mocks[0].http.response.body.items[1]: unknown template expression 'nope' at position 2``.

    Source: SPEC "Templating"; STYLE 2 ("a compile error names the config path").
    """

    def __init__(self, detail: str, position: int | None = None, location: str = ""):
        #: What is wrong and where, e.g. ``unknown template function 'fooBar' at position 3``.
        self.detail = detail
        #: 0-based character offset in the template text, when the error has one.
        self.position = position
        #: Where the string sits inside a JSON value given to :func:`compile_value`, e.g.
        #: ``.items[1].name``; ``""`` for a plain template.
        self.location = location
        super().__init__(f"{location}: {detail}" if location else detail)

    def at(self, location: str) -> TemplateError:
        """The same error, located inside a JSON value at ``location`` (e.g. ``.a[0]``)."""
        return TemplateError(self.detail, self.position, location + self.location)


class TemplateState:
    """Engine-owned runtime state of templates: the named ``sequence()`` counters.

    One instance per running engine; it lives for the server's lifetime (SPEC "Templating":
    "It persists for the server's lifetime"), so it is not part of a config snapshot and survives
    a config reload. Plain Python, no locks: only the engine's event loop touches it.
    """

    __slots__ = ("_next_values", "shared")

    def __init__(self) -> None:
        self._next_values: dict[str, int] = {}
        #: ``shared(name, start) -> value``: counters kept in a shared state store (set by
        #: ``tables.state_options.install_state_store``), so replicas count together; it
        #: returns None when the store cannot be reached, and this engine's own counter
        #: answers instead. None: counters live here only.
        self.shared: Callable[[str, int], int | None] | None = None

    def next_sequence_value(self, name: str, start: int = 1) -> int:
        """Return the counter ``name``'s current value and advance it by one.

        The first use of a name returns ``start``; later uses continue from there, whatever
        ``start`` they give (the counter is per name, not per call site).
        """
        if self.shared is not None:
            value = self.shared(name, start)
            if value is not None:
                return value
        value = self._next_values.get(name, start)
        self._next_values[name] = value + 1
        return value

    def sequences(self) -> dict[str, int]:
        """A copy of every counter: name -> the value its next use will return."""
        return dict(self._next_values)


# Unseeded renders share one generator, seeded from the OS once: cheaper than os.urandom per
# value, and output still varies per request. Reseeded in a forked child so that worker
# processes do not produce the same "random" ids.
_UNSEEDED_RNG = random.Random()
os.register_at_fork(after_in_child=_UNSEEDED_RNG.seed)


class RenderContext:
    """Everything a template may read while rendering one response.

    ``RenderContext(request, path_params, seed, state)`` (keywords work too; ``args=`` for
    GraphQL field arguments).

    Attributes:
        request: the :class:`MockRequest` being answered. Protocols without one (an SSE
            generator, an MQTT publish) pass a synthetic ``MockRequest``; absent fields then
            render as ``""``.
        path_params: path captures of the matched mock, read by ``request.pathParam.<name>``.
        seed: from :func:`resolve_seed`; when set, ``uuid``, ``random.*`` and ``faker.*`` are
            reproducible.
        state: the engine's :class:`TemplateState` (sequences).
        args: the arguments of the GraphQL field being resolved (``{name: value}``), read by
            ``args.<name>`` / ``args.<name>.<path>``; None elsewhere (``args.*`` renders
            ``""``).
        rng: the random stream of this render, shared by every template rendered with this
            context. Unseeded: the process-wide generator (no per-request cost). Seeded: a
            fresh generator from :func:`fakedata.seeded_random`, made on the first read
            (~7 us), so a seeded render that draws nothing does not pay for it.

    Source: SPEC "Templating" (``request.*`` expressions) and "Response" (``seed``).
    """

    __slots__ = ("request", "path_params", "seed", "state", "args", "rng")

    def __init__(self, request: MockRequest, path_params: dict[str, str], seed: int | None,
                 state: TemplateState, args: dict[str, Any] | None = None):
        self.request = request
        self.path_params = path_params
        self.seed = seed
        self.state = state
        self.args = args
        if seed is None:
            # A plain attribute: the hot path reads it without a property call.
            self.rng = _UNSEEDED_RNG

    def __getattr__(self, name: str) -> Any:
        # Only reached for ``rng`` of a seeded context before its first use.
        if name != "rng":
            raise AttributeError(name)
        rng = self.rng = fakedata.seeded_random(self.seed)
        return rng

    def __repr__(self) -> str:
        return (f"RenderContext(request={self.request.method} {self.request.path}, "
                f"path_params={self.path_params!r}, seed={self.seed!r})")


# --- Seed ---------------------------------------------------------------------------------------

# ASCII digits only and bounded, so int() can neither meet "²" nor Python's 4300-digit limit.
_SEED_TEXT = re.compile(r"[+-]?[0-9]{1,40}")
_SEED_QUERY_PARAMETERS = ("_mockd_seed", "_mock_seed")


def _parse_seed(text: str | None) -> int | None:
    if text is None:
        return None
    text = text.strip()
    return int(text) if _SEED_TEXT.fullmatch(text) else None


def resolve_seed(request: MockRequest, response_seed: int | None) -> int | None:
    """The seed for rendering a response to ``request``, or ``None`` for unseeded output.

    Precedence (behavior-notes §4, with its contract note): query ``_mockd_seed=N`` > query
    ``_mock_seed=N`` > header ``X-Mockd-Seed: N`` > ``response.seed``. A source whose value is
    not an integer is ignored and the next one is tried. Never raises.
    """
    # Parsing the query costs microseconds; skip it when no seed parameter can be there (the
    # names contain "seed" even when the underscores are percent-encoded).
    if "seed" in request.query_string:
        query = request.query
        for parameter in _SEED_QUERY_PARAMETERS:
            seed = _parse_seed(query.get(parameter))
            if seed is not None:
                return seed
    text = request.seed_header
    if text is None:
        return response_seed
    seed = _parse_seed(text)
    return seed if seed is not None else response_seed


# --- Compiled templates -------------------------------------------------------------------------

#: A compiled expression: reads the context, returns text, never raises on request input.
Evaluator = Callable[[RenderContext], str]


class Template:
    """A compiled string template. Immutable; share it freely between requests.

    Attributes:
        source: the template text as written in the config.
        is_static: ``True`` when the text has no ``{{`` expression; :meth:`render` then returns
            the same string every time without reading its context (``None`` is accepted), so
            callers may render and encode it once at compile time.
    """

    __slots__ = ("source", "is_static")

    def __init__(self, source: str, is_static: bool):
        self.source = source
        self.is_static = is_static

    def render(self, ctx: RenderContext) -> str:
        """The text with every expression substituted (SPEC "Templating"). Never raises."""
        raise NotImplementedError

    def renderer(self) -> Callable[[RenderContext], str]:
        """The cheapest callable equivalent to :meth:`render`, for hot loops."""
        return self.render

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.source!r})"


class _StaticTemplate(Template):
    __slots__ = ("_text",)

    def __init__(self, source: str, text: str):
        super().__init__(source, is_static=True)
        self._text = text  # differs from source only when it held "\{{" escapes

    def render(self, ctx: RenderContext) -> str:
        return self._text


class _SingleExpressionTemplate(Template):
    """The common ``"{{uuid}}"`` case: no literal text around one expression."""

    __slots__ = ("_evaluate",)

    def __init__(self, source: str, evaluate: Evaluator):
        super().__init__(source, is_static=False)
        self._evaluate = evaluate

    def render(self, ctx: RenderContext) -> str:
        return self._evaluate(ctx)

    def renderer(self) -> Callable[[RenderContext], str]:
        return self._evaluate


class _ChunkedTemplate(Template):
    """Literal chunks interleaved with evaluators: ``head, (evaluator, literal after it)...``,
    rendered by one generated function (see :func:`_chunked_function`)."""

    # The instance's generated function replaces the method: no bound-method call per render.
    __slots__ = ("render",)

    def __init__(self, source: str, head: str,
                 pairs: tuple[tuple[Evaluator, str], ...],
                 escape: Callable[[str], str] | None = None):
        super().__init__(source, is_static=False)
        self.render = _chunked_function(head, pairs, escape)  # type: ignore[method-assign]

    def renderer(self) -> Callable[[RenderContext], str]:
        return self.render


def _chunked_function(head: str, pairs: tuple[tuple[Evaluator, str], ...],
                      escape: Callable[[str], str] | None) -> Callable[[RenderContext], str]:
    """``def render(ctx)`` returning ``head + value0 + literal0 + value1 + ...`` as one
    f-string: no list, loop or join per render; inlinable evaluators cost no call, and
    ``escape`` is applied to every value except those of :data:`_ESCAPE_FREE` evaluators
    without a wrapper call."""
    names: dict[str, Any] = {"h": head, "esc": escape}
    lines: list[str] = []
    pieces = ["{h}"]
    for index, (evaluate, literal) in enumerate(pairs):
        lines.extend(_field_lines(evaluate, index, names))
        if escape is not None and evaluate not in _ESCAPE_FREE:
            lines.append(f"f{index} = esc(f{index})")
        names[f"l{index}"] = literal
        pieces.append(f"{{f{index}}}{{l{index}}}")
    return _generated_function(lines, 'f"' + "".join(pieces) + '"', names)


class ValueTemplate:
    """A compiled JSON value (SPEC "Response" ``body`` as a JSON value) whose strings are templates.

    Attributes:
        is_static: ``True`` when no string in the value has an expression; :meth:`render` then
            returns the original value without reading its context (``None`` is accepted), so
            callers may serialise it once at compile time.
    """

    __slots__ = ("is_static",)

    def __init__(self, is_static: bool):
        self.is_static = is_static

    def render(self, ctx: RenderContext) -> Any:
        """A new JSON value with every templated string rendered (substitutions are strings).

        Static parts are returned as the very objects given to :func:`compile_value`, shared
        between renders: treat the result as read-only. Never raises.
        """
        raise NotImplementedError

    def renderer(self) -> Callable[[RenderContext], Any]:
        """The cheapest callable equivalent to :meth:`render`, for hot loops."""
        return self.render


class _StaticValue(ValueTemplate):
    __slots__ = ("_value",)

    def __init__(self, value: Any):
        super().__init__(is_static=True)
        self._value = value

    def render(self, ctx: RenderContext) -> Any:
        return self._value


class _StringValue(ValueTemplate):
    __slots__ = ("_template",)

    def __init__(self, template: Template):
        super().__init__(is_static=False)
        self._template = template

    def render(self, ctx: RenderContext) -> Any:
        return self._template.render(ctx)

    def renderer(self) -> Callable[[RenderContext], Any]:
        return self._template.renderer()


class _ObjectValue(ValueTemplate):
    __slots__ = ("_render",)

    def __init__(self, entries: tuple[tuple[str, Any, ValueTemplate | None], ...]):
        """``entries``: (key, value as given, compiled value or None when static), in order."""
        super().__init__(is_static=False)
        self._render = _display_function(entries, "{", "}")

    def render(self, ctx: RenderContext) -> Any:
        return self._render(ctx)

    def renderer(self) -> Callable[[RenderContext], Any]:
        return self._render


class _ArrayValue(ValueTemplate):
    __slots__ = ("_render",)

    def __init__(self, items: tuple[tuple[Any, ValueTemplate | None], ...]):
        super().__init__(is_static=False)
        self._render = _display_function([(None, value, compiled) for value, compiled in items],
                                         "[", "]")

    def render(self, ctx: RenderContext) -> Any:
        return self._render(ctx)

    def renderer(self) -> Callable[[RenderContext], Any]:
        return self._render


def _display_function(entries: Any, opener: str, closer: str) -> Callable[[RenderContext], Any]:
    """One generated function rendering an object (``{``/``}``, entries keyed) or an array
    (``[``/``]``, keys ``None``): the templated fields as statements in order, then one
    display. No per-field loop, unpacking or test, and inlinable expressions cost no call."""
    names: dict[str, Any] = {}
    lines: list[str] = []
    items = []
    for index, (key, value, compiled) in enumerate(entries):
        if compiled is None:
            names[f"v{index}"] = value
            item = f"v{index}"
        else:
            lines.extend(_field_lines(compiled.renderer(), index, names))
            item = f"f{index}"
        if key is not None:
            names[f"k{index}"] = key
            item = f"k{index}: {item}"
        items.append(item)
    return _generated_function(lines, opener + ", ".join(items) + closer, names)


def _inlinable(evaluate: Evaluator, source: str, prelude: str = "", **values: Any) -> Evaluator:
    """Mark ``evaluate`` as expressible inline in a generated object or array function.

    ``source`` is the same computation as a Python expression over ``ctx``; ``prelude`` an
    optional statement run just before it. Both name ``values`` as ``$name`` (bound as data,
    never pasted as text) and may use ``$out``, a local of their own.
    """
    evaluate.inline_source = (source, prelude, values)  # type: ignore[attr-defined]
    return evaluate


def _field_lines(render: Callable[[RenderContext], Any], index: int,
                 names: dict[str, Any]) -> list[str]:
    """Statements leaving field ``index``'s value in the local ``f<index>``; binds what they
    need in ``names`` (``r3`` for a renderer; ``x3_<value>`` for an inlined one's values)."""
    inline = getattr(render, "inline_source", None)
    if inline is None:
        names[f"r{index}"] = render
        return [f"f{index} = r{index}(ctx)"]
    source, prelude, values = inline
    placeholders = {"out": f"t{index}"}
    for value_name, value in values.items():
        names[f"x{index}_{value_name}"] = value
        placeholders[value_name] = f"x{index}_{value_name}"
    lines = [string.Template(prelude).substitute(placeholders)] if prelude else []
    lines.append(f"f{index} = " + string.Template(source).substitute(placeholders))
    return lines


def _generated_function(lines: list[str], expression: str,
                        names: dict[str, Any]) -> Callable[[RenderContext], Any]:
    """``def render(ctx): <lines>; return <expression>`` compiled, reading ``names`` as globals.

    Only generated names (``k0``, ``v1``, ``r2``, ``f3``) appear in the source; keys, values
    and renderers travel in ``names``, so no config text is ever compiled as code. Thousands
    of fields compile fine.
    """
    namespace = dict(names)
    body = "".join(f"    {line}\n" for line in lines)
    exec(compile(f"def render(ctx):\n{body}    return {expression}\n", "<mockd template>",
                 "exec"), namespace)
    return namespace["render"]


def compile_template(text: str, escape: Callable[[str], str] | None = None) -> Template:
    """Parse ``text`` once into a :class:`Template` (SPEC "Templating").

    ``{{ expression }}`` marks an expression (whitespace inside is allowed); ``\\{{`` writes a
    literal ``{{``; everything else is literal text. ``escape`` (e.g. XML escaping for a SOAP
    body) is applied to every substituted value, never to the literal text.

    Raises:
        TemplateError: an unclosed ``{{``, an empty or malformed expression, an unknown function,
            expression, request field or fake-data type, or a bad argument. The message names
            the 0-based character position in ``text``.
    """
    head, pairs = _split_and_compile(text)
    if not pairs:
        return _StaticTemplate(text, head)
    if not head and len(pairs) == 1 and not pairs[0][1]:
        evaluate = pairs[0][0]
        if escape is not None and evaluate not in _ESCAPE_FREE:
            evaluate = _escaped(evaluate, escape)
        return _SingleExpressionTemplate(text, evaluate)
    return _ChunkedTemplate(text, head, tuple(pairs), escape)


def _escaped(evaluate: Evaluator, escape: Callable[[str], str]) -> Evaluator:
    return lambda ctx: escape(evaluate(ctx))


def compile_value(value: Any) -> ValueTemplate:
    """Compile a JSON value (dict/list nesting) whose string values are templates.

    Every string value at any depth is compiled with :func:`compile_template`; object keys are
    literal. Numbers, booleans and ``null`` pass through unchanged.

    Raises:
        TemplateError: as :func:`compile_template`, with :attr:`TemplateError.location` naming
            where the string sits (``.items[1].name``).
    """
    return _compile_value(value, "")


def _compile_value(value: Any, location: str) -> ValueTemplate:
    if isinstance(value, str):
        try:
            template = compile_template(value)
        except TemplateError as error:
            raise error.at(location) from None
        # A static string still differs from its source when it holds a "\{{" escape.
        return _StaticValue(template.render(None)) if template.is_static else _StringValue(template)
    if isinstance(value, dict):
        entries = [(key, item, _compile_value(item, location + _location_of_key(key)))
                   for key, item in value.items()]
        if all(compiled.is_static for _, _, compiled in entries):
            return _StaticValue(_unchanged_or(value, {key: compiled.render(None) for key, _, compiled in entries},
                                              [(item, compiled) for _, item, compiled in entries]))
        return _ObjectValue(tuple((key, compiled.render(None), None) if compiled.is_static else (key, item, compiled)
                                  for key, item, compiled in entries))
    if isinstance(value, list):
        items = [(item, _compile_value(item, f"{location}[{index}]")) for index, item in enumerate(value)]
        if all(compiled.is_static for _, compiled in items):
            return _StaticValue(_unchanged_or(value, [compiled.render(None) for _, compiled in items], items))
        return _ArrayValue(tuple((compiled.render(None), None) if compiled.is_static else (item, compiled)
                                 for item, compiled in items))
    return _StaticValue(value)


def _unchanged_or(original: Any, rebuilt: Any, children: list[tuple[Any, ValueTemplate]]) -> Any:
    """``original`` when no child changed (keeps the caller's object), else ``rebuilt``."""
    if all(compiled.render(None) is item for item, compiled in children):
        return original
    return rebuilt


_PLAIN_KEY = re.compile(r"[A-Za-z_$][\w$-]*")


def _location_of_key(key: Any) -> str:
    text = str(key)
    return f".{text}" if _PLAIN_KEY.fullmatch(text) else f"[{orjson.dumps(text).decode()}]"


# --- Splitting the text into literals and expressions ------------------------------------------

def _split_and_compile(text: str) -> tuple[str, list[tuple[Evaluator, str]]]:
    """``(literal head, [(evaluator, literal that follows it), ...])``."""
    literals: list[list[str]] = [[]]  # literals[i] is the text after evaluators[i - 1]
    evaluators: list[Evaluator] = []
    index = 0
    while True:
        start = text.find("{{", index)
        if start < 0:
            literals[-1].append(text[index:])
            break
        if start > 0 and text[start - 1] == "\\":
            # "\{{" is the escape for a literal "{{": drop the backslash, keep the braces.
            literals[-1].append(text[index:start - 1])
            literals[-1].append("{{")
            index = start + 2
            continue
        literals[-1].append(text[index:start])
        end = _find_expression_end(text, start + 2)
        evaluators.append(_compile_expression(text[start + 2:end], start + 2))
        literals.append([])
        index = end + 2
    texts = ["".join(parts) for parts in literals]
    return texts[0], list(zip(evaluators, texts[1:]))


def _find_expression_end(text: str, index: int) -> int:
    """Position of the ``}}`` closing the expression opened just before ``index``.

    Quotes are honoured so that ``default(x, '}}')`` works.
    """
    quote = ""
    quote_position = 0
    position = index
    length = len(text)
    while position < length:
        character = text[position]
        if quote:
            if character == "\\":
                position += 1
            elif character == quote:
                quote = ""
        elif character in "'\"":
            quote, quote_position = character, position
        elif character == "}" and text.startswith("}}", position):
            return position
        position += 1
    if quote:
        raise TemplateError(f"unterminated string at position {quote_position}", quote_position)
    raise TemplateError(f"unclosed '{{{{' at position {index - 2} (expected '}}}}')", index - 2)


# --- Parsing one expression ----------------------------------------------------------------------

class _Word:
    """A bare name or path (``request.body.items[0].id``), a number, or a literal word."""

    __slots__ = ("text", "position")

    def __init__(self, text: str, position: int):
        self.text = text
        self.position = position


class _String:
    """A quoted literal, ``'x'`` or ``"x"``."""

    __slots__ = ("text", "position")

    def __init__(self, text: str, position: int):
        self.text = text
        self.position = position


class _Call:
    """``name(arg, ...)`` or the space form ``name arg arg``."""

    __slots__ = ("name", "arguments", "position", "parenthesised")

    def __init__(self, name: str, arguments: list[_Node], position: int, parenthesised: bool):
        self.name = name
        self.arguments = arguments
        self.position = position
        self.parenthesised = parenthesised


_Node = _Word | _String | _Call
_Token = tuple[str, str, int]  # (kind: "word" | "string" | "(" | ")" | ",", text, position)
_WORD_BREAKS = frozenset("(),'\"")


def _tokenize(expression: str, offset: int) -> list[_Token]:
    tokens: list[_Token] = []
    index = 0
    length = len(expression)
    while index < length:
        character = expression[index]
        if character.isspace():
            index += 1
        elif character in "(),":
            tokens.append((character, character, offset + index))
            index += 1
        elif character in "'\"":
            chunks = []
            position = index + 1
            while position < length and expression[position] != character:
                if expression[position] == "\\" and position + 1 < length:
                    position += 1  # backslash escapes the next character (a quote, a backslash)
                chunks.append(expression[position])
                position += 1
            if position >= length:
                raise TemplateError(f"unterminated string at position {offset + index}", offset + index)
            tokens.append(("string", "".join(chunks), offset + index))
            index = position + 1
        else:
            position = index
            while (position < length and expression[position] not in _WORD_BREAKS
                   and not expression[position].isspace()):
                position += 1
            tokens.append(("word", expression[index:position], offset + index))
            index = position
    return tokens


class _Parser:
    """Recursive descent over the tokens of one expression.

    Grammar::

        expression := STRING | WORD | WORD "(" [argument ("," argument)*] ")" | WORD argument+
        argument   := STRING | WORD | WORD "(" [argument ("," argument)*] ")"
    """

    def __init__(self, tokens: list[_Token]):
        self.tokens = tokens
        self.index = 0

    def parse(self) -> _Node:
        kind, text, position = self._next()
        if kind == "string":
            node: _Node = _String(text, position)
        elif kind != "word":
            raise TemplateError(f"unexpected '{text}' at position {position}", position)
        elif self._peek_kind() == "(":
            node = self._parenthesised_call(text, position)
        elif self.index < len(self.tokens):
            arguments = []
            while self.index < len(self.tokens):
                arguments.append(self._argument())
            node = _Call(text, arguments, position, parenthesised=False)
        else:
            node = _Word(text, position)
        if self.index < len(self.tokens):
            _, text, position = self.tokens[self.index]
            raise TemplateError(f"unexpected '{text}' at position {position}", position)
        return node

    def _next(self) -> _Token:
        token = self.tokens[self.index]
        self.index += 1
        return token

    def _peek_kind(self) -> str | None:
        return self.tokens[self.index][0] if self.index < len(self.tokens) else None

    def _argument(self) -> _Node:
        kind, text, position = self._next()
        if kind == "string":
            return _String(text, position)
        if kind != "word":
            raise TemplateError(f"unexpected '{text}' at position {position}", position)
        if self._peek_kind() == "(":
            return self._parenthesised_call(text, position)
        return _Word(text, position)

    def _parenthesised_call(self, name: str, position: int) -> _Call:
        self._next()  # "("
        arguments: list[_Node] = []
        if self._peek_kind() == ")":
            self._next()
            return _Call(name, arguments, position, parenthesised=True)
        while True:
            if self._peek_kind() is None:
                raise TemplateError(f"missing ')' for '{name}(' at position {position}", position)
            arguments.append(self._argument())
            kind = self._peek_kind()
            if kind is None:
                raise TemplateError(f"missing ')' for '{name}(' at position {position}", position)
            kind, text, separator_position = self._next()
            if kind == ")":
                return _Call(name, arguments, position, parenthesised=True)
            if kind != ",":
                raise TemplateError(f"expected ',' or ')' at position {separator_position}, got '{text}'",
                                    separator_position)


# --- Compiling expressions into evaluators -------------------------------------------------------

def _compile_expression(expression: str, offset: int) -> Evaluator:
    if not expression.strip():
        raise TemplateError(f"empty expression at position {offset - 2}", offset - 2)
    node = _Parser(_tokenize(expression, offset)).parse()
    return _compile_node(node, as_argument=False)


def _compile_node(node: _Node, as_argument: bool) -> Evaluator:
    if isinstance(node, _String):
        return _constant(node.text)
    if isinstance(node, _Call):
        return _compile_call(node)
    if node.text.lower() in _FUNCTIONS:
        # A function used bare, like {{random.int}} or {{faker.words}}: a call without arguments.
        return _compile_call(_Call(node.text, [], node.position, parenthesised=False))
    evaluator = _compile_reference(node.text, node.position)
    if evaluator is not None:
        return evaluator
    if as_argument and not _looks_like_reference(node.text):
        # A bare word argument is literal text: {{default request.query.name Anonymous}}.
        return _constant(node.text)
    raise TemplateError(f"unknown template expression '{node.text}' at position {node.position}"
                        f"{_KNOWN_HINT}", node.position)


def _constant(text: str) -> Evaluator:
    return lambda ctx: text


def _compile_call(call: _Call) -> Evaluator:
    name = call.name.lower()
    builder = _FUNCTIONS.get(name)
    if builder is not None:
        return builder(call)
    if name.startswith("faker.") and fakedata.canonical_name(call.name[6:]) is not None:
        raise TemplateError(f"faker.{fakedata.canonical_name(call.name[6:])} takes no arguments "
                            f"(only faker.words(n) does) at position {call.position}", call.position)
    if not call.parenthesised and _compile_reference(call.name, call.position) is not None:
        # "{{request.query.a b}}": a valid reference followed by stray words.
        extra = call.arguments[0]
        raise TemplateError(f"unexpected '{_node_text(extra)}' at position {extra.position} "
                            f"(only functions take space-separated arguments)", extra.position)
    raise TemplateError(f"unknown template function '{call.name}' at position {call.position}"
                        f"{_KNOWN_HINT}", call.position)


def _node_text(node: _Node) -> str:
    return node.name if isinstance(node, _Call) else node.text


_KNOWN_HINT = (" (known: request.*, now, timestamp, timestamp.iso, timestamp.unix_ms, uuid, uuid.short, "
               "random.int, random.float, random.string, sequence, upper, lower, default, faker.*, "
               "xpath; "
               "see docs/templating.md)")


_REFERENCE_PREFIXES = ("request.", "faker.", "random.", "timestamp.", "uuid.", "message.",
                       "xpath:")


#: GraphQL field arguments (``args.<name>``) are references too.
_REFERENCE_PREFIXES += ("args.",)


def _looks_like_reference(text: str) -> bool:
    lower = text.lower()
    return lower.startswith(_REFERENCE_PREFIXES) or lower in _SIMPLE_REFERENCES or lower in _FUNCTIONS


# --- References: request fields, time, ids, fake data --------------------------------------------

def _compile_reference(text: str, position: int) -> Evaluator | None:
    """The evaluator for a bare name, ``None`` when the name is not a reference at all.

    Raises:
        TemplateError: the name is under a known root but wrong (``request.nope``,
            ``faker.nope``).
    """
    lower = text.lower()
    simple = _SIMPLE_REFERENCES.get(lower)
    if simple is not None:
        return simple
    if lower.startswith("request."):
        return _compile_request_reference(text[len("request."):], position)
    if lower.startswith("faker."):
        return _compile_faker_reference(text[len("faker."):], position)
    if lower.startswith("xpath:"):
        # The original tool's spelling of the xpath function: {{xpath:/Envelope/Body/x}}.
        return _xpath_evaluator(text[len("xpath:"):], position + len("xpath:"))
    if lower.startswith("message."):
        # A message-based protocol (WebSocket) renders with the message as the request body:
        # message.<path> reads it like request.body.<path>.
        return _compile_body_reference(text[len("message."):], position)
    if lower.startswith("args."):
        # GraphQL field arguments: args.<name>, args.<name>.<path> (same path syntax as bodies).
        return _compile_body_reference(text[len("args."):], position, _read_args)
    return None


def _read_args(ctx: RenderContext) -> Any:
    args = ctx.args
    return args if args is not None else INVALID_JSON


def _compile_faker_reference(type_name: str, position: int) -> Evaluator:
    canonical = fakedata.canonical_name(type_name)
    if canonical is None:
        raise TemplateError(f"unknown fake-data type '{type_name}' at position {position} "
                            f"(known: {', '.join(fakedata.FAKE_DATA_TYPES)})", position)
    generate = fakedata.FAKE_DATA_GENERATORS[canonical]
    # Load Faker while the config compiles, not on the first request that needs it.
    fakedata.warm_up()
    if canonical in fakedata.FAKER_FREE_TYPES:
        return _inlinable(lambda ctx: generate(None, ctx.rng), "$generate(None, ctx.rng)",
                          generate=generate)
    bound_faker = fakedata.bound_faker

    def evaluate_fake_data(ctx: RenderContext) -> str:
        rng = ctx.rng
        return generate(bound_faker(rng), rng)

    return evaluate_fake_data


_REQUEST_FIELDS = ("method, path, url, pathParam.<name>, query.<name>, header.<Name>, body.<path>, "
                   "rawBody, tls.<field>")


def _tls_version(ctx: RenderContext) -> str:
    tls = ctx.request.tls
    return _TLS_VERSION_NAMES.get(tls.get("tls_version"), "") if tls else ""


def _tls_cipher(ctx: RenderContext) -> str:
    tls = ctx.request.tls
    return (tls.get("cipher_name") or "") if tls else ""


def _client_cert_reader(key: str) -> Evaluator:
    return lambda ctx: ctx.request.client_cert_fields.get(key, "")


#: ``tls_version`` numbers of the ASGI ``tls`` extension -> their names.
_TLS_VERSION_NAMES = {0x0301: "TLSv1.0", 0x0302: "TLSv1.1", 0x0303: "TLSv1.2", 0x0304: "TLSv1.3"}

#: ``request.tls.<field>`` of an HTTPS request (lower-case keys; every value is ``""`` over plain
#: HTTP or without a client certificate). Source: SPEC "TLS configuration of the mock server".
_REQUEST_TLS_FIELDS: dict[str, Evaluator] = {
    "clientcn": _client_cert_reader("cn"),
    "clientou": _client_cert_reader("ou"),
    "cliento": _client_cert_reader("o"),
    "clientsubject": _client_cert_reader("subject"),
    "clientissuer": _client_cert_reader("issuer"),
    "clientserial": _client_cert_reader("serial"),
    "version": _tls_version,
    "cipher": _tls_cipher,
}
_REQUEST_TLS_NAMES = ("clientCN, clientOU, clientO, clientSubject, clientIssuer, clientSerial, "
                      "version, cipher")


def _compile_request_reference(rest: str, position: int) -> Evaluator:
    field_name, dot, argument = rest.partition(".")
    lower = field_name.lower()
    if lower.startswith("body") and (lower == "body" or lower[4] == "["):
        # request.body, request.body.a.b, request.body[0].a (a top-level array)
        path = rest[4:]
        return _compile_body_reference(path[1:] if path.startswith(".") else path, position)
    simple = _REQUEST_SIMPLE_FIELDS.get(lower)
    if simple is not None:
        if dot:
            raise TemplateError(f"request.{field_name} has no sub-field '{argument}' at position {position}",
                                position)
        return simple
    if lower == "tls":
        reader = _REQUEST_TLS_FIELDS.get(argument.lower())
        if reader is None:
            raise TemplateError(f"unknown TLS field 'request.tls.{argument}' at position "
                                f"{position} (known: {_REQUEST_TLS_NAMES})", position)
        return reader
    if lower in ("pathparam", "query", "header"):
        if not argument:
            raise TemplateError(f"request.{field_name} needs a name, e.g. request.{field_name}.id, "
                                f"at position {position}", position)
        if lower == "pathparam":
            return _inlinable(lambda ctx: ctx.path_params.get(argument, ""),
                              "ctx.path_params.get($name, '')", name=argument)
        if lower == "query":
            return _query_reader(argument)
        # MockRequest.headers is keyed by lower-case name: header names are case-insensitive.
        header_name = argument.lower()
        return lambda ctx: ctx.request.headers.get(header_name, "")
    raise TemplateError(f"unknown request field '{field_name}' at position {position} "
                        f"(known: {_REQUEST_FIELDS})", position)


def _query_reader(name: str) -> Evaluator:
    """``request.query.<name>``: the first value, as :attr:`MockRequest.query` gives it.

    A plain query string (nothing percent- or plus-encoded) is scanned for ``name=`` directly,
    without building the query dict; anything else goes through the dict.
    """
    prefix = name + "="
    cut = len(prefix)

    def evaluate_query(ctx: RenderContext) -> str:
        query = ctx.request.query_string
        if "%" in query or "+" in query:
            return ctx.request.query.get(name, "")
        for part in query.split("&"):
            if part.startswith(prefix):
                return part[cut:]
            if part == name:
                return ""
        return ""

    return evaluate_query


_REQUEST_SIMPLE_FIELDS: dict[str, Evaluator] = {
    "method": lambda ctx: ctx.request.method,
    "path": lambda ctx: ctx.request.path,
    "url": lambda ctx: ctx.request.url,
    "rawbody": lambda ctx: ctx.request.text,
}

# One step of a body path: (object key, or None for "[i]"; list index, or None when the key is
# not a number). "items.0" and "items[0]" both index a list; "0" also works as an object key.
_BodyStep = tuple[str | None, int | None]
_BODY_PATH = re.compile(r"(?:[^.\[\]]+|\[[0-9]+\])(?:\.[^.\[\]]+|\[[0-9]+\])*")
_BODY_STEP = re.compile(r"([^.\[\]]+)|\[([0-9]+)\]")
_MISSING: Any = object()


def _read_body(ctx: RenderContext) -> Any:
    return ctx.request.json


def _compile_body_reference(path: str, position: int,
                            read: Callable[[RenderContext], Any] = _read_body) -> Evaluator:
    if not path:
        steps: tuple[_BodyStep, ...] = ()
    elif _BODY_PATH.fullmatch(path):
        steps = tuple((key, int(key) if key.isdigit() and key.isascii() else None) if key else (None, int(index))
                      for key, index in _BODY_STEP.findall(path))
    else:
        raise TemplateError(f"malformed body path '{path}' at position {position} "
                            f"(use dots and [index], e.g. request.body.items[0].name)", position)

    if len(steps) == 1 and steps[0][0] is not None:
        # request.body.name: one key, the common case.
        key = steps[0][0]
        index = steps[0][1]

        def evaluate_body_key(ctx: RenderContext) -> str:
            value = read(ctx)
            if type(value) is dict:
                value = value.get(key)
                if type(value) is str:
                    return value
            elif type(value) is list and index is not None and index < len(value):
                value = value[index]
            else:
                return ""
            return _as_text(value)

        return evaluate_body_key

    def evaluate_body_field(ctx: RenderContext) -> str:
        value = read(ctx)
        if value is INVALID_JSON:
            return ""
        for key, index in steps:
            if type(value) is dict:
                if key is None:
                    return ""
                value = value.get(key, _MISSING)
                if value is _MISSING:
                    return ""
            elif type(value) is list:
                if index is None or index >= len(value):
                    return ""
                value = value[index]
            else:
                return ""
        return value if type(value) is str else _as_text(value)

    return evaluate_body_field


def _as_text(value: Any) -> str:
    """A JSON value as template output: strings as-is, others as their compact JSON text.

    ``null`` renders as ``""`` so that ``default`` treats it as missing.
    """
    if type(value) is str:
        return value
    if value is None:
        return ""
    try:
        return orjson.dumps(value).decode()
    except (TypeError, orjson.JSONEncodeError):
        # orjson nests at most 255 levels; the parser accepts 1024. Such a value is not worth a
        # slower fallback that could itself hit the recursion limit.
        return ""


# Time expressions cache the formatted second: many requests fall in the same second.
_clock_cache: list[Any] = [-1, "", ""]  # [unix second, RFC 3339 "now", "YYYY-mm-ddTHH:MM:SS" prefix]


def _formatted_second(second: int) -> list[Any]:
    cache = _clock_cache
    if cache[0] != second:
        moment = datetime.datetime.fromtimestamp(second, datetime.timezone.utc)
        prefix = moment.strftime("%Y-%m-%dT%H:%M:%S")
        cache[0], cache[1], cache[2] = second, prefix + "Z", prefix
    return cache


def _now(ctx: RenderContext) -> str:
    return _formatted_second(int(time.time()))[1]


def _timestamp(ctx: RenderContext) -> str:
    return str(int(time.time()))


def _timestamp_iso(ctx: RenderContext) -> str:
    seconds, nanoseconds = divmod(time.time_ns(), 1_000_000_000)
    return f"{_formatted_second(seconds)[2]}.{nanoseconds:09d}Z"


def _timestamp_unix_ms(ctx: RenderContext) -> str:
    return str(time.time_ns() // 1_000_000)


_UUID_CLEAR_MASK = fakedata.UUID_CLEAR_MASK
_UUID_SET_BITS = fakedata.UUID_SET_BITS


def _uuid(ctx: RenderContext) -> str:
    # fakedata.uuid4_text inlined: one call less for the most used random expression.
    text = (ctx.rng.getrandbits(128) & _UUID_CLEAR_MASK | _UUID_SET_BITS).to_bytes(16).hex()
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"


_inlinable(_uuid, "f'{$out[:8]}-{$out[8:12]}-{$out[12:16]}-{$out[16:20]}-{$out[20:]}'",
           "$out = (ctx.rng.getrandbits(128) & $clear | $set).to_bytes(16).hex()",
           clear=_UUID_CLEAR_MASK, set=_UUID_SET_BITS)


def _uuid_short(ctx: RenderContext) -> str:
    return f"{ctx.rng.getrandbits(32):08x}"


#: Names that are complete expressions on their own (looked up lower-case).
_SIMPLE_REFERENCES: dict[str, Evaluator] = {
    "now": _now,
    "timestamp": _timestamp,
    "timestamp.iso": _timestamp_iso,
    "timestamp.unix_ms": _timestamp_unix_ms,
    "uuid": _uuid,
    "uuid.short": _uuid_short,
    # The incoming message of a message-based protocol (its text), carried as the body.
    "message": lambda ctx: ctx.request.text,
}

#: Evaluators whose text never holds a character an ``escape`` function changes (digits,
#: hex, ``-``, ``:``, ``T``, ``Z``, ``.``): :func:`compile_template` does not wrap them.
_ESCAPE_FREE: frozenset[Evaluator] = frozenset({_now, _timestamp, _timestamp_iso,
                                               _timestamp_unix_ms, _uuid, _uuid_short})


# --- Functions -----------------------------------------------------------------------------------

def _argument_count(call: _Call, minimum: int, maximum: int, usage: str) -> None:
    count = len(call.arguments)
    if not minimum <= count <= maximum:
        raise TemplateError(f"{call.name} takes {usage}, got {count} argument{'s' if count != 1 else ''} "
                            f"at position {call.position}", call.position)


def _literal_text(node: _Node, call: _Call) -> str:
    if isinstance(node, _Call):
        raise TemplateError(f"{call.name} needs a literal argument, not a function call, "
                            f"at position {node.position}", node.position)
    return node.text


def _literal_int(node: _Node, call: _Call) -> int:
    text = _literal_text(node, call)
    if not re.fullmatch(r"[+-]?[0-9]{1,18}", text.strip()):
        raise TemplateError(f"{call.name} needs an integer argument, got '{text}' at position {node.position}",
                            node.position)
    return int(text)


def _literal_float(node: _Node, call: _Call) -> float:
    text = _literal_text(node, call)
    try:
        number = float(text)
    except ValueError:
        number = float("nan")
    if number != number or number in (float("inf"), float("-inf")):
        raise TemplateError(f"{call.name} needs a number argument, got '{text}' at position {node.position}",
                            node.position)
    return number


def _check_range(call: _Call, minimum: float, maximum: float) -> None:
    if minimum > maximum:
        raise TemplateError(f"{call.name}: min {minimum} is greater than max {maximum} "
                            f"at position {call.position}", call.position)


def _random_int(call: _Call) -> Evaluator:
    """``random.int(min, max)``: integer in [min, max], both included; bare: [0, 100]."""
    if len(call.arguments) not in (0, 2):
        _argument_count(call, 2, 2, "(min, max)")
    minimum, maximum = ((_literal_int(call.arguments[0], call), _literal_int(call.arguments[1], call))
                        if call.arguments else (0, 100))
    _check_range(call, minimum, maximum)
    return lambda ctx: str(ctx.rng.randint(minimum, maximum))


def _random_float(call: _Call) -> Evaluator:
    """``random.float(min, max[, decimals])``: number in [min, max]; bare: [0, 1]."""
    if len(call.arguments) not in (0, 2, 3):
        _argument_count(call, 2, 3, "(min, max) or (min, max, decimals)")
    minimum, maximum = ((_literal_float(call.arguments[0], call), _literal_float(call.arguments[1], call))
                        if call.arguments else (0.0, 1.0))
    _check_range(call, minimum, maximum)
    span = maximum - minimum
    if len(call.arguments) == 3:
        decimals = _literal_int(call.arguments[2], call)
        if not 0 <= decimals <= 15:
            raise TemplateError(f"{call.name}: decimals must be 0 to 15 at position {call.position}",
                                call.position)
        return lambda ctx: f"{minimum + ctx.rng.random() * span:.{decimals}f}"

    def evaluate_random_float(ctx: RenderContext) -> str:
        text = repr(minimum + ctx.rng.random() * span)
        # repr is the shortest round-trip text but switches to exponent notation for huge and
        # tiny numbers; a mock's number should stay plain.
        return format(float(text), "f") if "e" in text else text

    return evaluate_random_float


_RANDOM_STRING_ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


def _random_string(call: _Call) -> Evaluator:
    """``random.string(length)``: letters and digits; bare: 10 characters."""
    _argument_count(call, 0, 1, "(length)")
    length = _literal_int(call.arguments[0], call) if call.arguments else 10
    if length < 0:
        raise TemplateError(f"{call.name}: length must not be negative at position {call.position}",
                            call.position)
    alphabet = _RANDOM_STRING_ALPHABET
    return lambda ctx: "".join(ctx.rng.choices(alphabet, k=length))


def _sequence(call: _Call) -> Evaluator:
    """``sequence('name')``, ``sequence('name', start)``: per-name counter, default start 1."""
    _argument_count(call, 1, 2, "('name') or ('name', start)")
    name = _literal_text(call.arguments[0], call)
    start = _literal_int(call.arguments[1], call) if len(call.arguments) == 2 else 1
    return lambda ctx: str(ctx.state.next_sequence_value(name, start))


def _upper(call: _Call) -> Evaluator:
    """``upper value``, ``upper(value)``."""
    _argument_count(call, 1, 1, "one value")
    evaluate = _compile_node(call.arguments[0], as_argument=True)
    return lambda ctx: evaluate(ctx).upper()


def _lower(call: _Call) -> Evaluator:
    """``lower value``, ``lower(value)``."""
    _argument_count(call, 1, 1, "one value")
    evaluate = _compile_node(call.arguments[0], as_argument=True)
    return lambda ctx: evaluate(ctx).lower()


def _default(call: _Call) -> Evaluator:
    """``default value 'fallback'``, ``default(value, 'fallback')``: fallback when value is empty."""
    if call.parenthesised:
        _argument_count(call, 2, 2, "(value, 'fallback')")
    else:
        _argument_count(call, 2, 1_000, "value 'fallback'")
    evaluate = _compile_node(call.arguments[0], as_argument=True)
    fallbacks = [_compile_node(argument, as_argument=True) for argument in call.arguments[1:]]
    if len(fallbacks) == 1:
        fallback = fallbacks[0]
    else:
        # Space form with several words: {{default request.query.name John Doe}} -> "John Doe".
        def fallback(ctx: RenderContext) -> str:
            return " ".join([evaluate_part(ctx) for evaluate_part in fallbacks])

    def evaluate_default(ctx: RenderContext) -> str:
        return evaluate(ctx) or fallback(ctx)

    return evaluate_default


def _faker_words(call: _Call) -> Evaluator:
    """``faker.words``: 3 to 5 words; ``faker.words(n)``: exactly n."""
    _argument_count(call, 0, 1, "(count)")
    count = _literal_int(call.arguments[0], call) if call.arguments else None
    if count is not None and count < 0:
        raise TemplateError(f"{call.name}: count must not be negative at position {call.position}",
                            call.position)
    fakedata.warm_up()
    words = fakedata.PARAMETERISED_GENERATORS["words"]
    bound_faker = fakedata.bound_faker

    def evaluate_words(ctx: RenderContext) -> str:
        rng = ctx.rng
        return words(bound_faker(rng), rng, count)

    return evaluate_words


def _xpath_evaluator(expression: str, position: int) -> Evaluator:
    """The evaluator of an XPath over the request's XML body (element names match by local name; see
    :mod:`mocks.core.xmldoc`); raises :class:`TemplateError` when it does not compile."""
    from mocks.core import xmldoc

    try:
        evaluate = xmldoc.compile_xpath(expression)
    except ValueError as error:
        raise TemplateError(f"{error} at position {position}", position) from None
    document_of = xmldoc.request_document

    def evaluate_xpath(ctx: RenderContext) -> str:
        return evaluate(document_of(ctx.request))

    return evaluate_xpath


def _xpath(call: _Call) -> Evaluator:
    """``xpath '/Envelope/Body/GetUser/id'``, ``xpath('//id')``: the text the XPath selects in
    the request's XML body (a SOAP envelope), namespaces ignored; ``""`` when nothing."""
    _argument_count(call, 1, 1, "one XPath, e.g. xpath '//GetUser/id'")
    return _xpath_evaluator(_literal_text(call.arguments[0], call), call.arguments[0].position)


#: Functions by lower-case name (SPEC "Templating", aliases included).
_FUNCTIONS: dict[str, Callable[[_Call], Evaluator]] = {
    "random.int": _random_int,
    "randomint": _random_int,
    "random.float": _random_float,
    "randomfloat": _random_float,
    "random.string": _random_string,
    "randomstring": _random_string,
    "sequence": _sequence,
    "upper": _upper,
    "lower": _lower,
    "default": _default,
    "faker.words": _faker_words,
    "xpath": _xpath,
}
