"""``imports:`` in a config file: external specs expanded into mocks when the file loads.

The config loader (:func:`mocks.loader.load_config_file`) calls
:func:`expand_imports` on the parsed document before schema validation, so ``mockd start``,
``mockd engine`` and ``mockd list -c`` all see the imported mocks. Each entry
(:class:`ImportEntry`) names a ``path`` (relative to the config file) or a ``url``, an
optional ``format``, an optional ``as`` namespace and, for Postman collections, optional
``variables`` (``{name: value}``)::

    imports:
      - path: specs/stripe.json
        as: stripe            # mock ids stripe.<operationId>
    extend:
      - {mock: stripe.GetCustomers, table: customers, action: list}

Merging rules:

* imported mocks come after the file's own mocks (so on a full tie the file's mock wins);
  a file mock with the same id as an imported one replaces it (a deliberate override);
* imported tables and bindings (Mockoon CRUD routes) are appended; a table name the file
  already defines is an error;
* ``extend[].mock`` references are resolved for imported mocks: a bare ``operationId`` or
  ``<as>.<operationId>`` that is not itself a mock id is rewritten to the mock's id, so the
  binding survives persistence (the stored mock keeps only its id) and the lookup order of
  behavior notes §6 (id, then operation id, then ``"METHOD /path"``) holds;
* an item of the document that cannot be converted, validated or compiled (one operation,
  request or mapping) is skipped with a warning on the ``mockd.import`` logger naming the
  entry and the item (``imports[0] (specs/api.json): skipped paths./x.get: ...``); the rest
  is loaded (partial import);
* a document that cannot be read or parsed, or of which nothing converts, is a
  :class:`~mocks.core.errors.ConfigError` at ``imports[i]`` (or ``imports[i].path``) with
  the importer's one-line reason; nothing is loaded.

URLs are fetched with httpx (30 s timeout), and only when the person running the server
allowed it (``--allow-remote-imports``); otherwise a ``url`` entry is a config error.

No Django.

Source: SPEC "Import entry", "Configuration file" (``imports``), "Extend binding";
behavior notes §6 (reference resolution), §13 ("Import entries take path (relative to the
config) or url"), §15 (``engine`` handles ``imports`` like ``start``).
"""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from mocks.config import ImportEntry

logger = logging.getLogger("mockd.import")

#: The command-line flag that lets ``url`` imports be fetched (named in errors).
ALLOW_REMOTE_FLAG = "--allow-remote-imports"

#: Seconds allowed to fetch one ``url`` import.
URL_TIMEOUT_SECONDS = 30.0


def expand_imports(data: dict[str, Any], base_dir: Path | str, *,
                   allow_remote: bool = False) -> dict[str, Any]:
    """``data`` with every ``imports[]`` entry converted and merged (see the module
    docstring). Returns ``data`` itself when it has no imports.

    A ``url`` entry is fetched only with ``allow_remote`` (``--allow-remote-imports``): a
    config from someone else must not make the server reach the network as it starts.

    Raises :class:`~mocks.core.errors.ConfigError` naming ``imports[i]`` (``imports[i].url``
    for a remote import that is not allowed).
    """
    from mocks.core.errors import ConfigError
    from mocks.core.errors import format_location
    from mocks.portability.importers import ImportDocumentError, import_document, import_path

    entries = data.get("imports")
    if not entries:
        return data
    if not isinstance(entries, list):
        raise ConfigError("imports", "expected a list of {path|url, as?, format?}")
    base = Path(base_dir)
    mocks = list(data.get("mocks") or [])
    tables = list(data.get("tables") or [])
    extend = list(data.get("extend") or [])
    own_ids = {mock.get("id") for mock in mocks if isinstance(mock, dict) and mock.get("id")}
    table_names = {table.get("name") for table in tables if isinstance(table, dict)}
    references: dict[str, str] = {}
    imported: list[dict[str, Any]] = []
    for index, raw in enumerate(entries):
        location = f"imports[{index}]"
        try:
            entry = ImportEntry.model_validate(raw)
        except ValidationError as error:
            first = error.errors(include_url=False)[0]
            where = format_location(tuple(first.get("loc", ())))
            reason = str(first.get("msg", "invalid value")).removeprefix("Value error, ")
            if first.get("type") == "extra_forbidden":
                reason = "unknown key (use path or url, as, format)"
            raise ConfigError(f"{location}.{where}" if where else location, reason) from None
        try:
            if entry.url and not allow_remote:
                raise ConfigError(f"{location}.url", f"remote imports are off: {entry.url!r} "
                                                     f"was not fetched; start with "
                                                     f"{ALLOW_REMOTE_FLAG} to fetch it, or "
                                                     f"download it and import it by path")
            if entry.url:
                result = import_document(_fetch(entry.url, f"{location}.url"), entry.format,
                                         entry.as_prefix, filename=entry.url,
                                         source=entry.url, include_static=entry.include_static,
                                         variables=entry.variables)
            else:
                target = Path(entry.path).expanduser()
                if not target.is_absolute():
                    target = base / target
                if not target.exists():
                    raise ConfigError(f"{location}.path", f"file not found: {str(target)!r} "
                                                          "(a relative path starts at the "
                                                          "config file's folder)")
                result = import_path(target, entry.format, entry.as_prefix,
                                     include_static=entry.include_static, source=entry.path,
                                     variables=entry.variables)
        except ImportDocumentError as error:
            raise ConfigError(location, str(error)) from None
        for warning in result.warnings:
            logger.warning("%s (%s): %s", location, entry.url or entry.path, warning)
        for mock in result.mocks:
            if mock.get("id") in own_ids:
                continue  # the file's own mock of the same id overrides the imported one
            imported.append(mock)
        for table in result.tables:
            if table.get("name") in table_names:
                raise ConfigError(location, f"table {table.get('name')!r} is already defined "
                                            "in this file")
            table_names.add(table.get("name"))
            tables.append(table)
        extend.extend(result.extend)
        for reference, mock_id in result.operation_ids.items():
            references.setdefault(reference, mock_id)
    all_ids = own_ids | {mock.get("id") for mock in imported}
    rewritten = []
    for binding in extend:
        if isinstance(binding, dict):
            reference = binding.get("mock")
            if reference not in all_ids and reference in references:
                binding = {**binding, "mock": references[reference]}
        rewritten.append(binding)
    expanded = {**data, "mocks": mocks + imported}
    if tables:
        expanded["tables"] = tables
    if rewritten:
        expanded["extend"] = rewritten
    return expanded


def _fetch(url: str, location: str) -> str:
    """The text at ``url``; raises ConfigError naming ``location`` when it cannot be read."""
    import httpx

    from mocks.core.errors import ConfigError

    try:
        response = httpx.get(url, timeout=URL_TIMEOUT_SECONDS, follow_redirects=True)
    except httpx.HTTPError as error:
        raise ConfigError(location, f"cannot fetch {url}: {type(error).__name__}: {error}") \
            from None
    if response.status_code >= 400:
        raise ConfigError(location, f"cannot fetch {url}: HTTP {response.status_code}")
    return response.text
