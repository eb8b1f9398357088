"""Admin API routes of the recording proxy and its CA (``/proxy/*``).

Source: SPEC "Proxy, CA and recordings"; behavior notes §1 "Proxy, CA, sessions, recordings".
"""
from __future__ import annotations

from ninja import Router

router = Router(tags=["proxy"])
