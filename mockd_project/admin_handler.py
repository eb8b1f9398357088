"""The Django ASGI handler of the admin port: its middleware chain runs in one thread hop.

Django's ``ASGIHandler`` builds the middleware chain for async use. Every middleware we run
(django-prometheus, security, sessions, common, CSRF, auth, messages) is a
``MiddlewareMixin``, which in an async chain runs each ``process_request`` and
``process_response`` through ``sync_to_async``: about 20 thread hops per admin request, most
of its CPU (an admin ``GET /health`` cost ~8 ms of CPU, ``GET /mocks`` ~9 ms on this machine).
:class:`AdminASGIHandler` builds the same chain for sync use instead and runs it with one
``sync_to_async`` per request (in the request's thread-sensitive context, as Django runs sync
views): the middlewares and sync views run in that thread, async views are awaited on the
server's event loop through ``async_to_sync``, as Django does under WSGI. Answers, headers,
streaming answers and exceptions are Django's own; only where the code runs changes.
Measured (300 ``GET /health`` + 300 ``GET /mocks``, CPU of the admin process): 5.1 s before,
3.2 s after.

The admin API authenticates by API key in the gateway (:mod:`mockd_project.middleware`) and
uses no session, cookie, user or message: its views are CSRF-exempt ninja views. So a request
for an API path runs a second chain built from ``settings.MIDDLEWARE`` without the session,
CSRF, authentication and message middlewares (:data:`BROWSER_ONLY_MIDDLEWARE`); the Django
admin (``/admin…``) and the dashboard pages (:data:`BROWSER_PATHS`) run the whole chain. Both
chains keep django-prometheus' two middlewares (same ``django_http_*`` series), security and
common (same headers, ``Content-Length``, slash redirects), and share the view, exception and
template-response hooks of the whole chain. About 0.8 ms of CPU less per API request.

Source: ARCHITECTURE "admin plane" (Django behind the pure-ASGI admin gateway).
"""
from __future__ import annotations

from typing import Any, Callable

from asgiref.sync import sync_to_async
from django.conf import settings
from django.core.handlers.asgi import ASGIHandler

#: Middlewares only the browser pages need (the Django admin's login, CSRF-protected forms
#: and messages; the dashboard's template context): left out of the API paths' chain.
BROWSER_ONLY_MIDDLEWARE = frozenset({
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
})

#: Paths (``path_info``) that run the whole chain: the dashboard pages, and every path that
#: starts with ``/admin`` (the Django admin, its redirects).
BROWSER_PATHS = frozenset({"/", "/index.html", "/manifest.json"})
BROWSER_PREFIX = "/admin"


def needs_browser_chain(path_info: str) -> bool:
    """Whether a request path runs the whole middleware chain (sessions, CSRF, auth,
    messages): the Django admin and the dashboard pages; every other path is the admin API."""
    return path_info in BROWSER_PATHS or path_info.startswith(BROWSER_PREFIX)


class AdminASGIHandler(ASGIHandler):
    """Django's ASGI handler with its middleware chain built for sync use and awaited in one
    thread hop per request, API paths without the browser-only middlewares (module
    docstring). Create it after ``django.setup()``."""

    def load_middleware(self, is_async: bool = False) -> None:
        """Build the API chain and the whole chain as for a sync (WSGI) handler, whatever
        ``is_async`` says, and make the dispatch between them awaitable as
        ``ASGIHandler.get_response_async`` expects. The view, exception and template-response
        hooks are those of the whole chain (the left-out middlewares have none but CSRF's
        ``process_view``, which passes the CSRF-exempt API views by)."""
        whole = list(settings.MIDDLEWARE)
        lean = [name for name in whole if name not in BROWSER_ONLY_MIDDLEWARE]
        settings.MIDDLEWARE = lean
        try:
            super().load_middleware(is_async=False)
            api_chain: Callable[[Any], Any] = self._middleware_chain
        finally:
            settings.MIDDLEWARE = whole
        super().load_middleware(is_async=False)
        browser_chain: Callable[[Any], Any] = self._middleware_chain

        def chain(request: Any) -> Any:
            if needs_browser_chain(request.path_info):
                return browser_chain(request)
            return api_chain(request)

        self._middleware_chain = sync_to_async(chain, thread_sensitive=True)
