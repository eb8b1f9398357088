"""Bounded parsing of the numbers and booleans in admin query strings.

Every list route of the admin API (``/mocks``, ``/requests``, ``/mocks/{id}/invocations``,
``/state/resources/{name}/items``, ``/mqtt-recordings``, ``/soap-recordings``) and of the
engine-control port reads its ``limit``/``offset``/``status``/... through :func:`parse_int`,
so a huge, negative or non-numeric value is a 400 ``validation_error`` that names the
parameter and says why, never an overflow deep in the database or the JSON encoder (a 500).

Usage::

    limit = parse_int(query, "limit", 100, maximum=MAX_LIMIT)   # raises QueryParameterError

Source: SPEC "Limits" (list default ``limit`` 100, ``offset`` 0), "Errors"
(``validation_error`` 400); behavior notes §1 "Request log" (filters). Django-free; pure
functions.
"""
from __future__ import annotations

import re
from typing import Any

#: Largest page size (``limit``, ``per_page``, ...) any admin list accepts.
MAX_LIMIT = 10_000
#: Largest ``offset``/``page`` and any other count read from a query (a signed 32-bit int).
MAX_QUERY_INTEGER = 2**31 - 1
#: Largest ``status`` filter (HTTP statuses are three digits; gRPC codes and MQTT are lower).
MAX_STATUS = 999

#: An integer as a query may spell it: ASCII digits, an optional minus (which the bound then
#: refuses with a clear reason). Anything longer than 20 characters is out of every bound, so
#: it is refused before any conversion.
_INTEGER = re.compile(r"-?[0-9]{1,20}")
_DIGITS = re.compile(r"-?[0-9]+")

_TRUE = ("true", "1", "yes")
_FALSE = ("false", "0", "no")


class QueryParameterError(ValueError):
    """A query parameter with a bad value; ``str`` is ``"<name>: <reason>"``.

    Attributes:
        name: the parameter (``limit``).
        reason: what is wrong (``must be between 0 and 10000, got 99999``).
    """

    def __init__(self, name: str, reason: str):
        self.name = name
        self.reason = reason
        super().__init__(f"{name}: {reason}")


def _shown(raw: Any) -> str:
    text = str(raw)
    return repr(text if len(text) <= 40 else text[:40] + "...")


def parse_int(query: Any, name: str, default: int | None, minimum: int = 0,
              maximum: int = MAX_QUERY_INTEGER) -> int | None:
    """The integer query parameter ``name`` within ``[minimum, maximum]``.

    ``query`` is any mapping with ``.get(name)`` returning a string or None (a Django
    ``QueryDict``, a plain dict); a missing or empty value gives ``default``. Raises
    :class:`QueryParameterError` naming ``name`` for a value that is not a whole number
    (``"abc"``, ``"1.5"``, ``"1e3"``) or lies outside the bounds (``"-1"``,
    ``"99999999999999999999"``).
    """
    raw = query.get(name)
    if raw is None or raw == "":
        return default
    text = str(raw).strip()
    if not _INTEGER.fullmatch(text):
        if _DIGITS.fullmatch(text):  # a whole number, just too many digits
            raise QueryParameterError(
                name, f"must be between {minimum} and {maximum}, got {_shown(raw)}")
        raise QueryParameterError(name, f"must be an integer, got {_shown(raw)}")
    value = int(text)
    if not minimum <= value <= maximum:
        raise QueryParameterError(name, f"must be between {minimum} and {maximum}, got {value}")
    return value


def parse_bool(query: Any, name: str) -> bool | None:
    """The boolean query parameter ``name`` (``true``/``false``/``1``/``0``/``yes``/``no``,
    any case), None when absent or empty; raises :class:`QueryParameterError` otherwise."""
    raw = query.get(name)
    if raw is None or raw == "":
        return None
    lowered = str(raw).lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise QueryParameterError(name, f"must be true or false, got {_shown(raw)}")
