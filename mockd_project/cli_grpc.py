"""``mockd grpc add``: a gRPC mock from a ``.proto`` and one method's answer.

``mockd grpc add --proto greeter.proto --service helloworld.Greeter --method SayHello
--response '{"message": "Hi {{request.name}}"}' [--port 50051] [--reflection]`` posts a
``grpc`` mock to the admin API. The ``.proto`` text travels in the mock (``protoContent``),
so the server needs no access to the file, unless it imports other files of its own: then
the mock names the file (``protoFile``, absolute) and its folder (``importPaths``). A port a
gRPC mock already uses merges the new service into that mock (the answer says so).

Output: ``Created gRPC mock <id> on port <port> (<service>/<method>)`` or ``Merged into gRPC
mock <id> on port <port> (services: ...)``; ``--json`` prints the admin answer.

Source: issue "gRPC mocks" item 7; SPEC "Mocks" (port merging).
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import click

from mockd_project.cli_client import client_options, make_client

_IMPORT = re.compile(r'^\s*import\s+(?:public\s+|weak\s+)?"([^"]+)"', re.M)


class UsageProblem(click.ClickException):
    """A bad option value; shown as ``<option>: <reason>`` with exit status 2."""

    exit_code = 2

    def __init__(self, option: str, reason: str):
        super().__init__(f"{option}: {reason}")


def build_grpc_mock(*, proto: str, service: str, method: str, response: str | None,
                    port: int, reflection: bool, mock_id: str | None,
                    name: str | None) -> dict[str, Any]:
    """The mock document ``grpc add`` posts; raises :class:`UsageProblem` for an unreadable
    ``--proto`` or a ``--response`` that is not a JSON object."""
    path = Path(proto).expanduser()
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise UsageProblem("--proto", f"cannot read {proto}: {error.strerror}") from None
    block: dict[str, Any] = {"port": port}
    if any(not name.startswith("google/") for name in _IMPORT.findall(text)):
        block.update(protoFile=str(path.resolve()), importPaths=[str(path.resolve().parent)])
    else:
        block["protoContent"] = text
    if reflection:
        block["reflection"] = True
    entry: dict[str, Any] = {}
    if response is not None:
        try:
            entry["response"] = json.loads(response)
        except json.JSONDecodeError as error:
            raise UsageProblem("--response", f"not JSON: {error}") from None
        if not isinstance(entry["response"], dict):
            raise UsageProblem("--response", "must be a JSON object (the reply message)")
    block["services"] = {service: {"methods": {method: entry}}}
    mock: dict[str, Any] = {"type": "grpc", "name": name or f"{service}/{method}",
                            "grpc": block}
    if mock_id:
        mock["id"] = mock_id
    return mock


@click.group("grpc")
def grpc_group() -> None:
    """gRPC mocks."""


@grpc_group.command("add")
@click.option("--proto", required=True, type=click.Path(dir_okay=False),
              help="The .proto file that defines the service.")
@click.option("--service", required=True, help="Full service name (package.Service).")
@click.option("--method", "method", required=True, help="Method name (SayHello).")
@click.option("--response", default=None, metavar="JSON",
              help="Reply message as JSON (templates allowed); default: fake messages.")
@click.option("--port", type=click.IntRange(1, 65535), default=50051, show_default=True,
              help="gRPC port (a port in use by a gRPC mock merges into it).")
@click.option("--reflection", is_flag=True, help="Serve server reflection (grpcurl, Postman).")
@click.option("--id", "mock_id", default=None, help="Mock id (default: generated).")
@click.option("-n", "--name", default=None, help="Mock name.")
@click.option("--json", "as_json", is_flag=True, help="Print the admin answer as JSON.")
@client_options
def grpc_add(proto: str, service: str, method: str, response: str | None, port: int,
             reflection: bool, mock_id: str | None, name: str | None, as_json: bool,
             admin_url: str | None, api_key: str | None) -> None:
    """Add a gRPC mock for one method of a .proto service."""
    mock = build_grpc_mock(proto=proto, service=service, method=method, response=response,
                           port=port, reflection=reflection, mock_id=mock_id, name=name)
    post_port_mock(mock, kind="gRPC", port=port, created=f"{service}/{method}",
                   merged_noun="services", admin_url=admin_url, api_key=api_key,
                   as_json=as_json)


def post_port_mock(mock: dict[str, Any], *, kind: str, port: int, created: str,
                   merged_noun: str, admin_url: str | None, api_key: str | None,
                   as_json: bool) -> None:
    """``POST /mocks`` a mock that owns a port (gRPC, MQTT) and print the outcome:
    ``Created <kind> mock <id> on port <port> (<created>)`` or ``Merged into <kind> mock <id>
    on port <port> (<merged_noun>: a, b)``; ``as_json`` prints the admin answer. Admin errors
    (409 conflicts, 400 validation) surface as the client's ``ClientError``."""
    client = make_client(admin_url, api_key)
    try:
        answer = client.request("POST", "/mocks", json=mock)
    finally:
        client.close()
    if as_json:
        click.echo(json.dumps(answer, indent=2))
    elif isinstance(answer, dict) and answer.get("action") == "merged":
        click.echo(f"Merged into {kind} mock {answer['targetMockId']} on port {port} "
                   f"({merged_noun}: {', '.join(answer.get('totalServices', []))})")
    else:
        saved = answer.get("mock", answer) if isinstance(answer, dict) else {}
        click.echo(f"Created {kind} mock {saved.get('id')} on port {port} ({created})")


def register(group: click.Group) -> None:
    """Add ``mockd grpc`` to the ``mockd`` group."""
    group.add_command(grpc_group)
