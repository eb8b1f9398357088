"""Schema-typed fake values for GraphQL fields that no resolver answers.

A field's fake value follows its type: ``String`` by field name (``email`` -> an address at
``example.com``, ``name`` -> a person's name, ``url``/``avatar`` -> a URL, ``createdAt`` -> an
RFC 3339 time, ``description`` -> a sentence, ...), ``ID`` a UUID, ``Int``/``Float`` by name
(``age`` 18-90, ``price`` with 2 decimals, ``latitude``...), ``Boolean``, an enum value,
custom scalars by their name (``DateTime``, ``Date``, ``JSON``, ``URL``, ``UUID``...), lists of
2 or 3 items, objects as ``{}`` (their fields are faked in turn) and interfaces or unions as
one of their object types (``{"__typename": ...}``). Nothing is ever null, so a schema alone
gives a working API.

Every draw comes from the ``rng`` the caller passes: a seeded one gives the same values
(the executor seeds one per field path, so the order fields resolve in does not matter).

Source: behavior notes §10 (``graphql``); SPEC "Templating" (fake-data types).
"""
from __future__ import annotations

import datetime
import random
from typing import Any, Callable

from graphql import (GraphQLEnumType, GraphQLList, GraphQLNonNull, GraphQLObjectType,
                     GraphQLScalarType, GraphQLSchema, is_abstract_type)

from mocks.core import fakedata

#: Fake times fall in the 3 years from this instant (UTC).
_EPOCH = datetime.datetime(2023, 1, 1, tzinfo=datetime.timezone.utc)
_SPAN_SECONDS = 3 * 365 * 24 * 3600


def _generator(type_name: str) -> Callable[[random.Random], str]:
    generate = fakedata.FAKE_DATA_GENERATORS[type_name]
    if type_name in fakedata.FAKER_FREE_TYPES:
        return lambda rng: generate(None, rng)  # type: ignore[arg-type]
    return lambda rng: generate(fakedata.bound_faker(rng), rng)


def _moment(rng: random.Random) -> datetime.datetime:
    return _EPOCH + datetime.timedelta(seconds=rng.randrange(_SPAN_SECONDS))


def _date_time(rng: random.Random) -> str:
    return _moment(rng).isoformat().replace("+00:00", "Z")


def _date(rng: random.Random) -> str:
    return _moment(rng).date().isoformat()


def _time(rng: random.Random) -> str:
    return _moment(rng).time().isoformat()


def _username(rng: random.Random) -> str:
    return f"{fakedata.first_name(None, rng).lower()}{rng.randint(1, 999)}"  # type: ignore[arg-type]


def _title(rng: random.Random) -> str:
    return fakedata.sentence(fakedata.bound_faker(rng), rng).rstrip(".")


#: String fields by name: (test on the lower-case field name, generator); first match wins.
_STRING_HINTS: tuple[tuple[Callable[[str], bool], Callable[[random.Random], str]], ...] = (
    (lambda n: "email" in n, _generator("email")),
    (lambda n: n in ("firstname", "givenname", "first"), _generator("firstName")),
    (lambda n: n in ("lastname", "surname", "familyname", "last"), _generator("lastName")),
    (lambda n: n in ("username", "login", "handle", "nickname"), _username),
    (lambda n: "company" in n or "organization" in n or n == "employer", _generator("company")),
    (lambda n: n == "productname" or n == "product", _generator("productName")),
    (lambda n: n == "name" or n.endswith("name") or n == "author", _generator("name")),
    (lambda n: "phone" in n or n == "mobile", _generator("phone")),
    (lambda n: "address" in n or n == "street" or n == "location", _generator("address")),
    (lambda n: n in ("ip", "ipv4"), _generator("ipv4")),
    (lambda n: n == "ipv6", _generator("ipv6")),
    (lambda n: n.endswith(("url", "uri", "link", "website", "avatar", "image", "photo", "href",
                           "picture", "thumbnail")), _generator("url")),
    (lambda n: "uuid" in n, _generator("uuid")),
    (lambda n: "date" in n or "time" in n, _date_time),
    (lambda n: n == "slug", _generator("slug")),
    (lambda n: n.startswith("color") or n.startswith("colour"), _generator("color")),
    (lambda n: "currency" in n, _generator("currencyCode")),
    (lambda n: n == "iban", _generator("iban")),
    (lambda n: n in ("job", "jobtitle", "occupation", "role", "position"), _generator("jobTitle")),
    (lambda n: n in ("title", "headline", "subject", "label", "caption"), _title),
    (lambda n: n in ("description", "bio", "body", "content", "text", "summary", "comment",
                     "message", "note", "notes", "about", "details"), _generator("sentence")),
    (lambda n: n in ("mimetype", "contenttype"), _generator("mimeType")),
    (lambda n: n in ("useragent",), _generator("userAgent")),
)

_WORD = _generator("word")


def fake_string(field_name: str, rng: random.Random) -> str:
    """A string that suits ``field_name`` (see the module docstring); a word otherwise."""
    lowered = field_name.lower().replace("_", "")
    if lowered == "id" or field_name.endswith(("Id", "_id", "ID")):
        return _generator("uuid")(rng)
    if field_name.endswith(("At", "_at")) and len(field_name) > 3:
        return _date_time(rng)  # createdAt, updated_at
    for test, generate in _STRING_HINTS:
        if test(lowered):
            return generate(rng)
    return _WORD(rng)


def fake_int(field_name: str, rng: random.Random) -> int:
    """An ``Int`` that suits ``field_name`` (``age``, ``year``, ``count``, ``rating``...)."""
    lowered = field_name.lower()
    if "age" == lowered or lowered.endswith("age") and "page" not in lowered:
        return rng.randint(18, 90)
    if "year" in lowered:
        return rng.randint(1970, 2030)
    if "rating" in lowered or "stars" in lowered:
        return rng.randint(1, 5)
    if any(word in lowered for word in ("count", "total", "quantity", "size", "number", "page",
                                        "limit", "offset", "stock")):
        return rng.randint(0, 100)
    return rng.randint(1, 1000)


def fake_float(field_name: str, rng: random.Random) -> float:
    """A ``Float`` that suits ``field_name`` (``latitude``, ``price``, ``rating``...)."""
    lowered = field_name.lower()
    if lowered.startswith("lat"):
        return round(rng.uniform(-90, 90), 6)
    if lowered.startswith(("lng", "lon")):
        return round(rng.uniform(-180, 180), 6)
    if "rating" in lowered or "score" in lowered:
        return round(rng.uniform(1, 5), 1)
    return round(rng.uniform(1, 1000), 2)


def _custom_scalar(scalar: GraphQLScalarType, field_name: str, rng: random.Random) -> Any:
    lowered = scalar.name.lower()
    if "datetime" in lowered or "timestamp" in lowered or lowered == "instant":
        return _date_time(rng)
    if lowered == "date" or lowered.endswith("date"):
        return _date(rng)
    if lowered == "time" or lowered.endswith("time"):
        return _time(rng)
    if lowered in ("json", "jsonobject", "object", "any", "map"):
        return {}
    if lowered in ("url", "uri"):
        return _generator("url")(rng)
    if "email" in lowered:
        return _generator("email")(rng)
    if "uuid" in lowered:
        return _generator("uuid")(rng)
    if lowered in ("long", "bigint", "int64", "unsignedint", "positiveint", "nonnegativeint"):
        return rng.randint(1, 1_000_000)
    if lowered in ("decimal", "bigdecimal", "float64", "money"):
        return round(rng.uniform(1, 1000), 2)
    return fake_string(field_name, rng)


def fake_leaf(leaf: GraphQLScalarType | GraphQLEnumType, field_name: str,
              rng: random.Random) -> Any:
    """A value of a scalar or enum type for a field called ``field_name``."""
    if isinstance(leaf, GraphQLEnumType):
        return rng.choice(list(leaf.values))
    name = leaf.name
    if name == "String":
        return fake_string(field_name, rng)
    if name == "ID":
        return _generator("uuid")(rng)
    if name == "Int":
        return fake_int(field_name, rng)
    if name == "Float":
        return fake_float(field_name, rng)
    if name == "Boolean":
        return rng.random() < 0.5
    return _custom_scalar(leaf, field_name, rng)


def fake_value(output_type: Any, field_name: str, rng: random.Random,
               schema: GraphQLSchema) -> Any:
    """A fake value of ``output_type`` for field ``field_name``: leaves as above, lists of 2
    or 3 items, objects as ``{}``, interfaces and unions as ``{"__typename": <one of their
    object types>}``. Never None."""
    if isinstance(output_type, GraphQLNonNull):
        output_type = output_type.of_type
    if isinstance(output_type, GraphQLList):
        return [fake_value(output_type.of_type, field_name, rng, schema)
                for _ in range(rng.randint(2, 3))]
    if isinstance(output_type, GraphQLObjectType):
        return {}
    if is_abstract_type(output_type):
        possible = schema.get_possible_types(output_type)  # type: ignore[arg-type]
        return {"__typename": rng.choice(possible).name} if possible else {}
    return fake_leaf(output_type, field_name, rng)
