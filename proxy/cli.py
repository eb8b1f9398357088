"""``mockd proxy``: the recording proxy and its CA from the command line.

=============================================  ==============================================
``mockd proxy start [--port 8888] [--mode       asks the running server to start its proxy
record] [--session default] [--ca-path DIR]     (``POST /proxy/start``); prints where it
[--upstream-ca FILE] [--insecure-upstream]      listens and how to use it
[--host] [--fallthrough 502|forward]``
``mockd proxy stop``                            ``POST /proxy/stop``
``mockd proxy status [--json]``                 ``GET /proxy/status``
``mockd proxy mode MODE``                       ``PUT /proxy/mode``
``mockd proxy ca generate --ca-path DIR``       writes a new CA into DIR on this machine (no
                                                server needed); prints its fingerprint
``mockd proxy ca export -o FILE``               the server's CA certificate (``GET
                                                /proxy/ca/download``) into FILE (``-`` for
                                                stdout)
=============================================  ==============================================

Client commands load click and the admin client only; ``ca generate`` imports
:mod:`proxy.ca` (cryptography) when it runs. Paths given to ``start`` are made absolute here,
so the server (on this machine) reads the same files.

Source: SPEC "Command-line surface" (``proxy start/ca generate/ca export``: ``--port``,
``--ca-path``, ``-o``); behavior notes §1.
"""
from __future__ import annotations

import json
import os
from typing import Any

import click

from mockd_project.cli_client import ClientError, client_options, make_client

MODES = ("record", "passthrough", "playback")


def _call(admin_url: str | None, api_key: str | None, method: str, path: str,
          **kwargs: Any) -> Any:
    client = make_client(admin_url, api_key)
    try:
        return client.request(method, path, **kwargs)
    finally:
        client.close()


def _print_status(status: dict[str, Any], as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps(status, indent=2))
        return
    if not status.get("running"):
        click.echo("Proxy is not running")
        return
    address = f"{status.get('host', '127.0.0.1')}:{status.get('port')}"
    click.echo(f"Proxy running on http://{address}")
    click.echo(f"  Mode:        {status.get('mode')}")
    click.echo(f"  Session:     {status.get('sessionName', '')} ({status.get('sessionId')})")
    click.echo(f"  Recordings:  {status.get('recordingCount', 0)}")
    click.echo(f"  HTTPS:       {'intercepted (proxy CA)' if status.get('caEnabled') else 'tunnelled (no CA)'}")
    click.echo(f"  Uptime:      {status.get('uptime', 0)} s")


@click.group("proxy")
def proxy_group() -> None:
    """Run the recording proxy and manage its CA."""


@proxy_group.command("start")
@click.option("--port", type=click.IntRange(0, 65535), default=8888, show_default=True,
              help="Port of the proxy (0: any free port).")
@click.option("--mode", type=click.Choice(MODES), default="record", show_default=True)
@click.option("--session", "session", default="default", show_default=True,
              help="Name of the recording session.")
@click.option("--ca-path", type=click.Path(file_okay=False), default=None,
              help="CA directory (ca.crt, ca.key) used to intercept HTTPS.")
@click.option("--upstream-ca", type=click.Path(dir_okay=False, exists=True), default=None,
              help="PEM file of CAs trusted for origins, besides the system store.")
@click.option("--insecure-upstream", is_flag=True,
              help="Do not verify origin certificates.")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Interface the proxy listens on.")
@click.option("--fallthrough", type=click.Choice(["502", "forward"]), default="502",
              show_default=True, help="Playback with no matching recording: answer 502 or "
                                      "forward to the origin.")
@click.option("--json", "as_json", is_flag=True, help="Print the status as JSON.")
@client_options
def start_command(port: int, mode: str, session: str, ca_path: str | None,
                  upstream_ca: str | None, insecure_upstream: bool, host: str,
                  fallthrough: str, as_json: bool, admin_url: str | None,
                  api_key: str | None) -> None:
    """Start the running server's recording proxy."""
    body: dict[str, Any] = {"port": port, "mode": mode, "sessionName": session,
                            "host": host, "fallthrough": fallthrough}
    if ca_path:
        body["caPath"] = os.path.abspath(os.path.expanduser(ca_path))
    if upstream_ca:
        body["upstreamCa"] = os.path.abspath(upstream_ca)
    if insecure_upstream:
        body["insecureUpstream"] = True
    status = _call(admin_url, api_key, "POST", "/proxy/start", json=body)
    _print_status(status, as_json)
    if not as_json:
        url = f"http://{status.get('host', host)}:{status.get('port')}"
        click.echo(f"Use it with: HTTP_PROXY={url} HTTPS_PROXY={url}")


@proxy_group.command("stop")
@client_options
def stop_command(admin_url: str | None, api_key: str | None) -> None:
    """Stop the recording proxy."""
    status = _call(admin_url, api_key, "POST", "/proxy/stop")
    click.echo(f"Proxy stopped ({status.get('recordingCount', 0)} recordings in session "
               f"{status.get('sessionName', '')})")


@proxy_group.command("status")
@click.option("--json", "as_json", is_flag=True, help="Print the status as JSON.")
@client_options
def status_command(as_json: bool, admin_url: str | None, api_key: str | None) -> None:
    """Show whether the proxy runs, its port, mode and session."""
    _print_status(_call(admin_url, api_key, "GET", "/proxy/status"), as_json)


@proxy_group.command("mode")
@click.argument("mode", type=click.Choice(MODES))
@client_options
def mode_command(mode: str, admin_url: str | None, api_key: str | None) -> None:
    """Switch the running proxy to MODE."""
    status = _call(admin_url, api_key, "PUT", "/proxy/mode", json={"mode": mode})
    click.echo(f"Proxy mode: {status.get('mode')}")


@proxy_group.group("ca")
def ca_group() -> None:
    """The proxy CA: generate one, export the server's."""


@ca_group.command("generate")
@click.option("--ca-path", required=True, type=click.Path(file_okay=False),
              help="Directory to write ca.crt and ca.key (0600) into.")
def ca_generate(ca_path: str) -> None:
    """Write a new proxy CA into a directory on this machine."""
    from pathlib import Path

    from proxy.ca import CAError, generate_ca

    try:
        authority = generate_ca(Path(ca_path).expanduser())
    except FileExistsError as error:
        raise ClientError(f"{error}; choose another --ca-path") from None
    except CAError as error:
        raise ClientError(str(error)) from None
    info = authority.info()
    click.echo(f"CA written to {info.path}")
    click.echo(f"  Certificate: {Path(info.path) / 'ca.crt'}")
    click.echo(f"  Fingerprint: {info.fingerprint}")
    click.echo(f"  Expires:     {info.expires_at}")


@ca_group.command("export")
@click.option("-o", "--output", required=True, help="File to write the PEM into (- for stdout).")
@client_options
def ca_export(output: str, admin_url: str | None, api_key: str | None) -> None:
    """Write the server's proxy CA certificate (PEM) into a file."""
    pem = _call(admin_url, api_key, "GET", "/proxy/ca/download")
    if not isinstance(pem, str) or "BEGIN CERTIFICATE" not in pem:
        raise ClientError("the server did not answer with a PEM certificate")
    if output == "-":
        click.echo(pem, nl=False)
        return
    try:
        with open(output, "w", encoding="ascii") as handle:
            handle.write(pem)
    except OSError as error:
        raise ClientError(f"cannot write {output}: {error.strerror}") from None
    click.echo(f"CA certificate written to {output}")
