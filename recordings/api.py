"""Admin API routes of proxy sessions and HTTP recordings (``/sessions*``, ``/recordings*``).

Source: SPEC "Proxy, CA and recordings"; behavior notes §1 "Proxy, CA, sessions, recordings".
"""
from __future__ import annotations

from ninja import Router

router = Router(tags=["recordings"])
