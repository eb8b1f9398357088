"""The list query engine: filters, sorting, pagination, expand names (SPEC "Query behavior of
list"). Property tests: sorting is a total order; a cursor walk never skips or repeats."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tables.ids import Clock
from tables.query import (DEFAULT_LIMIT, RESERVED_PARAMETERS, ListQuery, filter_path,
                          matches_filters, paginate, parse_list_query, sort_items, sort_key,
                          time_nanoseconds, without_absent_fields)

SPEC_RESERVED = ["limit", "offset", "page", "per_page", "starting_after", "ending_before",
                 "cursor", "page_size", "page_token", "sort", "order", "sort_by", "order_by",
                 "expand", "expand[]", "fields", "include", "exclude", "select", "format",
                 "pretty", "api_version", "idempotency_key", "request_id"]


def query(**parameters: str | list[str]) -> ListQuery:
    return parse_list_query({name: value if isinstance(value, list) else [value]
                             for name, value in parameters.items()})


def stamped(values: list[dict]) -> list[dict]:
    clock = Clock()
    return [{**value, "createdAt": clock.now()} for value in values]


# ---------------------------------------------------------------------------- parsing


def test_defaults():
    parsed = parse_list_query({})
    assert (parsed.sort, parsed.descending, parsed.limit, parsed.offset, parsed.filters,
            parsed.expand) == ("createdAt", True, 100, 0, (), ())
    assert DEFAULT_LIMIT == 100


@pytest.mark.parametrize("name", SPEC_RESERVED)
def test_reserved_names_are_never_filters(name):
    assert set(SPEC_RESERVED) <= RESERVED_PARAMETERS
    assert query(**{name: "x"}).filters == ()


def test_any_other_name_is_an_exact_filter_and_filters_combine_with_and():
    parsed = query(status="active", tier="gold")
    assert parsed.filters == ((("status",), "active"), (("tier",), "gold"))
    items = [{"status": "active", "tier": "gold"}, {"status": "active", "tier": "free"}]
    assert [matches_filters(item, parsed.filters) for item in items] == [True, False]


def test_bracketed_name_filters_a_nested_field():
    parsed = query(**{"metadata[tier]": "gold", "a[b][c]": "1"})
    assert parsed.filters == ((("metadata", "tier"), "gold"), (("a", "b", "c"), "1"))
    assert matches_filters({"metadata": {"tier": "gold"}, "a": {"b": {"c": 1}}}, parsed.filters)
    assert not matches_filters({"metadata": {"tier": "free"}, "a": {"b": {"c": 1}}},
                               parsed.filters)


@pytest.mark.parametrize(("stored", "text", "matches"), [
    (True, "true", True), (False, "true", False), (42, "42", True), (4.0, "4", True),
    (None, "null", True), ("42", "42", True), (42, "042", False)])
def test_filter_compares_the_text_form(stored, text, matches):
    assert matches_filters({"f": stored}, ((("f",), text),)) is matches


def test_missing_field_never_matches():
    assert not matches_filters({}, ((("f",), "null"),))


@pytest.mark.parametrize(("key", "path"), [
    pytest.param("status", ("status",), id="plain name"),
    pytest.param("metadata[tier]", ("metadata", "tier"), id="bracketed"),
    pytest.param("a[b][0]", ("a", "b", "0"), id="nested with index"),
])
def test_filter_path(key, path):
    assert filter_path(key) == path


DECLARED_ITEMS = [{"name": "rex", "kind": "dog", "meta": {"tier": "gold"}}, {"name": "tom"}]


@pytest.mark.parametrize(("parameters", "kept"), [
    pytest.param({"api_key": ["k"], "api_secret": ["s"]}, [], id="declared non-fields dropped"),
    pytest.param({"api_key": ["k"], "kind": ["dog"]}, ["kind"],
                 id="declared field kept (one item has it)"),
    pytest.param({"meta[tier]": ["gold"]}, ["meta[tier]"], id="declared nested field kept"),
    pytest.param({"meta[colour]": ["red"]}, [], id="declared nested non-field dropped"),
    pytest.param({"undeclared": ["x"]}, ["undeclared"], id="undeclared name kept"),
    pytest.param({"limit": ["1"], "sort": ["name"]}, ["limit", "sort"],
                 id="reserved names kept even when declared"),
])
def test_declared_parameters_filter_only_on_item_fields(parameters, kept):
    declared = frozenset({"api_key", "api_secret", "kind", "meta[tier]", "meta[colour]",
                          "limit", "sort"})
    assert list(without_absent_fields(parameters, declared, DECLARED_ITEMS)) == kept


def test_declared_parameters_of_an_empty_table_are_dropped():
    assert without_absent_fields({"kind": ["dog"]}, frozenset({"kind"}), []) == {}


def test_first_value_of_a_repeated_filter_is_used():
    assert query(status=["a", "b"]).filters == ((("status",), "a"),)


@pytest.mark.parametrize(("limit", "expected"), [("5", 5), ("0", 100), ("-3", 100),
                                                 ("x", 100), (" 7 ", 7)])
def test_limit_parsing(limit, expected):
    assert query(limit=limit).limit == expected


@pytest.mark.parametrize(("offset", "expected"), [("5", 5), ("-3", 0), ("x", 0)])
def test_offset_parsing(offset, expected):
    assert query(offset=offset).offset == expected


@pytest.mark.parametrize(("order", "descending"), [("asc", False), ("ASC", False),
                                                    ("desc", True), ("weird", True)])
def test_order_parsing(order, descending):
    assert query(order=order).descending is descending


@pytest.mark.parametrize(("parameters", "expected"), [
    pytest.param({"expand[]": ["customer", "plan"]}, ("customer", "plan"), id="expand[]"),
    pytest.param({"expand": ["customer,plan"]}, ("customer", "plan"), id="comma list"),
    pytest.param({"expand[0]": ["customer"], "expand[1]": ["plan"]}, ("customer", "plan"),
                 id="indexed (stripe-python)"),
    pytest.param({"expand[]": ["data.customer"]}, ("customer",), id="list data. prefix"),
])
def test_expand_forms(parameters, expected):
    parsed = parse_list_query(parameters)
    assert parsed.expand == expected and parsed.filters == ()


# ---------------------------------------------------------------------------- sorting


def test_sort_compares_numbers_numerically():
    items = [{"n": 10}, {"n": 9}, {"n": 100}, {"n": 2.5}]
    assert [item["n"] for item in sort_items(items, "n", False)] == [2.5, 9, 10, 100]


def test_sort_compares_strings_as_text():
    items = [{"s": "b"}, {"s": "B"}, {"s": "a"}]
    assert [item["s"] for item in sort_items(items, "s", False)] == ["B", "a", "b"]


def test_sort_compares_times_by_instant_across_offsets():
    items = [{"t": "2024-01-01T10:00:00+02:00"}, {"t": "2024-01-01T09:00:00Z"},
             {"t": "2024-01-01T07:30:00.5Z"}]
    assert [item["t"] for item in sort_items(items, "t", False)] == [
        "2024-01-01T07:30:00.5Z", "2024-01-01T10:00:00+02:00", "2024-01-01T09:00:00Z"]


def test_sort_by_nested_dot_path():
    items = [{"m": {"r": 2}}, {"m": {"r": 1}}]
    assert sort_items(items, "m.r", False) == [{"m": {"r": 1}}, {"m": {"r": 2}}]


def test_null_and_missing_sort_last_ascending_first_descending():
    items = [{"n": None}, {}, {"n": 1}]
    assert sort_items(items, "n", False)[0] == {"n": 1}
    assert sort_items(items, "n", True)[-1] == {"n": 1}


def test_default_sort_is_created_at_descending():
    items = stamped([{"id": "a"}, {"id": "b"}, {"id": "c"}])
    parsed = parse_list_query({})
    ordered = sort_items(items, parsed.sort, parsed.descending)
    assert [item["id"] for item in ordered] == ["c", "b", "a"]


def test_created_at_fast_path_agrees_with_keyed_sort():
    items = stamped([{"id": str(index)} for index in range(20)])
    fast = sort_items(items, "createdAt", True, created_in_order=True)
    keyed = sorted(items, key=lambda item: item["createdAt"], reverse=True)
    assert fast == keyed


@pytest.mark.parametrize(("text", "expected"), [
    ("1970-01-01T00:00:00Z", 0), ("1970-01-01T00:00:01.5Z", 1_500_000_000),
    ("1970-01-01T01:00:00+01:00", 0), ("1970-01-02", 86_400 * 10**9),
    ("2024-02-30T00:00:00Z", None), ("hello", None), ("2024-01-01T25:00:00Z", None)])
def test_time_nanoseconds(text, expected):
    assert time_nanoseconds(text) == expected


JSON_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6),
                         st.floats(allow_nan=False, allow_infinity=False, width=32),
                         st.text(max_size=6),
                         st.sampled_from(["2024-01-01T00:00:00Z", "2023-05-06T07:08:09.123Z",
                                          "2024-01-01", "1999-12-31T23:59:59+05:00"]))
JSON_VALUES = st.one_of(JSON_SCALARS, st.lists(JSON_SCALARS, max_size=2),
                        st.dictionaries(st.text(max_size=2), JSON_SCALARS, max_size=2))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.just("missing"), JSON_VALUES), max_size=25))
def test_sorting_is_a_total_order(values):
    """Every pair of keys compares (no TypeError), the order is consistent (sorted keys are
    non-decreasing), and descending is exactly ascending reversed."""
    items = [{"id": str(index)} if value == "missing" else {"id": str(index), "v": value}
             for index, value in enumerate(values)]
    ascending = sort_items(items, "v", False)
    descending = sort_items(items, "v", True)
    assert sorted(map(id, ascending)) == sorted(map(id, items))
    keys = [sort_key(item.get("v")) if "v" in item else sort_key(None) for item in ascending]
    assert all(left <= right for left, right in zip(keys, keys[1:]))
    assert descending == ascending[::-1]


ITEMS = st.lists(st.fixed_dictionaries({"v": JSON_SCALARS}), max_size=40)


@settings(max_examples=300, deadline=None)
@given(ITEMS, st.integers(1, 7), st.sampled_from(["v", "createdAt", "id"]), st.booleans())
def test_cursor_walk_with_starting_after_visits_every_item_once(values, limit, field,
                                                                descending):
    items = stamped([{"id": f"i{index}", **value} for index, value in enumerate(values)])
    ordered = sort_items(items, field, descending)
    seen: list[str] = []
    cursor = None
    for _ in range(len(items) + 2):
        page, meta = paginate(ordered, ListQuery(limit=limit, starting_after=cursor), "id")
        seen += [item["id"] for item in page]
        assert meta.total == len(items) and meta.count == len(page) <= limit
        if not meta.has_more:
            break
        cursor = page[-1]["id"]
    assert seen == [item["id"] for item in ordered]


@settings(max_examples=200, deadline=None)
@given(ITEMS, st.integers(1, 7))
def test_cursor_walk_with_ending_before_visits_every_item_once_backwards(values, limit):
    items = stamped([{"id": f"i{index}", **value} for index, value in enumerate(values)])
    ordered = sort_items(items, "v", False)
    if not ordered:
        return
    seen: list[str] = [ordered[-1]["id"]]
    cursor = ordered[-1]["id"]
    while True:
        page, meta = paginate(ordered, ListQuery(limit=limit, ending_before=cursor), "id")
        seen = [item["id"] for item in page] + seen
        if not meta.has_more:
            break
        cursor = page[0]["id"]
    assert seen == [item["id"] for item in ordered]


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 30), st.integers(1, 10))
def test_offset_pages_tile_the_list(count, limit):
    items = [{"id": str(index)} for index in range(count)]
    seen = []
    offset = 0
    while True:
        page, meta = paginate(items, ListQuery(limit=limit, offset=offset), "id")
        seen += page
        assert meta.offset == offset and meta.has_more == (offset + limit < count)
        if not meta.has_more:
            break
        offset += limit
    assert seen == items


# ---------------------------------------------------------------------------- pagination


def test_cursor_ignores_offset_and_reports_offset_zero():
    items = [{"id": str(index)} for index in range(10)]
    page, meta = paginate(items, ListQuery(limit=3, offset=5, starting_after="1"), "id")
    assert [item["id"] for item in page] == ["2", "3", "4"]
    assert (meta.offset, meta.has_more, meta.total, meta.count) == (0, True, 10, 3)


def test_ending_before_takes_the_items_right_before_the_cursor():
    items = [{"id": str(index)} for index in range(10)]
    page, meta = paginate(items, ListQuery(limit=3, ending_before="5"), "id")
    assert [item["id"] for item in page] == ["2", "3", "4"] and meta.has_more


def test_unknown_cursor_gives_an_empty_page():
    page, meta = paginate([{"id": "a"}], ListQuery(starting_after="zzz"), "id")
    assert page == [] and not meta.has_more and meta.total == 1


def test_cursor_matches_numeric_ids_by_text():
    items = [{"id": 1}, {"id": 2}, {"id": 3}]
    page, _ = paginate(items, ListQuery(limit=5, starting_after="1"), "id")
    assert page == [{"id": 2}, {"id": 3}]


def test_meta_as_dict_shape():
    _, meta = paginate([{"id": "a"}, {"id": "b"}], ListQuery(limit=1), "id")
    assert meta.as_dict() == {"total": 2, "limit": 1, "offset": 0, "count": 1, "has_more": True}
