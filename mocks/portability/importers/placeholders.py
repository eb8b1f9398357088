"""Placeholder values generated from a JSON Schema (OpenAPI response bodies).

Rules (behavior notes §13 "Generation"), first that applies: ``example``; ``enum`` (a
random member); ``default``; ``const``; ``$ref`` (resolved, cycle-safe); ``allOf`` merged
(properties and ``required`` united); the first non-null ``oneOf``/``anyOf``; objects with
all their properties; arrays of ``max(minItems, 1)`` items (at most ``maxItems``);
strings by ``format``, then by ``pattern`` (a string the regex matches, drawn with
:mod:`rstr`), then by property name, else ``"string"``, cut or repeated to meet
``minLength``/``maxLength``; integers in ``minimum..maximum`` (default 0..100, a multiple
of an integer ``multipleOf``); numbers with 2 decimals; booleans.

"Random" is reproducible: the caller passes a seeded :class:`random.Random` (the OpenAPI
importer seeds it with ``"METHOD path"``), so the same document always imports the same.

Required properties are always there, at every depth. Limits cut only what is optional:

* a ``$ref`` already being expanded on the current branch (a cycle): an optional property
  is left out and an array gets no items beyond ``minItems``; a *required* one is expanded
  once more with only its required parts (objects with their required properties, arrays
  with ``minItems`` items, null when nullable), and met a third time (a cycle of required
  values) it is null when nullable, else ``{}`` / ``[]``;
* deeper than :data:`MAX_DEPTH` levels, or after :data:`MAX_VALUES` values: objects and
  arrays get only their required parts (null when nullable);
* after :data:`MAX_VALUES` + :data:`MAX_REQUIRED_VALUES` values a required object or array
  is ``{}`` / ``[]`` (bodies stay bounded for 10 MB documents).

So recursive schemas (a tree node holding nodes) and very wide real-world ones (Stripe,
cloud APIs) give small bodies that still carry every required property.

No Django. Not thread-safe per instance (one sampler per conversion).

Source: SPEC "Import and export"; OpenAPI import ("Generated bodies").
"""
from __future__ import annotations

import functools
import random
import re
import string
import uuid
from itertools import chain
from typing import Any, Callable

import rstr

#: Nesting depth after which objects and arrays are no longer expanded.
MAX_DEPTH = 6
#: Most items generated to meet ``minItems`` (a larger ``minItems`` is capped here).
MAX_REQUIRED_ITEMS = 100
#: Values generated for one body before nested objects and arrays stop being expanded
#: (scalars are still filled in), so a wide, deeply linked schema gives a body of bounded
#: size: a 10 MB document must import in seconds, and a mock body is an example, not a dump.
MAX_VALUES = 60
#: Values generated past :data:`MAX_VALUES` for required properties before a required object
#: or array is cut to ``{}`` / ``[]`` (only very large schemas with long chains of required
#: objects get there).
MAX_REQUIRED_VALUES = 2000
#: Tries at a string that matches a ``pattern`` and meets ``minLength``/``maxLength``.
PATTERN_TRIES = 12
#: A regex repeat (``+``, ``*``, ``{2,}``) takes at most this many more than its minimum, so
#: generated strings stay readable.
PATTERN_REPEAT_SPREAD = 8

#: Marks a value that cannot be generated (a ``$ref`` cycle, an unknown reference): left out.
OMIT = object()

#: Strings by ``format`` (fixed, plausible values keep golden files stable).
FORMAT_SAMPLES: dict[str, Callable[[random.Random], str]] = {
    "date-time": lambda rng: "2024-01-15T10:30:00Z",
    "date": lambda rng: "2024-01-15",
    "time": lambda rng: "10:30:00",
    "email": lambda rng: "user@example.com",
    "idn-email": lambda rng: "user@example.com",
    "uuid": lambda rng: str(uuid.UUID(int=rng.getrandbits(128), version=4)),
    "uri": lambda rng: "https://example.com",
    "url": lambda rng: "https://example.com",
    "iri": lambda rng: "https://example.com",
    "uri-reference": lambda rng: "/resource",
    "hostname": lambda rng: "example.com",
    "idn-hostname": lambda rng: "example.com",
    "ipv4": lambda rng: "192.168.1.1",
    "ipv6": lambda rng: "2001:db8::1",
    "byte": lambda rng: "c3RyaW5n",
    "binary": lambda rng: "string",
    "password": lambda rng: "********",
    "phone": lambda rng: "+1-555-0100",
    "duration": lambda rng: "PT1H",
    "regex": lambda rng: "^.*$",
}

#: Strings by property name: (test on the lower-case name, value), first match wins.
NAME_SAMPLES: tuple[tuple[Callable[[str], bool], Callable[[random.Random], str]], ...] = (
    (lambda name: "email" in name, lambda rng: "user@example.com"),
    (lambda name: name in ("firstname", "first_name", "given_name", "givenname"),
     lambda rng: "John"),
    (lambda name: name in ("lastname", "last_name", "family_name", "familyname", "surname"),
     lambda rng: "Doe"),
    (lambda name: name in ("name", "fullname", "full_name", "username", "display_name",
                           "displayname"), lambda rng: "John Doe"),
    (lambda name: "phone" in name, lambda rng: "+1-555-0100"),
    (lambda name: name in ("url", "uri", "href", "link", "website", "homepage")
     or name.endswith("_url") or name.endswith("url"), lambda rng: "https://example.com"),
    (lambda name: name == "city", lambda rng: "Springfield"),
    (lambda name: name in ("country", "country_code", "countrycode"), lambda rng: "US"),
    (lambda name: "zip" in name or "postal" in name, lambda rng: "12345"),
    (lambda name: "street" in name or name in ("address", "line1", "address_line1"),
     lambda rng: "123 Main St"),
    (lambda name: name == "currency", lambda rng: "usd"),
    (lambda name: name in ("id", "uuid", "guid") or name.endswith(("_id", "-id")),
     lambda rng: str(uuid.UUID(int=rng.getrandbits(128), version=4))),
    (lambda name: name.endswith("_at") or name in ("created", "updated", "timestamp"),
     lambda rng: "2024-01-15T10:30:00Z"),
    (lambda name: name == "date" or name.endswith("_date"), lambda rng: "2024-01-15"),
    (lambda name: name in ("description", "summary", "bio"),
     lambda rng: "A sample description"),
    (lambda name: name == "title", lambda rng: "Sample title"),
    (lambda name: name == "status", lambda rng: "active"),
)


class SchemaSampler:
    """Generates placeholder values from schemas of one document.

    Args:
        resolve: ``resolve(ref) -> schema`` for ``$ref`` values (raises ``KeyError`` for an
            unknown reference; such values are left out; any other exception propagates).
        rng: the seeded random generator.
    """

    def __init__(self, resolve: Callable[[str], Any], rng: random.Random):
        self.resolve = resolve
        self.rng = rng
        self._budget = MAX_VALUES

    def sample(self, schema: Any, name: str | None = None) -> Any:
        """A placeholder value for ``schema`` (None when nothing can be generated)."""
        self._budget = MAX_VALUES
        value = self._sample(schema, name, 0, (), True, False)
        return None if value is OMIT else value

    def _sample(self, schema: Any, name: str | None, depth: int, stack: tuple[str, ...],
                needed: bool, minimal: bool) -> Any:
        """The value of ``schema``, or :data:`OMIT`.

        ``needed``: the value must be there (a required property, one of ``minItems``
        items, the body itself). ``minimal``: give the smallest valid value (objects with
        only their required properties, arrays with ``minItems`` items, null when
        nullable)."""
        if not isinstance(schema, dict):
            return None
        reference = schema.get("$ref")
        if isinstance(reference, str):
            visits = stack.count(reference)
            if visits and not needed:
                return OMIT  # an optional value in a cycle: left out
            try:
                target = self.resolve(reference)
            except KeyError:
                return OMIT
            if visits >= 2 or (visits and self._budget <= -MAX_REQUIRED_VALUES):
                # a cycle of required values, already cut to its required part once
                return self._smallest(target)
            return self._sample(target, name, depth, (*stack, reference), needed,
                                minimal or visits > 0)
        if "example" in schema:
            return schema["example"]
        examples = schema.get("examples")
        if isinstance(examples, list) and examples:
            return examples[0]  # JSON Schema 2020-12 (OpenAPI 3.1) form
        enum = schema.get("enum")
        if isinstance(enum, list) and enum:
            return self.rng.choice(enum)
        if "default" in schema:
            return schema["default"]
        if "const" in schema:
            return schema["const"]
        all_of = schema.get("allOf")
        if isinstance(all_of, list) and all_of:
            merged, stack = self._merge_all_of(schema, stack)
            return self._sample(merged, name, depth, stack, needed, minimal)
        for key in ("oneOf", "anyOf"):
            choices = schema.get(key)
            if isinstance(choices, list) and choices:
                choice = next((item for item in choices if not _is_null_type(item)),
                              choices[0])
                if _nullable(schema) and minimal:
                    return None
                return self._sample(choice, name, depth, stack, needed, minimal)
        kind = _schema_type(schema)
        self._budget -= 1
        if kind in ("object", "array"):
            minimal = minimal or depth >= MAX_DEPTH or self._budget <= 0
            if minimal and _nullable(schema):
                return None
            if self._budget <= -MAX_REQUIRED_VALUES:
                return {} if kind == "object" else []
            if kind == "object":
                return self._object(schema, depth, stack, minimal)
            return self._array(schema, name, depth, stack, minimal)
        return self._scalar(schema, kind, name)

    def _object(self, schema: dict[str, Any], depth: int, stack: tuple[str, ...],
                minimal: bool) -> dict[str, Any]:
        """Every property (only the required ones when ``minimal``); a required name without
        a property schema gets a value of ``additionalProperties`` (else null)."""
        properties = schema.get("properties")
        properties = properties if isinstance(properties, dict) else {}
        required = schema.get("required")
        required = {str(key) for key in required} if isinstance(required, list) else set()
        value: dict[str, Any] = {}
        for key, child in properties.items():
            needed = key in required
            if minimal and not needed:
                continue
            generated = self._sample(child, key, depth + 1, stack, needed, minimal)
            if generated is not OMIT:
                value[key] = generated
        extra = schema.get("additionalProperties")
        for key in sorted(required - set(properties)):
            generated = self._sample(extra, key, depth + 1, stack, True, True) \
                if isinstance(extra, dict) else None
            value[key] = None if generated is OMIT else generated
        return value

    def _array(self, schema: dict[str, Any], name: str | None, depth: int,
               stack: tuple[str, ...], minimal: bool) -> list[Any]:
        """``minItems`` items (at most :data:`MAX_REQUIRED_ITEMS`), plus up to one more when
        not ``minimal`` and ``maxItems`` allows; extra items in a cycle are left out."""
        least = schema.get("minItems")
        least = min(least, MAX_REQUIRED_ITEMS) if isinstance(least, int) and least > 0 else 0
        most = schema.get("maxItems")
        most = most if isinstance(most, int) and most >= least else None
        count = least if minimal else max(least, 1)
        if most is not None:
            count = min(count, most)
        items = schema.get("items")
        if isinstance(items, list):  # tuple form (old JSON Schema)
            items = items[0] if items else {}
        values = [self._sample(items, name, depth + 1, stack, index < least, minimal)
                  for index in range(count)]
        return [value for value in values if value is not OMIT]

    def _smallest(self, schema: Any) -> Any:
        """The value of a required schema met again inside a cycle of required values:
        null when nullable, else ``{}`` / ``[]`` / a scalar (scalars cannot recurse)."""
        schema = schema if isinstance(schema, dict) else {}
        if _nullable(schema):
            return None
        kind = _schema_type(schema)
        if kind == "object" or "allOf" in schema:
            return {}
        if kind == "array":
            return []
        if any(isinstance(schema.get(key), list) for key in ("oneOf", "anyOf")):
            return {}
        return self._scalar(schema, kind, None)

    def _scalar(self, schema: dict[str, Any], kind: str | None, name: str | None) -> Any:
        if kind == "string":
            return self._string(schema, name)
        if kind == "integer":
            return self._integer(schema)
        if kind == "number":
            return self._number(schema)
        if kind == "boolean":
            return self.rng.choice((True, False))
        return None

    def _merge_all_of(self, schema: dict[str, Any],
                      stack: tuple[str, ...]) -> tuple[dict[str, Any], tuple[str, ...]]:
        """``allOf`` members (and the schema's own keys) merged into one schema: properties
        and ``required`` united, other keys first-wins."""
        merged: dict[str, Any] = {key: value for key, value in schema.items() if key != "allOf"}
        properties: dict[str, Any] = dict(merged.get("properties") or {})
        required: list[Any] = list(merged.get("required") or [])
        for member in schema["allOf"]:
            member_stack = stack
            while isinstance(member, dict) and isinstance(member.get("$ref"), str):
                reference = member["$ref"]
                if reference in member_stack:
                    member = None
                    break
                member_stack = (*member_stack, reference)
                try:
                    member = self.resolve(reference)
                except KeyError:
                    member = None
            if not isinstance(member, dict):
                continue
            if isinstance(member.get("allOf"), list):
                member, member_stack = self._merge_all_of(member, member_stack)
            stack = member_stack
            if isinstance(member.get("properties"), dict):
                for key, value in member["properties"].items():
                    properties.setdefault(key, value)
            if isinstance(member.get("required"), list):
                required.extend(key for key in member["required"] if key not in required)
            for key, value in member.items():
                if key not in ("properties", "required"):
                    merged.setdefault(key, value)
        if properties:
            merged["properties"] = properties
            merged.setdefault("type", "object")
        if required:
            merged["required"] = required
        return merged, stack

    def _string(self, schema: dict[str, Any], name: str | None) -> str:
        """By ``format``, ``pattern`` (a string the regex matches), property name, else
        ``"string"``; ``minLength``/``maxLength`` honoured except where a format or pattern
        value cannot meet them."""
        least = schema.get("minLength")
        least = least if isinstance(least, int) and least > 0 else 0
        most = schema.get("maxLength")
        most = most if isinstance(most, int) and most >= least else None
        pattern = schema.get("pattern")
        pattern = pattern if isinstance(pattern, str) else None
        form = schema.get("format")
        if isinstance(form, str) and form in FORMAT_SAMPLES:
            value = FORMAT_SAMPLES[form](self.rng)
            if pattern is None or _matches(pattern, value):
                return value
        if pattern is not None:
            value = pattern_string(pattern, self.rng, least, most)
            if value is not None:
                return value
        if name:
            make = _name_sampler(name)
            if make is not None:
                value = make(self.rng)
                if _fits(value, least, most):
                    return value
        return fit_length("string", least, most)

    def _integer(self, schema: dict[str, Any]) -> int:
        low, high = _bounds(schema, 0, 100)
        low, high = int(-(-low // 1)), int(high // 1)  # whole numbers inside the bounds
        value = self.rng.randint(low, high) if low <= high else low
        step = schema.get("multipleOf")
        if isinstance(step, int) and not isinstance(step, bool) and step > 0:
            multiple = -(-value // step) * step  # the next multiple at or above
            if multiple > high:
                multiple = (value // step) * step
            value = multiple
        return value

    def _number(self, schema: dict[str, Any]) -> float:
        low, high = _bounds(schema, 0, 100)
        return round(self.rng.uniform(low, high), 2) if low <= high else float(low)


@functools.lru_cache(maxsize=4096)
def _name_sampler(name: str) -> Callable[[random.Random], str] | None:
    """The first :data:`NAME_SAMPLES` maker whose test accepts ``name`` (cached: property
    names repeat across a document thousands of times)."""
    # camelCase ids (`userId`) read as `user_id` for the name rules
    lowered = (name[:-2] + "_id" if name.endswith("Id") else name).lower()
    return next((make for test, make in NAME_SAMPLES if test(lowered)), None)


def _schema_type(schema: dict[str, Any]) -> str | None:
    kind = schema.get("type")
    if isinstance(kind, list):  # OpenAPI 3.1: ["string", "null"]
        kind = next((item for item in kind if item != "null"), None)
    if isinstance(kind, str):
        return kind
    if "properties" in schema or "additionalProperties" in schema:
        return "object"
    if "items" in schema:
        return "array"
    return None


def _bounds(schema: dict[str, Any], low: float, high: float) -> tuple[float, float]:
    """``(minimum, maximum)`` honouring exclusive bounds (both 3.0 booleans and 3.1
    numbers); a single given bound keeps the default span of 100 on the other side."""
    minimum, maximum = schema.get("minimum"), schema.get("maximum")
    exclusive_min, exclusive_max = schema.get("exclusiveMinimum"), schema.get("exclusiveMaximum")
    if isinstance(exclusive_min, (int, float)) and not isinstance(exclusive_min, bool):
        minimum, exclusive_min = exclusive_min, True
    if isinstance(exclusive_max, (int, float)) and not isinstance(exclusive_max, bool):
        maximum, exclusive_max = exclusive_max, True
    number = (int, float)
    has_min = isinstance(minimum, number) and not isinstance(minimum, bool)
    has_max = isinstance(maximum, number) and not isinstance(maximum, bool)
    if has_min:
        low = minimum + (1 if exclusive_min is True and isinstance(minimum, int) else 0)
        if not has_max:
            high = max(high, low + 100) if low > high else high
    if has_max:
        high = maximum - (1 if exclusive_max is True and isinstance(maximum, int) else 0)
        if not has_min:
            low = min(low, high - 100) if high < low else low
    return low, high


def _is_null_type(schema: Any) -> bool:
    return isinstance(schema, dict) and schema.get("type") == "null"


def _nullable(schema: dict[str, Any]) -> bool:
    """Whether null is a valid value: ``nullable: true`` (3.0), ``x-nullable`` (Swagger),
    ``null`` in the ``type`` list (3.1) or a ``{type: null}`` choice."""
    if schema.get("nullable") is True or schema.get("x-nullable") is True:
        return True
    kind = schema.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    return any(isinstance(schema.get(key), list) and any(_is_null_type(item)
                                                         for item in schema[key])
               for key in ("oneOf", "anyOf"))


def _fits(value: str, least: int, most: int | None) -> bool:
    return len(value) >= least and (most is None or len(value) <= most)


def fit_length(text: str, least: int, most: int | None) -> str:
    """``text`` repeated or cut to a length in ``least..most`` (characters)."""
    if not text:
        text = "x"
    if len(text) < least:
        text = (text * (least // len(text) + 1))[:least]
    if most is not None and len(text) > most:
        text = text[:most]
    return text


@functools.lru_cache(maxsize=1024)
def _compiled(pattern: str) -> "re.Pattern[str] | None":
    try:
        return re.compile(pattern)
    except (re.error, RecursionError, OverflowError):
        return None


def _matches(pattern: str, value: str) -> bool:
    """Whether ``value`` matches ``pattern`` the JSON Schema way (a search, not anchored)."""
    compiled = _compiled(pattern)
    return compiled is not None and compiled.search(value) is not None


class _Xeger(rstr.Xeger):
    """:class:`rstr.Xeger` with bounded, adjustable repeats and a stable order for negated
    classes (the library builds those from a set), so output depends only on the seed."""

    def __init__(self, rng: random.Random):
        super().__init__(rng)
        #: Repeats take at most this many more than their minimum.
        self.spread = PATTERN_REPEAT_SPREAD
        #: Repeats take at least this many more than their minimum (when allowed).
        self.stretch = 0

    def _handle_in(self, value: Any) -> Any:
        candidates = list(chain(*(self._handle_state(item) for item in value)))
        if candidates and candidates[0] is False:
            candidates = sorted(set(string.printable).difference(candidates[1:]))
        return self._random.choice(candidates)

    def _handle_repeat(self, start_range: int, end_range: int, value: Any) -> str:
        high = min(end_range, start_range + self.spread)
        low = min(start_range + self.stretch, high)
        times = self._random.randint(low, high)
        return "".join("".join(self._handle_state(item) for item in value)
                       for _ in range(times))


def pattern_string(pattern: str, rng: random.Random, least: int = 0,
                   most: int | None = None) -> str | None:
    """A string that ``pattern`` (a Python-compatible regex, searched as JSON Schema does)
    matches, with its length in ``least..most`` when a few tries find one; a matching string
    of another length when they do not; None when the pattern is not a regex Python reads
    (``\\p{L}``) or nothing generated matches it.

    Drawn from ``rng`` only, so the same seed gives the same string."""
    compiled = _compiled(pattern)
    if compiled is None:
        return None
    xeger = _Xeger(rng)
    fallback: str | None = None
    for _attempt in range(PATTERN_TRIES):
        try:
            value = xeger.xeger(pattern)
        except Exception:  # noqa: BLE001 - rstr raises many kinds for constructs it lacks
            return None
        if compiled.search(value) is None:
            continue
        if _fits(value, least, most):
            return value
        fallback = fallback or value
        if len(value) < least:
            xeger.stretch += max(1, least - len(value))
            xeger.spread = max(xeger.spread, xeger.stretch)
        else:
            xeger.stretch = 0
            xeger.spread //= 2
    return fallback
