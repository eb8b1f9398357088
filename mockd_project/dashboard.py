"""The web dashboard's shell on the admin port: ``GET /`` (also ``/index.html``) and
``/manifest.json``.

The dashboard is one page (``templates/dashboard/index.html``) whose scripts
(``static/dashboard/js/``) render every area in the browser from the admin API, so the pages
carry no data and need no key (behavior notes §2 lists ``/``, ``/index.html`` and
``/manifest.json`` as exempt); every data call sends the API key the user entered once (kept in
the tab's session storage) as ``X-API-Key``. Areas are addressed by the URL fragment
(``/#/mocks``, ``/#/requests``...). Nothing is loaded from another origin: the page runs under
the admin port's ``Content-Security-Policy: default-src 'self'``.

Source: SPEC "What the service does" (web dashboard served from the admin port); issue 30.
"""
from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render

from mockd_project import __version__
from mockd_project.runtime import runtime

#: The dashboard's areas: ``(fragment, title)``; the script of area ``x`` is
#: ``static/dashboard/js/pages/x.js`` (the overview's is ``overview.js``).
AREAS: tuple[tuple[str, str], ...] = (
    ("overview", "Overview"),
    ("mocks", "Mocks"),
    ("requests", "Request log"),
    ("tables", "Tables"),
    ("streams", "Streams"),
    ("chaos", "Chaos"),
    ("recordings", "Recordings"),
    ("transfer", "Import / export"),
    ("try", "Try it"),
)


#: The dashboard's Content-Security-Policy: everything from the admin port itself, except
#: that scripts may also connect (fetch, WebSocket, EventSource) to loopback origins on any
#: port, so the "Try it" area can call the mocks on the data plane, the gRPC/MQTT listeners'
#: WebSocket ports and an HTTPS data plane as a real client would (CSP has no IPv6 literal
#: sources, so [::1] is not among them). No inline script or style.
DASHBOARD_CSP = ("default-src 'self'; img-src 'self' data:; connect-src 'self' "
                 + " ".join(f"{scheme}://{host}:*" for scheme in ("http", "https", "ws", "wss")
                            for host in ("127.0.0.1", "localhost"))
                 + "; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")


def index(request: HttpRequest) -> HttpResponse:
    """The dashboard page (HTML, no data): header, navigation, the key prompt and the area
    container; ``auth`` tells the scripts whether the admin API wants a key. Served with
    :data:`DASHBOARD_CSP` and the data-plane URL (``data-data-url``) for "Try it"."""
    ports = runtime.ports
    data_url = f"http://127.0.0.1:{ports['data']}" if "data" in ports else ""
    response = render(request, "dashboard/index.html", {
        "version": __version__,
        "areas": AREAS,
        "auth_required": runtime.api_key is not None,
        "data_url": data_url,
        "https_url": f"https://127.0.0.1:{ports['https']}" if "https" in ports else "",
    })
    response["Content-Security-Policy"] = DASHBOARD_CSP
    return response


def manifest(request: HttpRequest) -> JsonResponse:
    """The web app manifest of the dashboard (name, start URL, colours)."""
    return JsonResponse({"name": "mockd", "short_name": "mockd", "start_url": "/",
                         "display": "standalone", "background_color": "#ffffff",
                         "theme_color": "#1f6feb"})
