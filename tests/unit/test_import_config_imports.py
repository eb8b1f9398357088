"""``imports:`` in a config file, expanded by the loader (SPEC "Import entry"; behavior
notes §6 reference resolution, §13, §15)."""
from __future__ import annotations

import json

import pytest
import yaml

from mocks.core.errors import ConfigError
from mocks.loader import load_config_file, validate_config
from mocks.engine.snapshot import compile_snapshot
from mocks.portability.importers.config_imports import ImportEntry

SPEC = {"openapi": "3.0.0", "info": {"title": "Shop", "version": "1"}, "paths": {
    "/items": {"get": {"operationId": "listItems", "responses": {}},
               "post": {"operationId": "createItem", "responses": {"201": {"description": ""}}}},
    "/items/{id}": {"get": {"operationId": "getItem", "responses": {}},
                    "delete": {"responses": {"204": {"description": ""}}}}}}


def write(tmp_path, config, spec=SPEC, spec_name="specs/shop.json"):
    spec_path = tmp_path / spec_name
    spec_path.parent.mkdir(parents=True, exist_ok=True)
    spec_path.write_text(json.dumps(spec))
    config_path = tmp_path / "mockd.yaml"
    config_path.write_text(yaml.safe_dump(config))
    return config_path


def test_imports_relative_path_with_prefix_gives_prefixed_ids(tmp_path):
    config = load_config_file(write(tmp_path, {"version": "1.0", "imports": [
        {"path": "specs/shop.json", "as": "shop"}]}))
    ids = [mock.id for mock in config.mocks]
    assert ids[:3] == ["shop.listItems", "shop.createItem", "shop.getItem"]
    assert ids[3].startswith("http_")
    assert config.imports == [ImportEntry(path="specs/shop.json", **{"as": "shop"})]


def test_imports_extend_binds_by_prefixed_id_operation_id_and_method_path(tmp_path):
    config = load_config_file(write(tmp_path, {
        "version": "1.0",
        "imports": [{"path": "specs/shop.json", "as": "shop"}],
        "tables": [{"name": "items"}],
        "extend": [{"mock": "shop.listItems", "table": "items", "action": "list"},
                   {"mock": "createItem", "table": "items", "action": "create"},
                   {"mock": "DELETE /items/{id}", "table": "items", "action": "delete"}]}))
    assert [binding.mock for binding in config.extend][:2] == ["shop.listItems",
                                                              "shop.createItem"]
    assert config.extend[2].mock == "DELETE /items/{id}"
    compile_snapshot(config)  # every binding resolves


def test_imports_without_prefix_bind_by_operation_id_rewritten_to_the_id(tmp_path):
    config = load_config_file(write(tmp_path, {
        "version": "1.0", "imports": [{"path": "specs/shop.json"}],
        "tables": [{"name": "items"}],
        "extend": [{"mock": "getItem", "table": "items", "action": "get"}]}))
    get_item = next(mock for mock in config.mocks if mock.name == "getItem")
    assert config.extend[0].mock == get_item.id


def test_imports_come_after_own_mocks_and_an_own_mock_overrides_the_same_id(tmp_path):
    own = {"id": "shop.getItem", "http": {"matcher": {"method": "GET", "path": "/items/{id}"},
                                          "response": {"statusCode": 418}}}
    config = load_config_file(write(tmp_path, {
        "version": "1.0", "mocks": [own], "imports": [{"path": "specs/shop.json",
                                                       "as": "shop"}]}))
    assert config.mocks[0].id == "shop.getItem"
    assert config.mocks[0].http.response.status_code == 418
    assert [mock.id for mock in config.mocks].count("shop.getItem") == 1


def test_imports_format_override_and_other_formats(tmp_path):
    har = {"log": {"version": "1.2", "entries": [{
        "request": {"method": "GET", "url": "https://x.test/ping"},
        "response": {"status": 200, "headers": [], "content": {"text": "pong"}}}]}}
    config = load_config_file(write(tmp_path, {"version": "1.0", "imports": [
        {"path": "traffic.json", "format": "har"}]}, spec=har, spec_name="traffic.json"))
    assert [mock.id for mock in config.mocks] == ["imported-1"]


@pytest.mark.parametrize(("entry", "location", "reason"), [
    pytest.param({"path": "specs/missing.json"}, "imports[0].path", "file not found",
                 id="missing file"),
    pytest.param({}, "imports[0]", "give either path or url", id="neither"),
    pytest.param({"path": "a", "url": "https://x"}, "imports[0]", "give either path or url",
                 id="both"),
    pytest.param({"url": "ftp://x/spec"}, "imports[0]", "url must start with http",
                 id="bad url"),
    pytest.param({"path": "specs/shop.json", "prefix": "x"}, "imports[0].prefix",
                 "unknown key", id="unknown key"),
    pytest.param({"path": "specs/shop.json", "as": "a b"}, "imports[0].as",
                 "String should match pattern", id="bad prefix"),
    pytest.param({"path": "specs/shop.json", "format": "raml"}, "imports[0]",
                 "raml: unknown format", id="unknown format"),
])
def test_imports_errors_name_the_entry(tmp_path, entry, location, reason):
    with pytest.raises(ConfigError) as caught:
        load_config_file(write(tmp_path, {"version": "1.0", "imports": [entry]}))
    assert caught.value.path == location
    assert reason in caught.value.reason


def test_imports_malformed_spec_names_the_entry_and_the_place(tmp_path):
    broken = {"openapi": "3.0.0", "paths": {"/x": {"get": {"responses": "none"}}}}
    with pytest.raises(ConfigError) as caught:
        load_config_file(write(tmp_path, {"version": "1.0", "imports": [
            {"path": "specs/shop.json"}]}, spec=broken))
    assert str(caught.value) == ("imports[0]: openapi: nothing could be imported: 1 item "
                                 "skipped; first: paths./x.get: responses: expected a "
                                 "mapping, got a string")


def test_imports_unknown_binding_reference_is_still_reported(tmp_path):
    config = load_config_file(write(tmp_path, {
        "version": "1.0", "imports": [{"path": "specs/shop.json", "as": "shop"}],
        "tables": [{"name": "items"}],
        "extend": [{"mock": "shop.nothing", "table": "items", "action": "list"}]}))
    with pytest.raises(ConfigError) as caught:
        compile_snapshot(config)
    assert caught.value.reason == 'extend "shop.nothing": mock not found'


def test_imports_in_a_validated_document_are_typed_but_not_expanded():
    config = validate_config({"version": "1.0", "imports": [{"path": "x.json", "as": "x"}]})
    assert config.imports[0].as_prefix == "x" and config.mocks == []
