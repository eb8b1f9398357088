"""curl commands -> one HTTP mock per command (only with ``--format curl``).

The text holds one or more ``curl ...`` commands (shell line continuations allowed; lines
starting with ``#`` are comments). Each is split with :mod:`shlex` like a POSIX shell would,
then:

* method: ``-X``/``--request``; else ``HEAD`` with ``-I``; else ``POST`` when data is sent
  (``-d``, ``--data*``, ``--json``, ``-F``) unless ``-G``; else ``GET``;
* URL: the first non-option word (or ``--url``); its path and query become ``path`` and
  ``queryParams`` (``-G`` moves the data into the query);
* headers (``-H``): conditions, except ``Content-Type``, ``Content-Length``, ``Accept``,
  ``User-Agent`` and ``Host``; ``-u user:pass`` adds an ``Authorization: Basic`` condition;
  ``-b name=value`` a ``Cookie`` condition;
* the request body is not matched (a client may serialise it differently);
* answer: 200 ``{"status": "ok"}`` as JSON;
* ids ``imported-1``, ``imported-2``, ...

Errors: ``curl: command 1: no URL``, ``curl: command 1: No closing quotation``.

Source: SPEC "Import and export" (curl row: "only with --format curl").
"""
from __future__ import annotations

import base64
import re
import shlex
from typing import Any
from urllib.parse import parse_qsl

from mocks.portability.importers.common import http_mock, split_url
from mocks.portability.importers.result import DocumentProbe, ImportDocumentError, ImportOptions, ImportResult

FORMAT = "curl"
SKIPPED_MATCH_HEADERS = frozenset(("content-type", "content-length", "accept", "user-agent",
                                   "host"))
#: Options that carry data (and so imply POST).
DATA_OPTIONS = frozenset(("-d", "--data", "--data-raw", "--data-binary", "--data-ascii",
                          "--data-urlencode", "--json", "-F", "--form", "--form-string"))
#: Other options that take a value (skipped).
VALUE_OPTIONS = frozenset((
    "-o", "--output", "-A", "--user-agent", "-e", "--referer", "-c", "--cookie-jar",
    "-T", "--upload-file", "--connect-timeout", "-m", "--max-time", "-x", "--proxy",
    "--cacert", "--cert", "--key", "-E", "-w", "--write-out", "--retry", "-r", "--range",
    "--resolve", "--interface", "-K", "--config", "--limit-rate", "-y", "-Y", "-z",
    "--max-redirs", "--proxy-user", "-U", "--oauth2-bearer"))

_CONTINUATION = re.compile(r"\\\r?\n")
_COMMAND_START = re.compile(r"^\s*curl(\s|$)", re.MULTILINE)


def split_commands(text: str) -> list[str]:
    """The separate ``curl`` commands of a text (continuations joined, comments dropped)."""
    joined = _CONTINUATION.sub(" ", text)
    lines = [line for line in joined.splitlines() if not line.lstrip().startswith("#")]
    joined = "\n".join(lines)
    starts = [match.start() for match in _COMMAND_START.finditer(joined)]
    return [joined[start:end].strip() for start, end in zip(starts, [*starts[1:], len(joined)])]


class CurlImporter:
    """curl commands (never detected: ``--format curl``)."""

    format = FORMAT
    #: The format's name and its detection rule in words, for ``GET /formats``.
    title = "curl command"
    detection = "never detected: choose it with --format curl"

    def detects(self, probe: DocumentProbe) -> bool:
        """Never: the SPEC imports curl only with ``--format curl``."""
        return False

    def convert(self, probe: DocumentProbe, options: ImportOptions) -> ImportResult:
        """See the module docstring. Raises :class:`ImportDocumentError`."""
        commands = split_commands(probe.text or "")
        if not commands:
            raise ImportDocumentError(FORMAT, "", "no command starting with 'curl' found")
        result = ImportResult(format=FORMAT)
        for number, command in enumerate(commands, start=1):
            result.mocks.append(self._mock(command, f"command {number}", number))
        return result

    def _mock(self, command: str, location: str, number: int) -> dict[str, Any]:
        try:
            words = shlex.split(command)
        except ValueError as error:
            raise ImportDocumentError(FORMAT, location, str(error)) from None
        method: str | None = None
        url: str | None = None
        headers: dict[str, str] = {}
        data: list[str] = []
        get = head = False
        index = 1
        while index < len(words):
            word = words[index]
            value = words[index + 1] if index + 1 < len(words) else None
            option, inline = _split_inline(word)
            if inline is not None:
                value = inline
            step = 1 if inline is not None else 2
            if option in ("-X", "--request") and value is not None:
                method = value.upper()
            elif option in ("-H", "--header") and value is not None:
                name, _, header_value = value.partition(":")
                if name.strip() and header_value is not None:
                    headers[name.strip()] = header_value.strip()
            elif option in DATA_OPTIONS and value is not None:
                data.append(value)
                if option == "--json":
                    headers.setdefault("Content-Type", "application/json")
            elif option in ("-u", "--user") and value is not None:
                headers["Authorization"] = "Basic " + base64.b64encode(
                    value.encode()).decode("ascii")
            elif option in ("-b", "--cookie") and value is not None and "=" in value:
                headers["Cookie"] = f"*{value.split(';')[0].strip()}*"
            elif option == "--url" and value is not None:
                url = url or value
            elif option in VALUE_OPTIONS:
                pass
            elif word in ("-G", "--get"):
                get, step = True, 1
            elif word in ("-I", "--head"):
                head, step = True, 1
            elif word.startswith("-"):
                step = 1  # a flag without a value (-s, -v, -L, --compressed, ...)
            else:
                url, step = url or word, 1
            index += step
        if not url:
            raise ImportDocumentError(FORMAT, location, "no URL")
        path, query = split_url(url if "://" in url or url.startswith("/") else "http://" + url)
        if get:
            for chunk in data:
                for name, value in parse_qsl(chunk, keep_blank_values=True):
                    query.setdefault(name, value)
        if method is None:
            method = "HEAD" if head else ("POST" if data and not get else "GET")
        match_headers = {name: value for name, value in headers.items()
                         if name.lower() not in SKIPPED_MATCH_HEADERS}
        return http_mock(f"imported-{number}", name=f"{method} {path}", method=method,
                         path=path, status=200, headers={"Content-Type": "application/json"},
                         body={"status": "ok"}, query_params=query or None,
                         match_headers=match_headers or None)


def _split_inline(word: str) -> tuple[str, str | None]:
    """``--request=POST`` -> (``--request``, ``POST``); ``-XPOST`` -> (``-X``, ``POST``)."""
    if word.startswith("--") and "=" in word:
        option, _, value = word.partition("=")
        return option, value
    if len(word) > 2 and word[0] == "-" and word[1] in "XHdubF" and word[1] != "-":
        return word[:2], word[2:]
    return word, None
