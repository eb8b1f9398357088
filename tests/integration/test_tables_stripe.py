"""End to end with a real, strict client: the official ``stripe`` Python SDK against a
Stripe-shaped ``customers`` table served by ``mockd engine`` (issue "Stateful tables", Tests).

Nothing is imported from Stripe's API definition: the config below declares the table
(prefix ids ``cus_``), the five bindings on ``/v1/customers`` and ``/v1/customers/{customer}``
(form-encoded bodies, update by POST) and the transforms that give Stripe's envelopes.
``stripe.api_base`` points at the engine on 127.0.0.1 only.
"""
from __future__ import annotations

import re

import pytest
import stripe  # a dev dependency: a missing SDK is an install error, not a skip

from tests.helpers import make_config, start_engine

pytestmark = pytest.mark.integration

STRIPE_ERRORS = {"wrap": "error",
                 "fields": {"message": "message", "type": "type", "code": "code",
                            "id": "param"},
                 "typeMap": {"NOT_FOUND": "invalid_request_error",
                             "CONFLICT": "invalid_request_error",
                             "VALIDATION_ERROR": "invalid_request_error"},
                 "codeMap": {"NOT_FOUND": "resource_missing", "CONFLICT": "resource_exists",
                             "VALIDATION_ERROR": "parameter_invalid"}}


def stripe_config() -> dict:
    def mock(mock_id: str, method: str, path: str) -> dict:
        # Stripe answers 200 to every success, creates included.
        return {"id": mock_id, "type": "http", "http": {
            "matcher": {"method": method, "path": path},
            "response": {"statusCode": 200, "headers": {"Request-Id": "req_{{uuid.short}}"}}}}

    return make_config(
        mock("customers-list", "GET", "/v1/customers"),
        mock("customers-create", "POST", "/v1/customers"),
        mock("customers-retrieve", "GET", "/v1/customers/{customer}"),
        mock("customers-update", "POST", "/v1/customers/{customer}"),
        mock("customers-delete", "DELETE", "/v1/customers/{customer}"),
        tables=[{
            "name": "customers", "idStrategy": "prefix", "idPrefix": "cus_",
            "validation": {"fields": {"email": {"format": "email"}}},
            "response": {
                "timestamps": {"format": "unix", "fields": {"createdAt": "created"}},
                "fields": {"inject": {"object": "customer", "livemode": False},
                           "hide": ["updatedAt"]},
                "list": {"extraFields": {"object": "list", "url": "/v1/customers",
                                         "has_more": False}, "hideMeta": True},
                "delete": {"status": 200, "body": {"id": "{{item.id}}", "object": "customer",
                                                   "deleted": True}},
                "errors": STRIPE_ERRORS}}],
        extend=[{"mock": "customers-list", "table": "customers", "action": "list"},
                {"mock": "customers-create", "table": "customers", "action": "create"},
                {"mock": "customers-retrieve", "table": "customers", "action": "get"},
                {"mock": "POST /v1/customers/{customer}", "table": "customers",
                 "action": "patch"},
                {"mock": "customers-delete", "table": "customers", "action": "delete"}])


@pytest.fixture
def stripe_at_mock(tmp_path, monkeypatch):
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    monkeypatch.setenv("no_proxy", "127.0.0.1")
    with start_engine(tmp_path, stripe_config()) as engine:
        assert engine.base.startswith("http://127.0.0.1:")
        monkeypatch.setattr(stripe, "api_key", "sk_test_mockd")
        monkeypatch.setattr(stripe, "api_base", engine.base)
        monkeypatch.setattr(stripe, "max_network_retries", 0)
        yield engine


def test_customer_lifecycle_with_the_official_sdk(stripe_at_mock):
    created = stripe.Customer.create(email="ada@example.com", name="Ada Lovelace",
                                     phone="+441234567890", metadata={"tier": "gold"})
    assert isinstance(created, stripe.Customer)
    assert re.fullmatch(r"cus_[0-9a-f]{16}", created.id)
    assert created.object == "customer" and created.livemode is False
    assert created.email == "ada@example.com" and created.phone == "+441234567890"
    assert created.metadata["tier"] == "gold"
    assert isinstance(created.created, int)

    fetched = stripe.Customer.retrieve(created.id)
    assert fetched.id == created.id and fetched.name == "Ada Lovelace"

    updated = stripe.Customer.modify(created.id, name="Ada King", metadata={"tier": "platinum"})
    assert updated.name == "Ada King" and updated.email == "ada@example.com"
    assert updated.metadata["tier"] == "platinum"

    deleted = stripe.Customer.delete(created.id)
    assert deleted.deleted is True and deleted.id == created.id

    with pytest.raises(stripe.InvalidRequestError) as raised:
        stripe.Customer.retrieve(created.id)
    assert raised.value.http_status == 404 and raised.value.code == "resource_missing"
    assert created.id in raised.value.user_message


def test_list_with_limit_and_starting_after(stripe_at_mock):
    ids = [stripe.Customer.create(email=f"user{index}@example.com").id for index in range(5)]
    newest_first = list(reversed(ids))

    first = stripe.Customer.list(limit=2)
    assert isinstance(first, stripe.ListObject) and first.object == "list"
    assert [customer.id for customer in first.data] == newest_first[:2]
    assert first.has_more is True

    second = stripe.Customer.list(limit=2, starting_after=first.data[-1].id)
    assert [customer.id for customer in second.data] == newest_first[2:4]
    assert second.has_more is True

    walked = [customer.id for customer in stripe.Customer.list(limit=2).auto_paging_iter()]
    assert walked == newest_first

    filtered = stripe.Customer.list(email="user3@example.com")
    assert [customer.id for customer in filtered.data] == [ids[3]]


def test_invalid_parameter_is_a_stripe_error(stripe_at_mock):
    with pytest.raises(stripe.InvalidRequestError) as raised:
        stripe.Customer.create(email="not-an-email")
    assert raised.value.http_status == 400 and raised.value.code == "parameter_invalid"
