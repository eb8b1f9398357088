"""``mockd chaos …``: client commands for fault injection on a running server.

==============================  ==============================================================
``chaos status [--json]``       whether chaos is on, its global faults and rules, and the
                                statistics (``GET /chaos``, ``GET /chaos/stats``)
``chaos apply <profile>``       apply a named profile (``POST /chaos/profiles/{name}/apply``);
                                an unknown name prints the server's 404 message
``chaos off``                   turn chaos off (``PUT /chaos {"enabled": false}``)
``chaos profiles [--json]``     list the profiles with their descriptions
==============================  ==============================================================

Every command takes ``--admin-url``, ``--api-key`` and ``--data-dir``; a refusal by the server
prints ``Error: <message> (HTTP <status>)`` and exits 1, like the other client commands.

Source: behavior notes §1 "Chaos", §11, §15 (client commands).
"""
from __future__ import annotations

import json
from typing import Any

import click

from mockd_project.cli_client import call_admin, client_options, make_client


@click.group("chaos")
def chaos_group() -> None:
    """Fault injection: status, named profiles, off."""


def describe(config: dict[str, Any], stats: dict[str, Any]) -> list[str]:
    """The lines ``mockd chaos status`` prints for a config and its statistics."""
    if not config.get("enabled"):
        lines = ["Chaos: disabled"]
    else:
        lines = ["Chaos: enabled"]
        latency = config.get("latency")
        if latency:
            lines.append(f"  Latency:    {latency.get('min')}-{latency.get('max')} "
                         f"(probability {latency.get('probability')})")
        errors = config.get("errorRate")
        if errors:
            codes = errors.get("statusCodes") or [errors.get("defaultCode") or 500]
            lines.append(f"  Error rate: {errors.get('probability')} "
                         f"{', '.join(str(code) for code in codes)}")
        bandwidth = config.get("bandwidth")
        if bandwidth:
            lines.append(f"  Bandwidth:  {bandwidth.get('bytesPerSecond')} B/s")
        for index, rule in enumerate(config.get("rules") or []):
            faults = ", ".join(fault.get("type", "?") for fault in rule.get("faults") or [])
            methods = ",".join(rule.get("methods") or []) or "any method"
            lines.append(f"  Rule {index}:     {rule.get('pathPattern') or '(every path)'} "
                         f"[{methods}]: {faults or 'no faults'}")
        if config.get("seed") is not None:
            lines.append(f"  Seed:       {config['seed']}")
    lines.append(f"  Requests:   {stats.get('totalRequests', 0)}, faults injected "
                 f"{stats.get('injectedFaults', 0)} (latency {stats.get('latencyInjected', 0)}, "
                 f"errors {stats.get('errorsInjected', 0)}, timeouts "
                 f"{stats.get('timeoutsInjected', 0)}, bandwidth "
                 f"{stats.get('bandwidthInjected', 0)})")
    return lines


@chaos_group.command("status")
@click.option("--json", "as_json", is_flag=True, help="Print {config, stats} as JSON.")
@client_options
def status_command(as_json: bool, admin_url: str | None, api_key: str | None) -> None:
    """Show whether chaos is on, what it injects, and how often it did."""
    client = make_client(admin_url, api_key)
    try:
        config = client.request("GET", "/chaos")
        stats = client.request("GET", "/chaos/stats")
    finally:
        client.close()
    if as_json:
        click.echo(json.dumps({"config": config, "stats": stats}, indent=2))
        return
    click.echo("\n".join(describe(config, stats)))


@chaos_group.command("apply")
@click.argument("profile")
@client_options
def apply_command(profile: str, admin_url: str | None, api_key: str | None) -> None:
    """Apply the named chaos PROFILE (replaces the chaos config and turns chaos on)."""
    answer = call_admin(admin_url, api_key, "POST", f"/chaos/profiles/{profile}/apply")
    click.echo(answer.get("message", f"chaos profile applied: {profile}"))


@chaos_group.command("off")
@client_options
def off_command(admin_url: str | None, api_key: str | None) -> None:
    """Turn chaos off."""
    call_admin(admin_url, api_key, "PUT", "/chaos", json={"enabled": False})
    click.echo("Chaos disabled")


@chaos_group.command("profiles")
@click.option("--json", "as_json", is_flag=True, help="Print the profiles as JSON.")
@client_options
def profiles_command(as_json: bool, admin_url: str | None, api_key: str | None) -> None:
    """List the named chaos profiles."""
    profiles = call_admin(admin_url, api_key, "GET", "/chaos/profiles")
    if as_json:
        click.echo(json.dumps(profiles, indent=2))
        return
    for profile in profiles:
        click.echo(f"{profile['name']:<14} {profile['description']}")
