"""An imported OpenAPI operation bound to a table, on a real ``mockd engine``: credentials
declared as plain required query parameters (Vonage's ``api_key`` and ``api_secret``) do not
filter the list, while a parameter that names a field of the items still does (SPEC "Query
behavior of list"; docs/import-export.md, docs/tables.md "List queries")."""
from __future__ import annotations

import pytest
import yaml

from tests.helpers import start_engine

pytestmark = pytest.mark.integration

#: Shaped like Vonage's Application API: the key and the secret are required query
#: parameters of every operation, with no security scheme naming them.
VONAGE = {
    "openapi": "3.0.0",
    "info": {"title": "Application API", "version": "2.0.0"},
    "components": {"parameters": {
        "api_key": {"name": "api_key", "in": "query", "required": True,
                    "schema": {"type": "string"}, "example": "abcd1234"},
        "api_secret": {"name": "api_secret", "in": "query", "required": True,
                       "schema": {"type": "string"}, "example": "ABCDEFGH01234abc"}}},
    "paths": {"/v2/applications": {"get": {
        "operationId": "listApplications",
        "parameters": [{"$ref": "#/components/parameters/api_key"},
                       {"$ref": "#/components/parameters/api_secret"},
                       {"name": "page_size", "in": "query", "schema": {"type": "integer"}},
                       {"name": "type", "in": "query", "schema": {"type": "string"}}],
        "responses": {"200": {"description": "OK"}}}}},
}

APPS = [{"id": "a1", "name": "chat", "type": "voice"},
        {"id": "a2", "name": "alerts", "type": "messages"},
        {"id": "a3", "name": "ivr", "type": "voice"}]


def test_declared_credentials_do_not_filter_a_bound_list_but_fields_do(tmp_path):
    (tmp_path / "vonage.yaml").write_text(yaml.safe_dump(VONAGE))
    config = {"version": "1.0", "imports": [{"path": "vonage.yaml", "as": "vonage"}],
              "tables": [{"name": "applications", "seedData": APPS}],
              "extend": [{"mock": "vonage.listApplications", "table": "applications",
                          "action": "list"}]}
    with start_engine(tmp_path, config) as engine, engine.client() as client:
        credentials = {"api_key": "abcd1234", "api_secret": "ABCDEFGH01234abc"}
        listed = client.get("/v2/applications", params=credentials)
        assert listed.status_code == 200, listed.text
        assert sorted(item["id"] for item in listed.json()["data"]) == ["a1", "a2", "a3"]
        voice = client.get("/v2/applications", params={**credentials, "type": "voice"})
        assert sorted(item["id"] for item in voice.json()["data"]) == ["a1", "a3"]
        none = client.get("/v2/applications", params={**credentials, "type": "sip"})
        assert none.json()["data"] == []
        paged = client.get("/v2/applications", params={**credentials, "page_size": "1",
                                                       "limit": "2"})
        assert paged.json()["meta"]["count"] == 2  # reserved names keep their meaning
