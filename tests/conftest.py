"""Test-wide settings: Django points at a throw-away data directory.

The suite runs in parallel (pytest-xdist, ``-n`` in pyproject's ``addopts``): every worker is
its own process and imports this file itself, so each worker gets its own data directory and
its own in-memory test database. Shared resources are made safe where they are handed out:
ports in :func:`tests.helpers.free_port`, the npm cache in :mod:`tests.thirdparty`.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

os.environ.setdefault("MOCKD_DATA_DIR", tempfile.mkdtemp(prefix="mockd-tests-"))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mockd_project.settings")

#: Protocol areas, each a marker registered in pyproject.toml: a test file whose name starts
#: with ``test_<prefix>``, or that sits in a folder named after the area, gets the marker, so
#: ``pytest -m grpc`` runs one area.
AREA_PREFIXES = {
    "http": ("http", "cors", "request_validation", "matching", "conditions", "queryparams",
             "responses", "response_sequence", "data_plane"),
    "grpc": ("grpc",),
    "graphql": ("graphql",),
    "soap": ("soap", "xmldoc"),
    "websocket": ("websocket", "docs_websocket"),
    "sse": ("sse",),
    "mqtt": ("mqtt",),
    "oidc": ("oidc",),
    "tables": ("tables", "custom_operations", "member_bindings", "stripe", "docs_tables"),
    "chaos": ("chaos",),
    "admin": ("admin",),
    "importers": ("import", "export", "wiremock", "har"),
    "cli": ("cli",),
    "tls": ("tls",),
    # Not protocols, but areas as often run alone.
    "config": ("config", "server_config", "loader", "runner_file_settings", "data_dir",
               "engine_token", "restart_merge", "runserver"),
    "security": ("security", "requestlog_security", "host_policy", "private_files",
                 "redaction"),
    "docs": ("docs", "readme", "repository_docs"),
    "recording": ("proxy", "recording", "recordings", "stream_", "convert_"),
    "dashboard": ("dashboard",),
    "library": ("library", "pytest_plugin", "mock_server"),
}


def pytest_xdist_auto_num_workers(config):
    """``-n auto``: a worker per core plus one. The tests spend about a sixth of their time
    waiting for the servers they start (a process starting, a socket answering); with a worker
    per core a 2-core machine ran 85 % busy, with one more 95 % (and the suite 17 % sooner)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return cores + 1


#: Browser test files (``tests/e2e/``) form this many groups under pytest-xdist; a group runs
#: on one worker, file after file, in one Chromium (``tests/e2e/conftest.py``), instead of a
#: Chromium and its Playwright driver started per file (about 2 s of CPU each).
BROWSER_GROUPS = 2


def pytest_xdist_make_scheduler(config, log):
    """``--dist loadfile`` with the browser test files in :data:`BROWSER_GROUPS` groups (the
    files in name order, dealt in turn); every other file is a unit of its own, as usual."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    browser_files = sorted(path.name
                           for path in (Path(__file__).parent / "e2e").glob("test_*.py"))

    class BrowserGroupScheduling(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            scope = super()._split_scope(nodeid)
            folder, _, name = scope.rpartition("/")
            if folder == "tests/e2e" and name in browser_files:
                return f"tests/e2e browser group {browser_files.index(name) % BROWSER_GROUPS}"
            return scope

    return BrowserGroupScheduling(config, log)


def pytest_configure(config):
    """Load the Django settings so pytest-django sets Django up (its own hook runs last and
    only sets up Django when the settings are already configured)."""
    from django.conf import settings

    for database in settings.DATABASES.values():
        # Our engine is django-prometheus' sqlite wrapper, which pytest-django does not know
        # for sqlite: under xdist it would name a test database file "test_<path>_gw0" in a
        # folder that does not exist. Name Django's own default (a per-process in-memory
        # database) explicitly, which pytest-django leaves alone.
        test = database.setdefault("TEST", {})
        if not test.get("NAME"):  # Django may have filled in None already
            test["NAME"] = ":memory:"
    # In-process users (pytest-django's admin_client, create_superuser) get a cheap password
    # hash: PBKDF2 costs half a second of CPU per password.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    # Each xdist worker rewrites the asserts of its share of the test modules into pytest's
    # cache before collecting, not all of them (tests/rewrite_cache.py).
    from tests.rewrite_cache import share_out

    share_out(config)
    _share_default_ssl_contexts()


def _share_default_ssl_contexts() -> None:
    """Every ``httpx.Client``/``AsyncClient`` of the tests built with the default verification
    (``verify=True``, no ``cert``) gets one shared ``ssl.SSLContext`` per ``trust_env`` value
    instead of a new one: httpx builds a context for each client, even for ``http://`` URLs,
    and loading the CA bundle costs ~45 ms of CPU each time (hundreds of clients a run). The
    context is the one httpx would build (same CA bundle, same checks); clients given their
    own context or ``verify=False`` are untouched. Does nothing when httpx's transport module
    no longer has ``create_ssl_context``."""
    import ssl

    try:
        from httpx._transports import default as transports
    except ImportError:
        return
    create = getattr(transports, "create_ssl_context", None)
    if create is None or getattr(create, "shared_for_tests", False):
        return
    shared: dict[tuple[bool, str, str], ssl.SSLContext] = {}

    def create_ssl_context(verify=True, cert=None, trust_env=True):
        if verify is not True or cert is not None:
            return create(verify=verify, cert=cert, trust_env=trust_env)
        key = (bool(trust_env), os.environ.get("SSL_CERT_FILE", ""),
               os.environ.get("SSL_CERT_DIR", ""))
        if key not in shared:
            shared[key] = create(verify=True, cert=None, trust_env=trust_env)
        return shared[key]

    create_ssl_context.shared_for_tests = True
    transports.create_ssl_context = create_ssl_context


#: The slowest test files (a few long tests each: fuzzing, restarts, README walk-throughs, the
#: browser files that load the largest pages), measured with ``--durations``. They run first
#: so that they do not run alone at the end while the other workers idle (xdist's own
#: reordering, largest file first, put them last). xdist hands each worker two files to begin
#: with, in this order: a browser file and a busy one alternate in the first rounds.
RUN_FIRST = ("test_admin_fuzz.py", "test_dashboard_transfer.py", "test_cli_server.py",
             "test_dashboard_shell.py", "test_custom_operations.py", "test_restart_merge.py",
             "test_readme_examples.py", "test_docs_tables.py", "test_dashboard_mocks.py",
             "test_import_export.py", "test_dashboard_tables.py", "test_admin_extras.py",
             "test_admin_persistence.py", "test_har_browser.py", "test_admin_secrets_cli.py",
             "test_data_dir_and_key.py", "test_graphql_wild_schemas.py", "test_config_trust.py")


def _run_order(item) -> tuple[int, int]:
    """Sort key: :data:`RUN_FIRST` files, then the other integration and browser tests (real
    processes), then the unit tests; a stable sort keeps each file's tests together and in
    order. A browser test file starts and stops its own Chromium (``tests/e2e/conftest.py``),
    so a later test of the same worker may call ``asyncio.run``."""
    path = Path(str(item.path))
    if path.name in RUN_FIRST:
        return 0, RUN_FIRST.index(path.name)
    return (1 if {"integration", "e2e"} & set(path.parts) else 2), 0


def _spread_browser_files(items: list) -> list:
    """``items`` (sorted by :func:`_run_order`) with the browser test files that are not in
    :data:`RUN_FIRST` spread evenly among the integration files instead of in one block: a
    browser test mostly waits for the page (Chromium's CPU comes in bursts), so workers busy
    with browser files at the same time leave the cores idle. Files stay whole and in order."""
    files: dict[str, list] = {}
    for item in items:
        files.setdefault(str(item.path), []).append(item)
    first, browser, integration, rest = [], [], [], []
    for name, file_items in files.items():
        order = _run_order(file_items[0])[0]
        path = Path(name)
        if order == 0:
            first.append(file_items)
        elif order == 1 and "e2e" in path.parts:
            browser.append(file_items)
        elif order == 1:
            integration.append(file_items)
        else:
            rest.append(file_items)
    merged: list[list] = []
    step = max(1, len(integration) // (len(browser) + 1))
    for index, file_items in enumerate(integration):
        if browser and index % step == step - 1:
            merged.append(browser.pop(0))
        merged.append(file_items)
    merged += browser
    return [item for file_items in (*first, *merged, *rest) for item in file_items]


def pytest_collection_modifyitems(config, items):
    """Order the tests (:func:`_run_order`) and mark each with its protocol area
    (``AREA_PREFIXES``) from its file or folder name."""
    items.sort(key=_run_order)
    items[:] = _spread_browser_files(items)
    for item in items:
        path = Path(str(item.path))
        name = path.name.removeprefix("test_")
        folders = set(path.parent.relative_to(config.rootpath).parts) \
            if path.is_relative_to(config.rootpath) else set()
        for area, prefixes in AREA_PREFIXES.items():
            if name.startswith(prefixes) or area in folders:
                item.add_marker(getattr(pytest.mark, area))
