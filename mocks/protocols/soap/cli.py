"""``mockd soap import <wsdl> [--stateful]``: SOAP mocks from a WSDL 1.1 document.

The WSDL is converted locally by the WSDL importer (one ``soap`` mock per endpoint path,
every operation answering its sample response) and sent to the running server with
``POST /config``, like ``mockd import``. ``--stateful`` turns CRUD-shaped operations
(``Get*``, ``List*``, ``Create*``, ``Update*``, ``Delete*``) into operations on tables it
creates (``GetUser`` -> ``get`` on ``users``), so SOAP calls share data with REST mocks bound
to the same tables. A WSDL that imports other files (``wsdl:import``, ``xs:import``,
``xs:include``) carries them in the mock's ``soap.documents``, read from the WSDL's folder
and below only (:mod:`mocks.protocols.soap.documents`); a WSDL read from stdin cannot import
files.

Output: ``Imported <n> SOAP mock(s) from <file> (<k> operations; tables: users, orders)``;
with ``--json`` ``{imported, total, format, source, operations, tables, stateful}``;
``--dry-run`` prints the config document (YAML) instead of importing. A document that is not
a usable WSDL: ``Error: wsdl: ...``, exit status 2.

Source: SPEC "Command-line surface" (``<cli> soap import <wsdl>``; ``--stateful``
auto-detects CRUD patterns), "Import and export" (WSDL 1.1).
"""
from __future__ import annotations

import json

import click
import yaml

from mockd_project.cli_client import ClientError, client_options
from mocks.cli_portability import (BadDocument, ImportProgress, _convert, _import_client,
                                   post_config)


@click.group("soap")
def soap_group() -> None:
    """SOAP mocks (WSDL 1.1 services)."""


@soap_group.command("import")
@click.argument("file", metavar="WSDL")
@click.option("--stateful", is_flag=True,
              help="Back Get*/List*/Create*/Update*/Delete* operations with tables (created "
                   "as needed) instead of sample answers.")
@click.option("--dry-run", is_flag=True, help="Print the converted config; import nothing.")
@click.option("--replace", is_flag=True, help="Replace all mocks instead of merging.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@client_options
def soap_import(file: str, stateful: bool, dry_run: bool, replace: bool, as_json: bool,
                admin_url: str | None, api_key: str | None) -> None:
    """Import SOAP mocks from a WSDL file (see the module docstring)."""
    from mocks.portability.importers.wsdl import make_stateful

    with ImportProgress() as progress:
        result = _convert(file, "wsdl", None, False, progress, compile=False)
        tables = make_stateful(result) if stateful else []
        for warning in result.warnings:
            progress.warn(warning)
        document = result.config_document()
        if not dry_run:
            client = _import_client(admin_url, api_key)
            try:
                answer = post_config(client, document, replace, progress)
            except ClientError as error:
                if "(HTTP 400)" in error.format_message():
                    raise BadDocument(f"wsdl: {error.format_message()}") from None
                raise
            finally:
                client.close()
    if dry_run:
        click.echo(yaml.safe_dump(document, sort_keys=False, allow_unicode=True), nl=False)
        return
    operations = sum(len(mock["soap"].get("operations") or {}) for mock in result.mocks)
    imported = answer.get("imported", len(result.mocks)) if isinstance(answer, dict) \
        else len(result.mocks)
    total = answer.get("total", imported) if isinstance(answer, dict) else imported
    if as_json:
        click.echo(json.dumps({"imported": imported, "total": total, "format": "wsdl",
                               "source": result.source, "operations": operations,
                               "tables": tables, "stateful": stateful}, indent=2))
        return
    table_note = f"; tables: {', '.join(tables)}" if tables else ""
    click.echo(f"Imported {imported} SOAP mock{'s' if imported != 1 else ''} from "
               f"{result.source} ({operations} operation{'s' if operations != 1 else ''}"
               f"{table_note})")
