"""One TLS context for the tests' httpx clients.

``httpx.Client()`` builds a new TLS context by default and loads certifi's CA bundle into it:
about 45 ms of CPU per client on this 2-core machine, even for a client that only ever talks
plain HTTP to 127.0.0.1. Passing ``verify=CLIENT_TLS`` gives each client the same context,
built once per process, with the same settings as httpx's default (certifi's CAs, hostname
checks); a client then costs about 3 ms.
"""
from __future__ import annotations

import ssl

import httpx

#: httpx's default client TLS context, built once (``ssl.SSLContext``; thread-safe to share).
CLIENT_TLS: ssl.SSLContext = httpx.create_ssl_context()
