"""Admin routes for the API key itself: show its prefix, rotate it.

Source: behavior notes §1 "Other routes" (``GET /admin/api-key`` -> ``{keyPrefix, enabled,
keyFilePath, key? (with ?show_key=true)}``, ``POST /admin/api-key/rotate`` -> ``{key,
message}``) and §2.
"""
from __future__ import annotations

import os
from typing import Any

from django.http import HttpRequest
from ninja import Router

from mockd_project import auth
from mockd_project.paths import write_private_file
from mockd_project.runtime import runtime
from mocks.control import openapi_docs as oa
from mocks.control.errors import AdminError

router = Router(tags=["api key"])


def _key_file() -> str:
    return str(auth.api_key_path(runtime.data_dir or "."))


@router.get("/admin/api-key", summary="The admin API key", openapi_extra=oa.answers({
    200: {"keyPrefix": "mk_3f9a2c1b...", "enabled": True,
          "keyFilePath": "/home/me/.local/share/mockd/admin-api-key"}}))
def show_api_key(request: HttpRequest, show_key: bool = False) -> dict[str, Any]:
    """``{keyPrefix: "mk_xxxxxxxx...", enabled, keyFilePath, key?}``."""
    key = runtime.api_key or ""
    out: dict[str, Any] = {"keyPrefix": f"{key[:11]}..." if key else "",
                           "enabled": runtime.api_key is not None, "keyFilePath": _key_file()}
    if show_key and key:
        out["key"] = key
    return out


@router.post("/admin/api-key/rotate", summary="Rotate the admin API key",
             openapi_extra=oa.answers({
                 200: {"key": "mk_" + "3f9a2c1b" * 8,
                       "message": "API key rotated; the old key no longer works"},
                 400: oa.bad_request("auth_disabled", "Authentication is disabled "
                                     "(--no-auth); there is no key to rotate")}))
def rotate_api_key(request: HttpRequest) -> dict[str, Any]:
    """A new key replaces the old one at once (and in the key file): ``{key, message}``."""
    if runtime.api_key is None:
        raise AdminError(400, "auth_disabled", "Authentication is disabled (--no-auth); "
                                               "there is no key to rotate")
    if os.environ.get("MOCKD_API_KEY"):
        raise AdminError(400, "key_from_environment",
                         "The key comes from MOCKD_API_KEY; change the variable and restart")
    key = auth.generate_api_key()
    path = auth.api_key_path(runtime.data_dir or ".")
    path.parent.mkdir(parents=True, exist_ok=True)
    write_private_file(path, key + "\n")
    runtime.api_key = key
    return {"key": key, "message": "API key rotated; the old key no longer works"}
