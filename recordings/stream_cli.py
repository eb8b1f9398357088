"""``mockd stream-recordings``: WebSocket and SSE stream recordings from the command line.

===========================================  =================================================
``list [--protocol P] [--path P]``           ID PROTOCOL STATUS FRAMES PATH NAME
``[--status S] [--limit N] [--offset N]``
``show ID``                                  one recording and its frames or events
``export ID [-o FILE]``                      the recording as JSON (stdout or FILE)
``convert ID [--simplify-timing]``           a mock config (stdout or FILE) that
``[--min-delay MS] [--max-delay MS]``        ``POST /mocks`` accepts
``[-o FILE]``
``delete ID [--permanent]``                  soft delete (recoverable until vacuum)
``stats``                                    storage statistics
``vacuum``                                   remove soft-deleted recordings
``sessions``                                 active recording sessions
===========================================  =================================================

Every command takes ``--json`` (the admin API's answer as it is), ``--admin-url``,
``--api-key``, ``--data-dir`` and ``--ca-file``. Imports only click here; the admin client
(the standard library's http.client) loads when a command runs.

Source: SPEC "CLI" (``stream-recordings list/show/export/convert/delete/stats/vacuum/
sessions``), "Stream recordings".
"""
from __future__ import annotations

import json
from typing import Any

import click

from mockd_project.cli_client import call_admin, client_options, print_json


def _write(document: Any, output: str | None, what: str) -> None:
    """``document`` as JSON on stdout, or into ``output`` with a one-line note."""
    text = json.dumps(document, indent=2) + "\n"
    if output is None:
        click.echo(text, nl=False)
        return
    with open(output, "w", encoding="utf-8") as handle:
        handle.write(text)
    click.echo(f"Wrote {what} to {output}")


def _table(rows: list[tuple[str, ...]]) -> None:
    widths = [max(len(row[index]) for row in rows) for index in range(len(rows[0]))]
    for row in rows:
        click.echo("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())


@click.group("stream-recordings")
def stream_recordings_group() -> None:
    """List, show, export, convert and delete stream recordings."""


@stream_recordings_group.command("list")
@click.option("--protocol", type=click.Choice(["websocket", "sse"]), default=None)
@click.option("--path", default=None, help="Only recordings of this path.")
@click.option("--status", type=click.Choice(["recording", "complete", "incomplete",
                                             "corrupted"]), default=None)
@click.option("--limit", type=click.IntRange(0, 1000), default=100, show_default=True)
@click.option("--offset", type=click.IntRange(0), default=0, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print the answer as JSON.")
@client_options
def list_recordings(protocol: str | None, path: str | None, status: str | None, limit: int,
                    offset: int, as_json: bool, admin_url: str | None,
                    api_key: str | None) -> None:
    """List stream recordings, newest first (ID PROTOCOL STATUS FRAMES PATH NAME)."""
    params = {key: value for key, value in (("protocol", protocol), ("path", path),
                                            ("status", status)) if value}
    params.update(limit=str(limit), offset=str(offset))
    answer = call_admin(admin_url, api_key, "GET", "/stream-recordings", params=params)
    if as_json:
        print_json(answer)
        return
    recordings = answer.get("recordings", [])
    if not recordings:
        click.echo("No stream recordings")
        return
    rows = [("ID", "PROTOCOL", "STATUS", "FRAMES", "PATH", "NAME")]
    rows += [(r["id"], r["protocol"], r["status"], str(r["stats"]["frameCount"]),
              r["metadata"]["path"], r.get("name") or "") for r in recordings]
    _table(rows)
    if answer.get("total", 0) > len(recordings):
        click.echo(f"({len(recordings)} of {answer['total']}; use --offset for more)")


@stream_recordings_group.command("show")
@click.argument("recording_id", metavar="ID")
@click.option("--json", "as_json", is_flag=True, help="Print the answer as JSON.")
@client_options
def show(recording_id: str, as_json: bool, admin_url: str | None, api_key: str | None) -> None:
    """Show one recording and its frames (WebSocket) or events (SSE)."""
    document = call_admin(admin_url, api_key, "GET", f"/stream-recordings/{recording_id}")
    if as_json:
        print_json(document)
        return
    stats = document["stats"]
    click.echo(f"{document['id']}  {document['protocol']}  {document['status']}  "
               f"{document['metadata']['path']}  {document.get('name') or ''}")
    click.echo(f"started {document['startTime']}, {document['duration']:.0f} ms, "
               f"{stats['frameCount']} frames, {stats['bytesReceived']} bytes in, "
               f"{stats['bytesSent']} bytes out")
    if document["protocol"] == "websocket":
        for frame in document["websocket"]["frames"]:
            arrow = "->" if frame["direction"] == "c2s" else "<-"
            click.echo(f"{frame['relativeMs']:>10.1f} ms {arrow} {frame['type']:<6} "
                       f"{frame['data']}")
    else:
        for event in document["sse"]["events"]:
            event_id = f" id={event['id']}" if event.get("id") is not None else ""
            click.echo(f"{event['relativeMs']:>10.1f} ms {event['type']}{event_id}: "
                       f"{event['data']}")


@stream_recordings_group.command("export")
@click.argument("recording_id", metavar="ID")
@click.option("-o", "--output", type=click.Path(dir_okay=False, writable=True), default=None,
              help="Write the JSON to this file instead of stdout.")
@client_options
def export(recording_id: str, output: str | None, admin_url: str | None,
           api_key: str | None) -> None:
    """Export one recording as a JSON document."""
    document = call_admin(admin_url, api_key, "POST", f"/stream-recordings/{recording_id}/export")
    _write(document, output, f"recording {recording_id}")


@stream_recordings_group.command("convert")
@click.argument("recording_id", metavar="ID")
@click.option("--simplify-timing", is_flag=True, help="Round delays to 100 ms.")
@click.option("--min-delay", type=click.IntRange(0), default=None, metavar="MS",
              help="Shortest delay (ms).")
@click.option("--max-delay", type=click.IntRange(0), default=None, metavar="MS",
              help="Longest delay (ms).")
@click.option("-o", "--output", type=click.Path(dir_okay=False, writable=True), default=None,
              help="Write the mock config to this file instead of stdout.")
@client_options
def convert(recording_id: str, simplify_timing: bool, min_delay: int | None,
            max_delay: int | None, output: str | None, admin_url: str | None,
            api_key: str | None) -> None:
    """Convert a recording to a mock config (POST it to /mocks to serve it)."""
    body: dict[str, Any] = {"simplifyTiming": simplify_timing}
    if min_delay is not None:
        body["minDelay"] = min_delay
    if max_delay is not None:
        body["maxDelay"] = max_delay
    mock = call_admin(admin_url, api_key, "POST", f"/stream-recordings/{recording_id}/convert",
                 json=body)
    _write(mock, output, f"mock config {mock.get('id', '')}")


@stream_recordings_group.command("delete")
@click.argument("recording_id", metavar="ID")
@click.option("--permanent", is_flag=True, help="Delete at once instead of until vacuum.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@client_options
def delete(recording_id: str, permanent: bool, as_json: bool, admin_url: str | None,
           api_key: str | None) -> None:
    """Delete a recording (soft: recoverable until 'vacuum', unless --permanent)."""
    params = {"permanent": "true"} if permanent else None
    call_admin(admin_url, api_key, "DELETE", f"/stream-recordings/{recording_id}", params=params)
    if as_json:
        print_json({"deleted": recording_id, "permanent": permanent})
        return
    click.echo(f"Deleted stream recording {recording_id}"
               + ("" if permanent else " (until vacuum)"))


@stream_recordings_group.command("stats")
@click.option("--json", "as_json", is_flag=True, help="Print the answer as JSON.")
@client_options
def stats(as_json: bool, admin_url: str | None, api_key: str | None) -> None:
    """Storage statistics of stream recordings."""
    answer = call_admin(admin_url, api_key, "GET", "/stream-recordings/stats")
    if as_json:
        print_json(answer)
        return
    click.echo(f"{answer['count']} recordings ({answer['deleted']} deleted), "
               f"{answer['bytes']} of {answer['maxBytes']} bytes "
               f"({answer['usedPercent']:.1f}%), {answer.get('dropped', 0)} dropped"
               + ("; over the warning level" if answer.get("warning") else ""))


@stream_recordings_group.command("vacuum")
@click.option("--json", "as_json", is_flag=True, help="Print the answer as JSON.")
@client_options
def vacuum(as_json: bool, admin_url: str | None, api_key: str | None) -> None:
    """Remove soft-deleted recordings for good."""
    answer = call_admin(admin_url, api_key, "POST", "/stream-recordings/vacuum")
    if as_json:
        print_json(answer)
        return
    click.echo(f"Removed {answer['removed']} deleted stream recordings")


@stream_recordings_group.command("sessions")
@click.option("--json", "as_json", is_flag=True, help="Print the answer as JSON.")
@client_options
def sessions(as_json: bool, admin_url: str | None, api_key: str | None) -> None:
    """Active recording sessions (SESSION RECORDING PROTOCOL PATH FRAMES)."""
    answer = call_admin(admin_url, api_key, "GET", "/stream-recordings/sessions")
    if as_json:
        print_json(answer)
        return
    found = answer.get("sessions", [])
    if not found:
        click.echo("No active stream recording sessions")
        return
    _table([("SESSION", "RECORDING", "PROTOCOL", "PATH", "FRAMES")]
           + [(s["sessionId"], s["recordingId"], s["protocol"], s["path"],
               str(s["frameCount"])) for s in found])
