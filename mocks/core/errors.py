"""Errors of the engine's compile step and of config validation.

Source: ARCHITECTURE seam 1 ("a bad file fails with the path of the offending key"); issue 14
item 5 (every error is reported, with one wording for the file loader and the admin API).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

from mocks.core.environment import scrub

#: How many problems ``str(ConfigError)`` lists before it sums up the rest (a broken import
#: of thousands of mocks must not flood the terminal); :attr:`ConfigError.errors` has them all.
MAX_LISTED_ERRORS = 20

#: User-facing reasons of pydantic error types, shared by the file loader and the admin API
#: so the same mistake reads the same everywhere.
REASONS: dict[str, str] = {
    "extra_forbidden": "unknown key",
    "missing": "required field is missing",
}


@dataclass(frozen=True, slots=True)
class ConfigIssue:
    """One problem of a config document.

    Attributes:
        path: the config key path (``mocks[3].http.matcher.pathPattern``; may be empty).
        reason: what is wrong (``unknown key``, ``required field is missing``, ...).
    """

    path: str
    reason: str

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}" if self.path else self.reason


class ConfigError(ValueError):
    """A config value that cannot be compiled or validated.

    Attributes:
        path: the config key path of the first problem, e.g.
            ``mocks[3].http.matcher.pathPattern`` (may be empty).
        reason: what is wrong with it and, where useful, what to try.
        errors: every problem found, first one first (:class:`ConfigIssue`); one item when
            the error has a single cause.

    Reasons are passed through :func:`mocks.core.environment.scrub`: a value a config took
    from the environment reads ``${NAME}`` in every message.

    ``str(error)`` is ``"<path>: <reason>"`` for a single problem — the line printed after
    ``config error:``. With several, each further problem follows on its own line, indented by
    two spaces, at most :data:`MAX_LISTED_ERRORS` in all and then ``... and N more errors``.
    """

    def __init__(self, path: str, reason: str, errors: Iterable[ConfigIssue] | None = None):
        # A reason never shows the value of an environment variable the config expanded.
        self.path = path
        self.reason = scrub(reason)
        self.errors: list[ConfigIssue] = ([ConfigIssue(issue.path, scrub(issue.reason))
                                           for issue in errors or ()]
                                          or [ConfigIssue(path, self.reason)])
        super().__init__(listed_text(self.errors, "\n  "))

    @classmethod
    def of(cls, issues: Iterable[ConfigIssue]) -> "ConfigError":
        """One error carrying every issue of ``issues`` (at least one); its ``path`` and
        ``reason`` are those of the first."""
        found = list(issues)
        if not found:
            raise ValueError("ConfigError.of needs at least one issue")
        return cls(found[0].path, found[0].reason, found)

    @classmethod
    def combine(cls, errors: Iterable["ConfigError"]) -> "ConfigError":
        """One error carrying the problems of every error of ``errors`` in order."""
        return cls.of(issue for error in errors for issue in error.errors)


def listed_text(issues: list[ConfigIssue], separator: str) -> str:
    """``issues`` as text joined by ``separator``: at most :data:`MAX_LISTED_ERRORS`, then
    ``... and N more errors``."""
    shown = [str(issue) for issue in issues[:MAX_LISTED_ERRORS]]
    hidden = len(issues) - len(shown)
    if hidden:
        shown.append(f"... and {hidden} more error{'s' if hidden != 1 else ''}")
    return separator.join(shown)


def validation_issues(error: Any, prefix: str = "") -> list[ConfigIssue]:
    """Every problem of a pydantic ``ValidationError`` as :class:`ConfigIssue` items, in
    pydantic's order, paths written ``mocks[3].http.matcher`` (below ``prefix`` if given) and
    reasons worded by :data:`REASONS` (else pydantic's message without ``Value error, ``).

    Duck-typed (``error.errors()``) so the kernel needs no pydantic import.
    """
    issues: list[ConfigIssue] = []
    for item in error.errors(include_url=False):
        location = format_location(tuple(item.get("loc", ())))
        reason = REASONS.get(str(item.get("type")))
        if reason is None:
            reason = str(item.get("msg") or "invalid value").removeprefix("Value error, ")
        if prefix:
            location = f"{prefix}.{location}" if location else prefix
        issue = ConfigIssue(location, reason)
        if issue not in issues:  # unions may report one problem once per branch
            issues.append(issue)
    return issues


def format_location(location: tuple[Any, ...]) -> str:
    """``("mocks", 3, "http", "matcher")`` -> ``"mocks[3].http.matcher"``."""
    out = ""
    for part in location:
        if isinstance(part, int):
            out += f"[{part}]"
        elif str(part).startswith(("function-", "tagged-union", "literal[", "union[")):
            continue  # pydantic's internal validator steps say nothing to a user
        else:
            out += f".{part}" if out else str(part)
    return out
