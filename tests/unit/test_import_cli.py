"""``mockd import`` / ``mockd export`` pieces that need no server: batching of large
imports, rollback, and the Django-free boundary of the import/export packages."""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from mocks.cli_portability import post_config, split_config
from mockd_project.cli_client import ClientError

ROOT = Path(__file__).resolve().parents[2]


def document(count: int, size: int = 100) -> dict:
    mocks = [{"id": f"m{index}", "http": {"matcher": {"path": f"/m{index}"},
                                          "response": {"body": "x" * size}}}
             for index in range(count)]
    mocks.append({"id": "bound", "http": {"matcher": {"path": "/b"}}})
    return {"version": "1.0", "mocks": mocks, "tables": [{"name": "t"}],
            "extend": [{"mock": "bound", "table": "t", "action": "list"}]}


def test_split_config_keeps_batches_small_and_tables_last():
    batches = split_config(document(50), limit=1500)
    assert len(batches) > 3
    assert all("tables" not in batch and "extend" not in batch for batch in batches[:-1])
    assert batches[-1]["tables"] == [{"name": "t"}]
    assert batches[-1]["mocks"][-1]["id"] == "bound"
    ids = [mock["id"] for batch in batches for mock in batch["mocks"]]
    assert ids == [f"m{index}" for index in range(50)] + ["bound"]


class FakeClient:
    """Records requests; fails the POST number ``fail_at`` (1-based) with a 400."""

    def __init__(self, fail_at: int | None = None):
        self.calls: list[tuple[str, str, bytes | None]] = []
        self.fail_at = fail_at
        self.posts = 0

    def request(self, method, path, content=None, headers=None, **kwargs):
        self.calls.append((method, path, content))
        if method == "GET":
            return {"version": "1.0", "kind": "MockCollection", "name": "x",
                    "metadata": {}, "mocks": [{"id": "old"}]}
        self.posts += 1
        if self.posts == self.fail_at:
            raise ClientError("tables: duplicate (HTTP 400)")
        return {"message": "ok", "imported": 1, "total": 7}


def test_post_config_sends_one_request_when_small():
    client = FakeClient()
    answer = post_config(client, document(3), replace=True)
    assert [call[:2] for call in client.calls] == [("POST", "/config")]
    assert answer["total"] == 7


def test_post_config_batches_and_reports_all_mocks(monkeypatch):
    monkeypatch.setattr("mocks.cli_portability.MAX_REQUEST_BYTES", 2000)
    client = FakeClient()
    answer = post_config(client, document(40), replace=True)
    posts = [call for call in client.calls if call[0] == "POST"]
    assert client.calls[0][:2] == ("GET", "/config") and len(posts) > 2
    assert b'"replace":true' in posts[0][2]
    assert all(b'"replace":false' in post[2] for post in posts[1:])
    assert answer["imported"] == 41


def test_post_config_failed_batch_restores_the_previous_configuration(monkeypatch):
    monkeypatch.setattr("mocks.cli_portability.MAX_REQUEST_BYTES", 2000)
    client = FakeClient(fail_at=2)
    with pytest.raises(ClientError):
        post_config(client, document(40), replace=False)
    method, path, content = client.calls[-1]
    assert (method, path) == ("POST", "/config")
    assert content == b'{"config":{"version":"1.0","mocks":[{"id":"old"}]},"replace":true}'


PACKAGES = [ROOT / "mocks" / "portability" / "importers", ROOT / "mocks" / "portability" / "exporters"]


@pytest.mark.parametrize("path", [path for package in PACKAGES
                                  for path in sorted(package.glob("*.py"))],
                         ids=lambda path: str(path.relative_to(ROOT)))
def test_import_export_modules_import_no_django(path):
    tree = ast.parse(path.read_text())
    names = [node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)]
    names += [alias.name for node in ast.walk(tree) if isinstance(node, ast.Import)
              for alias in node.names]
    assert not [name for name in names if name.split(".")[0] in ("django", "ninja", "channels")
                or name.endswith("models")]


def test_loading_a_config_with_imports_loads_no_django():
    code = ("import sys, mocks.portability.importers.config_imports, mocks.portability.importers.openapi, "
            "mocks.portability.exporters.openapi, mocks.portability.exporters.insomnia;"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('django', 'ninja', 'channels')))")
    output = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            cwd=ROOT, check=True).stdout.strip()
    assert output == "[]"
