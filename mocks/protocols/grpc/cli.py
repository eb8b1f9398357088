"""``mockd grpc add``: a gRPC mock from a ``.proto`` and one method's answer.

``mockd grpc add --proto greeter.proto --service helloworld.Greeter --method SayHello
--response '{"message": "Hi {{request.name}}"}' [--port 50051] [--reflection]
[-I/--import-path DIR ...]`` posts a ``grpc`` mock to the admin API. The ``.proto`` is
compiled here, with its own folder and the ``--import-path`` folders searched for its
imports (as ``protoc -I``); its text travels in the mock (``protoContent``), and when it
imports files other than the built-in ones (Google's well-known and common protos) they
travel too (``protoFile`` + ``protoSources``, see :func:`mocks.protocols.grpc.protos.
inline_protos`). So the server reads no file of the user's and its ``importPaths``
confinement never applies. A port a gRPC mock already uses merges the new service into that
mock (the answer says so).

Output: ``Created gRPC mock <id> on port <port> (<service>/<method>)`` or ``Merged into gRPC
mock <id> on port <port> (services: ...)``; ``--json`` prints the admin answer.

Source: issue "gRPC mocks" item 7; SPEC "Mocks" (port merging); docs/grpc.md "Protos from
the wild".
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from mockd_project.cli_client import client_options, make_client


class UsageProblem(click.ClickException):
    """A bad option value; shown as ``<option>: <reason>`` with exit status 2."""

    exit_code = 2

    def __init__(self, option: str, reason: str):
        super().__init__(f"{option}: {reason}")


def build_grpc_mock(*, proto: str, service: str, method: str, response: str | None,
                    port: int, reflection: bool, mock_id: str | None,
                    name: str | None, import_paths: tuple[str, ...] = ()) -> dict[str, Any]:
    """The mock document ``grpc add`` posts: ``{type: grpc, name, grpc: {port, protoContent
    | protoFile + protoSources, reflection?, services: {service: {methods: {method:
    {response?}}}}}}``.

    Raises :class:`UsageProblem` for an unreadable ``--proto``, one that does not compile
    (protoc's message; an import found in a folder above the file is named, to pass as
    ``--import-path``), or a ``--response`` that is not a JSON object."""
    from mocks.core.errors import ConfigError
    from mocks.protocols.grpc.protos import inline_protos

    path = Path(proto).expanduser()
    try:
        path.read_bytes()
    except OSError as error:
        raise UsageProblem("--proto", f"cannot read {proto}: {error.strerror}") from None
    try:
        keys, _ = inline_protos(path, import_paths, key="--proto")
    except ConfigError as error:
        reason = error.errors[0].reason if error.errors else str(error)
        raise UsageProblem("--proto", reason) from None
    block: dict[str, Any] = {"port": port, **keys}
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
@click.option("-I", "--import-path", "import_paths", multiple=True, metavar="DIR",
              type=click.Path(exists=True, file_okay=False),
              help="A folder searched for the .proto's imports (repeatable), as protoc -I; "
                   "the files used are sent with the mock.")
@click.option("--id", "mock_id", default=None, help="Mock id (default: generated).")
@click.option("-n", "--name", default=None, help="Mock name.")
@click.option("--json", "as_json", is_flag=True, help="Print the admin answer as JSON.")
@client_options
def grpc_add(proto: str, service: str, method: str, response: str | None, port: int,
             reflection: bool, import_paths: tuple[str, ...], mock_id: str | None,
             name: str | None, as_json: bool, admin_url: str | None,
             api_key: str | None) -> None:
    """Add a gRPC mock for one method of a .proto service."""
    mock = build_grpc_mock(proto=proto, service=service, method=method, response=response,
                           port=port, reflection=reflection, mock_id=mock_id, name=name,
                           import_paths=import_paths)
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
