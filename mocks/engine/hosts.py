"""Which ``Host`` header values the control ports answer: the defence against DNS rebinding.

A web page whose DNS name is rebound to ``127.0.0.1`` talks to a local port *as its own
origin*: the browser sends ``Host: attacker.example:4290`` and lets the page read every answer,
so neither the Origin checks nor CORS stop it. Its ``Host`` header still names the attacker's
domain, and that is what :class:`HostPolicy` refuses on the admin port and on the
engine-control port. Allowed without configuration:

* ``localhost`` and names under ``.localhost`` (browsers resolve them to loopback themselves,
  no DNS answer can rebind them);
* loopback IP addresses (``127.0.0.1``, any ``127.x.y.z``, ``[::1]``);
* the address or name the server was told to listen on (``--host``); with a wildcard
  (``0.0.0.0``, ``::``) every IP address, since the port is then meant to be reached by
  address from other machines (rebinding needs a DNS name, never an IP literal);
* the names given with ``--allowed-host`` (env ``MOCKD_ALLOWED_HOSTS``); ``*`` allows any.

Any port goes with an allowed name. A request without a ``Host`` header (HTTP/1.0) is
answered (an empty one too): a browser always sends one, so such a request never comes from a
web page. The data plane answers every ``Host``: mocks serve virtual hosts.

Source: docs/security.md "The admin port: API key, origins and Host" and "The engine-control
port and its token"; behavior notes §2, §16.
"""
from __future__ import annotations

import ipaddress
import re
from typing import Iterable

#: Error code of the 400 answer to a refused ``Host``.
HOST_NOT_ALLOWED = "host_not_allowed"

#: Names every control port answers, whatever the configuration.
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})

#: ``--host`` values that mean "every interface": they name no host to allow.
WILDCARD_HOSTS = frozenset({"", "0.0.0.0", "::", "[::]", "*"})

#: A DNS name (letters, digits, ``-``, ``_`` in dot-separated labels).
_NAME = re.compile(r"^[a-z0-9_](?:[a-z0-9_-]{0,62})(?:\.[a-z0-9_](?:[a-z0-9_-]{0,62}))*$")

#: Longest ``Host`` value quoted back in an error message.
_QUOTED_MAX = 100


def host_name(value: str) -> str | None:
    """The host of a ``Host`` header value without its port, lower case, a trailing dot and
    IPv6 brackets removed: ``"LocalHost:4290"`` -> ``"localhost"``, ``"[::1]:4290"`` ->
    ``"::1"``. None when the value is malformed (empty, a bad port, an unbracketed IPv6
    address, characters no host name has)."""
    value = value.strip().lower()
    if value.startswith("["):
        name, bracket, rest = value[1:].partition("]")
        if not bracket or not is_ip_address(name) or ":" not in name:
            return None
    else:
        name, colon, port = value.partition(":")
        rest = colon + port
        name = name[:-1] if name.endswith(".") else name
        if not _NAME.match(name):
            return None
    if rest and not (rest.startswith(":") and rest[1:].isdigit() and len(rest) <= 6):
        return None
    return name


def is_ip_address(name: str) -> bool:
    """Whether ``name`` (as :func:`host_name` returns it) is an IPv4 or IPv6 address."""
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


class HostPolicy:
    """The ``Host`` values one control port answers (see the module docstring for the rule).

    Args:
        allowed: extra names (``--allowed-host``; a port, brackets and case are ignored);
            ``*`` allows every ``Host``. Raises :class:`ValueError` naming a malformed one.
        bind_host: the interface the port listens on (``--host``); allowed when it is a name
            rather than a wildcard.
    """

    def __init__(self, allowed: Iterable[str] = (), bind_host: str | None = None):
        names: set[str] = set()
        self.allow_any = False
        for entry in allowed:
            entry = entry.strip()
            if entry == "*":
                self.allow_any = True
                continue
            if is_ip_address(entry.strip("[]")):
                names.add(str(ipaddress.ip_address(entry.strip("[]"))))
                continue
            name = host_name(entry)
            if name is None:
                raise ValueError(f"--allowed-host {entry!r} is not a host name")
            names.add(name)
        #: Whether every IP address is answered (the port listens on every interface).
        self.any_address = bool(bind_host) and bind_host.strip() in WILDCARD_HOSTS
        if bind_host and not self.any_address:
            bare = bind_host.strip().strip("[]")
            name = str(ipaddress.ip_address(bare)) if is_ip_address(bare) else host_name(bind_host)
            if name is not None:
                names.add(name)
        #: Configured names (lower case, no port), besides the loopback names and IPs.
        self.names = frozenset(names)

    def allows(self, value: str | None) -> bool:
        """Whether a request whose ``Host`` header is ``value`` (None: no header) may go on;
        an empty value counts as no header."""
        if value is None or not value.strip() or self.allow_any:
            return True
        name = host_name(value)
        if name is None:
            return False
        if name in LOOPBACK_NAMES or name.endswith(".localhost") or name in self.names:
            return True
        try:
            address = ipaddress.ip_address(name)
        except ValueError:
            return False
        return self.any_address or address.is_loopback or str(address) in self.names

    def refusal(self, headers: Iterable[tuple[bytes, bytes]], port: str) -> dict[str, str] | None:
        """The 400 body ``{"error": "host_not_allowed", "message"}`` for a request whose ASGI
        ``headers`` carry a ``Host`` this policy refuses (every ``Host`` header counts), or
        None when it may go on. ``port`` names the port in the message (``admin port``)."""
        for name, value in headers:
            if name.lower() != b"host":
                continue
            text = value.decode("latin-1")
            if not self.allows(text):
                quoted = text if len(text) <= _QUOTED_MAX else text[:_QUOTED_MAX] + "..."
                return {"error": HOST_NOT_ALLOWED,
                        "message": f"Host {quoted!r} is not allowed on the {port}: it answers "
                                   f"localhost, 127.0.0.1, [::1], the --host address and "
                                   f"the names given with --allowed-host (env "
                                   f"MOCKD_ALLOWED_HOSTS); this guards against DNS rebinding. "
                                   f"Use http://localhost:<port> or start mockd with "
                                   f"--allowed-host NAME."}
        return None


#: The policy of a port nobody configured: loopback names and addresses only.
LOOPBACK_ONLY = HostPolicy()
