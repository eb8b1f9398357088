"""The config examples of the docs load, and the files the docs name are shipped.

Every fenced ``yaml`` or ``json`` block of README.md and docs/*.md is one of three kinds,
told apart by the line right before its opening fence:

* no marker: a whole config file. It is parsed, validated and compiled as the server would
  load it (:func:`mocks.loader.parse_config_text`, :func:`mocks.loader.validate_config`,
  :func:`mocks.engine.snapshot.compile_snapshot`), with files resolved against
  ``examples/`` as if the block were a config file saved there;
* ``<!-- fragment -->``: a piece of a config (a list item, the keys of one mock, a
  ``serverConfig`` section, a file that needs something not shipped). It must still parse,
  and a fragment that is a list (mocks as they sit under ``mocks:``) is compiled as the
  ``mocks`` of a config;
* ``<!-- answer -->``: not a config at all (a server's JSON answer, a summary). It must
  still parse (as JSON for a ``json`` block).

The marker is an HTML comment, so it does not show on the rendered page. A marker anywhere
else (not right before a ``yaml``/``json`` fence) is an error.

The files a fenced block or an inline ``mockd ...`` command names (``users.proto``,
``./users.wsdl``, ``traffic.har``, ``examples/openapi.yaml``, ...: a word ending in one of
:data:`FILE_EXTENSIONS`, and a folder given to ``mockd import``) are shipped under
``examples/``: ``examples/<path>`` for ``examples/<path>``, else the name as written (``./``
dropped) below ``examples/``, or (a name in a folder layout, relative to the file naming it)
any file below ``examples/`` whose path ends with it. The exceptions are
:data:`NOT_SHIPPED`, each with the reason; certificates and keys (``.pem``, ``.key``) are
never shipped, as they are the reader's own (or ``--tls-auto``'s).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from mocks.engine.snapshot import compile_snapshot
from mocks.loader import parse_config_text, validate_config

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

FRAGMENT = "<!-- fragment -->"
ANSWER = "<!-- answer -->"
MARKERS = (FRAGMENT, ANSWER)
CONFIG_LANGUAGES = ("yaml", "json")
FENCE = re.compile(r"^```(\S*)")

FILE_EXTENSIONS = ("proto", "wsdl", "xsd", "har", "graphql", "yaml", "yml", "json", "sh")
FILE_NAME = re.compile(r"(?<![\w/.:$-])((?:[\w.-]+/)*[\w-][\w.-]*\.(?:"
                       + "|".join(FILE_EXTENSIONS) + r"))(?![\w/-])")
#: A folder given to ``mockd import`` (WireMock mappings): ``mockd import examples/mappings/``.
IMPORTED_FOLDER = re.compile(r"\bmockd import ((?:[\w.-]+/)+)(?=\s|$)", re.MULTILINE)

#: An inline command of the prose: ```mockd import examples/users.proto```.
INLINE_COMMAND = re.compile(r"`(mockd [^`]+)`")

#: Names the docs use for files that are not shipped: name -> why.
NOT_SHIPPED = {
    "spec.yaml": "a stand-in for the reader's own spec, in a sentence about its $ref files",
    "mocks.yaml": "written by the `mockd export` just before it",
    "recorded.yaml": "written by `mockd convert -o recorded.yaml` from the reader's recordings",
    "cassettes/test_list_users.yaml": "written by a test run with --mockd-record (docs/pytest.md)",
    "mocks/users.yaml": "the reader's own config named by a pytest marker (docs/pytest.md)",
    "tests/mocks.yaml": "the reader's own config named by the mockd_config ini option",
    "collection.yaml": "written by the curl command that names it (`-o`)",
    "api.json": "written by `mockd export --format openapi -o api.json`",
    "insomnia.json": "an admin route (`/insomnia.json`), not a file",
    "cloud-api.json": "a line of output quoting the reader's own 10,000-operation document",
    "payout.yaml": "the reader's own operation, shown with the mistakes the checker reports",
    "a.proto": "a placeholder in a comment (`protoFiles: [a.proto, b.proto]`)",
    "b.proto": "a placeholder in a comment (`protoFiles: [a.proto, b.proto]`)",
    "googleapis/google/pubsub/v1/pubsub.proto":
        "from a clone of Google's googleapis repository, which the example names",
    "spec/stripe.com.json": "Stripe's 7 MB document: examples/stripe/fetch-spec.sh downloads "
                            "it into examples/stripe/spec/",
    "specs/stripe.json": "Stripe's 7 MB document: examples/stripe/fetch-spec.sh downloads it",
}


@dataclass
class Block:
    """One fenced block: its page, first line (the fence), info string, marker and text."""

    path: Path
    line: int
    language: str
    marker: str
    text: str

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(ROOT).as_posix()}:{self.line}"


def fenced_blocks(path: Path) -> list[Block]:
    """Every fenced block of ``path``, in order, with the marker on the line before it."""
    blocks: list[Block] = []
    lines = path.read_text(encoding="utf-8").splitlines()
    start = None
    for number, line in enumerate(lines, start=1):
        fence = FENCE.match(line)
        if not fence:
            continue
        if start is None:
            start = number
            language = fence.group(1)
            marker = lines[number - 2].strip() if number > 1 else ""
            continue
        blocks.append(Block(path, start, language,
                            marker if marker in MARKERS else "",
                            "\n".join(lines[start:number - 1]) + "\n"))
        start = None
    return blocks


ALL_BLOCKS = [block for path in DOCS for block in fenced_blocks(path)]
CONFIG_BLOCKS = [block for block in ALL_BLOCKS if block.language in CONFIG_LANGUAGES]


def _compile(text: str) -> None:
    data = parse_config_text(text)
    if data.get("imports"):
        from mocks.portability.importers.config_imports import expand_imports

        data = expand_imports(data, EXAMPLES, allow_remote=False)
    compile_snapshot(validate_config(data), EXAMPLES)


@pytest.mark.parametrize("block", CONFIG_BLOCKS, ids=lambda block: block.where)
def test_config_block_compiles_or_is_marked(block):
    if block.marker == ANSWER and block.language == "json":
        json.loads(block.text)
    elif block.marker:
        data = yaml.safe_load(block.text)
        if block.marker == FRAGMENT and isinstance(data, list):
            _compile(yaml.safe_dump({"mocks": data}))
    else:
        try:
            _compile(block.text)
        except Exception as error:  # noqa: BLE001 - the message says what to do
            pytest.fail(f"{block.where}: the {block.language} block is not a config that "
                        f"loads ({type(error).__name__}: {error}); fix it, or put "
                        f"{FRAGMENT} or {ANSWER} on the line before its fence")


def test_every_marker_stands_before_a_config_block():
    marked = {(block.path, block.line - 1) for block in CONFIG_BLOCKS if block.marker}
    stray = []
    for path in DOCS:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if line.strip() in MARKERS and (path, number) not in marked:
                stray.append(f"{path.relative_to(ROOT).as_posix()}:{number}: {line.strip()}")
    assert not stray, "markers not right before a yaml/json fence:\n" + "\n".join(stray)


def test_most_config_blocks_are_whole_configs():
    """The docs mostly show files that load; a guard against marking everything a fragment."""
    whole = [block for block in CONFIG_BLOCKS if not block.marker]
    assert len(whole) >= 30, [block.where for block in whole]


def _named_files() -> dict[str, list[str]]:
    """Every file name a fenced block or an inline ``mockd`` command mentions -> where
    (``page:line``)."""
    names: dict[str, list[str]] = {}
    for path in DOCS:
        text = path.read_text(encoding="utf-8")
        for match in INLINE_COMMAND.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            where = f"{path.relative_to(ROOT).as_posix()}:{line}"
            for name in (FILE_NAME.findall(match.group(1))
                         + IMPORTED_FOLDER.findall(match.group(1))):
                names.setdefault(name, []).append(where)
    for block in ALL_BLOCKS:
        written = set(re.findall(r"^#\s*([\w.-]+)\s*$", block.text.split("\n", 1)[0]))
        for name in FILE_NAME.findall(block.text) + IMPORTED_FOLDER.findall(block.text):
            if name not in written:
                names.setdefault(name, []).append(block.where)
    # A walkthrough file: a page's block that starts with `# <name>` is that file
    # (docs/tables.md), so other blocks of the page may name it.
    walkthrough = {match for block in ALL_BLOCKS
                   for match in re.findall(r"\A#\s*([\w.-]+\.ya?ml)\s*\n", block.text)}
    return {name: where for name, where in names.items() if name not in walkthrough}


def _shipped_path(name: str) -> Path:
    """Where ``name`` is shipped: ``examples/<path>`` as written, else the first file below
    ``examples/`` whose path ends with it (a name in a folder layout, ``schemas/orders.xsd``
    or ``../common/money.xsd``, is relative to the file that names it)."""
    name = name.removeprefix("./")
    if name.startswith("examples/"):
        return ROOT / name
    if (EXAMPLES / name).is_file():
        return EXAMPLES / name
    tail = "/" + re.sub(r"^(?:\.\./)+", "", name)
    found = [path for path in sorted(EXAMPLES.rglob("*"))
             if path.is_file() and ("/" + path.relative_to(EXAMPLES).as_posix()).endswith(tail)]
    return found[0] if found else EXAMPLES / name


@pytest.mark.parametrize("name", sorted(_named_files()))
def test_file_named_in_the_docs_is_shipped(name):
    if name in NOT_SHIPPED:
        assert not _shipped_path(name).exists(), f"{name} is shipped: drop it from NOT_SHIPPED"
        return
    path = _shipped_path(name)
    where = ", ".join(_named_files()[name])
    assert path.is_dir() if name.endswith("/") else path.is_file(), (
        f"{name} (named at {where}) is not in examples/: ship it there, or list it in "
        f"NOT_SHIPPED with the reason")


def test_not_shipped_lists_only_names_the_docs_use():
    assert not set(NOT_SHIPPED) - set(_named_files())


# ------------------------------------------------------------------- the shipped files


@pytest.mark.parametrize("name", ["petstore.yaml", "openapi.yaml", "traffic.har",
                                  "session.har", "users.wsdl", "inventory.wsdl",
                                  "services/orders.wsdl", "users.proto", "greeter.proto",
                                  "mappings", "commands.sh"])
def test_shipped_document_imports(name):
    from mocks.portability.importers import import_path

    result = import_path(EXAMPLES / name, "curl" if name.endswith(".sh") else None)
    assert result.mocks, f"examples/{name} imported no mock"


@pytest.mark.parametrize("name", ["users.wsdl", "inventory.wsdl", "services/orders.wsdl"])
def test_shipped_wsdl_loads_in_zeep(name):
    zeep = pytest.importorskip("zeep")
    client = zeep.Client(str(EXAMPLES / name))
    operations = {operation for service in client.wsdl.services.values()
                  for port in service.ports.values() for operation in port.binding._operations}
    assert operations


def test_users_wsdl_has_the_operations_the_docs_use():
    zeep = pytest.importorskip("zeep")
    client = zeep.Client(str(EXAMPLES / "users.wsdl"))
    port = next(iter(next(iter(client.wsdl.services.values())).ports.values()))
    assert {"GetUser", "ListUsers", "CreateUser", "DeleteUser"} <= set(port.binding._operations)


def test_shipped_schema_graphql_loads():
    _compile("mocks:\n  - id: users\n    type: graphql\n    graphql:\n"
              "      path: /graphql\n      schemaFile: ./schema.graphql\n")
