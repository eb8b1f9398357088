"""Which environment variables a config may read, and keeping their values out of errors.

A config file often comes from someone else (a pull request, a vendor's sample), while the
environment of the machine that loads it holds CI tokens and cloud keys. ``$VAR`` and
``${VAR}`` in a config therefore expand only variables the person running the server allowed:

* every ``MOCKD_*`` variable but mockd's own secrets (:data:`PRIVATE_VARIABLES`);
* names or globs given with ``--allow-env NAME`` (repeatable; :func:`allow_environment`) or
  in ``$MOCKD_ALLOW_ENV`` (comma- or space-separated). An exact name may allow one of the
  private variables; a glob never does.

A config cannot widen the list. A reference to any other variable stays as written, and the
``mockd.config`` logger warns once per name. Values that were expanded are remembered
(:func:`scrub`) so that error messages show ``${NAME}`` instead of the value.

Source: SPEC "Configuration file" (environment variables); behavior notes §14 (``$VAR`` and
``${VAR}``: an unset ``${VAR}`` is empty, an unset ``$VAR`` stays as written).
"""
from __future__ import annotations

import logging
import os
import re
import threading
from fnmatch import fnmatchcase
from typing import Iterable, Mapping

logger = logging.getLogger("mockd.config")

#: Variables a config may always read (globs).
ALWAYS_ALLOWED: tuple[str, ...] = ("MOCKD_*",)
#: mockd's own secrets: never expanded unless allowed by exact name.
PRIVATE_VARIABLES = frozenset({"MOCKD_API_KEY", "MOCKD_ENGINE_TOKEN", "MOCKD_SECRET_KEY",
                               "MOCKD_ADMIN_PASSWORD", "MOCKD_ALLOW_ENV"})
#: The environment variable holding more allowed names or globs.
ALLOW_ENV_VARIABLE = "MOCKD_ALLOW_ENV"
#: The command-line flag that allows a name or glob.
ALLOW_ENV_FLAG = "--allow-env"
#: Values shorter than this are not scrubbed from messages (``1``, ``on``: too common to hide).
MIN_SCRUBBED_LENGTH = 4
#: How many expanded values are remembered for :func:`scrub`.
MAX_REMEMBERED_VALUES = 256

_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)")

_lock = threading.Lock()
_flag_patterns: tuple[str, ...] = ()
_warned: set[str] = set()
_expanded: dict[str, str] = {}


def allow_environment(patterns: Iterable[str]) -> None:
    """Set the names or globs given with ``--allow-env`` for this process (replacing earlier
    ones). Empty strings are ignored."""
    global _flag_patterns
    _flag_patterns = tuple(pattern.strip() for pattern in patterns if pattern.strip())


def allowed_patterns(environ: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """Every allowed name or glob: :data:`ALWAYS_ALLOWED`, the ``--allow-env`` ones, then
    those of ``$MOCKD_ALLOW_ENV`` in ``environ`` (default ``os.environ``)."""
    env = os.environ if environ is None else environ
    listed = re.split(r"[,\s]+", env.get(ALLOW_ENV_VARIABLE, "").strip())
    return ALWAYS_ALLOWED + _flag_patterns + tuple(item for item in listed if item)


def is_allowed(name: str, patterns: tuple[str, ...]) -> bool:
    """Whether a config may read variable ``name`` under ``patterns``."""
    if name in PRIVATE_VARIABLES:
        return name in patterns
    return any(fnmatchcase(name, pattern) for pattern in patterns)


def _warn_once(name: str) -> None:
    with _lock:
        if name in _warned:
            return
        _warned.add(name)
    logger.warning("the config refers to the environment variable %s, which is not expanded: "
                   "a config may read MOCKD_* variables and those allowed with %s %s "
                   "(or %s=%s)", name, ALLOW_ENV_FLAG, name, ALLOW_ENV_VARIABLE, name)


def _remember(name: str, value: str) -> None:
    if len(value) < MIN_SCRUBBED_LENGTH:
        return
    with _lock:
        if value not in _expanded and len(_expanded) >= MAX_REMEMBERED_VALUES:
            _expanded.pop(next(iter(_expanded)))
        _expanded[value] = f"${{{name}}}"


def expand_environment(text: str, environ: Mapping[str, str] | None = None) -> str:
    """``text`` with allowed ``${VAR}`` (empty when unset) and ``$VAR`` (left as written when
    unset) references replaced by their values.

    A reference to a variable that is not allowed (see the module docstring) stays as written
    and is warned about once per name. A bare ``$NAME`` that is not set is kept so regexes
    such as ``^/a$`` and JSONPaths such as ``$.items`` are never damaged.

    Args:
        text: config text (or one config value such as a ``bodyFile`` path).
        environ: the variables to read (default ``os.environ``); ``$MOCKD_ALLOW_ENV`` is read
            from it too.
    """
    if "$" not in text:
        return text
    env = os.environ if environ is None else environ
    patterns = allowed_patterns(env)

    def replace(match: re.Match[str]) -> str:
        braced, bare = match.group(1), match.group(2)
        name = braced if braced is not None else bare
        if not is_allowed(name, patterns):
            if braced is not None or name in env:
                _warn_once(name)
            return match.group(0)
        value = env.get(name)
        if value is None:
            return "" if braced is not None else match.group(0)
        _remember(name, value)
        return value

    return _REFERENCE.sub(replace, text)


def scrub(message: str) -> str:
    """``message`` with every value expanded so far (at least :data:`MIN_SCRUBBED_LENGTH`
    characters) replaced by the ``${NAME}`` it came from, longest values first."""
    if not _expanded:
        return message
    with _lock:
        values = sorted(_expanded.items(), key=lambda item: len(item[0]), reverse=True)
    for value, reference in values:
        if value in message:
            message = message.replace(value, reference)
    return message
