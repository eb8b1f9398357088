"""``mockd websocket …``: client commands for WebSocket mocks and their open connections.

==============================================  ===============================================
``websocket add --path P``                      create a ``websocket`` mock (``POST /mocks``)
``[--id ID] [--name N] [--echo]``               ``--match TYPE:VALUE=RESPONSE`` (repeatable)
``[--match …] [--default TEXT]``                answers a text message; ``--default`` answers
``[--subprotocol S …]``                         the others; ``--echo`` sends them back
``websocket connections [--mock ID]``           list the open connections
``websocket send ID DATA [--binary]``           send one message to a connection;
``websocket send ID --file F``                  ``--binary``: DATA is base64; ``--file``: the
                                                file's bytes as a binary message
``websocket broadcast DATA [--binary]``         send to every open connection (of ``--mock``)
``[--mock ID]``
``websocket close ID`` / ``close --mock ID``    close one connection / every connection of a
                                                mock (code 1000)
==============================================  ===============================================

``--match`` rule: ``TYPE`` is ``exact``, ``contains``, ``prefix``, ``suffix`` or ``regex`` and
ends at the first ``:``; ``VALUE`` ends at the first ``=`` not preceded by a backslash (write
``\\=`` for an ``=`` inside the value; other backslashes stay as written, so regexes keep
theirs); everything after that ``=`` is the response text, verbatim (it may contain ``=`` and
templates such as ``{{message}}``). So ``--match 'regex:^a\\=(\\d+)$=got {{message}}'`` answers
``a=12`` with ``got a=12``.

Output: one line (``Created websocket mock chat at /ws/chat``, ``Sent text message to
ws_…``); ``--json`` prints the admin API's answer instead. A bad option or argument prints
``Error: <option>: <what is wrong>`` and exits 2 before the server is contacted; a refusal
by the server prints ``Error: <the server's message> (HTTP <status>)`` and exits 1, like the
other client commands. Every command takes ``--admin-url``, ``--api-key`` and ``--data-dir``.

Source: behavior notes §1 ("Connections": WebSocket routes), §10 (``websocket`` row), §15
(client commands).
"""
from __future__ import annotations

import base64
import binascii
import re
from pathlib import Path
from typing import Any

import click

from mockd_project.cli_client import call_admin, client_options, print_json

#: Match types ``--match`` accepts (``json`` matches need a JSONPath: use the config file).
MATCH_TYPES = ("exact", "contains", "prefix", "suffix", "regex")

#: Exit status of a bad option or argument.
EXIT_USAGE = 2

# The value ends at the first "=" that no backslash escapes.
_VALUE_END = re.compile(r"(?<!\\)=")


class UsageProblem(click.ClickException):
    """A bad option or argument: ``Error: <option>: <message>`` on stderr, exit 2."""

    exit_code = EXIT_USAGE

    def __init__(self, option: str, message: str):
        super().__init__(f"{option}: {message}")

    def show(self, file: Any = None) -> None:
        """Print the one-line error."""
        click.echo(f"Error: {self.format_message()}", err=True)


def parse_match(text: str) -> dict[str, Any]:
    """``TYPE:VALUE=RESPONSE`` -> one ``matchers`` entry ``{match: {type, value}, response:
    {type: text, value}}`` (see the module docstring for the rule).

    Raises :class:`UsageProblem` naming ``--match``: no ``TYPE:``, an unknown type, no
    unescaped ``=``, an empty value, or a regex that does not compile.
    """
    kind, colon, rest = text.partition(":")
    if not colon or kind not in MATCH_TYPES:
        raise UsageProblem("--match", f"expected TYPE:VALUE=RESPONSE with TYPE one of "
                                      f"{', '.join(MATCH_TYPES)}; got {text!r}")
    end = _VALUE_END.search(rest)
    if end is None:
        raise UsageProblem("--match", f"no '=' between the value and the response in {text!r} "
                                      f"(write \\= for an '=' inside the value)")
    value = rest[:end.start()].replace("\\=", "=")
    if not value:
        raise UsageProblem("--match", f"empty value in {text!r}")
    if kind == "regex":
        try:
            re.compile(value)
        except re.error as error:
            raise UsageProblem("--match", f"bad regex {value!r}: {error}") from None
    return {"match": {"type": kind, "value": value},
            "response": {"type": "text", "value": rest[end.end():]}}


def build_websocket_mock(*, path: str, mock_id: str | None, name: str | None, echo: bool,
                         matches: tuple[str, ...], default: str | None,
                         subprotocols: tuple[str, ...]) -> dict[str, Any]:
    """The mock document ``websocket add`` posts; raises :class:`UsageProblem` for a bad
    ``--path`` or ``--match``."""
    if not path.startswith("/"):
        raise UsageProblem("--path", f"must start with '/', got {path!r}")
    block: dict[str, Any] = {"path": path}
    if subprotocols:
        block["subprotocols"] = list(subprotocols)
    if matches:
        block["matchers"] = [parse_match(text) for text in matches]
    if default is not None:
        block["defaultResponse"] = {"type": "text", "value": default}
    if echo:
        block["echoMode"] = True
    mock: dict[str, Any] = {"type": "websocket", "websocket": block}
    if mock_id:
        mock["id"] = mock_id
    if name:
        mock["name"] = name
    return mock


def message_body(data: str | None, binary: bool, file: str | None) -> dict[str, str]:
    """The ``{type, data}`` body of ``send`` / ``broadcast``: DATA as text, DATA as base64
    with ``--binary``, or the bytes of ``--file`` (binary). Raises :class:`UsageProblem`
    when neither or both of DATA and ``--file`` are given, for base64 that does not decode,
    or for a file that cannot be read."""
    if file is not None:
        if data is not None:
            raise UsageProblem("--file", "give either DATA or --file, not both")
        try:
            raw = Path(file).expanduser().read_bytes()
        except OSError as error:
            raise UsageProblem("--file", f"cannot read {file}: {error.strerror}") from None
        return {"type": "binary", "data": base64.b64encode(raw).decode("ascii")}
    if data is None:
        raise UsageProblem("DATA", "missing: give the message text (base64 with --binary) "
                                   "or --file")
    if not binary:
        return {"type": "text", "data": data}
    try:
        base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise UsageProblem("DATA", "with --binary, DATA must be standard base64 "
                                   f"(got {data[:40]!r})") from None
    return {"type": "binary", "data": data}


@click.group("websocket")
def websocket_group() -> None:
    """WebSocket mocks and their open connections."""


@websocket_group.command("add")
@click.option("--path", required=True, help="Path of the upgrade ({name} captures a segment).")
@click.option("--id", "mock_id", default=None, help="Mock id (default: generated).")
@click.option("-n", "--name", default=None, help="Mock name.")
@click.option("--echo", is_flag=True, help="Send unmatched messages back.")
@click.option("--match", "matches", multiple=True, metavar="TYPE:VALUE=RESPONSE",
              help="Answer matching text messages (repeatable; TYPE exact, contains, prefix, "
                   "suffix or regex; write \\= for '=' in VALUE).")
@click.option("--default", "default", default=None, metavar="TEXT",
              help="Answer to messages no --match matches (templates allowed).")
@click.option("--subprotocol", "subprotocols", multiple=True, metavar="NAME",
              help="Subprotocol offered (repeatable; the first the client also asks wins).")
@click.option("--json", "as_json", is_flag=True, help="Print the created mock as JSON.")
@client_options
def websocket_add(path: str, mock_id: str | None, name: str | None, echo: bool,
                  matches: tuple[str, ...], default: str | None, subprotocols: tuple[str, ...],
                  as_json: bool, admin_url: str | None, api_key: str | None) -> None:
    """Add a WebSocket mock."""
    mock = build_websocket_mock(path=path, mock_id=mock_id, name=name, echo=echo,
                                matches=matches, default=default, subprotocols=subprotocols)
    answer = call_admin(admin_url, api_key, "POST", "/mocks", json=mock)
    saved = answer.get("mock", answer)
    if as_json:
        print_json(saved)
        return
    click.echo(f"Created websocket mock {saved['id']} at {saved['websocket']['path']}")


@websocket_group.command("connections")
@click.option("--mock", "mock_id", default=None, metavar="ID", help="Only this mock's.")
@click.option("--json", "as_json", is_flag=True, help="Print the answer as JSON.")
@client_options
def websocket_connections(mock_id: str | None, as_json: bool, admin_url: str | None,
                          api_key: str | None) -> None:
    """List the open WebSocket connections (ID MOCK PATH CLIENT AGE RECEIVED SENT)."""
    path = (f"/mocks/{mock_id}/websocket/connections" if mock_id
            else "/websocket/connections")
    answer = call_admin(admin_url, api_key, "GET", path)
    if as_json:
        print_json(answer)
        return
    connections = answer.get("connections", [])
    if not connections:
        click.echo("No open WebSocket connections")
        return
    rows = [("ID", "MOCK", "PATH", "CLIENT", "AGE", "RECEIVED", "SENT")]
    rows += [(c["id"], c["mockId"], c["path"], c.get("clientIp", ""),
              f"{c.get('duration', 0):.1f}s", str(c.get("messagesReceived", 0)),
              str(c.get("messagesSent", 0))) for c in connections]
    widths = [max(len(row[index]) for row in rows) for index in range(len(rows[0]))]
    for row in rows:
        click.echo("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())


def _message_options(function: Any) -> Any:
    function = click.option("--file", "file", type=click.Path(dir_okay=False), default=None,
                            help="Send this file's bytes as a binary message.")(function)
    return click.option("--binary", is_flag=True,
                        help="DATA is base64: send its bytes as a binary message.")(function)


@websocket_group.command("send")
@click.argument("connection_id", metavar="CONNECTION_ID")
@click.argument("data", required=False, metavar="[DATA]")
@_message_options
@click.option("--json", "as_json", is_flag=True, help="Print the answer as JSON.")
@client_options
def websocket_send(connection_id: str, data: str | None, binary: bool, file: str | None,
                   as_json: bool, admin_url: str | None, api_key: str | None) -> None:
    """Send one message to an open connection (see 'mockd websocket connections')."""
    body = message_body(data, binary, file)
    answer = call_admin(admin_url, api_key, "POST",
                   f"/websocket/connections/{connection_id}/send", json=body)
    if as_json:
        print_json(answer)
        return
    click.echo(f"Sent {answer.get('type', body['type'])} message to {connection_id}")


@websocket_group.command("broadcast")
@click.argument("data", required=False, metavar="[DATA]")
@_message_options
@click.option("--mock", "mock_id", default=None, metavar="ID",
              help="Only the connections of this mock.")
@click.option("--json", "as_json", is_flag=True, help="Print the answer as JSON.")
@client_options
def websocket_broadcast(data: str | None, binary: bool, file: str | None,
                        mock_id: str | None, as_json: bool, admin_url: str | None,
                        api_key: str | None) -> None:
    """Send one message to every open connection (of --mock)."""
    body: dict[str, Any] = message_body(data, binary, file)
    if mock_id:
        body["mockId"] = mock_id
    answer = call_admin(admin_url, api_key, "POST", "/websocket/broadcast", json=body)
    if as_json:
        print_json(answer)
        return
    sent = answer.get("sent", 0)
    click.echo(f"Broadcast {body['type']} message to {sent} "
               f"connection{'' if sent == 1 else 's'}")


@websocket_group.command("close")
@click.argument("connection_id", required=False, metavar="[CONNECTION_ID]")
@click.option("--mock", "mock_id", default=None, metavar="ID",
              help="Close every connection of this mock instead.")
@click.option("--json", "as_json", is_flag=True, help="Print the answer as JSON.")
@client_options
def websocket_close(connection_id: str | None, mock_id: str | None, as_json: bool,
                    admin_url: str | None, api_key: str | None) -> None:
    """Close a connection, or every connection of a mock (close code 1000)."""
    if (connection_id is None) == (mock_id is None):
        raise UsageProblem("CONNECTION_ID", "give a connection id or --mock ID (one of them)")
    if mock_id is not None:
        answer = call_admin(admin_url, api_key, "DELETE", f"/mocks/{mock_id}/websocket/connections")
        line = f"Closed {answer.get('closed', 0)} connection(s) of mock {mock_id}"
    else:
        answer = call_admin(admin_url, api_key, "DELETE", f"/websocket/connections/{connection_id}")
        line = f"Closed connection {connection_id}"
    if as_json:
        print_json(answer)
        return
    click.echo(line)
