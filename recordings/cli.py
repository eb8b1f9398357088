"""``mockd recordings`` and ``mockd convert``: recorded traffic from the command line."""
from __future__ import annotations

import click


@click.group("recordings")
def recordings_group() -> None:
    """List, show, export, convert and delete recordings."""


@click.command("convert")
def convert_command() -> None:
    """Convert proxy recordings to mocks."""
