"""``$ref`` resolution of one OpenAPI document and the files it refers to.

A reference is a URI (RFC 3986) whose fragment is a JSON pointer (RFC 6901):

* ``#/components/schemas/User``: a place in the spec itself; the fragment is
  percent-decoded first, then split at ``/``, then ``~1`` -> ``/`` and ``~0`` -> ``~`` per
  token (``#/paths/~1users~1%7Bid%7D/get`` is the ``get`` of ``/users/{id}``); ``#`` alone is
  the whole document;
* ``./schemas/user.yaml#/User``, ``common.json`` (no fragment: the whole file): another file,
  relative to the file holding the reference. References inside that file are relative to
  it. Files are read only when the spec was imported from a file (its folder is then known),
  and only inside the spec's folder tree: ``..`` above the spec's folder, absolute paths and
  symbolic links leading out are refused;
* ``http://`` / ``https://`` (or any other scheme): never fetched.

Every reference is turned into one canonical text before it is looked up: ``#<pointer>`` for
the spec itself, ``<file relative to the spec's folder, POSIX>#<pointer>`` for other files.
References inside a file read from disk are rewritten to that form as the file is loaded, so
a reference means the same wherever it is used, and cycle checks that compare reference texts
(the importer's ``$ref`` chains, the schema sampler's stack) work across files.

Errors: :class:`~mocks.portability.importers.result.ImportDocumentError` with an empty
location (the caller names the place) and a reason that says what to do.

No Django; reads files only under the spec's folder.

Source: SPEC "Import and export"; OpenAPI import (multi-file specs).
"""
from __future__ import annotations

import posixpath
import re
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from mocks.portability.importers.result import ImportDocumentError, parse_yaml

FORMAT = "openapi"
#: Largest referenced file read, in bytes.
MAX_FILE_BYTES = 50 * 1024 * 1024
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")


class References:
    """Resolves the ``$ref`` texts of one document (see the module docstring).

    Args:
        document: the parsed spec.
        base_dir: the spec's folder, or None when it was not read from a file (text, URL,
            stdin): references to other files then fail with a reason saying so.
        filename: the spec's own file name (a reference to it is a local reference).
    """

    def __init__(self, document: Any, base_dir: Path | None = None, filename: str = ""):
        self.document = document
        self.root = base_dir.resolve() if base_dir is not None else None
        self.main = posixpath.normpath(filename) if filename else ""
        self._files: dict[str, Any] = {}
        self._resolved: dict[str, Any] = {}

    def resolve(self, reference: str) -> Any:
        """The value ``reference`` points at (cached).

        Raises:
            ImportDocumentError: a remote or outside reference, a file that cannot be read
                or parsed, or a pointer that leads nowhere (``$ref '#/nope' does not
                resolve``).
        """
        cached = self._resolved.get(reference, _MISSING)
        if cached is not _MISSING:
            return cached
        file, _, fragment = reference.partition("#")
        document = self.document if not file else self._file(file, reference)
        value = _follow(document, fragment, reference)
        self._resolved[reference] = value
        return value

    def _file(self, file: str, reference: str) -> Any:
        """The parsed (and reference-rewritten) file ``file``, canonical or as written."""
        if _is_remote(file):
            raise _error(reference, "is a remote reference; mockd never downloads references. "
                         "Save the file inside the spec's folder and refer to it by a "
                         "relative path")
        if self.root is None:
            raise _error(reference, "points to another file; import the spec from its file "
                         "(not from text or a URL) so that relative references can be read")
        name = _canonical_file(file, "")
        if name == self.main:
            return self.document
        if name in self._files:
            return self._files[name]
        if name.startswith("/") or name == ".." or name.startswith("../"):
            raise _error(reference, "points outside the spec's folder; only files in the "
                         "spec's folder and below are read")
        path = (self.root / name).resolve()
        if not path.is_relative_to(self.root):
            raise _error(reference, "points outside the spec's folder; only files in the "
                         "spec's folder and below are read")
        try:
            if path.stat().st_size > MAX_FILE_BYTES:
                raise _error(reference, f"file {name!r} is larger than "
                             f"{MAX_FILE_BYTES // (1024 * 1024)} MiB")
            text = path.read_bytes().decode("utf-8-sig", errors="replace")
        except OSError as error:
            raise _error(reference, f"cannot read file {name!r}: "
                         f"{error.strerror or error}") from None
        value, problem = _parse(text)
        if problem is not None:
            raise _error(reference, f"file {name!r}: {problem}")
        value = self._rewrite(value, name)
        self._files[name] = value
        return value

    def _rewrite(self, value: Any, file: str) -> Any:
        """``value`` (read from ``file``) with every ``$ref`` made canonical."""
        if isinstance(value, dict):
            copied = {key: self._rewrite(item, file) for key, item in value.items()}
            reference = copied.get("$ref")
            if isinstance(reference, str):
                copied["$ref"] = self.canonical(reference, file)
            return copied
        if isinstance(value, list):
            return [self._rewrite(item, file) for item in value]
        return value

    def canonical(self, reference: str, holder: str) -> str:
        """``reference`` as written in the file ``holder`` (relative to the spec's folder;
        the spec itself: "" or its name) in canonical form; remote references unchanged."""
        file, hash_sign, fragment = reference.partition("#")
        if _is_remote(file):
            return reference
        if not file:
            target = "" if holder in ("", self.main) else holder
        else:
            target = _canonical_file(file, holder)
            if target == self.main:
                target = ""
        return f"{target}#{fragment}" if (hash_sign or not target) else f"{target}#"


_MISSING = object()


def _is_remote(file: str) -> bool:
    return file.startswith("//") or bool(_SCHEME.match(file)) and not _is_drive(file)


def _is_drive(file: str) -> bool:
    """``C:/specs/x.yaml``: a Windows drive, not a URI scheme (still refused as absolute)."""
    return len(file) > 2 and file[1] == ":" and file[2] in "/\\"


def _canonical_file(file: str, holder: str) -> str:
    """The POSIX path of ``file`` (percent-decoded) relative to the spec's folder, as
    written in ``holder``; may start with ``..`` or ``/`` (refused when read)."""
    path = unquote(file).replace("\\", "/")
    if _is_drive(path):
        return "/" + path
    if not path.startswith("/"):
        path = posixpath.join(posixpath.dirname(holder), path)
    return posixpath.normpath(path)


def _follow(document: Any, fragment: str, reference: str) -> Any:
    """The value at the JSON pointer ``fragment`` (still percent-encoded) of ``document``."""
    pointer = unquote(fragment)
    if pointer == "":
        return document
    if not pointer.startswith("/"):
        raise _error(reference, "does not resolve: the part after '#' must be a JSON pointer "
                     "starting with '/'")
    value = document
    for token in pointer[1:].split("/"):
        token = token.replace("~1", "/").replace("~0", "~")
        if isinstance(value, dict) and token in value:
            value = value[token]
        elif isinstance(value, dict) and token.isdigit() and int(token) in value:
            value = value[int(token)]  # YAML reads `200:` as a number
        elif isinstance(value, list) and token.isdigit() and int(token) < len(value):
            value = value[int(token)]
        else:
            raise ImportDocumentError(FORMAT, "", f"$ref {reference!r} does not resolve")
    return value


def _parse(text: str) -> tuple[Any, str | None]:
    stripped = text.lstrip()
    if stripped[:1] in ("{", "["):
        import orjson

        try:
            return orjson.loads(stripped), None
        except ValueError:
            pass
    return parse_yaml(text)


def _error(reference: str, reason: str) -> ImportDocumentError:
    return ImportDocumentError(FORMAT, "", f"$ref {reference!r} {reason}")
