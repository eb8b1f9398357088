"""Placeholder values generated from a JSON Schema (OpenAPI response bodies).

Rules (behavior notes §13 "Generation"), first that applies: ``example``; ``enum`` (a
random member); ``default``; ``$ref`` (resolved, cycle-safe); ``allOf`` merged; the first
``oneOf``/``anyOf``; objects with all their properties; arrays of one item (``minItems`` up
to 3); strings by ``format``, then by property name, else ``"string"``; integers in
``minimum..maximum`` (default 0..100); numbers with 2 decimals; booleans.

"Random" is reproducible: the caller passes a seeded :class:`random.Random` (the OpenAPI
importer seeds it with ``"METHOD path"``), so the same document always imports the same.

Cycle safety and size: a ``$ref`` already being expanded on the current branch is left out
(an object drops that property, an array stays empty); branches deeper than
:data:`MAX_DEPTH` stop; after :data:`MAX_VALUES` values nested objects and arrays are no
longer expanded. So recursive schemas (a tree node holding nodes) and very wide real-world
ones (Stripe, cloud APIs) give small bodies.

No Django. Not thread-safe per instance (one sampler per conversion).
"""
from __future__ import annotations

import functools
import random
import uuid
from typing import Any, Callable

#: Nesting depth after which objects and arrays are no longer expanded.
MAX_DEPTH = 6
#: Most items generated for an array (``minItems`` above this is capped).
MAX_ARRAY_ITEMS = 3
#: Values generated for one body before nested objects and arrays stop being expanded
#: (scalars are still filled in), so a wide, deeply linked schema gives a body of bounded
#: size: a 10 MB document must import in seconds, and a mock body is an example, not a dump.
MAX_VALUES = 60

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
            unknown reference; such values are left out).
        rng: the seeded random generator.
    """

    def __init__(self, resolve: Callable[[str], Any], rng: random.Random):
        self.resolve = resolve
        self.rng = rng
        self._budget = MAX_VALUES

    def sample(self, schema: Any, name: str | None = None) -> Any:
        """A placeholder value for ``schema`` (None when nothing can be generated)."""
        self._budget = MAX_VALUES
        value = self._sample(schema, name, 0, ())
        return None if value is OMIT else value

    def _sample(self, schema: Any, name: str | None, depth: int,
                stack: tuple[str, ...]) -> Any:
        """The value of ``schema``, or :data:`OMIT`."""
        if not isinstance(schema, dict):
            return None
        reference = schema.get("$ref")
        if isinstance(reference, str):
            if reference in stack:
                return OMIT  # a cycle: leave the value out rather than recurse forever
            try:
                target = self.resolve(reference)
            except KeyError:
                return OMIT
            return self._sample(target, name, depth, (*stack, reference))
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
            return self._sample(merged, name, depth, stack)
        for key in ("oneOf", "anyOf"):
            choices = schema.get(key)
            if isinstance(choices, list) and choices:
                return self._sample(choices[0], name, depth, stack)
        kind = _schema_type(schema)
        self._budget -= 1
        if kind == "object":
            if depth >= MAX_DEPTH or self._budget <= 0:
                return {}
            properties = schema.get("properties")
            if not isinstance(properties, dict):
                return {}
            generated = ((key, self._sample(value, key, depth + 1, stack))
                         for key, value in properties.items())
            return {key: value for key, value in generated if value is not OMIT}
        if kind == "array":
            if depth >= MAX_DEPTH or self._budget <= 0:
                return []
            count = schema.get("minItems")
            count = min(max(count if isinstance(count, int) else 1, 1), MAX_ARRAY_ITEMS)
            items = schema.get("items")
            if isinstance(items, list):  # tuple form (old JSON Schema)
                items = items[0] if items else {}
            values = [self._sample(items, name, depth + 1, stack) for _ in range(count)]
            return [value for value in values if value is not OMIT]
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
            for key, value in member.items():
                if key not in ("properties", "required"):
                    merged.setdefault(key, value)
        if properties:
            merged["properties"] = properties
            merged.setdefault("type", "object")
        return merged, stack

    def _string(self, schema: dict[str, Any], name: str | None) -> str:
        form = schema.get("format")
        if isinstance(form, str) and form in FORMAT_SAMPLES:
            return FORMAT_SAMPLES[form](self.rng)
        if name:
            make = _name_sampler(name)
            if make is not None:
                return make(self.rng)
        return "string"

    def _integer(self, schema: dict[str, Any]) -> int:
        low, high = _bounds(schema, 0, 100)
        low, high = int(-(-low // 1)), int(high // 1)  # whole numbers inside the bounds
        return self.rng.randint(low, high) if low <= high else low

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
