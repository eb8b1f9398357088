"""A HAR that a real browser recorded imports into mocks that answer with the same bytes.

Chromium (Debian's, driven by Playwright) loads a page from a mockd
engine on 127.0.0.1: HTML that shows a PNG (a ``bodyFile``) and fetches JSON. The HAR it
writes (bodies embedded; the PNG as base64) goes through ``mockd import --include-static``
into a fresh server, and every recorded path must answer there with the origin's status,
Content-Type and body bytes. The native export keeps ``bodyBase64`` as written.

Without Chromium (``tests.thirdparty.chromium_executable``: ``$MOCKD_TEST_CHROMIUM``, else
``chromium-headless-shell``, else ``chromium``) or Playwright the test skips, except under CI
(``$CI`` true), where it fails: ``.ci/run`` installs chromium-headless-shell, and the ``dev``
extra installs Playwright.

Source: SPEC "Response" (``bodyBase64``, ``bodyFile``), "Import and export"; HAR import.
"""
from __future__ import annotations

import base64
import json
import os
import struct
import zlib
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml

from tests.helpers import http_mock, make_config, run_mockd, start_engine, start_server
from tests.thirdparty import chromium_executable

pytestmark = pytest.mark.integration

#: Seconds any one browser step may take (launch, page load, waiting for the page's work).
BROWSER_TIMEOUT_MS = 30_000

PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>loading</title>
<link rel="icon" href="data:,"></head>
<body><h1>Café</h1>
<img id="logo" src="/logo.png" alt="logo">
<p id="out"></p>
<script>
const image = document.getElementById("logo");
const loaded = image.complete ? Promise.resolve() : new Promise((ok, fail) => {
  image.onload = ok; image.onerror = fail; });
const data = fetch("/api/data").then(answer => answer.json());
Promise.all([loaded, data]).then(([, body]) => {
  document.getElementById("out").textContent = body.name;
  document.title = "done";
});
</script>
</body></html>
"""


def png_image(width: int = 8, height: int = 8) -> bytes:
    """A real RGB PNG of ``width`` x ``height`` pixels (a colour gradient)."""
    rows = b"".join(b"\x00" + bytes(channel for x in range(width)
                                    for channel in (x * 30 % 256, y * 30 % 256, 200))
                    for y in range(height))

    def chunk(kind: bytes, payload: bytes) -> bytes:
        return (struct.pack(">I", len(payload)) + kind + payload
                + struct.pack(">I", zlib.crc32(kind + payload) & 0xFFFFFFFF))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


def record_har(executable: str, origin: str, har_path: Path) -> None:
    """Load ``origin``/ in Chromium, wait for the page to finish, write the HAR."""
    from playwright.sync_api import sync_playwright

    args = ["--no-sandbox"] if os.geteuid() == 0 else []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=args,
                                             timeout=BROWSER_TIMEOUT_MS)
        try:
            context = browser.new_context(record_har_path=str(har_path),
                                          record_har_content="embed")
            context.set_default_timeout(BROWSER_TIMEOUT_MS)
            blocked: list[str] = []

            def only_loopback(route, request) -> None:
                if request.url.startswith(origin + "/"):
                    route.continue_()
                else:  # never anything but the engine on 127.0.0.1
                    blocked.append(request.url)
                    route.abort()

            context.route("**/*", only_loopback)
            page = context.new_page()
            page.goto(origin + "/", wait_until="load")
            page.wait_for_function("document.title === 'done'")
            assert page.text_content("#out") == "zoë"
            assert page.evaluate("document.getElementById('logo').naturalWidth") == 8
            context.close()  # writes the HAR
            assert blocked == []
        finally:
            browser.close()


def test_chromium_har_imports_into_mocks_that_answer_byte_for_byte(tmp_path):
    executable = chromium_executable()
    png = png_image()
    origin_dir = tmp_path / "origin"
    origin_dir.mkdir()
    (origin_dir / "logo.png").write_bytes(png)
    origin_config = make_config(
        http_mock("page", "GET", "/", body=PAGE,
                  headers={"Content-Type": "text/html; charset=utf-8"}),
        http_mock("logo", "GET", "/logo.png", response={"bodyFile": "logo.png"}),
        http_mock("data", "GET", "/api/data", body={"name": "zoë", "items": [1, 2, 3]}))
    har_path = tmp_path / "page.har"
    originals: dict[str, tuple[int, str, bytes]] = {}
    with start_engine(origin_dir, origin_config) as origin:
        record_har(executable, origin.base, har_path)
        entries = json.loads(har_path.read_text())["log"]["entries"]
        paths = sorted({urlsplit(entry["request"]["url"]).path for entry in entries})
        assert paths == ["/", "/api/data", "/logo.png"]
        with origin.client() as client:
            for path in paths:
                answer = client.get(path)
                originals[path] = (answer.status_code, answer.headers["content-type"],
                                   answer.content)
    assert originals["/logo.png"] == (200, "image/png", png)  # bodyFile: bytes, type by name
    recorded_png = next(entry["response"]["content"] for entry in entries
                        if entry["request"]["url"].endswith("/logo.png"))
    assert recorded_png.get("encoding") == "base64"
    assert base64.b64decode(recorded_png["text"]) == png

    target_dir = tmp_path / "target"
    target_dir.mkdir()
    with start_server(target_dir) as target:
        done = run_mockd(["import", str(har_path), "--include-static", "--json",
                          "--admin-url", target.admin], tmp_path)
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["imported"] == len(paths)
        with target.client() as client:
            for path in paths:
                answer = client.get(path)
                assert (answer.status_code, answer.headers["content-type"],
                        answer.content) == originals[path], path
        # The native export keeps the imported bodyBase64 as it is.
        with target.admin_client() as admin:
            exported = admin.get("/config").json()
        logo = next(mock for mock in exported["mocks"]
                    if mock["http"]["matcher"]["path"] == "/logo.png")
        assert base64.b64decode(logo["http"]["response"]["bodyBase64"]) == png
        assert "body" not in logo["http"]["response"]


def test_native_export_keeps_body_base64_verbatim(tmp_path):
    png = png_image(2, 2)
    # Wrapped at 16 characters: an export must not re-encode or re-wrap it.
    encoded = base64.b64encode(png).decode()
    wrapped = "\n".join(encoded[start:start + 16] for start in range(0, len(encoded), 16))
    config = make_config(http_mock("img", "GET", "/img.bin",
                                   response={"bodyBase64": wrapped}))
    with start_server(tmp_path, config) as server:
        with server.client() as client:
            answer = client.get("/img.bin")
        assert (answer.headers["content-type"], answer.content) == \
            ("application/octet-stream", png)
        with server.admin_client() as admin:
            document = admin.get("/config").json()
        assert document["mocks"][0]["http"]["response"]["bodyBase64"] == wrapped
        out = tmp_path / "export.yaml"
        done = run_mockd(["export", "-o", str(out), "--admin-url", server.admin], tmp_path)
        assert done.returncode == 0, done.stderr
        mock = yaml.safe_load(out.read_text())["mocks"][0]
        assert mock["http"]["response"]["bodyBase64"] == wrapped
