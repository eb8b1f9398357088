"""Names of the table vocabulary that the CLI needs without the config models.

Plain tuples, no pydantic: ``mockd stateful`` and ``--bind`` offer them as choices while a
client command imports nothing but click and httpx; :mod:`tables.config` takes them from
here. Source: SPEC "Table", "Extend binding".
"""
from __future__ import annotations

#: Actions a binding may name (SPEC "Extend binding").
ACTIONS = ("list", "get", "create", "update", "patch", "delete", "custom")
#: Identifier strategies (SPEC "Table").
ID_STRATEGIES = ("uuid", "prefix", "ulid", "sequence", "short")
