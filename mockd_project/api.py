"""The admin API's table of contents: composes each app's ninja ``Router`` (STYLE §8)."""
from __future__ import annotations

from ninja import NinjaAPI

from mockd_project import __version__
from mocks.api import router as mocks_router

api = NinjaAPI(title="mockd admin API", version=__version__, urls_namespace="mockd-admin",
               docs_url="/docs", openapi_url="/openapi-admin.json")
api.add_router("", mocks_router)
