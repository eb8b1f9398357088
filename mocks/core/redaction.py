"""Redaction of credentials in the request log.

Requests carry credentials in headers (``Authorization``, ``Cookie``, ``X-API-Key``), in
query strings (``?api_key=``, ``?access_token=``, signed URLs' ``sig``/``signature``) and in
form bodies (the identity provider's client secrets, passwords, codes and PKCE verifiers).
The request log passes everything it shows through one :class:`Redaction`: the entries of
``GET /requests`` and ``GET /requests/{id}``, the request stream, invocations and the near
misses of unmatched requests (their ``reason`` and the ``actual`` values in the logged 404
body). It does so when an entry is built for a reader, never on the serving hot path; the
name sets are compiled once per config load.

Which names are secret comes from the config file's ``recording`` block (the SPEC's
redaction keys; absent keys keep the defaults below):

=====================  ==========================================================
``filterHeaders``      header names (:data:`DEFAULT_FILTER_HEADERS`)
``filterQueryParams``  query parameter names (:data:`DEFAULT_FILTER_QUERY_PARAMS`)
``filterBodyKeys``     field names of form bodies (:data:`DEFAULT_FILTER_BODY_KEYS`)
``redactValue``        what replaces a secret (:data:`REDACTED`)
=====================  ==========================================================

Names compare case-insensitively; ``*`` in a name matches any run of characters
(``*token*`` covers ``access_token`` and ``X-Token-Id``). A given list replaces its default.

Usage::

    redaction = Redaction.from_settings(filter_headers=["Authorization", "X-Tenant-Key"])
    redaction.header("Cookie", "a=1; b=2")   # the value kept, Cookie is no longer listed
    redaction.query("api_key=k&page=2")      # "api_key=[REDACTED]&page=2"

Source: SPEC "Admin-side records" (recording redaction configuration: ``filterHeaders``,
``filterBodyKeys``, ``redactValue``; headers redacted by default: Authorization, Cookie,
Set-Cookie, X-API-Key, X-Auth-Token), "Request log entry"; behavior notes §1 "Request log";
issue 8 item 5 (the identity provider's secrets).

Django-free; immutable objects, safe to share between threads.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote_plus

#: What replaces a secret value by default (``redactValue``).
REDACTED = "[REDACTED]"

#: Headers whose values are secrets (SPEC "Admin-side records", plus ``Proxy-Authorization``).
DEFAULT_FILTER_HEADERS = ("Authorization", "Proxy-Authorization", "Cookie", "Set-Cookie",
                          "X-API-Key", "X-Auth-Token")

#: Query parameters whose values are secrets: API keys (``key``, ``api_key``, ``apikey``,
#: ``subscription-key``), tokens of every kind, secrets, passwords, signatures of signed URLs
#: (``signature``, ``X-Amz-Signature``, ``sig``), credentials, OAuth codes and assertions.
DEFAULT_FILTER_QUERY_PARAMS = ("*key", "*token*", "*secret*", "*passw*", "pwd", "*signature*",
                               "sig", "*credential*", "auth", "code", "code_verifier",
                               "*assertion")

#: Form-body fields whose values are secrets (RFC 6749, 7009, 7636, 7662 names).
DEFAULT_FILTER_BODY_KEYS = ("client_secret", "password", "code", "code_verifier",
                            "access_token", "refresh_token", "id_token", "token",
                            "client_assertion", "assertion")

#: Lower-case default header names (kept for callers that test membership directly).
SENSITIVE_HEADERS = frozenset(name.lower() for name in DEFAULT_FILTER_HEADERS)
#: Default form fields whose values are secrets.
SENSITIVE_FIELDS = frozenset(DEFAULT_FILTER_BODY_KEYS)

#: ``name=value`` pairs of a form body or query string.
_FIELD = re.compile(r"(^|&)([^&=]*)=([^&]*)")
#: An HTTP authentication scheme (``Bearer``, ``Basic``, ``AWS4-HMAC-SHA256``).
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9!#$%&'*+.^_`|~-]*")
#: Near-miss text that shows what a request sent for a header or query parameter.
_GOT = ", got "
#: Near-miss field names whose ``details`` list header / query parameter values.
_HEADER_FIELD, _QUERY_FIELD = "headers", "queryParams"
_MISSING = "(missing)"


class NameSet:
    """A case-insensitive set of names where ``*`` matches any run of characters.

    ``"X-API-Key" in NameSet(["x-api-key"])`` and ``"access_token" in NameSet(["*token*"])``
    are True. Exact names are one set lookup; the wildcard names are compiled into one
    regular expression when the set is made.
    """

    __slots__ = ("names", "_exact", "_pattern")

    def __init__(self, names: Iterable[str]):
        self.names: tuple[str, ...] = tuple(dict.fromkeys(str(name) for name in names))
        self._exact = frozenset(name.lower() for name in self.names if "*" not in name)
        globs = ["[^\n]*".join(re.escape(part) for part in name.lower().split("*"))
                 for name in self.names if "*" in name]
        self._pattern = re.compile("|".join(globs), re.DOTALL) if globs else None

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        lowered = name.lower()
        if lowered in self._exact:
            return True
        return self._pattern is not None and self._pattern.fullmatch(lowered) is not None

    def __bool__(self) -> bool:
        return bool(self.names)

    def __repr__(self) -> str:
        return f"NameSet({list(self.names)!r})"


@dataclass(frozen=True)
class Redaction:
    """What the request log hides, compiled once (see the module docstring).

    Attributes:
        headers: header names whose values are hidden.
        query_params: query parameter names whose values are hidden.
        body_keys: form-body field names whose values are hidden.
        value: the text shown instead of a secret (``redactValue``).
    """

    headers: NameSet
    query_params: NameSet
    body_keys: NameSet
    value: str = REDACTED

    @classmethod
    def from_settings(cls, filter_headers: Iterable[str] | None = None,
                      filter_query_params: Iterable[str] | None = None,
                      filter_body_keys: Iterable[str] | None = None,
                      redact_value: str | None = None) -> "Redaction":
        """Compile the ``recording`` settings; None keeps a default (a list replaces it)."""
        return cls(
            NameSet(DEFAULT_FILTER_HEADERS if filter_headers is None else filter_headers),
            NameSet(DEFAULT_FILTER_QUERY_PARAMS if filter_query_params is None
                    else filter_query_params),
            NameSet(DEFAULT_FILTER_BODY_KEYS if filter_body_keys is None else filter_body_keys),
            REDACTED if redact_value is None else redact_value)

    # ------------------------------------------------------------------ headers
    def header(self, name: str, value: str) -> str:
        """``value`` of header ``name`` as the log shows it.

        A listed header loses its secret but keeps what helps debugging:
        ``Authorization: Bearer eyJ...`` -> ``Bearer [REDACTED]`` (the scheme), ``Cookie:
        a=1; b=2`` -> ``a=[REDACTED]; b=[REDACTED]`` (the cookie names), ``Set-Cookie:
        id=x; Path=/`` -> ``id=[REDACTED]; Path=/`` (the attributes); any other listed header
        -> ``[REDACTED]``. Headers not listed come back unchanged.
        """
        if name not in self.headers:
            return value
        lowered = name.lower()
        if lowered.endswith("authorization"):
            scheme, separator, _ = value.strip().partition(" ")
            if separator and _SCHEME.fullmatch(scheme):
                return f"{scheme} {self.value}"
            return self.value
        if lowered == "cookie":
            return "; ".join(self._cookie(pair) for pair in value.split(";") if pair.strip())
        if lowered == "set-cookie":
            first, separator, attributes = value.partition(";")
            return self._cookie(first) + (separator + attributes if separator else "")
        return self.value

    def _cookie(self, pair: str) -> str:
        cookie_name, separator, _ = pair.strip().partition("=")
        return f"{cookie_name}={self.value}" if separator else self.value

    # ------------------------------------------------------------------ forms and queries
    def query(self, text: str) -> str:
        """A query string with the values of :attr:`query_params` hidden, the rest
        byte-for-byte: ``"api_key=k&page=2"`` -> ``"api_key=[REDACTED]&page=2"``."""
        return self._fields(text, self.query_params)

    def form(self, text: str) -> str:
        """An ``application/x-www-form-urlencoded`` body with the values of
        :attr:`body_keys` hidden, the rest byte-for-byte. Text that is not a form (JSON, XML)
        has no ``name=value`` pair at its start or after ``&`` naming a listed field, so it
        comes back unchanged."""
        return self._fields(text, self.body_keys)

    def _fields(self, text: str, names: NameSet) -> str:
        if "=" not in text or not names:
            return text
        hidden = self.value

        def replace(match: re.Match[str]) -> str:
            if unquote_plus(match.group(2)) in names:
                return f"{match.group(1)}{match.group(2)}={hidden}"
            return match.group(0)

        return _FIELD.sub(replace, text)

    # ------------------------------------------------------------------ near misses
    def near_misses(self, misses: list[dict[str, Any]], form_body: bool
                    ) -> tuple[list[dict[str, Any]], bool]:
        """``(rows, changed)``: near-miss rows (behavior notes §4 "Data plane" shape:
        ``{mockId, reason, fields: [{field, actual?, details?: [{key, actual, ...}]}], ...}``)
        with what the request sent for a listed header or query parameter hidden, in ``details[].actual``
        and at the end of ``reason`` (``... got "[REDACTED]"``); with ``form_body`` the body
        fields' ``actual`` goes through :meth:`form`. The input rows are not changed;
        ``changed`` says whether any row differs."""
        rows = []
        changed = False
        for miss in misses:
            row = self._near_miss(miss, form_body)
            changed = changed or row is not miss
            rows.append(row)
        return rows, changed

    def _near_miss(self, miss: dict[str, Any], form_body: bool) -> dict[str, Any]:
        fields = miss.get("fields")
        if not isinstance(fields, list):
            return miss
        new_fields = []
        hide_reason = False
        first_miss_seen = False
        for field in fields:
            new_field, first_hidden = self._near_miss_field(field, form_body)
            if not first_miss_seen and isinstance(field, dict) and not field.get("matched", True):
                # The reason quotes the first value that did not match; hide it if secret.
                first_miss_seen = True
                hide_reason = first_hidden
            new_fields.append(new_field)
        if all(new is old for new, old in zip(new_fields, fields)) and not hide_reason:
            return miss
        row = dict(miss, fields=new_fields)
        reason = row.get("reason")
        if hide_reason and isinstance(reason, str) and _GOT in reason:
            row["reason"] = reason[:reason.rindex(_GOT) + len(_GOT)] + f'"{self.value}"'
        return row

    def _near_miss_field(self, field: Any, form_body: bool) -> tuple[Any, bool]:
        """``(field, whether its first mismatched value is hidden)``."""
        if not isinstance(field, dict):
            return field, False
        kind = field.get("field")
        if kind in (_HEADER_FIELD, _QUERY_FIELD) and isinstance(field.get("details"), list):
            names = self.headers if kind == _HEADER_FIELD else self.query_params
            details = []
            first_hidden: bool | None = None
            for detail in field["details"]:
                hidden = (isinstance(detail, dict) and detail.get("key") in names
                          and isinstance(detail.get("actual"), str)
                          and detail["actual"] != _MISSING)
                if first_hidden is None and isinstance(detail, dict) \
                        and not detail.get("matched", True):
                    first_hidden = hidden
                if hidden:
                    actual = (self.header(detail["key"], detail["actual"])
                              if kind == _HEADER_FIELD else self.value)
                    detail = dict(detail, actual=actual)
                details.append(detail)
            if not any(new is not old for new, old in zip(details, field["details"])):
                return field, bool(first_hidden)
            return dict(field, details=details), bool(first_hidden)
        if form_body and str(kind).startswith("body") and isinstance(field.get("actual"), str):
            actual = self.form(field["actual"])
            if actual != field["actual"]:
                return dict(field, actual=actual), False
        return field, False


#: The redaction used when the config has no ``recording`` block.
DEFAULT_REDACTION = Redaction.from_settings()


def redact_form(text: str) -> str:
    """``text`` (a form body) with the default :data:`SENSITIVE_FIELDS` hidden; see
    :meth:`Redaction.form`. ``"grant_type=password&username=u&password=p"`` ->
    ``"grant_type=password&username=u&password=[REDACTED]"``."""
    return DEFAULT_REDACTION.form(text)


def redact_header(name: str, value: str) -> str:
    """``value`` of header ``name`` with the default redaction; see
    :meth:`Redaction.header` (``"Bearer eyJ..."`` -> ``"Bearer [REDACTED]"``)."""
    return DEFAULT_REDACTION.header(name, value)
