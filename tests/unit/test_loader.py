"""Config loading: YAML/JSON, environment expansion, shorthand mocks, ids, key-path errors
(SPEC "Configuration file"; behavior notes §14)."""
from __future__ import annotations

import re

import pytest

from mocks.core.errors import ConfigError
from mocks.loader import (expand_environment, load_config_file, parse_config_text,
                                 validate_config)
from mocks.engine.snapshot import compile_snapshot


def test_expand_environment_braced_and_bare_forms():
    env = {"MOCKD_HOST": "api.test", "MOCKD_PORT": "8080"}
    assert expand_environment("${MOCKD_HOST}:$MOCKD_PORT", env) == "api.test:8080"


def test_expand_environment_keeps_unset_bare_names_and_jsonpaths():
    assert expand_environment("^/a$ $.items[0] $UNSET", {}) == "^/a$ $.items[0] $UNSET"
    assert expand_environment("x${MOCKD_UNSET}y", {}) == "xy"


def test_shorthand_mock_becomes_enabled_http_mock_with_generated_id():
    config = validate_config({"mocks": [{"matcher": {"path": "/a"},
                                         "response": {"body": "x"}}]})
    mock = config.mocks[0]
    assert mock.type == "http" and mock.enabled and mock.http.matcher.path == "/a"
    assert re.fullmatch(r"http_[0-9a-f]{16}", mock.id)


def test_type_is_inferred_from_the_protocol_key():
    config = validate_config({"mocks": [{"id": "o", "oauth": {
        "issuer": "http://x", "clients": [{"clientId": "c", "clientSecret": "s"}]}}]})
    assert config.mocks[0].type == "oauth"


def test_yaml_numbers_in_query_and_headers_become_text():
    config = validate_config({"mocks": [{"http": {"matcher": {
        "path": "/a", "queryParams": {"page": 1}, "headers": {"X-Flag": True}}}}]})
    matcher = config.mocks[0].http.matcher
    assert matcher.query_params == {"page": "1"} and matcher.headers == {"X-Flag": "true"}


def test_extension_keys_are_ignored_and_unknown_top_level_keys_rejected():
    assert validate_config({"x-anchors": {"a": 1}, "mocks": []}).mocks == []
    with pytest.raises(ConfigError) as caught:
        validate_config({"mokcs": []})
    assert str(caught.value) == "mokcs: unknown key"


@pytest.mark.parametrize("document,path", [
    pytest.param({"mocks": [{"http": {"matcher": {"path": "/a"},
                                      "response": {"delayMs": 40000}}}]},
                 "mocks[0].http.response.delayMs", id="delay over 30 s"),
    pytest.param({"mocks": [{"http": {"matcher": {"path": "/a"}, "priority": -1}}]},
                 "mocks[0].http.priority", id="negative priority"),
    pytest.param({"mocks": [{"http": {"matcher": {"path": "/a"},
                                      "response": {"body": "x", "bodyFile": "f"}}}]},
                 "mocks[0].http.response", id="body and bodyFile"),
    pytest.param({"mocks": [{"http": {"matcher": {"method": "FETCH", "path": "/a"}}}]},
                 "mocks[0].http.matcher.method", id="unknown method"),
    pytest.param({"mocks": [{"id": "a", "http": {"matcher": {"path": "/a"}}},
                            {"id": "a", "http": {"matcher": {"path": "/b"}}}]},
                 "mocks[1].id", id="duplicate id"),
    pytest.param({"serverConfig": {"httpPort": 70000}}, "serverConfig.httpPort",
                 id="port out of range"),
])
def test_schema_errors_name_the_key_path(document, path):
    with pytest.raises(ConfigError) as caught:
        validate_config(document)
    assert str(caught.value).startswith(path), str(caught.value)


def test_compile_errors_name_the_mock_index():
    config = validate_config({"mocks": [{"http": {"matcher": {"path": "/ok"}}},
                                        {"http": {"matcher": {"bodyPattern": "(x"}}}]})
    with pytest.raises(ConfigError) as caught:
        compile_snapshot(config)
    assert caught.value.path == "mocks[1].http.matcher.bodyPattern"


def test_parse_errors_give_line_and_column():
    with pytest.raises(ConfigError) as caught:
        parse_config_text("mocks:\n  - [unclosed\n", "bad.yaml")
    assert "bad.yaml: not valid YAML or JSON at line" in str(caught.value)


def test_top_level_must_be_a_mapping():
    with pytest.raises(ConfigError, match="top level must be a mapping"):
        parse_config_text("- a\n- b\n")


def test_load_config_file_reads_json(tmp_path):
    path = tmp_path / "mocks.json"
    path.write_text('{"version": "1.0", "mocks": [{"matcher": {"path": "/j"}}]}')
    assert load_config_file(path).mocks[0].http.matcher.path == "/j"


def test_numeric_version_is_accepted():
    assert validate_config({"version": 1.0}).version == "1.0"
