"""A multi-file OpenAPI spec (main file + ``./schemas/*.yaml``) imported through ``imports:``
into a real ``mockd engine``: plain requests match, generated bodies meet the schema's
``pattern``, lengths and ``required`` at every depth, a 302 carries ``Location``, and an API
key sent in the query is not a filter of a bound ``list`` (SPEC "Import and export",
"Extend binding"; OpenAPI import)."""
from __future__ import annotations

import re

import pytest

from tests.helpers import start_engine

pytestmark = pytest.mark.integration

MAIN = """
openapi: 3.0.3
info: {title: Shop, version: "1"}
components:
  securitySchemes:
    key: {type: apiKey, in: query, name: api_key}
security: [{key: []}]
paths:
  /customers/{id}:
    parameters:
      - {$ref: './schemas/parameters.yaml#/Id'}
    get:
      operationId: getCustomer
      parameters:
        - {name: expand, in: query, example: orders}
        - {name: X-Tenant, in: header, example: acme}
      responses:
        "200":
          description: one customer
          content:
            application/json:
              schema: {$ref: './schemas/customer.yaml#/Customer'}
  /customers:
    get:
      operationId: listCustomers
      parameters:
        - {name: api_key, in: query, example: k_123}
      responses:
        "200": {description: list}
  /old-customers/{id}:
    get:
      responses:
        "302":
          description: moved
          headers:
            Location: {schema: {type: string}, example: /customers/1}
  /broken:
    get:
      responses:
        "200": {$ref: '../outside.yaml#/Ok'}
"""

CUSTOMER = """
Customer:
  type: object
  required: [id, email, code, address, orders]
  properties:
    id: {type: string, pattern: '^cus_[A-Za-z0-9]{14}$'}
    email: {type: string, format: email}
    code: {type: string, pattern: '^[A-Z]{2}[0-9]{3,6}$', minLength: 6, maxLength: 7}
    nickname: {type: string, minLength: 12, maxLength: 12}
    address: {$ref: './address.yaml#/Address'}
    orders:
      type: array
      minItems: 2
      maxItems: 2
      items: {$ref: '#/Order'}
Order:
  type: object
  required: [number, customer]
  properties:
    number: {type: integer, minimum: 1000, maximum: 1999}
    customer: {$ref: '#/Customer'}
"""

ADDRESS = """
Address:
  type: object
  required: [city, zip]
  properties:
    city: {type: string, minLength: 3, maxLength: 3}
    zip: {type: string, pattern: '^[0-9]{5}$'}
"""

PARAMETERS = """
Id: {name: id, in: path, required: true, schema: {type: string}}
"""


def write_spec(directory):
    spec = directory / "specs"
    (spec / "schemas").mkdir(parents=True)
    (spec / "shop.yaml").write_text(MAIN)
    (spec / "schemas" / "customer.yaml").write_text(CUSTOMER)
    (spec / "schemas" / "address.yaml").write_text(ADDRESS)
    (spec / "schemas" / "parameters.yaml").write_text(PARAMETERS)
    (directory / "outside.yaml").write_text("Ok: {description: never read}\n")


def check_customer(customer: dict) -> None:
    assert re.fullmatch(r"cus_[A-Za-z0-9]{14}", customer["id"])
    assert customer["email"] == "user@example.com"
    assert re.search(r"^[A-Z]{2}[0-9]{3,6}$", customer["code"])
    assert 6 <= len(customer["code"]) <= 7
    assert len(customer.get("nickname", "x" * 12)) == 12
    assert len(customer["address"]["city"]) == 3
    assert re.fullmatch(r"[0-9]{5}", customer["address"]["zip"])


def test_multi_file_spec_served_through_imports(tmp_path):
    write_spec(tmp_path)
    config = {"version": "1.0", "imports": [{"path": "specs/shop.yaml", "as": "shop"}],
              "tables": [{"name": "customers", "seedData": [{"id": "c1", "name": "Ann"},
                                                            {"id": "c2", "name": "Bob"}]}],
              "extend": [{"mock": "shop.listCustomers", "table": "customers",
                          "action": "list"}]}
    with start_engine(tmp_path, config) as engine, \
            engine.client(follow_redirects=False) as client:
        answer = client.get("/customers/7")  # no query string, no X-Tenant header
        assert answer.status_code == 200, answer.text
        customer = answer.json()
        check_customer(customer)
        assert len(customer["orders"]) == 2
        for order in customer["orders"]:
            assert 1000 <= order["number"] <= 1999
            check_customer(order["customer"])  # required through the cycle, cut once
        moved = client.get("/old-customers/1")
        assert moved.status_code == 302 and moved.headers["location"] == "/customers/1"
        listed = client.get("/customers", params={"api_key": "k_123"})
        assert listed.status_code == 200
        assert sorted(item["name"] for item in listed.json()["data"]) == ["Ann", "Bob"]
        assert client.get("/broken").status_code == 404  # skipped: outside the folder
    log = (tmp_path / "engine.log").read_text()
    assert "paths./broken.get" in log and "points outside the spec's folder" in log
