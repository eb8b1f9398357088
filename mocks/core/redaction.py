"""Redaction of credentials in the request log.

Requests (the identity provider's above all) carry client secrets, user passwords, PKCE
verifiers, authorization codes and tokens, in form bodies, query strings and the
``Authorization`` header. The request log passes what it shows through these helpers when it
builds an entry (never on the hot path), so nothing secret is shown.

Usage by the request log::

    body_text = redact_form(body_text)            # form bodies and query strings
    value = redact_header(name, value)            # every header value

Source: issue 8 item 5 ("the request log redacts Authorization, client_secret, password,
code_verifier, tokens"); SPEC "Admin-side records" (recording redaction of Authorization).

Django-free; pure functions.
"""
from __future__ import annotations

import re
from urllib.parse import unquote_plus

#: What replaces a secret value.
REDACTED = "[REDACTED]"
#: Header names (lower-case) whose values are secrets.
SENSITIVE_HEADERS = frozenset({"authorization", "proxy-authorization"})
#: Form and query fields whose values are secrets (RFC 6749, 7009, 7636, 7662 names).
SENSITIVE_FIELDS = frozenset({"client_secret", "password", "code", "code_verifier",
                              "access_token", "refresh_token", "id_token", "token",
                              "client_assertion", "assertion"})

_FIELD = re.compile(r"(^|&)([^&=]*)=([^&]*)")


def redact_form(text: str) -> str:
    """``text`` (``application/x-www-form-urlencoded`` or a query string) with the values of
    :data:`SENSITIVE_FIELDS` replaced by :data:`REDACTED`; everything else byte-for-byte.

    ``"grant_type=password&username=u&password=p"`` ->
    ``"grant_type=password&username=u&password=[REDACTED]"``. Text that is not a form (JSON,
    XML) has no ``name=value`` pairs at the start or after ``&`` that name a secret field, so it
    comes back unchanged.
    """
    if "=" not in text:
        return text

    def replace(match: re.Match[str]) -> str:
        if unquote_plus(match.group(2)) in SENSITIVE_FIELDS:
            return f"{match.group(1)}{match.group(2)}={REDACTED}"
        return match.group(0)

    return _FIELD.sub(replace, text)


def redact_header(name: str, value: str) -> str:
    """``value`` with its credentials hidden when ``name`` is in :data:`SENSITIVE_HEADERS`.

    The scheme stays visible for debugging: ``"Bearer eyJ..."`` -> ``"Bearer [REDACTED]"``.
    """
    if name.lower() not in SENSITIVE_HEADERS:
        return value
    scheme, separator, _ = value.strip().partition(" ")
    return f"{scheme} {REDACTED}" if separator else REDACTED
