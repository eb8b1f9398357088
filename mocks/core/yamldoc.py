"""Loading YAML from others safely: bounded alias expansion, no cycles, bounded nesting.

YAML aliases let a few hundred bytes stand for millions of values ("billion laughs"): PyYAML
shares the aliased objects, so loading is cheap, but the first thing that walks the result
(JSON encoding, storing, answering) expands it. :func:`safe_load_bounded` loads with PyYAML's
safe loader (the C one when present) and then measures the document as it would be expanded,
counting each shared object at every place it is used, without expanding it. A document that
would grow by more than :data:`MAX_ALIAS_NODES` values through aliases, that refers to itself,
or that nests deeper than :data:`MAX_DEPTH` is refused with :class:`DocumentTooLarge`.

Source: SPEC "Configuration file" (YAML or JSON); the security rule that parsers of untrusted
input are bounded (docs/security.md "Bad input").
"""
from __future__ import annotations

from typing import Any

import yaml

#: How many values aliases may add to a document beyond those written out in it.
MAX_ALIAS_NODES = 500_000
#: How deeply mappings and lists may nest.
MAX_DEPTH = 200

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class DocumentTooLarge(ValueError):
    """A YAML document refused by :func:`safe_load_bounded`; ``str()`` says why in one line."""


def safe_load_bounded(text: str | bytes) -> Any:
    """The value of one YAML (or JSON) document, like ``yaml.safe_load``.

    Raises:
        yaml.YAMLError: the text is not valid YAML (as ``yaml.safe_load`` raises it).
        DocumentTooLarge: the aliases expand it by more than :data:`MAX_ALIAS_NODES` values,
            it contains itself, or it nests deeper than :data:`MAX_DEPTH`.
    """
    try:
        document = yaml.load(text, Loader=_LOADER)  # noqa: S506 - a safe loader
    except RecursionError:
        raise DocumentTooLarge(f"nested deeper than {MAX_DEPTH} levels") from None
    if isinstance(document, (dict, list)):
        check_expansion(document)
    return document


def check_expansion(document: Any) -> None:
    """Raise :class:`DocumentTooLarge` when ``document`` (parsed YAML: dicts, lists, scalars)
    is cyclic, nests deeper than :data:`MAX_DEPTH`, or counts more than
    :data:`MAX_ALIAS_NODES` values beyond those written out in it once every shared dict or
    list is counted wherever it is used. Linear in the distinct objects; nothing is
    expanded."""
    sizes: dict[int, int] = {}  # id of a finished container -> its expanded size
    open_ids = {id(document)}
    written = 0  # values written out: each distinct container and its scalars, once
    # frames: [container, iterator over its children, expanded size so far]
    stack: list[list[Any]] = [[document, iter(_children(document)), 1]]
    while stack:
        frame = stack[-1]
        child = next(frame[1], _DONE)
        if child is _DONE:
            stack.pop()
            open_ids.discard(id(frame[0]))
            sizes[id(frame[0])] = frame[2]
            written += 1
            if stack:
                stack[-1][2] += frame[2]
            continue
        if not isinstance(child, (dict, list)):
            frame[2] += 1
            written += 1
            continue
        key = id(child)
        known = sizes.get(key)
        if known is not None:
            frame[2] += known
            continue
        if key in open_ids:
            raise DocumentTooLarge("an alias refers to a mapping or list that contains it")
        if len(stack) >= MAX_DEPTH:
            raise DocumentTooLarge(f"nested deeper than {MAX_DEPTH} levels")
        open_ids.add(key)
        stack.append([child, iter(_children(child)), 1])
    if sizes[id(document)] - written > MAX_ALIAS_NODES:
        raise DocumentTooLarge(f"its aliases expand it by more than {MAX_ALIAS_NODES:,} values "
                               "(a YAML alias bomb?); write the repeated parts out or use "
                               "fewer nested aliases")


_DONE = object()


def _children(container: Any) -> Any:
    return container.values() if isinstance(container, dict) else container
