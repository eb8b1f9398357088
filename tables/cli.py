"""Table commands of the ``mockd`` CLI (client commands: they talk to the admin API).

* ``mockd stateful add <name> [--id-field F] [--id-strategy S] [--id-prefix P]`` creates a
  table (``POST /state/resources``) and prints ``Created stateful resource: <name>``;
* ``mockd http add --path /api/users --stateful users`` (also ``mockd add``) creates the
  table when it is missing and five mocks bound to it with ``http.statefulBinding``:
  ``GET`` and ``POST`` on the path (list, create), ``GET``, ``PUT`` and ``DELETE`` on
  ``<path>/{id}`` (get, update, delete). A mock with the same method and path is updated;
  one that also has other conditions (headers, query, body) is refused before anything is
  written, unless ``--replace`` (``mockd_project.cli_client.mock_to_update``).
* ``mockd http add --path /api/users/{id} --table users [--bind get]`` creates one mock bound
  to the existing table ``users`` (``http.statefulBinding: {table, action}``); without
  ``--bind`` the action follows from the method and whether the path ends in a ``{param}``
  (GET -> list or get, POST -> create, PUT -> update, PATCH -> patch, DELETE -> delete),
  and a combination with no sensible action is a usage error asking for ``--bind``.
* ``mockd http add --path /transfers -m POST --stateful-operation transfer`` creates one mock
  that runs the existing custom operation ``transfer`` (``http.statefulOperation``).

The bound mocks answer from the table or the operation, so ``--table`` and
``--stateful-operation`` exclude each other, ``--stateful``, and the flags that shape a
response (``--body``, ``--body-file``, ``--header``, ``--sse*``). The table or operation must
exist (checked first, so a typo fails clearly instead of making a mock that answers 404).

:func:`with_stateful_options` adds the ``--stateful`` option to the
existing ``http add`` and ``add`` commands (their own behaviour is unchanged without it),
and ``--stateful-operation``, ``--table`` and ``--bind`` likewise; those reshape the mock
document through ``run_http_add``'s ``mock_adjusters`` hook.

Source: SPEC "Command-line surface" (``stateful add``, ``http add --stateful``); behavior
notes §6 (``http.statefulBinding``; item id = the last ``{param}`` of the path), §9 (exactly
one of ``response``, ``sse``, ``chunked``, ``statefulOperation``, ``statefulBinding``), §15
(``--stateful <table>`` + ``--path``: table and five bound mocks on ``base`` and
``base/{id}``; ``--stateful-operation``, ``--table``, ``--bind``).
"""
from __future__ import annotations

import json
import re
from typing import Any, Callable

import click

from mockd_project.cli_client import (ClientError, client_options, make_client,
                                      mock_to_update)
from mockd_project.cli_lazy import LazyGroup
from tables.names import ACTIONS, ID_STRATEGIES

#: ``(action, method, on the item path)`` of the five mocks ``--stateful`` creates.
CRUD_MOCKS = (("list", "GET", False), ("create", "POST", False), ("get", "GET", True),
              ("update", "PUT", True), ("delete", "DELETE", True))


@click.group("stateful", cls=LazyGroup,
             # mockd stateful custom validate|add|run|list|delete (imports the table runtime)
             lazy_commands={"custom": "tables.operations_cli:custom_group"})
def stateful_group() -> None:
    """Stateful tables (in-memory CRUD data)."""




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
        listed = client.request("GET", "/mocks", params={"type": "http"})["mocks"]
        # Every mock is checked before anything is written: a refusal (a mock on the same
        # route with other conditions, without --replace) leaves the server as it was.
        documents = crud_mock_documents(table, path)
        targets = [mock_to_update(listed, document, replace=options.get("replace", False))
                   for document in documents]
        existing_tables = client.request("GET", "/state")["resourceList"]
        if table not in existing_tables:
            client.request("POST", "/state/resources", json={"name": table})
            created_table = True
        saved = []
        for document, same in zip(documents, targets):
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


#: Actions ``--bind`` accepts: ``custom`` runs an operation, which is ``--stateful-operation``.
BIND_ACTIONS = tuple(action for action in ACTIONS if action != "custom")
#: Actions that address one item: they need a ``{param}`` in the path (its last one is the id).
ITEM_ACTIONS = ("get", "update", "patch", "delete")
#: Default ``--bind`` by ``(method, path ends in a {param})``.
DEFAULT_ACTIONS = {("GET", False): "list", ("POST", False): "create", ("GET", True): "get",
                   ("PUT", True): "update", ("PATCH", True): "patch",
                   ("DELETE", True): "delete"}
#: Option names of ``http add`` that shape a response; a bound mock has none (notes §9).
RESPONSE_FLAGS = {"body": "--body", "body_file": "--body-file", "headers": "--header",
                  "sse": "--sse", "sse_events": "--sse-event", "sse_template": "--sse-template"}

_PARAMETER = re.compile(r"\{[^{}]+\}")


def bind_action(method: str, path: str | None, action: str | None) -> str:
    """The binding action of ``--table``: ``action`` (``--bind``) when given, else the
    default for ``method`` on ``path`` (:data:`DEFAULT_ACTIONS`; the path "ends in a
    ``{param}``" when its last segment holds one).

    Raises :class:`click.UsageError` when there is no default, or when an item action has
    no ``{param}`` in the path to take the id from (behavior notes §6).
    """
    segments = (path or "").rstrip("/").split("/")
    on_item = bool(_PARAMETER.search(segments[-1]))
    if action is None:
        action = DEFAULT_ACTIONS.get((method.upper(), on_item))
        if action is None:
            raise click.UsageError(
                f"--table needs --bind: no default action for {method.upper()} "
                f"{path or '(no --path)'}; choose one of {', '.join(BIND_ACTIONS)}")
    if action in ITEM_ACTIONS and not _PARAMETER.search(path or ""):
        raise click.UsageError(
            f"--bind {action} needs the item id in the path: give --path a {{param}}, e.g. "
            f"{(path or '/items').rstrip('/')}/{{id}}")
    return action


def _existing_names(options: dict[str, Any], route: str) -> list[str]:
    """Names of the server's tables (``/state``) or custom operations (``/state/operations``)."""
    client = make_client(options.get("admin_url"), options.get("api_key"))
    try:
        answer = client.request("GET", route)
    finally:
        client.close()
    if route == "/state":
        return list(answer["resourceList"])
    return [operation["name"] for operation in answer["operations"]]


def stateful_mock_adjuster(options: dict[str, Any], operation: str | None,
                           table: str | None, action: str | None
                           ) -> Callable[[dict[str, Any]], None]:
    """Check ``--stateful-operation`` / ``--table`` / ``--bind`` and return the function
    that turns the built mock document into a bound one (``response`` replaced by
    ``statefulOperation: <name>`` or ``statefulBinding: {table, action}``).

    Raises :class:`click.UsageError` for a flag combination that cannot work, and
    :class:`ClientError` when the table or operation does not exist on the server.
    """
    if operation and table:
        raise click.UsageError("use either --stateful-operation or --table, not both")
    if action and not table:
        raise click.UsageError("--bind needs --table (the table to bind the mock to)")
    given = [flag for name, flag in RESPONSE_FLAGS.items() if options.get(name)]
    if given:
        source = "table" if table else "operation"
        raise click.UsageError(f"a mock bound to a {source} answers from the {source}; "
                               f"drop {', '.join(given)}")
    if table:
        action = bind_action(options.get("method") or "GET", options.get("path"), action)
        if table not in _existing_names(options, "/state"):
            raise ClientError(f"table {table!r} not found; create it with 'mockd stateful "
                              f"add {table}' (or use --stateful {table} with --path)")
        binding = {"table": table, "action": action}
    elif operation not in _existing_names(options, "/state/operations"):
        raise ClientError(f"custom operation {operation!r} not found; register it with "
                          f"'mockd stateful custom add'")

    def adjust(mock: dict[str, Any]) -> None:
        http = mock["http"]
        # Exactly one answer source per mock (notes §9): the binding replaces the response.
        http.pop("response", None)
        if table:
            http["statefulBinding"] = binding
        else:
            http["statefulOperation"] = operation

    return adjust


def _with_stateful_option(command: click.Command) -> None:
    """Add ``--stateful TABLE``, ``--stateful-operation NAME``, ``--table TABLE`` and
    ``--bind ACTION`` to an ``http add``-style command, keeping its behaviour when none is
    given."""
    if any(parameter.name == "stateful" for parameter in command.params):
        return
    command.params.append(click.Option(
        ["--stateful"], default=None, metavar="TABLE",
        help="Create table TABLE (if missing) and five mocks bound to it on --path and "
             "--path/{id} (list, create, get, update, delete)."))
    command.params.append(click.Option(
        ["--stateful-operation", "stateful_operation"], default=None, metavar="NAME",
        help="The mock runs custom operation NAME (it must exist)."))
    command.params.append(click.Option(
        ["--table"], default=None, metavar="TABLE",
        help="Bind the mock to the existing table TABLE (see --bind)."))
    command.params.append(click.Option(
        ["--bind"], type=click.Choice(BIND_ACTIONS), default=None,
        help="Action of the --table binding (default from the method: GET list/get, POST "
             "create, PUT update, PATCH patch, DELETE delete; get/update/patch/delete need "
             "a {param} in --path)."))
    original = command.callback

    def callback(*arguments: Any, **options: Any) -> Any:
        table = options.pop("stateful", None)
        operation = options.pop("stateful_operation", None)
        bound_table = options.pop("table", None)
        action = options.pop("bind", None)
        if table:
            if operation or bound_table or action:
                raise click.UsageError("--stateful creates its own five bound mocks; it "
                                       "cannot be combined with --stateful-operation, "
                                       "--table or --bind")
            return add_stateful_crud(table, options)
        if operation or bound_table or action:
            adjust = stateful_mock_adjuster(options, operation, bound_table, action)
            options["mock_adjusters"] = (*options.get("mock_adjusters", ()), adjust)
        return original(*arguments, **options)

    command.callback = callback


def with_stateful_options(command: click.Command) -> None:
    """Add ``--stateful`` (and ``--stateful-operation``, ``--table``, ``--bind``) to
    ``mockd add`` or to the ``add`` of the ``mockd http`` group (the ``mockd`` group's
    ``COMMAND_EXTENSIONS``); a command that already has them is left alone."""
    if isinstance(command, click.Group):
        add = command.commands.get("add")
        if add is not None:
            _with_stateful_option(add)
    else:
        _with_stateful_option(command)


__all__ = ["ClientError", "add_stateful_crud", "bind_action", "crud_mock_documents",
           "stateful_group", "stateful_mock_adjuster", "with_stateful_options"]
