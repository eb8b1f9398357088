"""Mockoon environment import (behavior notes §13 "mockoon")."""
from __future__ import annotations

import base64
import json

import pytest

from mocks.portability.importers import ImportDocumentError, import_document
from mocks.portability.importers.mockoon import MockoonConversion
from tests.import_golden import assert_matches_golden, case_name, cases


@pytest.mark.parametrize("source", cases("mockoon"), ids=case_name)
def test_mockoon_golden_file_converts_to_expected_config(source):
    assert_matches_golden(source)


def environment(*routes, **extra):
    return json.dumps({"name": "e", "port": 3000, "endpointPrefix": "", "routes": list(routes),
                       **extra})


def route(endpoint="x", method="get", responses=None, **extra):
    return {"uuid": f"r-{endpoint}", "type": "http", "method": method, "endpoint": endpoint,
            "responses": responses or [{"statusCode": 200, "body": "ok"}], **extra}


@pytest.mark.parametrize(("helper", "template"), [
    ("{{urlParam 'id'}}", "{{request.pathParam.id}}"),
    ("{{queryParam 'q'}}", "{{request.query.q}}"),
    ("{{queryParam 'q' 'none'}}", "{{default request.query.q 'none'}}"),
    ("{{header 'X-Id'}}", "{{request.header.X-Id}}"),
    ('{{body "user.name"}}', "{{request.body.user.name}}"),
    ("{{bodyRaw}}", "{{request.rawBody}}"),
    ("{{method}}", "{{request.method}}"),
    ("{{uuid}}", "{{uuid}}"), ("{{guid}}", "{{uuid}}"),
    ("{{now 'YYYY'}}", "{{now}}"),
    ("{{int 5 9}}", "{{random.int(5, 9)}}"), ("{{float}}", "{{random.float(0, 100)}}"),
    ("{{boolean}}", "{{faker.boolean}}"),
    ("{{faker 'internet.email'}}", "{{faker.email}}"),
    ("{{faker 'name.firstName'}}", "{{faker.firstName}}"),
    ("{{faker 'finance.creditCardNumber'}}", "{{faker.creditCard}}"),
    ("{{faker 'music.genre'}}", "{{faker.word}}"),
    ("plain {{ urlParam 'id' }} text", "plain {{request.pathParam.id}} text"),
    ("{{#each items}}x{{/each}}", "\\{{#each items}}x\\{{/each}}"),
])
def test_mockoon_helpers_become_mockd_templates(helper, template):
    conversion = MockoonConversion({"routes": []})
    assert conversion.template(helper, "here") == template


def test_mockoon_translated_templates_compile_and_the_rest_is_literal():
    result = import_document(environment(route(responses=[{
        "statusCode": 200, "body": "{{faker 'person.lastName'}} {{oneOf (array 'a' 'b')}}"}])))
    assert result.mocks[0]["http"]["response"]["body"] == \
        "{{faker.lastName}} \\{{oneOf (array 'a' 'b')}}"
    assert any("'oneOf'" in warning for warning in result.warnings)


def test_mockoon_colon_parameters_become_braces_under_the_prefix():
    result = import_document(environment(route("orgs/:org/users/:user_id"),
                                         endpointPrefix="/api/"))
    assert result.mocks[0]["http"]["matcher"]["path"] == "/api/orgs/{org}/users/{user_id}"


def test_mockoon_disabled_routes_are_skipped_in_every_form():
    routes = [route("a", enabled=False), route("b"), route("c"), route("d")]
    by_list = import_document(environment(*routes, disabledRoutes=["r-b"]))
    assert [m["http"]["matcher"]["path"] for m in by_list.mocks] == ["/c", "/d"]
    by_map = import_document(environment(*routes, uuid="env1",
                                         disabledRoutes={"env1": ["r-c"], "other": ["r-d"]}))
    assert [m["http"]["matcher"]["path"] for m in by_map.mocks] == ["/b", "/d"]


def test_mockoon_each_response_is_a_mock_with_falling_priority():
    result = import_document(environment(route(responses=[
        {"uuid": "one", "statusCode": 200}, {"uuid": "two", "statusCode": 404},
        {"uuid": "three", "statusCode": 500}])))
    assert [(m["id"], m["http"]["priority"]) for m in result.mocks] == [
        ("one", 3), ("two", 2), ("three", 1)]


def test_mockoon_latency_adds_the_environment_latency_and_is_capped():
    result = import_document(environment(route(responses=[
        {"statusCode": 200, "latency": 100}, {"statusCode": 200, "latency": 40000}]),
        latency=25))
    delays = [m["http"]["response"].get("delayMs") for m in result.mocks]
    assert delays == [125, 30000]


def test_mockoon_disable_templating_keeps_everything_literal():
    result = import_document(environment(route(responses=[
        {"statusCode": 200, "body": "{{uuid}}", "disableTemplating": True,
         "headers": [{"key": "X-T", "value": "{{uuid}}"}]}])))
    response = result.mocks[0]["http"]["response"]
    assert response["body"] == "\\{{uuid}}" and response["headers"] == {"X-T": "\\{{uuid}}"}


@pytest.mark.parametrize(("document", "message"), [
    pytest.param({"port": 1, "routes": {}}, "mockoon: routes: expected a list of routes",
                 id="routes mapping"),
    pytest.param({"port": 1, "routes": [3]}, "mockoon: routes[0]: expected a mapping",
                 id="route number"),
    pytest.param({"port": 1, "routes": [{"type": "http", "responses": []}]},
                 "mockoon: nothing could be imported: 1 item skipped; first: routes[0] (GET /): "
                 "responses: expected a non-empty list", id="no responses"),
])
def test_mockoon_malformed_environment_names_the_place(document, message):
    with pytest.raises(ImportDocumentError) as caught:
        import_document(json.dumps(document))
    assert str(caught.value) == message


def test_mockoon_bad_route_is_skipped_and_the_others_import():
    result = import_document(json.dumps({"port": 1, "routes": [
        {"endpoint": "bad", "responses": [{"statusCode": "ok"}]},
        {"endpoint": "good", "responses": [{"statusCode": 201}]}]}))
    assert [mock["http"]["matcher"]["path"] for mock in result.mocks] == ["/good"]
    assert result.skipped == [{"item": "routes[0] (GET /bad)", "reason": "responses[0]"
                               ".statusCode: expected an HTTP status number"}]
    assert "skipped routes[0] (GET /bad): " in result.warnings[0]


@pytest.mark.parametrize("mode", ["SEQUENTIAL", "RANDOM"])
def test_mockoon_sequential_and_random_routes_become_one_mock_with_responses(mode):
    result = import_document(environment(route(responseMode=mode, responses=[
        {"statusCode": 200, "body": "first", "rules": [
            {"target": "query", "modifier": "x", "value": "1", "operator": "equals"}]},
        {"statusCode": 503, "body": "second", "latency": 5}])))
    [mock] = result.mocks
    http = mock["http"]
    assert http["responseMode"] == mode.lower()
    assert [answer["statusCode"] for answer in http["responses"]] == [200, 503]
    assert http["responses"][1]["delayMs"] == 5
    assert "queryParams" not in http["matcher"]  # rules do not apply in these modes
    assert result.warnings == []


def test_file_bodies_are_read_beside_the_environment_and_confined_to_its_folder(tmp_path):
    folder = tmp_path / "env"
    (folder / "bodies").mkdir(parents=True)
    (folder / "bodies" / "user.json").write_text('{"id": "{{urlParam \'id\'}}"}')
    png = b"\x89PNG\r\n\x1a\n\x00\xff\x00"
    (folder / "bodies" / "logo.png").write_bytes(png)
    (tmp_path / "secret.txt").write_text("not for import")
    responses = {"users/:id": "bodies/user.json", "logo": "bodies/logo.png",
                 "escape": "../secret.txt", "absolute": str(tmp_path / "secret.txt"),
                 "missing": "bodies/none.json", "templated": "bodies/{{urlParam 'id'}}.json"}
    (folder / "env.json").write_text(environment(*[
        route(endpoint, responses=[{"statusCode": 200, "bodyType": "FILE", "filePath": path}])
        for endpoint, path in responses.items()]))
    result = import_document(folder / "env.json")
    by_path = {mock["http"]["matcher"]["path"]: mock["http"]["response"] for mock in result.mocks}
    assert by_path["/users/{id}"]["body"] == '{"id": "{{request.pathParam.id}}"}'
    assert base64.b64decode(by_path["/logo"]["bodyBase64"]) == png
    assert by_path["/logo"]["headers"]["Content-Type"] == "image/png"
    for endpoint in ("escape", "absolute", "missing", "templated"):
        assert "body" not in by_path[f"/{endpoint}"] and "bodyBase64" not in by_path[f"/{endpoint}"]
    warnings = "\n".join(result.warnings)
    assert "'../secret.txt' leads outside the environment file's folder" in warnings
    assert "not found beside the environment file" in warnings
    assert "is templated; only a fixed path is read" in warnings
    assert "not for import" not in json.dumps(result.mocks)
    text_only = import_document(environment(route(responses=[
        {"statusCode": 200, "bodyType": "FILE", "filePath": "bodies/user.json"}])))
    assert "import the file itself, not its text" in "\n".join(text_only.warnings)
