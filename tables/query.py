"""The list query: filters, sorting, pagination and expand names, over plain item dicts.

Query parameters (SPEC "Query behavior of ``list``"):

=====================  =============================================  ===========
parameter              meaning                                        default
=====================  =============================================  ===========
any non-reserved name  exact-match filter (several combine with AND)  none
``field[sub]``         filter on a nested field (``metadata[tier]``)  none
``sort``               field to sort by                               ``createdAt``
``order``              ``asc`` or ``desc``                            ``desc``
``limit``              maximum items                                  100
``offset``             items to skip (ignored with a cursor)          0
``starting_after``     items after the item with this id              none
``ending_before``      items before the item with this id             none
``expand[]``/``expand``  related objects to inline (``a,b``)          none
=====================  =============================================  ===========

Filters compare the text form of the stored value (:func:`tables.ids.value_text`: ``true``,
``42``, ``null``) with the parameter's first value; a missing field never matches.
Parameters an imported API *declares* (an OpenAPI operation's query parameters, see
:func:`without_absent_fields`) filter only when they name a field some item has, so
credentials sent as plain query parameters (``api_key``, ``api_secret``) list everything.

Sorting is a total order: values compare by kind first (numbers, then times, then strings
and everything else as text, then null/missing), then by value, then by insertion order, and
``desc`` is the exact reverse of ``asc``. So a cursor walk with ``limit`` +
``starting_after`` visits every item exactly once.

No Django. Pure functions over the caller's items (never mutated).
"""
from __future__ import annotations

import calendar
import math
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tables.ids import id_key, value_text

#: Default and fallback page size (SPEC "Limits").
DEFAULT_LIMIT = 100
#: Largest ``limit``/``offset`` used (a signed 32-bit int): a larger value is cut to it, so a
#: huge number in a query never reaches the JSON encoder (which refuses more than 64 bits).
MAX_PAGE_VALUE = 2**31 - 1

#: Names never used as filters (SPEC "Query behavior of list"), plus the engine's own seed
#: parameters (behavior notes §4), which belong to the templating layer.
RESERVED_PARAMETERS = frozenset((
    "limit", "offset", "page", "per_page", "starting_after", "ending_before", "cursor",
    "page_size", "page_token", "sort", "order", "sort_by", "order_by", "expand", "expand[]",
    "fields", "include", "exclude", "select", "format", "pretty", "api_version",
    "idempotency_key", "request_id", "_mockd_seed", "_mock_seed",
))

_BRACKETED = re.compile(r"([^\[\]]+)((?:\[[^\[\]]+\])+)\Z")
_SEGMENT = re.compile(r"\[([^\[\]]+)\]")
_TIME = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?"
    r"([Zz]|[+-]\d{2}:?\d{2})?)?\Z")

# Kind ranks of the sort key (see the module docstring).
_NUMBER, _TIME_RANK, _TEXT, _ABSENT = 0, 1, 2, 3
_MISSING: Any = object()


@dataclass(frozen=True, slots=True)
class ListQuery:
    """A parsed list query.

    Attributes:
        filters: ``((field path segments), expected text)`` pairs, AND-ed.
        sort: field to sort by (``createdAt`` by default).
        descending: True for ``order=desc`` (the default).
        limit: page size (positive; 100 by default or when not a positive integer; at most
            :data:`MAX_PAGE_VALUE`).
        offset: items skipped (0 by default, ignored with a cursor; at most
            :data:`MAX_PAGE_VALUE`).
        starting_after, ending_before: cursor item ids (``starting_after`` wins if both).
        expand: field names to inline (``data.`` prefixes of list expands removed).
    """

    filters: tuple[tuple[tuple[str, ...], str], ...] = ()
    sort: str = "createdAt"
    descending: bool = True
    limit: int = DEFAULT_LIMIT
    offset: int = 0
    starting_after: str | None = None
    ending_before: str | None = None
    expand: tuple[str, ...] = ()

    @property
    def has_cursor(self) -> bool:
        """Whether a cursor parameter is present (then ``offset`` is ignored)."""
        return self.starting_after is not None or self.ending_before is not None


@dataclass(frozen=True, slots=True)
class ListMeta:
    """Pagination facts of one page.

    Attributes:
        total: items matching the filters (before pagination).
        limit: the page size used.
        offset: the offset used (0 with a cursor).
        count: items in this page.
        has_more: whether more items exist beyond the page in the direction of travel.
    """

    total: int
    limit: int
    offset: int
    count: int
    has_more: bool

    def as_dict(self) -> dict[str, Any]:
        """``{total, limit, offset, count, has_more}``."""
        return {"total": self.total, "limit": self.limit, "offset": self.offset,
                "count": self.count, "has_more": self.has_more}


EMPTY_QUERY = ListQuery()


def _positive(text: str | None, default: int) -> int:
    if text is None:
        return default
    try:
        value = int(text.strip())
    except ValueError:
        return default
    return min(value, MAX_PAGE_VALUE) if value > 0 else default


def _non_negative(text: str | None) -> int:
    if text is None:
        return 0
    try:
        value = int(text.strip())
    except ValueError:
        return 0
    return min(max(value, 0), MAX_PAGE_VALUE)


def expand_names(parameters: Mapping[str, Sequence[str]]) -> tuple[str, ...]:
    """Field names from ``expand=a,b``, ``expand[]=a`` and ``expand[0]=a`` (in order, no
    duplicates)."""
    names: list[str] = []
    for key, values in parameters.items():
        if key == "expand" or key.startswith("expand["):
            for value in values:
                for name in value.split(","):
                    name = name.strip()
                    if name and name not in names:
                        names.append(name)
    return tuple(names)


def parse_list_query(parameters: Mapping[str, Sequence[str]] | None) -> ListQuery:
    """A :class:`ListQuery` from query parameters (name -> values in order).

    Never raises: an unusable ``limit``/``offset``/``order`` falls back to its default, and a
    ``limit``/``offset`` above :data:`MAX_PAGE_VALUE` is cut to it.
    """
    if not parameters:
        return EMPTY_QUERY
    first = {key: values[0] for key, values in parameters.items() if values}
    filters = [(filter_path(key), value) for key, value in first.items() if is_filter(key)]
    order = (first.get("order") or "desc").strip().lower()
    return ListQuery(filters=tuple(filters), sort=(first.get("sort") or "createdAt").strip(),
                     descending=order != "asc", limit=_positive(first.get("limit"),
                                                                DEFAULT_LIMIT),
                     offset=_non_negative(first.get("offset")),
                     starting_after=first.get("starting_after") or None,
                     ending_before=first.get("ending_before") or None,
                     expand=tuple(name[5:] if name.startswith("data.") else name
                                  for name in expand_names(parameters)))


def is_filter(key: str) -> bool:
    """Whether the query parameter ``key`` is a filter (not a reserved name, not
    ``expand[...]``)."""
    return key not in RESERVED_PARAMETERS and not key.startswith("expand[")


def filter_path(key: str) -> tuple[str, ...]:
    """The field path a filter parameter names: ``"status"`` -> ``("status",)``,
    ``"metadata[tier]"`` -> ``("metadata", "tier")``."""
    match = _BRACKETED.match(key)
    return (match.group(1), *_SEGMENT.findall(match.group(2))) if match else (key,)


def without_absent_fields(parameters: Mapping[str, Sequence[str]], declared: frozenset[str],
                          items: Collection[Mapping[str, Any]]) -> Mapping[str, Sequence[str]]:
    """``parameters`` without the filters named in ``declared`` that are a field of none of
    ``items`` (a nested ``a[b]`` counts when some item has ``a.b``); the others, reserved
    names included, are kept as given. ``parameters`` itself is returned when nothing is
    dropped.

    ``declared`` holds the query parameters an imported API operation declares
    (``http.declaredQueryParams``): an API key or another parameter that is no field of the
    table's items must not filter the list empty (SPEC "Query behavior of list": a filter
    is "an exact-match filter on that field"). Cost: one pass over ``items`` for each such
    parameter, stopping at the first item that has the field.
    """
    absent = [key for key in parameters
              if key in declared and is_filter(key) and not any(
                  field_value(item, filter_path(key)) is not _MISSING for item in items)]
    if not absent:
        return parameters
    return {key: values for key, values in parameters.items() if key not in absent}


def field_value(item: Mapping[str, Any], path: Sequence[str]) -> Any:
    """The value at ``path`` (object keys; array indexes as digits), or ``_MISSING``."""
    value: Any = item
    for segment in path:
        if isinstance(value, Mapping):
            if segment not in value:
                return _MISSING
            value = value[segment]
        elif isinstance(value, list) and segment.isdigit() and int(segment) < len(value):
            value = value[int(segment)]
        else:
            return _MISSING
    return value


def matches_filters(item: Mapping[str, Any],
                    filters: Sequence[tuple[Sequence[str], str]]) -> bool:
    """Whether every filter holds: the text of the stored value equals the expected text."""
    for path, expected in filters:
        value = item.get(path[0], _MISSING) if len(path) == 1 else field_value(item, path)
        if value is _MISSING or value_text(value) != expected:
            return False
    return True


def time_nanoseconds(text: str) -> int | None:
    """Epoch nanoseconds of an RFC 3339 time or ``YYYY-MM-DD`` date, else None."""
    match = _TIME.match(text)
    if match is None:
        return None
    year, month, day, hour, minute, second, fraction, zone = match.groups()
    try:
        if not (1 <= int(month) <= 12 and 1 <= int(day) <= calendar.monthrange(
                int(year), int(month))[1] and int(hour or 0) < 24 and int(minute or 0) < 60
                and int(second or 0) < 61):
            return None
    except ValueError:
        return None
    seconds = calendar.timegm((int(year), int(month), int(day), int(hour or 0),
                               int(minute or 0), int(second or 0), 0, 0, 0))
    if zone and zone not in "Zz":
        sign = -1 if zone[0] == "-" else 1
        digits = zone[1:].replace(":", "")
        seconds -= sign * (int(digits[:2]) * 3600 + int(digits[2:]) * 60)
    nanoseconds = int((fraction or "").ljust(9, "0")) if fraction else 0
    return seconds * 1_000_000_000 + nanoseconds


def sort_key(value: Any) -> tuple[int, Any]:
    """A total-order key: ``(kind rank, comparable payload)``.

    Numbers (not booleans) compare numerically, RFC 3339 times by instant, strings by text,
    other values by their text form; null and missing sort last in ``asc``.
    """
    if value is _MISSING or value is None:
        return (_ABSENT, "")
    if isinstance(value, str):
        if value[:1].isdigit():
            instant = time_nanoseconds(value)
            if instant is not None:
                return (_TIME_RANK, instant)
        return (_TEXT, value)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if isinstance(value, float) and math.isnan(value):
            return (_TEXT, "NaN")
        return (_NUMBER, value)
    return (_TEXT, value_text(value))


def sort_items(items: list[dict[str, Any]], field: str, descending: bool,
               created_in_order: bool = False) -> list[dict[str, Any]]:
    """``items`` (in insertion order) sorted by ``field``; ties keep insertion order, and
    ``descending`` gives the exact reverse. Returns a new list.

    ``created_in_order`` promises that insertion order is ``createdAt`` order (the store
    stamps ``createdAt`` from a strictly increasing clock at insertion and never moves an
    item), so the default sort needs no keys; without the promise it is checked.
    """
    if field == "createdAt" and (created_in_order or _created_in_insertion_order(items)):
        return items[::-1] if descending else list(items)
    path = tuple(field.split("."))
    keyed = [((sort_key(item[field] if field in item else field_value(item, path)), index), item)
             for index, item in enumerate(items)]
    keyed.sort(key=lambda pair: pair[0], reverse=descending)
    return [item for _, item in keyed]


def _created_in_insertion_order(items: list[dict[str, Any]]) -> bool:
    previous = ""
    for item in items:
        created = item.get("createdAt")
        if not isinstance(created, str) or created <= previous or len(created) != 30:
            return False
        previous = created
    return True


def paginate(ordered: list[dict[str, Any]], query: ListQuery,
             id_field: str) -> tuple[list[dict[str, Any]], ListMeta]:
    """One page of ``ordered`` items and its :class:`ListMeta`.

    With ``starting_after`` the page starts right after the cursor item; with
    ``ending_before`` it ends right before it; an unknown cursor gives an empty page.
    Otherwise ``offset``/``limit`` apply.
    """
    total = len(ordered)
    limit = query.limit
    if query.has_cursor:
        cursor = query.starting_after if query.starting_after is not None \
            else query.ending_before
        position = next((index for index, item in enumerate(ordered)
                         if id_key(item.get(id_field)) == cursor), None)
        if position is None:
            return [], ListMeta(total, limit, 0, 0, False)
        if query.starting_after is not None:
            page = ordered[position + 1:position + 1 + limit]
            has_more = position + 1 + limit < total
        else:
            start = max(0, position - limit)
            page = ordered[start:position]
            has_more = start > 0
        return page, ListMeta(total, limit, 0, len(page), has_more)
    offset = query.offset
    page = ordered[offset:offset + limit]
    return page, ListMeta(total, limit, offset, len(page), offset + limit < total)
