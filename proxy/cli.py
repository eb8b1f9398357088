"""``mockd proxy``: the recording proxy and its CA from the command line."""
from __future__ import annotations

import click


@click.group("proxy")
def proxy_group() -> None:
    """Run the recording proxy and manage its CA."""
