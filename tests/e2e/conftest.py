"""Fixtures of the dashboard's browser tests: a real ``mockd start`` (with an API key) and
headless Chromium driven by Playwright.

Chromium is Debian's (``$MOCKD_TEST_CHROMIUM``, else ``chromium`` on PATH, else
``/usr/bin/chromium``); Playwright never downloads a browser. Without chromium or Playwright the
tests skip with the reason, except under CI (``$CI`` true), where they fail: ``.ci/run``
installs chromium and the ``dev`` extra installs Playwright. Pages may only reach the server
under test: any other request is aborted and fails the test (the dashboard works offline).

Screenshots go to ``$MOCKD_TEST_ARTIFACTS`` (default ``tests/artifacts/``, not committed):
``screenshot(page, "mocks")`` writes ``dashboard-mocks.png``.
"""
from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.helpers import MockdProcess, start_server

ARTIFACTS = Path(os.environ.get("MOCKD_TEST_ARTIFACTS")
                 or Path(__file__).resolve().parent.parent / "artifacts")
#: Chromium's console line for a 400 answer to a fetch, for tests that provoke one on purpose
#: (``expected_console.append(EXPECTED_400)``).
EXPECTED_400 = "the server responded with a status of 400"
#: How long a page may take to show what a test waits for (ms; a loaded 2-core machine).
WAIT_MS = 15_000


def chromium_executable() -> str:
    """The chromium executable; skips (fails under CI) when it or Playwright is missing."""
    reason = None
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        reason = "Playwright is not installed (pip install -e '.[dev]')"
    executable = (os.environ.get("MOCKD_TEST_CHROMIUM") or shutil.which("chromium")
                  or "/usr/bin/chromium")
    if reason is None and not os.access(executable, os.X_OK):
        reason = f"no chromium at {executable} (apt-get install chromium)"
    if reason is not None:
        if os.environ.get("CI", "").lower() in {"1", "true", "yes"}:
            pytest.fail(f"browser tests must run under CI: {reason}")
        pytest.skip(reason)
    return executable


def api_key_of(data_dir: Path) -> str:
    """The admin API key ``mockd start`` wrote into its data dir."""
    return (data_dir / "admin-api-key").read_text().strip()


@pytest.fixture(scope="module")
def dashboard_server(tmp_path_factory) -> Iterator[MockdProcess]:
    """``mockd start`` with an API key (``server.api_key``), an empty config, one per test
    module; ``server.admin`` is the dashboard's origin."""
    tmp_path = tmp_path_factory.mktemp("dashboard")
    server = start_server(tmp_path, None, no_auth=False)
    try:
        server.api_key = api_key_of(tmp_path / "data")
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def admin_api(dashboard_server) -> Iterator[httpx.Client]:
    """An httpx client of the admin API with the key."""
    with httpx.Client(base_url=dashboard_server.admin, timeout=10,
                      headers={"X-API-Key": dashboard_server.api_key}) as client:
        yield client


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    """One headless Chromium per test process (each pytest-xdist worker), shared by the test
    modules, each test in a context of its own (:func:`page`). Playwright's sync API keeps an
    asyncio event loop running in the main thread while it is started, so a later test of the
    same worker calling ``asyncio.run`` would fail: ``tests/conftest.py`` runs the browser
    tests after every other test."""
    executable = chromium_executable()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=executable, headless=True,
            args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def expected_console() -> list[str]:
    """Texts of console errors a test provokes on purpose (Chromium logs every 4xx answer of
    a fetch: "400 (Bad Request)"); a console error containing one of them does not fail it."""
    return []


@pytest.fixture
def page(browser, dashboard_server, expected_console) -> Iterator[Any]:
    """A fresh browser page whose tab already holds the API key (as after the key prompt),
    that may reach the server under test only; page errors and console errors (other than a
    401 before the key prompt and the test's ``expected_console``) fail the test."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    key = dashboard_server.api_key
    context.add_init_script(f"sessionStorage.setItem('mockd.apiKey', {key!r});")
    allowed = (dashboard_server.admin, dashboard_server.base)
    blocked: list[str] = []

    def only_the_server(route, request) -> None:
        if request.url.startswith(allowed) or request.url.startswith(("data:", "blob:")):
            route.continue_()
        else:
            blocked.append(request.url)
            route.abort()

    context.route("**/*", only_the_server)
    page = context.new_page()
    page.set_default_timeout(WAIT_MS)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    def console(message) -> None:
        if message.type == "error" and "401" not in message.text \
                and not any(text in message.text for text in expected_console):
            errors.append(message.text)

    page.on("console", console)
    try:
        yield page
    finally:
        context.close()
    assert not blocked, f"the dashboard tried to reach other origins: {blocked}"
    assert not errors, f"errors in the page: {errors}"


def screenshot(page: Any, name: str) -> Path:
    """Save a full-page PNG of ``page`` as ``dashboard-<name>.png`` in the artifacts folder."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"dashboard-{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path
