"""Item identifiers and item timestamps of tables.

Identifier strategies (SPEC "Table", "Identifier strategies"):

=========  =====================================================================
uuid       UUID v4 text (``"3f0c…"``, 36 characters)
prefix     ``idPrefix`` + 16 random hex characters (``cus_4f1a9c0d2b3e8f71``)
ulid       26-character time-sortable ULID (Crockford base32, monotonic per process)
sequence   integers 1, 2, 3, ... continuing after the highest numeric seed id; reset to 0
           (then past the seeds) on a state reset — the counter lives on the runtime table
short      16 random hex characters
=========  =====================================================================

Every stored item is keyed by :func:`id_key` of its id value, so ``42`` and ``"42"`` name the
same item and a path segment ``/users/42`` finds either.

Timestamps are RFC 3339 UTC with nanoseconds (``2026-11-21T21:16:53.123456789Z``), strictly
increasing per :class:`Clock`, so ``createdAt`` order equals insertion order (the list query
relies on it).

No Django. Single owner: the engine loop.
"""
from __future__ import annotations

import math
import os
import secrets
import time
import uuid
from typing import Any

import orjson

_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def new_uuid() -> str:
    """A random UUID v4 as text."""
    return str(uuid.uuid4())


def new_short() -> str:
    """16 random lower-case hex characters."""
    return secrets.token_hex(8)


def new_prefixed(prefix: str) -> str:
    """``prefix`` + 16 random hex characters (Stripe-style ids such as ``cus_…``)."""
    return prefix + secrets.token_hex(8)


class UlidGenerator:
    """Monotonic ULIDs: 48-bit millisecond time + 80-bit randomness, Crockford base32.

    Within one millisecond the random part is incremented, so ids generated in order also
    sort in order (time-sortable as the SPEC asks).
    """

    __slots__ = ("_last_millis", "_last_random")

    def __init__(self) -> None:
        self._last_millis = -1
        self._last_random = 0

    def new(self, now_millis: int | None = None) -> str:
        """A new 26-character ULID."""
        millis = int(time.time() * 1000) if now_millis is None else now_millis
        if millis <= self._last_millis:
            millis = self._last_millis
            randomness = (self._last_random + 1) & ((1 << 80) - 1)
        else:
            randomness = int.from_bytes(os.urandom(10), "big")
        self._last_millis, self._last_random = millis, randomness
        value = (millis << 80) | randomness
        characters = []
        for _ in range(26):
            characters.append(_CROCKFORD[value & 31])
            value >>= 5
        return "".join(reversed(characters))


#: The process-wide ULID generator (single owner: the engine loop).
ulids = UlidGenerator()


def numeric_id(value: Any) -> int | None:
    """The integer an id stands for (``7``, ``"7"``), or None (``"a7"``, ``7.5``, ``True``)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.isascii() and value.isdigit():
        return int(value)
    return None


def id_key(value: Any) -> str:
    """The text an item is stored under: strings as they are, numbers as decimal text
    (``7.0`` -> ``"7"``), booleans ``true``/``false``, anything else as compact JSON."""
    if isinstance(value, str):
        return value
    return value_text(value)


def value_text(value: Any) -> str:
    """A value as the text a query parameter or path segment would carry.

    ``True`` -> ``"true"``, ``None`` -> ``"null"``, ``3.0`` -> ``"3"``, ``0.5`` -> ``"0.5"``,
    objects and arrays -> compact JSON. Used by id keys and list filters.
    """
    if isinstance(value, str):
        return value
    if value is True:
        return "true"
    if value is False:
        return "false"
    if value is None:
        return "null"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isfinite(value) and value.is_integer() and abs(value) < 1e21:
            return str(int(value))
        return repr(value)
    try:
        return orjson.dumps(value).decode()
    except TypeError:
        return str(value)


class Clock:
    """Strictly increasing RFC 3339 nanosecond timestamps (one per stored change)."""

    __slots__ = ("_last",)

    def __init__(self) -> None:
        self._last = 0

    def now(self) -> str:
        """``YYYY-MM-DDTHH:MM:SS.nnnnnnnnnZ``, later than every earlier answer."""
        nanoseconds = time.time_ns()
        if nanoseconds <= self._last:
            nanoseconds = self._last + 1
        self._last = nanoseconds
        return format_nanoseconds(nanoseconds)


def format_nanoseconds(nanoseconds: int) -> str:
    """Epoch nanoseconds as ``YYYY-MM-DDTHH:MM:SS.nnnnnnnnnZ`` (fixed width, so text order is
    time order)."""
    seconds, fraction = divmod(nanoseconds, 1_000_000_000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{fraction:09d}Z"
