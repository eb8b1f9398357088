"""``mockd http add`` / ``mockd add http`` with ``--table`` + ``--bind`` and
``--stateful-operation`` against a real ``mockd start``: the created mock is bound to the
existing table or runs the existing custom operation, and flag mistakes fail clearly
(behavior notes §6, §9, §15)."""
from __future__ import annotations

import json
import subprocess

import pytest

from tests.helpers import make_config, run_mockd, start_server

pytestmark = pytest.mark.integration

RENAME = {"name": "rename", "steps": [
    {"type": "update", "resource": "books", "id": "input.id", "set": {"title": "input.title"},
     "as": "book"}], "response": {"title": "book.title"}}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    directory = tmp_path_factory.mktemp("tables-cli")
    config = make_config(tables=[{"name": "books", "seedData": [{"id": "b1", "title": "Dune"}]}],
                         customOperations=[RENAME])
    with start_server(directory, config) as process:
        process.directory = directory
        yield process


def cli(server, *args: str) -> subprocess.CompletedProcess:
    return run_mockd([*args, "--admin-url", server.admin], server.directory)


def test_table_without_bind_takes_the_action_from_method_and_path(server):
    item = cli(server, "http", "add", "--path", "/books/{id}", "--table", "books")
    assert item.returncode == 0, item.stderr
    lines = item.stdout.splitlines()
    assert lines[0].startswith("Created mock: http_")
    assert lines[1:] == ["  Type: http", "  Method: GET", "  Path: /books/{id}",
                         "  Table: books  Action: get"]
    collection = cli(server, "add", "http", "--path", "/books", "--table", "books")
    assert collection.returncode == 0, collection.stderr
    assert "  Table: books  Action: list" in collection.stdout
    create = cli(server, "add", "--path", "/books", "-m", "POST", "--table", "books")
    assert create.returncode == 0, create.stderr
    assert "  Table: books  Action: create" in create.stdout
    with server.client() as data:
        assert data.get("/books/b1").json()["title"] == "Dune"
        made = data.post("/books", json={"title": "Emma"})
        assert made.status_code == 201
        titles = [book["title"] for book in data.get("/books").json()["data"]]
        assert sorted(titles) == ["Dune", "Emma"]


def test_bind_chooses_the_action_and_the_mock_document_carries_the_binding(server):
    done = cli(server, "http", "add", "-m", "PUT", "--path", "/books/{id}", "--table", "books",
               "--bind", "patch", "--json")
    assert done.returncode == 0, done.stderr
    mock = json.loads(done.stdout)
    assert mock["http"]["statefulBinding"] == {"table": "books", "action": "patch"}
    assert "response" not in mock["http"]
    with server.client() as data:
        patched = data.put("/books/b1", json={"year": 1965})
        assert patched.status_code == 200
        assert (patched.json()["title"], patched.json()["year"]) == ("Dune", 1965)
    again = cli(server, "http", "add", "-m", "PUT", "--path", "/books/{id}", "--table", "books",
                "--bind", "update")
    assert again.returncode == 0 and again.stdout.startswith("Updated mock: ")
    assert "  Table: books  Action: update" in again.stdout


def test_stateful_operation_runs_the_operation(server):
    done = cli(server, "http", "add", "-m", "POST", "--path", "/books/{id}/rename",
               "--stateful-operation", "rename")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[1:] == ["  Type: http", "  Method: POST",
                                            "  Path: /books/{id}/rename", "  Operation: rename"]
    with server.client() as data:
        renamed = data.post("/books/b1/rename", json={"title": "Dune Messiah"})
        assert (renamed.status_code, renamed.json()) == (200, {"title": "Dune Messiah"})
        assert data.get("/books/b1").json()["title"] == "Dune Messiah"


@pytest.mark.parametrize(("arguments", "code", "message"), [
    (["-m", "POST", "--path", "/books/{id}", "--table", "books"], 2,
     "--table needs --bind: no default action for POST /books/{id}"),
    (["--path", "/books", "--table", "books", "--bind", "get"], 2,
     "--bind get needs the item id in the path"),
    (["--path", "/books", "--bind", "list"], 2, "--bind needs --table"),
    (["--path", "/books", "--table", "books", "--stateful-operation", "rename"], 2,
     "use either --stateful-operation or --table, not both"),
    (["--path", "/books", "--table", "books", "-b", "hello"], 2,
     "a mock bound to a table answers from the table; drop --body"),
    (["--path", "/books", "--stateful", "books", "--table", "books"], 2,
     "--stateful creates its own five bound mocks"),
    (["--path", "/shelves", "--table", "shelves"], 1, "table 'shelves' not found"),
    (["-m", "POST", "--path", "/x", "--stateful-operation", "ghost"], 1,
     "custom operation 'ghost' not found"),
], ids=["no default action", "item action without param", "bind without table",
        "table and operation", "response flag", "with --stateful", "unknown table",
        "unknown operation"])
def test_flag_mistakes_fail_clearly_and_create_nothing(server, arguments, code, message):
    with server.admin_client() as admin:
        before = admin.get("/mocks").json()["total"]
        done = cli(server, "http", "add", *arguments)
        assert done.returncode == code, done.stdout
        assert message in done.stderr
        assert admin.get("/mocks").json()["total"] == before
