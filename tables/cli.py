"""Table commands of the ``mockd`` CLI (client commands: they talk to the admin API).

* ``mockd stateful add <name> [--id-field F] [--id-strategy S] [--id-prefix P]`` creates a
  table (``POST /state/resources``) and prints ``Created stateful resource: <name>``;
* ``mockd http add --path /api/users --stateful users`` (also ``mockd add``) creates the
  table when it is missing and five mocks bound to it with ``http.statefulBinding``:
  ``GET`` and ``POST`` on the path (list, create), ``GET``, ``PUT`` and ``DELETE`` on
  ``<path>/{id}`` (get, update, delete). A mock with the same method and path is updated.

:func:`register` adds ``stateful`` to the command group and the ``--stateful`` option to the
existing ``http add`` and ``add`` commands (their own behaviour is unchanged without it).

Source: SPEC "Command-line surface" (``stateful add``, ``http add --stateful``); behavior
notes §15 (``--stateful <table>`` + ``--path``: table and five bound mocks on ``base`` and
``base/{id}``).
"""
from __future__ import annotations

import json
from typing import Any

import click

from mockd_project.cli_client import ClientError, client_options, make_client

from .config import ID_STRATEGIES
from .operations_cli import custom_group

#: ``(action, method, on the item path)`` of the five mocks ``--stateful`` creates.
CRUD_MOCKS = (("list", "GET", False), ("create", "POST", False), ("get", "GET", True),
              ("update", "PUT", True), ("delete", "DELETE", True))


@click.group("stateful")
def stateful_group() -> None:
    """Stateful tables (in-memory CRUD data)."""


stateful_group.add_command(custom_group)  # mockd stateful custom validate|add|run|list|delete


@stateful_group.command("add")
@click.argument("name")
@click.option("--id-field", default="id", show_default=True, help="Identifier field.")
@click.option("--id-strategy", type=click.Choice(ID_STRATEGIES), default=None,
              help="How ids are generated (default uuid).")
@click.option("--id-prefix", default=None, help="Prefix of 'prefix' ids (e.g. cus_).")
@click.option("--json", "as_json", is_flag=True, help="Print the answer as JSON.")
@client_options
def stateful_add(name: str, id_field: str, id_strategy: str | None, id_prefix: str | None,
                 as_json: bool, admin_url: str | None, api_key: str | None) -> None:
    """Create a stateful resource (a table) named NAME."""
    definition: dict[str, Any] = {"name": name, "idField": id_field}
    if id_strategy:
        definition["idStrategy"] = id_strategy
    if id_prefix:
        definition["idPrefix"] = id_prefix
    client = make_client(admin_url, api_key)
    try:
        answer = client.request("POST", "/state/resources", json=definition)
    finally:
        client.close()
    if as_json:
        click.echo(json.dumps(answer, indent=2))
        return
    click.echo(f"Created stateful resource: {answer['name']}")
    click.echo(f"  ID field: {answer['idField']}")


def crud_mock_documents(table: str, path: str) -> list[dict[str, Any]]:
    """The five bound mock documents of ``--stateful`` (collection ``path``, item
    ``path/{id}``)."""
    base = path.rstrip("/") or "/"
    item_path = f"{base.rstrip('/')}/{{id}}"
    documents = []
    for action, method, on_item in CRUD_MOCKS:
        documents.append({"type": "http", "name": f"{table} {action}", "http": {
            "matcher": {"method": method, "path": item_path if on_item else base},
            "statefulBinding": {"table": table, "action": action}}})
    return documents


def add_stateful_crud(table: str, options: dict[str, Any]) -> None:
    """Create table ``table`` (if missing) and its five bound mocks; print what was done."""
    path = options.get("path")
    if not path:
        raise click.UsageError("--stateful needs --path (the collection path, e.g. /api/users)")
    client = make_client(options.get("admin_url"), options.get("api_key"))
    created_table = False
    try:
        existing_tables = client.request("GET", "/state")["resourceList"]
        if table not in existing_tables:
            client.request("POST", "/state/resources", json={"name": table})
            created_table = True
        listed = client.request("GET", "/mocks", params={"type": "http"})["mocks"]
        saved = []
        for document in crud_mock_documents(table, path):
            matcher = document["http"]["matcher"]
            same = next((mock for mock in listed if _same_route(mock, matcher)), None)
            if same is not None:
                answer = client.request("PUT", f"/mocks/{same['id']}", json=document)
                saved.append(("Updated", answer.get("mock", answer)))
            else:
                answer = client.request("POST", "/mocks", json=document)
                saved.append(("Created", answer.get("mock", answer)))
    finally:
        client.close()
    if options.get("as_json"):
        click.echo(json.dumps([mock for _, mock in saved], indent=2))
        return
    click.echo(f"{'Created' if created_table else 'Using'} stateful resource: {table}")
    for verb, mock in saved:
        matcher = mock["http"]["matcher"]
        binding = mock["http"].get("statefulBinding") or {}
        click.echo(f"{verb} mock: {mock['id']}")
        click.echo(f"  Method: {matcher.get('method')}  Path: {matcher.get('path')}  "
                   f"Action: {binding.get('action')}")


def _same_route(mock: dict[str, Any], matcher: dict[str, Any]) -> bool:
    current = ((mock.get("http") or {}).get("matcher")) or {}
    return (str(current.get("method") or "").upper() == matcher["method"]
            and current.get("path") == matcher["path"] and not current.get("pathPattern"))


def _with_stateful_option(command: click.Command) -> None:
    """Add ``--stateful TABLE`` to an ``http add``-style command, keeping its behaviour when
    the option is not given."""
    if any(parameter.name == "stateful" for parameter in command.params):
        return
    command.params.append(click.Option(
        ["--stateful"], default=None, metavar="TABLE",
        help="Create table TABLE (if missing) and five mocks bound to it on --path and "
             "--path/{id} (list, create, get, update, delete)."))
    original = command.callback

    def callback(*arguments: Any, **options: Any) -> Any:
        table = options.pop("stateful", None)
        if table:
            return add_stateful_crud(table, options)
        return original(*arguments, **options)

    command.callback = callback


def register(group: click.Group) -> None:
    """Add ``stateful`` to ``group`` and ``--stateful`` to its ``http add`` and ``add``."""
    group.add_command(stateful_group)
    http = group.commands.get("http")
    if isinstance(http, click.Group) and "add" in http.commands:
        _with_stateful_option(http.commands["add"])
    if "add" in group.commands:
        _with_stateful_option(group.commands["add"])


__all__ = ["ClientError", "add_stateful_crud", "crud_mock_documents", "register",
           "stateful_group"]
