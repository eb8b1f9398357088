"""Fixtures of the dashboard's browser tests: a real ``mockd start`` (with an API key) and
headless Chromium driven by Playwright.

Chromium is Debian's (``tests.thirdparty.chromium_executable``: ``$MOCKD_TEST_CHROMIUM``, else
``chromium-headless-shell``, else ``chromium``); Playwright never downloads a browser. Without
Chromium or Playwright the tests skip with the reason, except under CI (``$CI`` true), where
they fail: ``.ci/run`` installs chromium-headless-shell and the ``dev`` extra installs
Playwright. Pages may only reach the server under test: Chromium resolves no host but
127.0.0.1, and a request to any other origin fails the test (the dashboard works offline).

Screenshots (of the window, not the whole page) go to ``$MOCKD_TEST_ARTIFACTS`` (default
``tests/artifacts/``, not committed): ``screenshot(page, "mocks")`` writes
``dashboard-mocks.png``.
"""
from __future__ import annotations

import os
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.helpers import MockdProcess, start_server
from tests.thirdparty import chromium_executable

ARTIFACTS = Path(os.environ.get("MOCKD_TEST_ARTIFACTS")
                 or Path(__file__).resolve().parent.parent / "artifacts")
#: Chromium's console line for a 400 answer to a fetch, for tests that provoke one on purpose
#: (``expected_console.append(EXPECTED_400)``).
EXPECTED_400 = "the server responded with a status of 400"
#: How long a page may take to show what a test waits for (ms; a loaded 2-core machine).
WAIT_MS = 15_000


def api_key_of(data_dir: Path) -> str:
    """The admin API key ``mockd start`` wrote into its data dir."""
    return (data_dir / "admin-api-key").read_text().strip()


def _start_dashboard_server(tmp_path: Path) -> MockdProcess:
    """``mockd start`` with an API key and an empty config in ``tmp_path``; the key is
    ``server.api_key``."""
    server = start_server(tmp_path, None, no_auth=False)
    try:
        server.api_key = api_key_of(tmp_path / "data")
    except BaseException:
        server.stop()
        raise
    return server


@pytest.fixture(scope="module")
def server_start(tmp_path_factory) -> Iterator[Future]:
    """The module's ``mockd start`` begun on a thread (a :class:`Future` of its
    :class:`MockdProcess`), so that Chromium starts (:func:`browser`) while the server boots;
    stopped at the end of the module."""
    tmp_path = tmp_path_factory.mktemp("dashboard")
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mockd-start")
    future = pool.submit(_start_dashboard_server, tmp_path)
    try:
        yield future
    finally:
        pool.shutdown(wait=True)
        if future.exception() is None:
            future.result().stop()


@pytest.fixture(scope="module")
def dashboard_server(server_start) -> MockdProcess:
    """``mockd start`` with an API key (``server.api_key``), an empty config, one per test
    module, once it answers; ``server.admin`` is the dashboard's origin."""
    return server_start.result()


@pytest.fixture(scope="module")
def admin_api(dashboard_server) -> Iterator[httpx.Client]:
    """An httpx client of the admin API with the key."""
    with httpx.Client(base_url=dashboard_server.admin, timeout=10,
                      headers={"X-API-Key": dashboard_server.api_key}) as client:
        yield client


@pytest.fixture(scope="module")
def data(dashboard_server) -> Iterator[httpx.Client]:
    """An httpx client of the data plane (``server.base``), one per module (making a client
    costs tens of milliseconds of CPU: its TLS context); no proxy from the environment."""
    with httpx.Client(base_url=dashboard_server.base, timeout=10, trust_env=False) as client:
        yield client


#: Chromium resolves no host name and no address but 127.0.0.1: a page (or Chromium itself)
#: that tries another host gets a network error at once and nothing leaves the machine.
#: Every request of a page is also recorded (:class:`OriginGuard`), so one to another origin
#: fails the test even when the page ignores the error.
ONLY_LOOPBACK = "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"


class _SharedBrowser:
    """One Playwright driver and headless Chromium for the browser test files a worker runs
    in a row (``tests/conftest.py`` deals them out in groups), each test in a context of its
    own (:func:`page`). Stopped after the last browser test before any other test: Playwright's
    sync API keeps an asyncio event loop set as running in the main thread while it is
    started, and a later test of the same process may call ``asyncio.run``."""

    def __init__(self) -> None:
        self.playwright_manager: Any = None
        self.browser: Any = None

    def get(self) -> Any:
        if self.browser is None:
            executable = chromium_executable()
            from playwright.sync_api import sync_playwright

            self.playwright_manager = sync_playwright()
            playwright = self.playwright_manager.__enter__()
            try:
                self.browser = playwright.chromium.launch(
                    executable_path=executable, headless=True,
                    args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                          ONLY_LOOPBACK])
            except BaseException:
                self.stop()
                raise
        return self.browser

    def stop(self) -> None:
        browser, manager = self.browser, self.playwright_manager
        self.browser = self.playwright_manager = None
        try:
            if browser is not None:
                browser.close()
        finally:
            if manager is not None:
                manager.__exit__(None, None, None)


_shared_browser = _SharedBrowser()


@pytest.fixture(scope="module")
def browser(server_start) -> Any:
    """The worker's headless Chromium (:class:`_SharedBrowser`), started while the module's
    server boots (``server_start``) when no browser test ran just before."""
    return _shared_browser.get()


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item, nextitem) -> None:
    """After a browser test's own teardown: stop the shared browser when the next test is not
    a browser test (or there is none)."""
    folder = Path(__file__).resolve().parent
    if nextitem is None or Path(str(nextitem.path)).resolve().parent != folder:
        _shared_browser.stop()


class OriginGuard:
    """Records the requests of every page of a browser context (popups included) that go
    to an origin other than ``allowed`` (URL prefixes such as ``"http://127.0.0.1:4290"``);
    ``data:`` and ``blob:`` URLs are local. :meth:`check` fails with the URLs recorded.
    Chromium's host rules (:data:`ONLY_LOOPBACK`) make such a request fail in the page;
    WebSocket connections are not requests and are not recorded."""

    def __init__(self, context: Any, allowed: tuple[str, ...]):
        self.allowed = tuple(allowed) + ("data:", "blob:")
        self.other_origins: list[str] = []
        context.on("request", self._note)

    def _note(self, request: Any) -> None:
        if not request.url.startswith(self.allowed):
            self.other_origins.append(request.url)

    def check(self) -> None:
        """Raise ``AssertionError`` naming the requests to other origins, if any."""
        assert not self.other_origins, \
            f"the dashboard tried to reach other origins: {self.other_origins}"


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
    guard = OriginGuard(context, (dashboard_server.admin, dashboard_server.base))
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
    guard.check()
    assert not errors, f"errors in the page: {errors}"


def screenshot(page: Any, name: str) -> Path:
    """Save a PNG of what ``page`` shows in its window (1280 x 900 for :func:`page`; a
    full-page one costs about three times the CPU, and seconds for the API docs) as
    ``dashboard-<name>.png`` in the artifacts folder; returns its path."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"dashboard-{name}.png"
    page.screenshot(path=str(path))
    return path
