"""``mockd recordings`` and ``mockd convert``: recorded traffic from the command line.

Client commands: they talk to the running server's admin API (``--admin-url``,
``--api-key``; see :mod:`mockd_project.cli_client`) and import click and the client only.

``mockd recordings list|show|export|convert|delete|clear --kind KIND`` (default ``http``)
works on one kind of recording through its routes: ``http`` ``/recordings`` (proxy
recordings), ``stream`` ``/stream-recordings``, ``soap`` ``/soap-recordings``, ``mqtt``
``/mqtt-recordings``. ``--session ID`` narrows ``list``, ``export``, ``convert`` and
``clear`` of HTTP recordings to one proxy session; ``--json`` prints the admin API's answer.

* ``list``: a table (``ID``, then per kind: method, path, status / protocol, path, status /
  operation, status, fault / topic, direction, client), ``--limit``, ``--offset``.
* ``show ID``: the recording as JSON.
* ``export [ID...]``: ``http``: ``POST /recordings/export`` (``--format json|yaml``, the ids
  or the session); ``stream``: one recording (``POST /stream-recordings/{id}/export``);
  ``soap``/``mqtt``: every one. ``-o FILE`` writes it, else stdout.
* ``convert [ID...]``: ``http``: creates the mocks (``POST /recordings/convert``) and prints
  their ids; ``soap``/``mqtt``: prints the converted mock config (``POST
  /<kind>-recordings/convert``; create it with ``POST /mocks``); ``stream``: one recording
  (``POST /stream-recordings/{id}/convert``).
* ``delete ID...``, ``clear`` (asks unless ``--yes``).

``mockd convert -o FILE [--session ID] [--deduplicate/--no-deduplicate] [--include-headers]
[--stateful]`` converts the HTTP recordings into a config file (YAML, or JSON when FILE ends
in ``.json``) that ``mockd start -c FILE`` serves: it sends ``POST /recordings/convert`` with
``"create": false`` (nothing is created on the server) and writes the ``config`` it answers.

Errors are one line ``Error: <the server's message> (HTTP <status>)``, exit status 1.

Source: SPEC "Command-line surface" (``<cli> convert -o <file>``), "Proxy, CA and
recordings"; behavior notes §1 "Proxy, CA, sessions, recordings".
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from mockd_project.cli_client import ClientError, client_options, make_client

#: The admin route prefix of each kind.
PREFIXES = {"http": "/recordings", "stream": "/stream-recordings",
            "soap": "/soap-recordings", "mqtt": "/mqtt-recordings"}
#: The columns ``list`` shows per kind: (title, how to read it from a recording).
COLUMNS: dict[str, list[tuple[str, Any]]] = {
    "http": [("METHOD", lambda r: (r.get("request") or {}).get("method")),
             ("PATH", lambda r: (r.get("request") or {}).get("path")),
             ("STATUS", lambda r: (r.get("response") or {}).get("statusCode")),
             ("TIME", lambda r: r.get("timestamp"))],
    "stream": [("PROTOCOL", lambda r: r.get("protocol")),
               ("PATH", lambda r: (r.get("metadata") or {}).get("path")),
               ("STATUS", lambda r: r.get("status")),
               ("FRAMES", lambda r: (r.get("stats") or {}).get("frameCount")),
               ("START", lambda r: r.get("startTime"))],
    "soap": [("OPERATION", lambda r: r.get("operation")),
             ("PATH", lambda r: r.get("path")),
             ("STATUS", lambda r: r.get("statusCode")),
             ("FAULT", lambda r: "yes" if r.get("fault") else "")],
    "mqtt": [("TOPIC", lambda r: r.get("topic")),
             ("DIRECTION", lambda r: r.get("direction")),
             ("CLIENT", lambda r: r.get("clientId"))],
}


def kind_option(function: Any) -> Any:
    """``--kind http|stream|soap|mqtt`` (default ``http``)."""
    return click.option("--kind", type=click.Choice(list(PREFIXES)), default="http",
                        show_default=True, help="Which recordings.")(function)


def session_option(function: Any) -> Any:
    """``--session ID`` (HTTP recordings of one proxy session)."""
    return click.option("--session", "session_id", default=None, metavar="ID",
                        help="Only this proxy session's recordings (--kind http).")(function)


def json_option(function: Any) -> Any:
    """``--json``."""
    return click.option("--json", "as_json", is_flag=True,
                        help="Print the admin API's answer as JSON.")(function)


def _echo_json(document: Any) -> None:
    click.echo(json.dumps(document, indent=2, ensure_ascii=False))


def _only_http(kind: str, session_id: str | None) -> None:
    if session_id is not None and kind != "http":
        raise click.UsageError("--session applies to --kind http only")


def _one_id(kind: str, ids: tuple[str, ...], command: str) -> str:
    if len(ids) != 1:
        raise click.UsageError(f"{command} --kind {kind} takes exactly one recording id")
    return ids[0]


def _save(output: str, text: str) -> None:
    try:
        Path(output).write_text(text, encoding="utf-8")
    except OSError as error:
        raise ClientError(f"cannot write {output}: {error.strerror}") from None


def _write(text: str, output: str | None) -> None:
    if output is None:
        click.echo(text, nl=not text.endswith("\n"))
        return
    _save(output, text)
    click.echo(f"Wrote {output}", err=True)


@click.group("recordings")
def recordings_group() -> None:
    """List, show, export, convert and delete recordings (HTTP proxy recordings by default;
    --kind stream|soap|mqtt for the others)."""


@recordings_group.command("list")
@kind_option
@session_option
@click.option("--limit", type=click.IntRange(1, 10_000), default=100, show_default=True)
@click.option("--offset", type=click.IntRange(0), default=0)
@json_option
@client_options
def list_recordings(kind: str, session_id: str | None, limit: int, offset: int,
                    as_json: bool, admin_url: str | None, api_key: str | None) -> None:
    """List recordings, oldest first."""
    _only_http(kind, session_id)
    params: dict[str, Any] = {"limit": limit, "offset": offset}
    if session_id:
        params["session"] = session_id
    answer = make_client(admin_url, api_key).request("GET", PREFIXES[kind], params=params)
    if as_json:
        _echo_json(answer)
        return
    rows = answer.get("recordings", []) if isinstance(answer, dict) else []
    if not rows:
        click.echo("No recordings.")
        return
    columns = [("ID", lambda r: r.get("id"))] + COLUMNS[kind]
    table = [[title for title, _ in columns]]
    table += [["" if read(row) is None else str(read(row)) for _, read in columns]
              for row in rows]
    widths = [min(max(len(line[index]) for line in table), 60)
              for index in range(len(columns))]
    for line in table:
        click.echo("  ".join(cell[:60].ljust(width) for cell, width in zip(line, widths))
                   .rstrip())
    total = answer.get("total", len(rows))
    if total > len(rows):
        click.echo(f"({len(rows)} of {total}; --offset {offset + len(rows)} for more)")


@recordings_group.command("show")
@click.argument("recording_id", metavar="ID")
@kind_option
@client_options
def show_recording(recording_id: str, kind: str, admin_url: str | None,
                   api_key: str | None) -> None:
    """Print one recording as JSON."""
    _echo_json(make_client(admin_url, api_key).request(
        "GET", f"{PREFIXES[kind]}/{recording_id}"))


@recordings_group.command("export")
@click.argument("ids", nargs=-1, metavar="[ID...]")
@kind_option
@session_option
@click.option("--format", "chosen_format", type=click.Choice(["json", "yaml"]), default="json",
              show_default=True, help="Export format (--kind http).")
@click.option("-o", "--output", default=None, metavar="FILE", help="Write to FILE.")
@client_options
def export_recordings(ids: tuple[str, ...], kind: str, session_id: str | None,
                      chosen_format: str, output: str | None, admin_url: str | None,
                      api_key: str | None) -> None:
    """Export recordings (all of the kind, or the ids / the session given)."""
    _only_http(kind, session_id)
    client = make_client(admin_url, api_key)
    if kind == "http":
        body: dict[str, Any] = {"format": chosen_format}
        if ids:
            body["recordingIds"] = list(ids)
        if session_id:
            body["sessionId"] = session_id
        response = client.fetch("POST", "/recordings/export", json=body)
        _write(response.text, output)
        return
    if kind == "stream":
        path = f"/stream-recordings/{_one_id(kind, ids, 'export')}/export"
    elif ids:
        raise click.UsageError(f"export --kind {kind} exports every recording; give no ids")
    else:
        path = f"{PREFIXES[kind]}/export"
    answer = client.request("POST", path, json={})
    _write(json.dumps(answer, indent=2, ensure_ascii=False) + "\n", output)


def convert_flags(function: Any) -> Any:
    """``--deduplicate/--no-deduplicate``, ``--include-headers``, ``--stateful``."""
    function = click.option("--stateful", is_flag=True,
                            help="CRUD traffic on a collection becomes a table with "
                                 "bindings.")(function)
    function = click.option("--include-headers", is_flag=True,
                            help="Keep the recorded response headers.")(function)
    return click.option("--deduplicate/--no-deduplicate", default=True, show_default=True,
                        help="Merge identical answers to the same request.")(function)


@recordings_group.command("convert")
@click.argument("ids", nargs=-1, metavar="[ID...]")
@kind_option
@session_option
@convert_flags
@json_option
@client_options
def convert_recordings(ids: tuple[str, ...], kind: str, session_id: str | None,
                       deduplicate: bool, include_headers: bool, stateful: bool,
                       as_json: bool, admin_url: str | None, api_key: str | None) -> None:
    """Convert recordings into mocks (HTTP: created on the server; SOAP, MQTT, stream: the
    converted config is printed)."""
    _only_http(kind, session_id)
    client = make_client(admin_url, api_key)
    body: dict[str, Any] = {}
    if ids and kind != "stream":
        body["recordingIds"] = list(ids)
    if kind == "http":
        body.update(deduplicate=deduplicate, includeHeaders=include_headers,
                    stateful=stateful)
        if session_id:
            body["sessionId"] = session_id
        answer = client.request("POST", "/recordings/convert", json=body)
        if as_json:
            _echo_json(answer)
            return
        click.echo(f"Created {answer['count']} mock(s): {', '.join(answer['mockIds'])}")
        for warning in answer.get("warnings", []):
            click.echo(f"warning: {warning}", err=True)
        return
    if kind == "stream":
        path = f"/stream-recordings/{_one_id(kind, ids, 'convert')}/convert"
    else:
        body["deduplicate"] = deduplicate
        path = f"{PREFIXES[kind]}/convert"
    _echo_json(client.request("POST", path, json=body))


@recordings_group.command("delete")
@click.argument("ids", nargs=-1, required=True, metavar="ID...")
@kind_option
@client_options
def delete_recordings(ids: tuple[str, ...], kind: str, admin_url: str | None,
                      api_key: str | None) -> None:
    """Delete recordings by id."""
    client = make_client(admin_url, api_key)
    for recording_id in ids:
        client.request("DELETE", f"{PREFIXES[kind]}/{recording_id}")
    click.echo(f"Deleted {len(ids)} recording(s)")


@recordings_group.command("clear")
@kind_option
@session_option
@click.option("--yes", is_flag=True, help="Do not ask.")
@client_options
def clear_recordings(kind: str, session_id: str | None, yes: bool, admin_url: str | None,
                     api_key: str | None) -> None:
    """Delete every recording of the kind (of the session, with --session)."""
    _only_http(kind, session_id)
    if not yes:
        what = f"session {session_id}'s" if session_id else f"every {kind}"
        click.confirm(f"Delete {what} recordings?", abort=True)
    client = make_client(admin_url, api_key)
    if kind == "stream":
        listed = client.request("GET", "/stream-recordings", params={"limit": 10_000})
        rows = listed.get("recordings", [])
        for row in rows:
            client.request("DELETE", f"/stream-recordings/{row['id']}")
        click.echo(f"Deleted {len(rows)} recording(s)")
        return
    params = {"session": session_id} if session_id else None
    answer = client.request("DELETE", PREFIXES[kind], params=params)
    click.echo(f"Deleted {answer.get('deleted', 0)} recording(s)")


@click.command("convert")
@click.option("-o", "--output", required=True, metavar="FILE",
              help="The config file to write (YAML; JSON when it ends in .json).")
@session_option
@convert_flags
@client_options
def convert_command(output: str, session_id: str | None, deduplicate: bool,
                    include_headers: bool, stateful: bool, admin_url: str | None,
                    api_key: str | None) -> None:
    """Convert proxy recordings to mocks: write a config file that 'mockd start -c FILE'
    serves (nothing is created on the server)."""
    body: dict[str, Any] = {"create": False, "deduplicate": deduplicate,
                            "includeHeaders": include_headers, "stateful": stateful}
    if session_id:
        body["sessionId"] = session_id
    answer = make_client(admin_url, api_key).request("POST", "/recordings/convert", json=body)
    document = answer["config"]
    if output.lower().endswith(".json"):
        text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    else:
        import yaml

        text = yaml.safe_dump(document, sort_keys=False, allow_unicode=True)
    _save(output, text)
    for warning in answer.get("warnings", []):
        click.echo(f"warning: {warning}", err=True)
    click.echo(f"Wrote {answer['count']} mock(s) to {output}; serve them with: "
               f"mockd start -c {output}")
