"""Choosing the state store: ``--state-store``, ``--state-namespace`` and
``serverConfig.stateStore`` (issue #32 item 2).

Imports only click and the standard library at module level (``mockd --help`` and the
client commands stay light); :func:`install_state_store` imports the Redis store when a
server starts with one.

* :func:`state_store_options` adds both flags to ``mockd start`` and ``mockd engine`` and
  keeps their values in the click context; :func:`state_store_run_options` gives them to
  ``RunOptions`` as ``state_store`` and ``state_namespace``.
* :func:`check_url` names what is wrong with a URL (flag callback and config key alike).
* :func:`install_state_store` connects once at start (``PING``) and puts the Redis store on
  the engine (tables), its template state (``sequence()`` counters) and the identity-provider
  mocks of the process (codes, tokens, revocations, the signing key); it raises
  :class:`StateStoreError` with one line naming the URL, password redacted, which the runner
  turns into exit 2.
"""
from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import click

#: Default of ``--state-namespace``.
DEFAULT_NAMESPACE = "mockd"
#: What a namespace may hold (it becomes the first segment of every key).
NAMESPACE_PATTERN = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
#: Key of the flags' values in the click context's ``meta``.
STATE_META = "mockd.state_store"
#: Longest URL accepted.
MAX_URL_LENGTH = 2048


class StateStoreError(Exception):
    """The state store cannot be used at start (one-line message, no secret in it)."""


def redacted_url(url: str) -> str:
    """``url`` with its password replaced by ``***`` (for messages and logs)."""
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:
        return "<unparsable URL>"
    if password is None:
        return url
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    try:
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        port = ""
    netloc = f"{parts.username or ''}:***@{host}{port}"
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def check_url(url: str) -> str | None:
    """What is wrong with a state-store URL, or None: it must be ``redis://`` or
    ``rediss://`` with a host, an optional port and an optional database number
    (``redis://host:6379/0``), or ``unix://`` with a socket path."""
    if len(url) > MAX_URL_LENGTH:
        return f"longer than {MAX_URL_LENGTH} characters"
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port that is no number
    except ValueError as error:
        return f"not a URL ({error})"
    if parts.scheme not in ("redis", "rediss", "unix"):
        return "give a redis://host:port/db URL"
    if parts.scheme == "unix":
        return None if parts.path else "a unix:// URL needs the socket path"
    if not parts.hostname:
        return "the URL names no host"
    database = parts.path.strip("/")
    if database and not database.isdigit():
        return f'database "{database}" is not a number'
    return None


def _url_flag(context: click.Context, parameter: click.Parameter, value: str | None
              ) -> str | None:
    if value is None:
        return None
    problem = check_url(value)
    if problem is not None:
        raise click.BadParameter(f"{redacted_url(value)}: {problem}")
    return value


def _namespace_flag(context: click.Context, parameter: click.Parameter, value: str) -> str:
    if not NAMESPACE_PATTERN.match(value):
        raise click.BadParameter("1-64 letters, digits, '_', '.' or '-'")
    return value


def state_store_options(function):
    """Add ``--state-store URL`` and ``--state-namespace NAME`` to a server command; their
    values go to the click context (read them with :func:`state_store_run_options`)."""
    import functools

    @functools.wraps(function)
    def wrapper(*args, state_store=None, state_namespace=DEFAULT_NAMESPACE, **kwargs):
        click.get_current_context().meta[STATE_META] = {"state_store": state_store,
                                                        "state_namespace": state_namespace}
        return function(*args, **kwargs)

    wrapper = click.option(
        "--state-namespace", default=DEFAULT_NAMESPACE, show_default=True, metavar="NAME",
        callback=_namespace_flag,
        help="Key prefix in the state store: replicas of one mock server share it, "
             "unrelated mock servers on one Redis pick different ones.")(wrapper)
    wrapper = click.option(
        "--state-store", default=None, metavar="URL", callback=_url_flag,
        help="Keep tables in Redis (redis://host:port/db) so that engine replicas share "
             "them (default: in memory; also serverConfig.stateStore).")(wrapper)
    return wrapper


def state_store_run_options() -> dict[str, Any]:
    """``{state_store, state_namespace}`` of the running command (defaults without the
    flags), as ``RunOptions`` keywords."""
    context = click.get_current_context(silent=True)
    values = context.meta.get(STATE_META) if context is not None else None
    return dict(values or {"state_store": None, "state_namespace": DEFAULT_NAMESPACE})


def install_state_store(engine: Any, url: str | None, namespace: str = DEFAULT_NAMESPACE,
                        source: str = "--state-store") -> None:
    """Put a Redis table store for ``url`` on ``engine`` and keep its ``sequence()``
    counters and identity-provider tokens there too (nothing when ``url`` is None), after
    one ``PING``; call before the engine loads a config.

    Raises:
        StateStoreError: a bad URL (naming ``source``, the flag or the config key) or a
            Redis server that does not answer (naming the URL, password redacted).
    """
    if not url:
        return
    problem = check_url(url)
    if problem is not None:
        raise StateStoreError(f"{source}: {redacted_url(url)}: {problem}")
    from tables.redis_store import RedisSequences, open_store

    try:
        engine.tables = open_store(url, namespace)
    except ConnectionError as error:
        raise StateStoreError(str(error)) from None
    engine.template_state.shared = RedisSequences(url, namespace)
    from oidc.store import install_shared_tokens

    install_shared_tokens(url, namespace, redacted_url(url))
