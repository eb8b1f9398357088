"""Partial imports and the Postman/Mockoon fixes, through real ``mockd start`` / ``mockd
engine`` processes and the ``mockd import`` command: an item that cannot be converted is
skipped with a warning naming it and the rest is served; an import of nothing exits 2;
``{{var}}`` in a Postman URL is matched literally unless ``--var`` gives it a value; ``:id``
is a path parameter; a Mockoon route in SEQUENTIAL mode answers its responses in turn."""
from __future__ import annotations

import json
import subprocess

import pytest

from tests.helpers import run_mockd, start_engine, start_server

pytestmark = pytest.mark.integration

COLLECTION = {
    "info": {"name": "Blog", "schema": "https://schema.getpostman.com/json/collection/v2.1.0/"
                                       "collection.json"},
    "variable": [{"key": "host", "value": "https://blog.example.com"}],
    "item": [
        {"name": "Post by slug", "request": {"method": "GET", "url": "{{host}}/posts/{{slug}}"},
         "response": [{"code": 200, "body": "a post"}]},
        {"name": "Odd verb", "request": {"method": "PROPFIND", "url": "{{host}}/dav"}},
        {"name": "Folder", "item": [
            {"name": "User", "request": {"method": "GET", "url": "{{host}}/users/:id"},
             "response": [{"code": 200, "body": "{\"user\": true}",
                           "header": [{"key": "Content-Type",
                                       "value": "application/json"}]}]}]},
    ],
}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    directory = tmp_path_factory.mktemp("partial")
    with start_server(directory) as process:
        process.directory = directory
        yield process


def cli(server, *args: str) -> subprocess.CompletedProcess:
    return run_mockd([*args, "--admin-url", server.admin], server.directory)


def write(server, name: str, document) -> str:
    path = server.directory / name
    path.write_text(json.dumps(document))
    return str(path)


def test_postman_bad_request_is_skipped_and_the_rest_is_served(server):
    done = cli(server, "import", write(server, "blog.json", COLLECTION), "--json")
    assert done.returncode == 0, done.stderr
    output = json.loads(done.stdout)
    assert output["imported"] == 2
    assert output["skipped"] == [{"item": "item[1] (Odd verb)", "reason": "request.method: "
                                  "method 'PROPFIND' cannot be mocked; use one of GET, POST, PUT, "
                                  "PATCH, DELETE, HEAD, OPTIONS"}]
    assert "skipped item[1] (Odd verb)" in done.stderr
    with server.client() as client:
        literal = client.get("/posts/%7B%7Bslug%7D%7D")
        assert (literal.status_code, literal.text) == (200, "a post")
        assert client.get("/posts/hello").status_code == 404
        user = client.get("/users/42")
        assert user.status_code == 200 and user.json() == {"user": True}


def test_postman_var_gives_a_variable_its_value(server):
    collection = {**COLLECTION, "item": [COLLECTION["item"][0]]}
    path = write(server, "blog-var.json", collection)
    done = cli(server, "import", path, "--var", "slug=first-post", "--json")
    assert done.returncode == 0, done.stderr
    with server.client() as client:
        assert client.get("/posts/first-post").text == "a post"
    bad = cli(server, "import", path, "--var", "slug")
    assert bad.returncode == 2 and "expected NAME=VALUE, got 'slug'" in bad.stderr


def test_import_of_nothing_exits_2_and_names_what_was_skipped(server):
    collection = {**COLLECTION, "item": [COLLECTION["item"][1]]}
    with server.admin_client() as admin:
        before = admin.get("/mocks").json()["total"]
        done = cli(server, "import", write(server, "nothing.json", collection))
        assert done.returncode == 2
        assert ("Error: postman: nothing could be imported: 1 item skipped; first: item[0] "
                "(Odd verb): request.method: method 'PROPFIND' cannot be mocked") in done.stderr
        assert admin.get("/mocks").json()["total"] == before


def test_mockoon_sequential_route_answers_in_turn(server):
    environment = {"name": "env", "port": 3000, "endpointPrefix": "", "routes": [
        {"uuid": "r1", "type": "http", "method": "get", "endpoint": "flaky",
         "responseMode": "SEQUENTIAL", "responses": [
             {"statusCode": 200, "body": "ok"}, {"statusCode": 503, "body": "down"}]}]}
    done = cli(server, "import", write(server, "mockoon.json", environment))
    assert done.returncode == 0, done.stderr
    with server.client() as client:
        answers = [(reply.status_code, reply.text)
                   for reply in (client.get("/flaky") for _ in range(3))]
    assert answers == [(200, "ok"), (503, "down"), (200, "ok")]


def test_config_imports_skip_bad_items_and_log_them_by_entry(tmp_path):
    (tmp_path / "blog.json").write_text(json.dumps(COLLECTION))
    config = {"version": "1.0", "imports": [{"path": "blog.json",
                                              "variables": {"slug": "hello"}}]}
    with start_engine(tmp_path, config) as engine, engine.client() as client:
        assert client.get("/posts/hello").text == "a post"
        assert client.get("/users/7").status_code == 200
    log = (tmp_path / "engine.log").read_text()
    assert "imports[0] (blog.json): skipped item[1] (Odd verb)" in log
