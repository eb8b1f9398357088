"""Errors of table operations: one class carrying ``code``, ``status`` and ``hint`` (STYLE §6).

Every protocol adapter maps :attr:`TableError.code` to its own wire form; the HTTP binding
answers ``status`` with :meth:`TableError.body` (or the ``errors`` transform of it).

Codes and statuses (behavior notes §6): ``NOT_FOUND`` 404, ``CONFLICT`` 409,
``VALIDATION_ERROR`` 400, ``PAYLOAD_TOO_LARGE`` 413, ``CAPACITY_EXCEEDED`` 507,
``INTERNAL_ERROR`` 500. Messages are the ones users of the original tool know:
``resource "users" item "42" not found``, ``resource "users" not found``,
``resource "users" item "42" already exists``, ``validation failed``,
``resource "users" has reached its maximum capacity of N items``.

No Django.
"""
from __future__ import annotations

from typing import Any

NOT_FOUND = "NOT_FOUND"
CONFLICT = "CONFLICT"
VALIDATION_ERROR = "VALIDATION_ERROR"
PAYLOAD_TOO_LARGE = "PAYLOAD_TOO_LARGE"
CAPACITY_EXCEEDED = "CAPACITY_EXCEEDED"
INTERNAL_ERROR = "INTERNAL_ERROR"
STATE_STORE_UNAVAILABLE = "STATE_STORE_UNAVAILABLE"

#: HTTP status of each code (anything else: 500).
STATUS_OF_CODE = {NOT_FOUND: 404, CONFLICT: 409, VALIDATION_ERROR: 400, PAYLOAD_TOO_LARGE: 413,
                  CAPACITY_EXCEEDED: 507, INTERNAL_ERROR: 500, STATE_STORE_UNAVAILABLE: 503}

#: Table write limit in bytes (behavior notes §18: 1 MiB).
MAX_WRITE_BYTES = 1024 * 1024


class TableError(Exception):
    """A table operation that cannot be done.

    Attributes:
        code: one of the codes above (``NOT_FOUND``, ...).
        status: the HTTP status of the code (404, 409, 400, 413, 507, 500).
        message: the user-facing message (the ``error`` of the default body).
        table: the table name ("" when not known).
        item_id: the item id concerned ("" when none).
        field: the first offending field of a validation failure ("" otherwise).
        hint: what to try next ("" when the message says it all).
        details: validation issues as ``{field, location, code, message, ...}`` dicts.
    """

    def __init__(self, code: str, message: str, *, table: str = "", item_id: str = "",
                 field: str = "", hint: str = "", details: list[dict[str, Any]] | None = None):
        super().__init__(message)
        self.code = code
        self.status = STATUS_OF_CODE.get(code, 500)
        self.message = message
        self.table = table
        self.item_id = item_id
        self.field = field
        self.hint = hint
        self.details = details or []

    def body(self) -> dict[str, Any]:
        """The default error body: ``{"error", "resource", "id"?, "statusCode", "hint"?,
        "errors"?}`` (behavior notes §6; ``id`` omitted when empty)."""
        body: dict[str, Any] = {"error": self.message}
        if self.table:
            body["resource"] = self.table
        if self.item_id:
            body["id"] = self.item_id
        body["statusCode"] = self.status
        if self.hint:
            body["hint"] = self.hint
        if self.details:
            body["errors"] = self.details
        return body


def item_not_found(table: str, item_id: str) -> TableError:
    """404 ``resource "<table>" item "<id>" not found``."""
    return TableError(NOT_FOUND, f'resource "{table}" item "{item_id}" not found', table=table,
                      item_id=item_id)


def table_not_found(table: str) -> TableError:
    """404 ``resource "<table>" not found`` (no table of that name is defined)."""
    return TableError(NOT_FOUND, f'resource "{table}" not found', table=table,
                      hint="Define the table under 'tables' in the config, or create it with "
                           "POST /state/resources")


def item_exists(table: str, item_id: str) -> TableError:
    """409 ``resource "<table>" item "<id>" already exists``."""
    return TableError(CONFLICT, f'resource "{table}" item "{item_id}" already exists',
                      table=table, item_id=item_id)


def capacity_exceeded(table: str, max_items: int) -> TableError:
    """507 ``resource "<table>" has reached its maximum capacity of N items``."""
    return TableError(CAPACITY_EXCEEDED,
                      f'resource "{table}" has reached its maximum capacity of {max_items} items',
                      table=table, hint="Delete items, reset the table or raise maxItems")


class StateStoreUnavailable(TableError):
    """503: the shared state store (Redis) cannot be reached or keeps changing under a write.
    Its body is the admin error shape ``{"error": "state_store_unavailable", "message"}`` on
    every surface (issue #32 "Bad input")."""

    def __init__(self, message: str):
        super().__init__(STATE_STORE_UNAVAILABLE, message,
                         hint="Check the Redis server of --state-store")

    def body(self) -> dict[str, Any]:
        """``{"error": "state_store_unavailable", "message": ...}``."""
        return {"error": "state_store_unavailable", "message": self.message}


def bad_request(table: str, message: str, *, field: str = "") -> TableError:
    """400 with ``message`` (code ``VALIDATION_ERROR``): bad bodies, missing ids."""
    return TableError(VALIDATION_ERROR, message, table=table, field=field)


def too_large(table: str) -> TableError:
    """413 for a table write over 1 MiB, with the hint of behavior notes §6."""
    return TableError(PAYLOAD_TOO_LARGE, "request body too large", table=table,
                      hint="Reduce request body size to under 1MB")
