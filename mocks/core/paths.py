"""Compiling ``matcher.path`` strings into exact, template or glob path forms.

Source: SPEC "Matcher" (``{name}``, ``{name:.*}``) and behavior notes §5 ("Paths"): the
pattern is URL-decoded first; ``{p}`` is one segment, also inside a segment (``{sid}.json``);
a trailing ``/*`` matches the prefix and below; any other ``*`` is a glob within one segment;
``{name:.*}`` captures the rest including ``/``; glob captures are named ``0``, ``1``, ...
A double-braced ``{{name}}`` is literal text, never a parameter (an unresolved Postman
variable is served literally: SPEC "Import and export").
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import unquote

from mocks.core import scores
from mocks.core.errors import ConfigError

_PLACEHOLDER = re.compile(r"\{([^{}:]+)(?::((?:[^{}]|\{[^{}]*\})+))?\}")
#: ``{{name}}``: literal text in a path.
_LITERAL_BRACES = re.compile(r"\{\{[^{}]*\}\}")
#: A literal ``{{name}}`` or a ``{name}`` / ``{name:regex}`` placeholder, in path order.
_TOKEN = re.compile(f"(?P<literal>{_LITERAL_BRACES.pattern})|{_PLACEHOLDER.pattern}")


@dataclass(frozen=True, slots=True)
class PathForm:
    """A compiled ``matcher.path``.

    Attributes:
        literal: the decoded path when it has no placeholder or glob (exact form), else None.
        regex: full-match regex for template and glob forms (None for the exact form).
        names: capture names in group order (``g0`` -> ``names[0]``).
        specificity: one of the ``scores.SPECIFICITY_*`` ranks.
        segment_count: number of ``/`` separated segments when fixed (template form), else None.
        first_segment: the literal first segment when there is one, for the index.
        last_parameter_prefix: for a template whose only placeholder is its whole last segment
            (``/api/users/{id}``), the literal text before it (``/api/users/``): such a path
            matches by a prefix test instead of the regex.
    """

    literal: str | None
    regex: re.Pattern[str] | None
    names: tuple[str, ...]
    specificity: int
    segment_count: int | None
    first_segment: str | None
    last_parameter_prefix: str | None = None


def compile_path(raw: str, key_path: str) -> PathForm:
    """Compile one ``matcher.path``; raises :class:`ConfigError` naming ``key_path``."""
    path = unquote(raw)
    if not path.startswith("/"):
        raise ConfigError(key_path, f"path must start with '/', got {raw!r}")
    segments = path.split("/")
    first = segments[1] if len(segments) > 1 else ""
    plain = _LITERAL_BRACES.sub("", path) if "{{" in path else path
    first_literal = first if ("{" not in _LITERAL_BRACES.sub("", first)
                              and "*" not in first) else None
    if "{" not in plain and "*" not in path:
        return PathForm(path, None, (), scores.SPECIFICITY_EXACT, len(segments), first_literal)

    names: list[str] = []
    parts: list[str] = []
    glob = False
    position = 0
    body = path
    trailing_prefix = False
    if body.endswith("/*") and "{" not in body[-2:]:
        # "/files/*" matches "/files", "/files/" and everything below.
        body = body[:-2]
        trailing_prefix = True
        glob = True
    for match in _TOKEN.finditer(body):
        parts.append(_literal_with_globs(body[position:match.start()], names))
        if match.group("literal"):
            parts.append(re.escape(match.group("literal")))
            position = match.end()
            continue
        name, custom = match.group(2).strip(), match.group(3)
        if not name:
            raise ConfigError(key_path, f"empty parameter name in {raw!r}")
        group = f"g{len(names)}"
        names.append(name)
        if custom is None:
            parts.append(f"(?P<{group}>[^/]+)")
        else:
            try:
                re.compile(custom)
            except re.error as error:
                raise ConfigError(key_path, f"bad regex in {{{name}:{custom}}}: {error}") from None
            parts.append(f"(?P<{group}>{custom})")
            glob = True
        position = match.end()
    rest = body[position:]
    if "{" in rest or "}" in rest:
        raise ConfigError(key_path, f"unbalanced '{{' or '}}' in path {raw!r}")
    parts.append(_literal_with_globs(rest, names))
    if any(name.isdigit() for name in names):
        glob = True
    pattern = "".join(parts)
    if trailing_prefix:
        group = f"g{len(names)}"
        names.append(str(sum(1 for name in names if name.isdigit())))
        pattern += f"(?:/(?P<{group}>.*))?"
    try:
        regex = re.compile(pattern)
    except re.error as error:  # pragma: no cover - the parts above are escaped
        raise ConfigError(key_path, f"cannot compile path {raw!r}: {error}") from None
    if glob:
        return PathForm(None, regex, tuple(names), scores.SPECIFICITY_GLOB, None, first_literal)
    prefix, _, last = path.rpartition("/")
    simple_last = (len(names) == 1 and "{" not in prefix and "*" not in prefix
                   and "{{" not in last
                   and _PLACEHOLDER.fullmatch(last) is not None)
    return PathForm(None, regex, tuple(names), scores.SPECIFICITY_TEMPLATE, len(segments),
                    first_literal, prefix + "/" if simple_last else None)


def _literal_with_globs(text: str, names: list[str]) -> str:
    """Escape literal text; each ``*`` becomes a capture of one segment's characters."""
    if "*" not in text:
        return re.escape(text)
    out = []
    for index, piece in enumerate(text.split("*")):
        if index:
            glob_index = sum(1 for name in names if name.isdigit())
            out.append(f"(?P<g{len(names)}>[^/]*)")
            names.append(str(glob_index))
        out.append(re.escape(piece))
    return "".join(out)


def path_captures(form: PathForm, match: re.Match[str]) -> dict[str, str]:
    """Captures of a successful template/glob match, keyed by parameter name."""
    groups = match.groupdict()
    return {name: groups[f"g{index}"] or "" for index, name in enumerate(form.names)}
