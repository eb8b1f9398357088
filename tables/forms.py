"""Form-encoded bodies (``application/x-www-form-urlencoded``) converted to JSON values.

Conversion (SPEC "Form-encoded bodies"; behavior notes §6 "Form bodies"):

====================================  ===============================================
form value                            result
====================================  ===============================================
``true`` / ``false``                  boolean
integer text (no ``.``, no ``+``)     integer (beyond 64 bits: float)
decimal text (``1.5``, ``2e3``)       float
``null``, ``inf``, ``nan``            null (JSON has no infinities)
text starting with ``+``              string, unchanged (telephone numbers)
anything else                         string
``a[b]=v``                            ``{"a": {"b": v}}``
``a[0]=x&a[1]=y``                     ``{"a": ["x", "y"]}`` (maps keyed 0..n-1 become arrays)
``a[0][k]=v``                         ``{"a": [{"k": v}]}``
``a[]=x&a[]=y``                       ``{"a": ["x", "y"]}``
====================================  ===============================================

The first value of a repeated key wins (``a=1&a=2`` gives ``1``).

No Django. Pure functions.
"""
from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qsl

_INTEGER = re.compile(r"-?[0-9]+\Z")
_DECIMAL = re.compile(r"-?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?\Z")
_NOT_A_NUMBER = frozenset(("inf", "-inf", "infinity", "-infinity", "nan", "-nan"))
_KEY = re.compile(r"([^\[\]]+)((?:\[[^\[\]]*\])*)\Z")
_SEGMENT = re.compile(r"\[([^\[\]]*)\]")
_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1


def form_scalar(text: str) -> Any:
    """One form value as a JSON scalar (see the module table)."""
    if not text or text[0] == "+":
        return text
    if text == "true":
        return True
    if text == "false":
        return False
    if text == "null" or text.lower() in _NOT_A_NUMBER:
        return None
    if _INTEGER.match(text):
        number = int(text)
        return number if _INT64_MIN <= number <= _INT64_MAX else float(number)
    if _DECIMAL.match(text):
        return float(text)
    return text


def key_path(key: str) -> list[str]:
    """``"a[b][0]"`` -> ``["a", "b", "0"]``; ``"a[]"`` -> ``["a", ""]``; a key that is not of
    the bracket form stays whole (``"a]b"`` -> ``["a]b"]``)."""
    match = _KEY.match(key)
    if match is None:
        return [key]
    return [match.group(1), *_SEGMENT.findall(match.group(2))]


def parse_form(body: bytes | str) -> dict[str, Any]:
    """A form-encoded body as a JSON object (see the module table). Never raises."""
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    return nest_pairs(parse_qsl(text, keep_blank_values=True))


def nest_pairs(pairs: list[tuple[str, str]]) -> dict[str, Any]:
    """Ordered ``(key, text)`` pairs as a nested object: brackets nest, ``[]`` appends, maps
    keyed ``0..n-1`` become arrays, the first value of a repeated key wins."""
    root: dict[str, Any] = {}
    seen: set[str] = set()
    for key, text in pairs:
        if key in seen and "[]" not in key:
            continue
        seen.add(key)
        path = key_path(key)
        node = root
        for position, segment in enumerate(path):
            if segment == "" and position > 0:
                segment = str(len(node))  # `a[]` appends: the next free index
            if position == len(path) - 1:
                node.setdefault(segment, form_scalar(text))
                break
            child = node.get(segment)
            if not isinstance(child, dict):
                child = node[segment] = {}
            node = child
    # The top level stays an object even when its keys are 0..n-1.
    return {key: _arrays_from_index_maps(value) for key, value in root.items()}


def _arrays_from_index_maps(value: Any) -> Any:
    if not isinstance(value, dict):
        return value
    converted = {key: _arrays_from_index_maps(item) for key, item in value.items()}
    if converted and all(key.isascii() and key.isdigit() for key in converted):
        indexes = sorted(int(key) for key in converted)
        if indexes == list(range(len(indexes))) and all(
                str(int(key)) == key for key in converted):
            return [converted[str(index)] for index in indexes]
    return converted
