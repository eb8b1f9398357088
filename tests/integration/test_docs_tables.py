"""``docs/tables.md`` runs as written: every example, in order, against a real ``mockd start``.

The page's conventions, which this test reads:

* a ``yaml`` block whose first line is ``# <name>.yaml`` is a file of the walkthrough (written
  to the working directory); the one named by the ``mockd start ... -c <file>`` line is the
  server's config;
* in ``sh`` blocks, each ``curl`` line is followed by ``# <status> <body>``: the answer must
  have that status, and every ``"key":value`` pair shown in the body (with a string, number,
  boolean or null value, ``…`` marking what is left out) must appear in the answer;
* ``mockd`` lines run as client commands against the server (``MOCKD_ADMIN_URL``) and must
  succeed; ``mockd start`` is the server the test already started.

``curl`` is not needed: its few options used on the page (``-s``, ``-i``, ``-g``, ``-X``,
``-d``, ``-H``) are emulated with httpx, including ``-d``'s form content type and curl's URL
globbing, which makes brackets without ``-g`` an error.
"""
from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.helpers import run_mockd, start_server

pytestmark = pytest.mark.integration

DOC = Path(__file__).resolve().parents[2] / "docs" / "tables.md"
BLOCK = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)
FILE_NAME = re.compile(r"#\s*([\w.-]+\.ya?ml)\s*$")
EXPECTATION = re.compile(r"#\s*(\d{3})\b\s*(.*)$")
# A "key":value pair whose value is a whole JSON string, number, boolean or null.
PAIR = re.compile(r'"[^"\\]*"\s*:\s*(?:"(?:[^"\\…]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?'
                  r'|true|false|null)(?=\s*[,}\]])')


@dataclass
class Step:
    command: str
    status: int | None
    shown: str
    line: int


def blocks(text: str) -> list[tuple[str, str, int]]:
    """``(language, body, line number)`` of every fenced block, in order."""
    return [(match.group(1), match.group(2), text.count("\n", 0, match.start()) + 1)
            for match in BLOCK.finditer(text)]


def steps(body: str, first_line: int) -> list[Step]:
    """The commands of one ``sh`` block with the expectation that follows each."""
    out: list[Step] = []
    for offset, line in enumerate(body.splitlines()):
        stripped = line.strip()
        if not stripped:
            continue
        assert not stripped.endswith("\\"), f"line {first_line + offset}: no continuations"
        if stripped.startswith("#"):
            expected = EXPECTATION.match(stripped)
            if expected and out and out[-1].status is None:
                out[-1].status = int(expected.group(1))
                out[-1].shown = expected.group(2)
            continue
        out.append(Step(stripped, None, "", first_line + offset + 1))
    return out


def curl(command: str, base: str, admin: str) -> httpx.Response:
    """Send what ``curl`` would send for ``command`` (the options the page uses)."""
    arguments = shlex.split(command)[1:]
    method, data, headers, url, globbing = None, [], {}, None, True
    index = 0
    while index < len(arguments):
        argument = arguments[index]
        if argument in ("-s", "-i"):
            pass
        elif argument == "-g":
            globbing = False
        elif argument == "-X":
            index += 1
            method = arguments[index]
        elif argument == "-d":
            index += 1
            data.append(arguments[index])
        elif argument == "-H":
            index += 1
            name, _, value = arguments[index].partition(":")
            headers[name.strip()] = value.strip()
        elif argument.startswith("-"):
            raise AssertionError(f"curl option {argument} is not emulated by this test")
        else:
            assert url is None, f"two URLs in {command!r}"
            url = argument
        index += 1
    assert url, f"no URL in {command!r}"
    if globbing:
        assert not re.search(r"[\[\]{}]", url), \
            f"curl would read the brackets of {url!r} as a pattern: add -g"
    url = url.replace("localhost:4280", base.removeprefix("http://"))
    url = url.replace("localhost:4290", admin.removeprefix("http://"))
    if not url.startswith("http"):
        url = "http://" + url
    content = None
    if data:
        content = "&".join(data).encode()
        if not any(name.lower() == "content-type" for name in headers):
            headers["Content-Type"] = "application/x-www-form-urlencoded"
    with httpx.Client(timeout=10.0, trust_env=False) as client:
        return client.request(method or ("POST" if data else "GET"), url, content=content,
                              headers=headers)


def test_docs_tables_examples_run_in_order(tmp_path):
    text = DOC.read_text()
    files: dict[str, str] = {}
    scripts: list[tuple[str, int]] = []
    for language, body, line in blocks(text):
        if language == "yaml":
            name = FILE_NAME.match(body.splitlines()[0])
            assert name, f"line {line}: a yaml example starts with '# <file>.yaml'"
            files[name.group(1)] = body
            (tmp_path / name.group(1)).write_text(body)
        elif language == "sh":
            scripts.append((body, line))
    start = re.search(r"^mockd start (.*)$", text, re.MULTILINE)
    assert start, "the page says how to start the server"
    config = re.search(r"-c\s+(\S+)", start.group(1)).group(1)
    assert "--no-auth" in start.group(1)
    ran = 0
    with start_server(tmp_path, files[config]) as server:
        for body, line in scripts:
            for step in steps(body, line):
                where = f"docs/tables.md:{step.line}: {step.command}"
                if step.command.startswith("mockd start"):
                    continue
                if step.command.startswith("mockd "):
                    done = run_mockd(shlex.split(step.command)[1:], tmp_path,
                                     MOCKD_ADMIN_URL=server.admin)
                    assert done.returncode == 0, f"{where}\n{done.stdout}{done.stderr}"
                    ran += 1
                    continue
                assert step.command.startswith("curl "), where
                assert step.status is not None, f"{where}: no '# <status>' line follows"
                answer = curl(step.command, server.base, server.admin)
                assert answer.status_code == step.status, f"{where}\n{answer.text}"
                compact = answer.text
                for pair in PAIR.findall(step.shown):
                    assert re.sub(r'"\s*:\s*', '":', pair, count=1) in compact, \
                        f"{where}: {pair} not in\n{compact}"
                ran += 1
    assert ran > 40
