"""Response transforms, every key (SPEC "Response transform"; behavior notes §6)."""
from __future__ import annotations

import copy

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tables import errors
from tables.config import ResponseTransform
from tables.errors import TableError
from tables.query import ListMeta
from tables.transforms import (CompiledTransform, compile_transform, convert_timestamp,
                               error_body, list_envelope)

ITEM = {"id": "cus_1", "name": "Ada", "email": "ada@example.com", "secret": "x",
        "createdAt": "2024-03-04T05:06:07.123456789Z",
        "updatedAt": "2024-03-04T05:06:08.000000001Z"}
META = ListMeta(total=5, limit=2, offset=0, count=2, has_more=True)


def transform(**config) -> CompiledTransform:
    return CompiledTransform(ResponseTransform.model_validate(config))


def test_no_transform_is_raw():
    assert compile_transform(None) is None
    assert list_envelope([ITEM], META) == {"data": [ITEM], "meta": {
        "total": 5, "limit": 2, "offset": 0, "count": 2, "has_more": True}}


def test_empty_transform_changes_nothing_and_returns_the_item():
    compiled = transform()
    assert compiled.item(ITEM) is ITEM
    assert compiled.envelope([ITEM], META) == list_envelope([ITEM], META)


@pytest.mark.parametrize(("form", "created"), [
    pytest.param("rfc3339", "2024-03-04T05:06:07.123456789Z", id="rfc3339 keeps the stored form"),
    pytest.param("iso8601", "2024-03-04T05:06:07Z", id="iso8601 whole seconds"),
    pytest.param("unix", 1709528767, id="unix integer seconds"),
])
def test_timestamp_formats(form, created):
    out = transform(timestamps={"format": form}).item(ITEM)
    assert out["createdAt"] == created
    assert type(out["createdAt"]) is type(created)


def test_timestamp_format_defaults_to_rfc3339():
    assert transform(timestamps={}).item(ITEM)["createdAt"] == ITEM["createdAt"]


def test_timestamp_none_removes_both_fields():
    out = transform(timestamps={"format": "none"}).item(ITEM)
    assert "createdAt" not in out and "updatedAt" not in out


def test_timestamp_fields_rename():
    out = transform(timestamps={"format": "unix", "fields": {"createdAt": "created"}}).item(ITEM)
    assert out["created"] == 1709528767 and "createdAt" not in out
    assert out["updatedAt"] == 1709528768


def test_unparsable_timestamp_is_left_as_it_is():
    assert convert_timestamp("yesterday", "unix") == "yesterday"
    assert convert_timestamp(5, "iso8601") == 5


def test_inject_adds_literals_of_every_kind():
    inject = {"object": "customer", "livemode": False, "n": 1, "nothing": None, "o": {"a": [1]}}
    out = transform(fields={"inject": inject}).item(ITEM)
    assert {key: out[key] for key in inject} == inject


def test_inject_comes_last_so_it_survives_hide_and_rename():
    out = transform(fields={"inject": {"object": "customer"}, "hide": ["object"],
                            "rename": {"object": "kind"}}).item({**ITEM, "object": "x"})
    assert out["object"] == "customer" and out["kind"] == "x"


def test_hide_removes_fields_without_touching_storage():
    stored = copy.deepcopy(ITEM)
    out = transform(fields={"hide": ["secret", "updatedAt", "absent"]}).item(stored)
    assert "secret" not in out and "updatedAt" not in out
    assert stored == ITEM


def test_rename_maps_stored_key_to_output_key():
    out = transform(fields={"rename": {"name": "full_name"}}).item(ITEM)
    assert out["full_name"] == "Ada" and "name" not in out


def test_rename_runs_before_hide():
    out = transform(fields={"rename": {"name": "full_name"}, "hide": ["full_name"]}).item(ITEM)
    assert "full_name" not in out and "name" not in out


def test_rename_runs_before_timestamps():
    out = transform(fields={"rename": {"createdAt": "born"}},
                    timestamps={"format": "unix"}).item(ITEM)
    assert out["born"] == ITEM["createdAt"] and out["updatedAt"] == 1709528768


def test_wrap_as_list_wraps_arrays_with_url_from_parent_fields():
    item = {**ITEM, "items": [{"price": 1}], "tags": "not a list"}
    out = transform(fields={"wrapAsList": {
        "items": {"url": "/v1/subscription_items?subscription={{id}}"}, "tags": None,
        "absent": None}}).item(item)
    assert out["items"] == {"object": "list", "data": [{"price": 1}], "has_more": False,
                            "url": "/v1/subscription_items?subscription=cus_1"}
    assert out["tags"] == "not a list"
    assert "absent" not in out


def test_wrap_as_list_without_url():
    out = transform(fields={"wrapAsList": {"items": None}}).item({"items": []})
    assert out["items"] == {"object": "list", "data": [], "has_more": False}


def test_list_envelope_flat_with_data_field_extra_fields_and_meta():
    shaped = transform(list={"dataField": "results", "extraFields": {"object": "list",
                                                                     "url": "/v1/customers"}})
    assert shaped.envelope([ITEM], META) == {"object": "list", "url": "/v1/customers",
                                             "results": [ITEM], "total": 5, "limit": 2,
                                             "offset": 0, "count": 2}


@pytest.mark.parametrize("key", ["has_more", "hasMore"])
def test_list_extra_has_more_gets_the_computed_value(key):
    shaped = transform(list={"extraFields": {key: False}, "hideMeta": True})
    assert shaped.envelope([], META) == {key: True, "data": []}


def test_list_hide_meta_and_meta_field_names():
    assert transform(list={"hideMeta": True}).envelope([ITEM], META) == {"data": [ITEM]}
    renamed = transform(list={"metaFields": {"total": "total_count", "count": "n"}})
    assert renamed.envelope([], META) == {"data": [], "total_count": 5, "limit": 2,
                                          "offset": 0, "n": 2}


def test_create_and_delete_statuses():
    shaped = transform(create={"status": 200}, delete={"status": 200, "preserve": True})
    assert (shaped.create_status, shaped.delete_status, shaped.delete_preserve) == (200, 200,
                                                                                    True)
    plain = transform()
    assert (plain.create_status, plain.delete_status, plain.delete_preserve) == (None, None,
                                                                                 False)


def test_delete_body_fills_item_placeholders():
    shaped = transform(delete={"body": {"id": "{{item.id}}", "object": "customer",
                                        "deleted": True, "note": "bye {{ item.name }}!",
                                        "nested": ["{{item.email}}"], "keep": "{{item.nope}}"}})
    assert shaped.delete_body(ITEM) == {"id": "cus_1", "object": "customer", "deleted": True,
                                        "note": "bye Ada!", "nested": ["ada@example.com"],
                                        "keep": "{{item.nope}}"}


def test_delete_lone_placeholder_keeps_the_field_type():
    shaped = transform(delete={"body": {"n": "{{item.n}}", "flag": "x{{item.flag}}"}})
    assert shaped.delete_body({"n": 3, "flag": True}) == {"n": 3, "flag": "xtrue"}


def test_no_delete_body_means_none():
    assert transform(delete={"status": 200}).delete_body(ITEM) is None


def not_found() -> TableError:
    return errors.item_not_found("customers", "cus_9")


def test_default_error_body():
    assert error_body(not_found(), None) == {
        "error": 'resource "customers" item "cus_9" not found', "resource": "customers",
        "id": "cus_9", "statusCode": 404}
    assert error_body(errors.table_not_found("x"), transform())["error"] == \
        'resource "x" not found'


def test_error_transform_without_fields_keeps_non_empty_sources():
    shaped = transform(errors={})
    assert shaped.error(not_found()) == {"message": 'resource "customers" item "cus_9" not found',
                                         "resource": "customers", "id": "cus_9"}


def test_error_transform_stripe_shape():
    shaped = transform(errors={"wrap": "error", "fields": {"message": "message", "type": "type",
                                                           "code": "code", "id": "param"},
                               "typeMap": {"NOT_FOUND": "invalid_request_error"},
                               "codeMap": {"NOT_FOUND": "resource_missing"},
                               "inject": {"doc_url": "https://example.test"}})
    assert shaped.error(not_found()) == {"error": {
        "message": 'resource "customers" item "cus_9" not found',
        "type": "invalid_request_error", "code": "resource_missing", "param": "cus_9",
        "doc_url": "https://example.test"}}


def test_error_transform_unmapped_code_omits_type_and_code():
    shaped = transform(errors={"fields": {"message": "msg", "type": "type", "code": "code"},
                               "typeMap": {"NOT_FOUND": "nf"}})
    conflict = errors.item_exists("t", "1")
    assert shaped.error(conflict) == {"msg": 'resource "t" item "1" already exists'}


def test_error_transform_validation_field():
    failure = TableError(errors.VALIDATION_ERROR, "validation failed", table="t", field="email")
    shaped = transform(errors={"fields": {"field": "param", "code": "code"},
                               "codeMap": {"VALIDATION_ERROR": "parameter_invalid"}})
    assert shaped.error(failure) == {"param": "email", "code": "parameter_invalid"}


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.sampled_from(["id", "name", "createdAt", "updatedAt", "secret",
                                        "items", "x"]),
                       st.one_of(st.text(max_size=5), st.integers(), st.lists(st.integers(),
                                                                              max_size=2)),
                       max_size=7))
def test_item_transform_never_mutates_the_stored_item(item):
    before = copy.deepcopy(item)
    shaped = transform(fields={"rename": {"name": "n"}, "hide": ["secret"],
                               "wrapAsList": {"items": None}, "inject": {"o": "x"}},
                       timestamps={"format": "unix", "fields": {"createdAt": "created"}})
    out = shaped.item(item)
    assert item == before
    assert out["o"] == "x" and "secret" not in out
