"""Every config problem is reported, worded the same by the file loader and the admin API
(issue 14 item 5; ARCHITECTURE seam 1: errors name the key path)."""
from __future__ import annotations

import pytest
from pydantic import ValidationError

from mockd_project.runtime import runtime
from mocks.control import configuration, errors, mock_changes, workspaces
from mocks.core.errors import MAX_LISTED_ERRORS, ConfigError, ConfigIssue
from mocks.engine.control import EngineControl
from mocks.engine.core import Engine
from mocks.engine.snapshot import compile_snapshot
from mocks.loader import validate_config
from mocks.models import Mock
from tables.control import table_config_of
from tables.errors import TableError
from tables.operations import validation_message
from tables.operations_config import CustomOperationConfig

#: One mock with three mistakes: two unknown keys and a missing matcher.
THREE_MISTAKES = {"version": "1.0", "mocks": [
    {"id": "a", "colour": "red", "http": {"matcher": {"path": "/a", "mthod": "GET"}}},
    {"id": "b", "http": {"response": {"statusCode": 200}}},
]}


def test_config_error_single_problem_reads_as_path_and_reason():
    error = ConfigError("mocks[3].http.matcher.pathPattern", "bad regex")
    assert str(error) == "mocks[3].http.matcher.pathPattern: bad regex"
    assert error.errors == [ConfigIssue("mocks[3].http.matcher.pathPattern", "bad regex")]
    assert str(ConfigError("", "cannot read config file")) == "cannot read config file"


def test_config_error_several_problems_first_line_unchanged_rest_indented():
    error = ConfigError.of([ConfigIssue("a", "unknown key"), ConfigIssue("b.c", "too big")])
    assert (error.path, error.reason) == ("a", "unknown key")
    assert str(error) == "a: unknown key\n  b.c: too big"
    assert str(error).splitlines()[0] == str(ConfigError("a", "unknown key"))


def test_config_error_long_lists_are_summed_up_but_kept_whole():
    issues = [ConfigIssue(f"mocks[{index}].x", "unknown key") for index in range(25)]
    error = ConfigError.of(issues)
    lines = str(error).splitlines()
    assert len(lines) == MAX_LISTED_ERRORS + 1 and lines[-1] == "  ... and 5 more errors"
    assert error.errors == issues


def test_config_error_combine_keeps_every_problem_in_order():
    combined = ConfigError.combine([ConfigError("a", "x"), ConfigError.of(
        [ConfigIssue("b", "y"), ConfigIssue("c", "z")])])
    assert [str(issue) for issue in combined.errors] == ["a: x", "b: y", "c: z"]


def test_loader_lists_every_schema_error_with_file_wording():
    with pytest.raises(ConfigError) as caught:
        validate_config(THREE_MISTAKES)
    assert [str(issue) for issue in caught.value.errors] == [
        "mocks[0].http.matcher.mthod: unknown key",
        "mocks[0].colour: unknown key",
        "mocks[1].http.matcher: required field is missing",
    ]
    assert str(caught.value).splitlines()[0] == "mocks[0].http.matcher.mthod: unknown key"


def test_compile_names_every_mock_that_does_not_compile():
    config = validate_config({"mocks": [
        {"http": {"matcher": {"pathPattern": "("}}},
        {"http": {"matcher": {"path": "/ok"}}},
        {"http": {"matcher": {"pathPattern": "["}}}]})
    with pytest.raises(ConfigError) as caught:
        compile_snapshot(config)
    assert [issue.path for issue in caught.value.errors] == [
        "mocks[0].http.matcher.pathPattern", "mocks[2].http.matcher.pathPattern"]


# ---------------------------------------------------------------------------- admin side


@pytest.fixture
def engine(db):
    engine = Engine()
    previous = runtime.control
    runtime.control = EngineControl(engine)
    workspaces.ensure_default_workspace()
    yield engine
    runtime.control = previous


def test_admin_mock_body_lists_every_error_with_the_loader_wording(engine):
    with pytest.raises(errors.AdminError) as caught:
        mock_changes.create_mock({"type": "http", "colour": "red",
                                  "http": {"matcher": {"path": "/a", "mthod": "GET"}}})
    error = caught.value
    assert (error.status, error.code) == (400, "validation_error")
    assert error.message == "http.matcher.mthod: unknown key; colour: unknown key"
    assert error.issues == [ConfigIssue("http.matcher.mthod", "unknown key"),
                            ConfigIssue("colour", "unknown key")]
    assert Mock.objects.count() == 0


def test_admin_missing_field_uses_the_loader_wording(engine):
    with pytest.raises(errors.AdminError) as caught:
        mock_changes.create_mock({"type": "http", "http": {"response": {}}})
    assert caught.value.message == "http.matcher: required field is missing"


def test_admin_config_document_lists_schema_errors_as_the_file_loader_does(engine):
    with pytest.raises(ConfigError) as from_file:
        validate_config(THREE_MISTAKES)
    with pytest.raises(errors.AdminError) as from_admin:
        configuration.parse_config_document(THREE_MISTAKES)
    assert from_admin.value.message == "; ".join(str(issue) for issue in from_file.value.errors)


def test_admin_config_document_lists_every_compile_error(engine):
    with pytest.raises(errors.AdminError) as caught:
        configuration.parse_config_document({"mocks": [
            {"http": {"matcher": {"pathPattern": "("}}},
            {"http": {"matcher": {"pathPattern": "["}}}]})
    fields = [issue.path for issue in caught.value.issues]
    assert fields == ["mocks[0].http.matcher.pathPattern", "mocks[1].http.matcher.pathPattern"]


def test_admin_bulk_lists_the_errors_of_every_item(engine):
    with pytest.raises(errors.AdminError) as caught:
        mock_changes.bulk_create([
            {"type": "http", "http": {"matcher": {"path": "/a"}}},
            {"type": "http", "bogus": 1, "http": {"matcher": {"path": "/b"}}},
            {"type": "http", "http": {"matcher": {"path": "c"}}}])
    assert caught.value.code == "validation_error"
    assert caught.value.message.startswith("[1].bogus: unknown key; [2].http.matcher.path: ")
    assert Mock.objects.count() == 0


def test_table_and_custom_operation_bodies_use_the_same_wording():
    with pytest.raises(TableError) as caught:
        table_config_of({"colour": "red", "idStrategy": "uuid"})
    assert caught.value.message == "name: required field is missing; colour: unknown key"
    with pytest.raises(ValidationError) as invalid:
        CustomOperationConfig.model_validate({"name": "op", "retries": 3, "steps": []})
    assert "retries: unknown key" in validation_message(invalid.value)


@pytest.mark.parametrize(("http", "message"), [
    pytest.param({"statefulBinding": {"table": "users"}},
                 "mocks[0].http.statefulBinding.action: required field is missing",
                 id="binding missing action"),
    pytest.param({"statefulBinding": {"action": "list", "colour": 1}},
                 "mocks[0].http.statefulBinding.colour: unknown key", id="binding unknown key"),
    pytest.param({"statefulBinding": {"action": "custom"}},
                 "mocks[0].http.statefulBinding: action 'custom' needs operation (the custom "
                 "operation name)", id="binding model rule"),
    pytest.param({"statefulBinding": {"table": "t", "action": "list",
                                      "response": {"create": {"status": 99}}}},
                 "mocks[0].http.statefulBinding.response.create.status: status must be an HTTP "
                 "status between 100 and 599, got 99", id="binding transform"),
    pytest.param({"statefulBinding": "users"},
                 "mocks[0].http.statefulBinding: Input should be a valid dictionary or instance "
                 "of StatefulBinding", id="binding not a mapping"),
    pytest.param({"sse": "no"}, "mocks[0].http.sse: Input should be a valid dictionary or "
                 "instance of SseConfig", id="sse not a mapping"),
    pytest.param({"chunked": [1]}, "mocks[0].http.chunked: Input should be a valid dictionary "
                 "or instance of ChunkedConfig", id="chunked not a mapping"),
    pytest.param({"validation": {"fields": {"a": {"type": "nope", "pattern": "("}}}},
                 "mocks[0].http.validation.fields.a.type: unknown type 'nope'; use one of "
                 "string, number, integer, boolean, array, object\n"
                 "  mocks[0].http.validation.fields.a.pattern: pattern does not compile: "
                 "missing ), unterminated subpattern at position 0", id="validation rules"),
    pytest.param({"sse": {"events": [{"retry": -1}]}, "statefulBinding": {"action": "get"}},
                 "mocks[0].http.sse.events[0].retry: Input should be greater than or equal to 0"
                 "\n  mocks[0].http.statefulBinding: action 'get' needs table (the table name)",
                 id="two lazily built blocks"),
])
def test_blocks_built_on_first_use_name_their_keys_as_before(http, message):
    """``sse``, ``chunked`` and ``statefulBinding`` are typed by import string (their models
    are built when such a block is first validated) and ``validation`` rules come from
    ``tables.rules``: the messages and key paths are the ones every other block gives."""
    with pytest.raises(ConfigError) as raised:
        validate_config({"mocks": [{"id": "m", "http": {"matcher": {"path": "/u"}, **http}}]})
    assert str(raised.value) == message
