"""Event data of streaming mocks: ``{{…}}`` templates plus the ``$…`` placeholders.

A string value that is *exactly* one placeholder is replaced on every send:

==================  ===============================================================
``$uuid``           a random UUID (version 4), as text
``$timestamp``      the send time, RFC 3339 UTC with milliseconds (``…T21:16:53.123Z``)
``$random(min,max)`` an integer from ``min`` to ``max`` inclusive (a JSON number)
``$pick(a,b,c)``    one of the comma-separated words, as text
==================  ===============================================================

Any other string is a template of :mod:`mocks.core.templating` (``{{uuid}}``,
``{{faker.name}}``, …). Both are compiled once, when the snapshot is compiled; rendering never
raises. With a seed (``?_mockd_seed=N``) placeholders draw from the same random stream as the
templates, so a seeded stream is reproducible.

Source: SPEC "SSE config" ("Event data placeholders"); behavior notes §9 ("Placeholders as
whole string values in event data and in ``generator`` … ``random: {schema}``").
"""
from __future__ import annotations

import re
import time
import uuid
from datetime import datetime, timezone
from typing import Any

from mocks.core.errors import ConfigError
from mocks.core.templating import RenderContext, TemplateError, compile_template

_RANDOM = re.compile(r"\$random\(\s*(-?\d+)\s*,\s*(-?\d+)\s*\)")
_PICK = re.compile(r"\$pick\((.*)\)", re.DOTALL)


def rfc3339_now() -> str:
    """The current time as RFC 3339 UTC with milliseconds and ``Z``."""
    moment = datetime.fromtimestamp(time.time(), tz=timezone.utc)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


class DataTemplate:
    """A compiled event payload (any JSON value). Immutable; share it between connections.

    Attributes:
        is_static: True when nothing in the value changes between sends; :meth:`render`
            then returns :attr:`value` without reading its context.
        value: the value as given (the rendered value when static).
    """

    __slots__ = ("is_static", "value")

    def __init__(self, is_static: bool, value: Any):
        self.is_static = is_static
        self.value = value

    def render(self, context: RenderContext) -> Any:
        """A fresh JSON value for one send. Treat it as read-only (static parts are shared)."""
        return self.value


class _Uuid(DataTemplate):
    __slots__ = ()

    def render(self, context: RenderContext) -> Any:
        return str(uuid.UUID(int=context.rng.getrandbits(128), version=4))


class _Timestamp(DataTemplate):
    __slots__ = ()

    def render(self, context: RenderContext) -> Any:
        return rfc3339_now()


class _RandomInteger(DataTemplate):
    __slots__ = ("low", "high")

    def __init__(self, source: str, low: int, high: int):
        super().__init__(False, source)
        self.low, self.high = low, high

    def render(self, context: RenderContext) -> Any:
        return context.rng.randint(self.low, self.high)


class _Pick(DataTemplate):
    __slots__ = ("choices",)

    def __init__(self, source: str, choices: tuple[str, ...]):
        super().__init__(False, source)
        self.choices = choices

    def render(self, context: RenderContext) -> Any:
        return self.choices[context.rng.randrange(len(self.choices))]


class _Text(DataTemplate):
    __slots__ = ("template",)

    def __init__(self, template: Any):
        super().__init__(False, template.source)
        self.template = template

    def render(self, context: RenderContext) -> Any:
        return self.template.render(context)


class _Object(DataTemplate):
    # (key, static value or None, compiled child or None) in the original key order
    __slots__ = ("entries",)

    def __init__(self, value: Any, entries: tuple[tuple[str, Any, DataTemplate | None], ...]):
        super().__init__(False, value)
        self.entries = entries

    def render(self, context: RenderContext) -> Any:
        return {key: static if child is None else child.render(context)
                for key, static, child in self.entries}


class _Array(DataTemplate):
    __slots__ = ("items",)

    def __init__(self, value: Any, items: tuple[tuple[Any, DataTemplate | None], ...]):
        super().__init__(False, value)
        self.items = items

    def render(self, context: RenderContext) -> Any:
        return [static if child is None else child.render(context) for static, child in self.items]


def compile_placeholder(text: str, key_path: str) -> DataTemplate | None:
    """The placeholder ``text`` names, or None when it is not exactly a placeholder.

    Raises :class:`ConfigError` at ``key_path`` for ``$random`` with ``min > max`` or an
    empty ``$pick()``.
    """
    if not text.startswith("$"):
        return None
    if text == "$uuid":
        return _Uuid(False, text)
    if text == "$timestamp":
        return _Timestamp(False, text)
    found = _RANDOM.fullmatch(text)
    if found:
        low, high = int(found.group(1)), int(found.group(2))
        if low > high:
            raise ConfigError(key_path, f"{text}: min ({low}) must not be larger than max "
                                        f"({high})")
        return _RandomInteger(text, low, high)
    found = _PICK.fullmatch(text)
    if found:
        choices = tuple(choice.strip() for choice in found.group(1).split(","))
        if not any(choices):
            raise ConfigError(key_path, f"{text}: give at least one choice, e.g. $pick(a,b,c)")
        return _Pick(text, choices)
    return None


def compile_event_data(value: Any, key_path: str) -> DataTemplate:
    """Compile an event payload once (placeholders and ``{{…}}`` templates at any depth).

    Raises :class:`ConfigError` naming the key (``mocks[0].http.sse.events[1].data.user``)
    for a template syntax error or a bad placeholder.
    """
    if isinstance(value, str):
        placeholder = compile_placeholder(value, key_path)
        if placeholder is not None:
            return placeholder
        try:
            template = compile_template(value)
        except TemplateError as error:
            raise ConfigError(key_path, error.detail) from None
        return DataTemplate(True, template.render(None)) if template.is_static else _Text(template)
    if isinstance(value, dict):
        children = [(key, compile_event_data(item, f"{key_path}.{key}"))
                    for key, item in value.items()]
        if all(child.is_static for _, child in children):
            return DataTemplate(True, {key: child.value for key, child in children})
        return _Object(value, tuple((key, child.value, None) if child.is_static
                                    else (key, None, child) for key, child in children))
    if isinstance(value, list):
        children_list = [compile_event_data(item, f"{key_path}[{index}]")
                         for index, item in enumerate(value)]
        if all(child.is_static for child in children_list):
            return DataTemplate(True, [child.value for child in children_list])
        return _Array(value, tuple((child.value, None) if child.is_static else (None, child)
                                   for child in children_list))
    return DataTemplate(True, value)
