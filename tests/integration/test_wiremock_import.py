"""A WireMock mappings directory (with ``__files``, comments, a scenario and a PNG) imported
with ``mockd import`` into a real server: the converted conditions behave exactly, the
scenario walks its states and resets, and the PNG comes back byte for byte."""
from __future__ import annotations

import json
import struct
import zlib

import pytest

from tests.helpers import run_mockd, start_server

pytestmark = pytest.mark.integration


def _png() -> bytes:
    """A valid 1x1 PNG, built here (not UTF-8: it starts with byte 0x89)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))
    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    pixels = zlib.compress(b"\x00\xff\x80\x00")
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels)
            + chunk(b"IEND", b""))


PNG = _png()

MATCHING = {"mappings": [
    {"request": {"method": "GET", "urlPath": "/trace",
                 "headers": {"X-Trace": {"contains": "abc"}}},
     "response": {"status": 200, "body": "traced"}},
    {"request": {"method": "GET", "urlPath": "/ids",
                 "headers": {"X-Id": {"matches": "[0-9]+"}},
                 "queryParameters": {"mode": {"doesNotMatch": "debug.*"}}},
     "response": {"status": 200, "body": "id ok"}},
    {"request": {"method": "POST", "urlPath": "/cart",
                 "bodyPatterns": [{"equalToJson": '{"items": [1, 2, 3], "user": "ada"}',
                                   "ignoreArrayOrder": True}]},
     "response": {"status": 200, "jsonBody": {"total": 3}}},
    {"request": {"method": "POST", "urlPath": "/soap",
                 "bodyPatterns": [{"equalToXml": '<o:order xmlns:o="urn:shop" id="7">'
                                                 '<o:item>pen</o:item></o:order>'}]},
     "response": {"status": 200, "body": "<ok/>",
                  "headers": {"Content-Type": "application/xml"}}},
]}

# Written as a file with comments, as people keep them.
TODO_FLOW = """// A to-do list: empty, then one item, then done.
{
  "mappings": [
    /* step 1 */
    {"scenarioName": "todo", "requiredScenarioState": "Started",
     "request": {"method": "GET", "urlPath": "/todo"},
     "response": {"status": 200, "jsonBody": []}},
    {"scenarioName": "todo", "requiredScenarioState": "Started", "newScenarioState": "Added",
     "request": {"method": "POST", "urlPath": "/todo"},
     "response": {"status": 201, "body": "added"}},
    // step 2
    {"scenarioName": "todo", "requiredScenarioState": "Added", "newScenarioState": "Done",
     "request": {"method": "GET", "urlPath": "/todo"},
     "response": {"status": 200, "jsonBody": ["milk"]}},
    // step 3
    {"scenarioName": "todo", "requiredScenarioState": "Done",
     "request": {"method": "GET", "urlPath": "/todo"},
     "response": {"status": 200, "jsonBody": {"done": true}}}
  ]
}
"""

LOGO = {"request": {"method": "GET", "url": "/logo"},
        "response": {"status": 200, "bodyFileName": "img/logo.png"}}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    root = tmp_path_factory.mktemp("wiremock-import")
    mappings = root / "wm" / "mappings"
    mappings.mkdir(parents=True)
    (root / "wm" / "__files" / "img").mkdir(parents=True)
    (root / "wm" / "__files" / "img" / "logo.png").write_bytes(PNG)
    (mappings / "matching.json").write_text(json.dumps(MATCHING))
    (mappings / "todo.json").write_text(TODO_FLOW)
    (mappings / "logo.json").write_text(json.dumps(LOGO))
    with start_server(root) as process:
        done = run_mockd(["import", str(root / "wm"), "--json", "--admin-url", process.admin],
                         root)
        assert done.returncode == 0, done.stderr
        process.imported = json.loads(done.stdout)
        process.import_stderr = done.stderr
        yield process


def test_every_mapping_is_imported(server):
    assert server.imported["imported"] == 9, server.import_stderr
    assert server.import_stderr == "" or "skipped" not in server.import_stderr
    assert server.imported["format"] == "wiremock"


def test_contains_matches_and_does_not_match_behave_exactly(data):
    assert data.get("/trace", headers={"X-Trace": "zz-abc-zz"}).text == "traced"
    assert data.get("/trace", headers={"X-Trace": "ABC"}).status_code == 404
    assert data.get("/trace").status_code == 404
    assert data.get("/ids", headers={"X-Id": "123"}, params={"mode": "fast"}).text == "id ok"
    assert data.get("/ids", headers={"X-Id": "123a"},
                    params={"mode": "fast"}).status_code == 404  # matches the whole value
    assert data.get("/ids", headers={"X-Id": "123"},
                    params={"mode": "debug-1"}).status_code == 404
    assert data.get("/ids", headers={"X-Id": "123"}).status_code == 404  # missing param


def test_equal_to_json_compares_json_not_text(data):
    answer = data.post("/cart", content=b'{ "user": "ada", "items": [3, 1, 2] }')
    assert answer.status_code == 200 and answer.json() == {"total": 3}
    assert data.post("/cart", content=b'{"user": "ada", "items": [3, 1, 2],'
                                       b' "coupon": "x"}').status_code == 404
    assert data.post("/cart", content=b'{"user": "ada", "items": [3, 1]}').status_code == 404
    assert data.post("/cart", content=b"not json").status_code == 404


def test_equal_to_xml_ignores_prefixes_attribute_order_and_white_space(data):
    same = b'<order xmlns="urn:shop" id="7">\n  <item> pen </item>\n</order>'
    assert data.post("/soap", content=same).text == "<ok/>"
    other = b'<order xmlns="urn:shop" id="7"><item>ink</item></order>'
    assert data.post("/soap", content=other).status_code == 404
    assert data.post("/soap", content=b"<order").status_code == 404


def test_scenario_walks_its_three_steps_and_resets(data, admin):
    admin.post("/scenarios/reset")
    assert data.get("/todo").json() == []
    assert data.post("/todo").status_code == 201
    assert data.get("/todo").json() == ["milk"]
    assert data.get("/todo").json() == {"done": True}
    assert data.get("/todo").json() == {"done": True}
    assert data.post("/todo").status_code == 404
    listed = admin.get("/scenarios").json()
    assert listed == {"scenarios": [{"name": "todo", "state": "Done",
                                     "possibleStates": ["Started", "Added", "Done"],
                                     "workspaceId": "local"}], "count": 1}
    assert admin.post("/state/reset").status_code == 200
    assert data.get("/todo").json() == []
    assert admin.put("/scenarios/todo/state", json={"state": "Added"}).status_code == 200
    assert data.get("/todo").json() == ["milk"]
    assert admin.post("/scenarios/reset").json() == {"status": "reset", "scenarios": 1}
    assert data.get("/todo").json() == []


def test_png_from_files_comes_back_byte_for_byte(data):
    answer = data.get("/logo")
    assert answer.status_code == 200
    assert answer.headers["content-type"] == "image/png"
    assert answer.content == PNG
