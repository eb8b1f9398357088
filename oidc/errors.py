"""Identity-provider errors: one class per RFC error code and HTTP status (STYLE §7).

Each class carries the class attributes ``error`` (the RFC 6749 code) and ``status_code``.
They subclass oauthlib's error classes so that oauthlib renders them when our
:class:`~oidc.validator.MockRequestValidator` raises them from inside a grant, and so that
:class:`~oauthlib.oauth2.rfc6749.errors.FatalClientError` subclasses are answered as JSON at
``/authorize`` rather than redirected. :func:`error_body` and :func:`normalize_error_body` are the
one place the body ``{error, error_description}`` is produced.

Source: SPEC "Errors" (identity-provider body and codes); behavior notes §8 (the status of each
code: 401 ``invalid_client``, 401 ``invalid_grant`` for wrong user credentials and bad tokens at
``/userinfo``, 401 ``invalid_request`` at ``/userinfo`` without a Bearer header, 400 for the
rest, 405 for a wrong method, 500 ``server_error``).

Django-free: imported by the engine.
"""
from __future__ import annotations

import json
from typing import Any

from oauthlib.oauth2.rfc6749 import errors as oauthlib_errors

#: Descriptions for error bodies that arrive without one (oauthlib leaves several empty).
DEFAULT_DESCRIPTIONS = {
    "invalid_request": "The request is missing a parameter or is malformed.",
    "invalid_client": "Client authentication failed: unknown client or wrong client secret.",
    "invalid_grant": "The grant (code, credentials or refresh token) is invalid, expired or "
                     "was already used.",
    "invalid_scope": "The requested scope is not allowed; see scopes_supported in the "
                     "discovery document.",
    "unauthorized_client": "This client may not use this grant; add it to the client's "
                           "grantTypes.",
    "unsupported_grant_type": "Use one of authorization_code, client_credentials, password or "
                              "refresh_token.",
    "unsupported_response_type": "Use response_type=code or response_type=token.",
    "access_denied": "The request was denied.",
    "server_error": "The identity provider failed to answer; see the server log.",
}


class InvalidRequestError(oauthlib_errors.InvalidRequestError):
    """400 ``invalid_request``: a parameter is missing, repeated or malformed."""

    error = "invalid_request"
    status_code = 400


class InvalidRequestFatalError(oauthlib_errors.InvalidRequestFatalError):
    """400 ``invalid_request`` at ``/authorize`` answered as JSON (no trusted redirect yet)."""

    error = "invalid_request"
    status_code = 400


class MethodNotAllowedError(oauthlib_errors.InvalidRequestError):
    """405 ``invalid_request``: the endpoint does not answer this HTTP method (notes §8)."""

    error = "invalid_request"
    status_code = 405


class InvalidClientError(oauthlib_errors.InvalidClientError):
    """401 ``invalid_client``: unknown client, wrong or missing secret.

    A :class:`FatalClientError` in oauthlib, so ``/authorize`` answers it as JSON.
    """

    error = "invalid_client"
    status_code = 401


class InvalidGrantError(oauthlib_errors.InvalidGrantError):
    """400 ``invalid_grant``: bad, used or expired code; redirect mismatch; PKCE missing or
    mismatched; bad, revoked or expired refresh token."""

    error = "invalid_grant"
    status_code = 400


class InvalidUserCredentialsError(InvalidGrantError):
    """401 ``invalid_grant``: wrong username or password at the password grant (notes §8)."""

    status_code = 401


class InvalidBearerTokenError(InvalidGrantError):
    """401 ``invalid_grant``: bad, revoked or expired access token at ``/userinfo`` (notes §8)."""

    status_code = 401

    @property
    def headers(self) -> dict[str, str]:
        return {"WWW-Authenticate": 'Bearer error="invalid_token"'}


class MissingBearerTokenError(oauthlib_errors.InvalidRequestError):
    """401 ``invalid_request``: ``/userinfo`` without ``Authorization: Bearer`` (notes §8)."""

    error = "invalid_request"
    status_code = 401

    @property
    def headers(self) -> dict[str, str]:
        return {"WWW-Authenticate": "Bearer"}


class InvalidScopeError(oauthlib_errors.InvalidScopeError):
    """400 ``invalid_scope``: a scope outside ``defaultScopes`` or the original grant."""

    error = "invalid_scope"
    status_code = 400


class UnauthorizedClientError(oauthlib_errors.UnauthorizedClientError):
    """400 ``unauthorized_client``: the grant is not in the client's ``grantTypes``."""

    error = "unauthorized_client"
    status_code = 400


class UnsupportedGrantTypeError(oauthlib_errors.UnsupportedGrantTypeError):
    """400 ``unsupported_grant_type``: a ``grant_type`` this provider does not implement."""

    error = "unsupported_grant_type"
    status_code = 400


class UnsupportedResponseTypeError(oauthlib_errors.UnsupportedResponseTypeError):
    """400 ``unsupported_response_type`` (redirected from ``/authorize``)."""

    error = "unsupported_response_type"
    status_code = 400


class AccessDeniedError(oauthlib_errors.AccessDeniedError):
    """400 ``access_denied`` (redirected from ``/authorize``): nobody can approve."""

    error = "access_denied"
    status_code = 400


class ServerError(oauthlib_errors.ServerError):
    """500 ``server_error``: a bug in the provider; details go to the server log only."""

    error = "server_error"
    status_code = 500


def error_body(error: str, description: str | None = None) -> dict[str, str]:
    """``{error, error_description}`` with a default description when none is given."""
    return {"error": error,
            "error_description": description or DEFAULT_DESCRIPTIONS.get(error, error)}


def normalize_error_body(body: str | bytes | None) -> dict[str, Any] | None:
    """The SPEC error body for an oauthlib error answer, or None when ``body`` is no error.

    oauthlib adds ``state`` and ``error_uri`` and may leave ``error_description`` out; the
    SPEC body is exactly ``{error, error_description}``.
    """
    if not body:
        return None
    try:
        parsed = json.loads(body)
    except ValueError:
        return None
    if not isinstance(parsed, dict) or "error" not in parsed:
        return None
    return error_body(str(parsed["error"]), parsed.get("error_description"))
