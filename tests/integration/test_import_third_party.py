"""Real third-party OpenAPI documents, fetched from npm at test time (never committed):
every document of ``@readme/oas-examples`` (OpenAPI 2.0, 3.0, 3.1; JSON and YAML; circular
references, polymorphism, callbacks, ...) imports cleanly, and the petstore documents are
served by a real ``mockd engine`` through ``imports:``. Skipped with the reason when npm or
the registry is not available, except under CI (``CI=true``), where that is a failure."""
from __future__ import annotations

import json

import pytest

from mocks.portability.importers import ImportDocumentError, import_path
from mocks.portability.importers.openapi import choose_status, status_number
from tests.helpers import start_engine
from tests.thirdparty import OAS_EXAMPLES, package_root

pytestmark = pytest.mark.integration


def test_every_oas_example_document_imports_validates_and_compiles():
    root = package_root(OAS_EXAMPLES)
    documents = sorted(path for pattern in ("*/json/**/*.json", "*/yaml/**/*.yaml")
                       for path in root.glob(pattern))
    assert len(documents) > 100
    failures, imported, empty = [], 0, []
    for document in documents:
        try:
            result = import_path(document, as_prefix="x")
        except ImportDocumentError as error:
            if "holds nothing to import" in str(error):
                empty.append(document)  # an import of nothing is an error, not a success
                continue
            failures.append(f"{document.relative_to(root)}: {error}")
            continue
        assert result.format == "openapi"
        assert result.skipped == []
        imported += len(result.mocks)
    assert failures == []
    for document in empty:  # only documents that declare no operation at all
        assert not _declares_operations(document), document
    assert imported > 500


def _declares_operations(document) -> bool:
    from mocks.portability.importers.result import parse_yaml

    text = document.read_text()
    data = json.loads(text) if document.suffix == ".json" else parse_yaml(text)[0]
    methods = {"get", "put", "post", "delete", "patch", "head", "options"}
    return any(isinstance(item, dict) and methods & set(item)
               for item in (data.get("paths") or {}).values())


@pytest.mark.parametrize("version", ["2.0", "3.0", "3.1"])
def test_petstore_served_through_a_config_import(tmp_path, version):
    root = package_root(OAS_EXAMPLES)
    spec = root / version / "json" / ("petstore.json" if version != "3.1"
                                      else "petstore-simple.json")
    config = {"version": "1.0", "imports": [{"path": str(spec), "as": "petstore"}],
              "tables": [{"name": "pets", "idStrategy": "sequence"}],
              "extend": [{"mock": "petstore.addPet", "table": "pets", "action": "create"},
                         {"mock": "getPetById", "table": "pets", "action": "get"}]}
    if version == "3.1":
        config.pop("tables"), config.pop("extend")
    with start_engine(tmp_path, config) as engine, engine.client() as client:
        if version == "3.1":  # /pet/{id}: the document declares only 400 answers
            answer = client.get("/pet/5")
            assert answer.status_code == 400 and answer.json() == {"error": "Bad Request"}
            return
        prefix = "/v2" if version == "2.0" else ""
        created = client.post(f"{prefix}/pet", json={"name": "doggie", "photoUrls": []})
        # a bound mock answers the status the spec chose (notes §6): the 2.0 document
        # declares only 405 for addPet, the 3.0 one 200 first
        declared = json.loads(spec.read_text())["paths"]["/pet"]["post"]["responses"]
        assert created.status_code == status_number(choose_status(list(declared)))
        assert created.json()["name"] == "doggie"
        fetched = client.get(f"{prefix}/pet/{created.json()['id']}")
        assert fetched.status_code == 200 and fetched.json()["name"] == "doggie"
        inventory = client.get(f"{prefix}/store/inventory")
        assert inventory.status_code == 200


def test_generated_bodies_of_every_oas_example_keep_their_required_properties():
    """Every JSON body generated from an OpenAPI 3 schema (no example given) carries the
    required properties of each object on the way (through ``$ref``, ``allOf``, properties
    and array items; ``oneOf``/``anyOf`` branches are not checked)."""
    from mocks.portability.importers.openapi_refs import References

    root = package_root(OAS_EXAMPLES)
    documents = sorted(root.glob("3.*/json/**/*.json"))
    assert documents
    checked = 0
    for document in documents:
        spec = json.loads(document.read_text())
        try:
            result = import_path(document)
        except ImportDocumentError:
            continue  # documents without operations (see the test above)
        references = References(spec, document.parent, document.name)
        bodies = {(mock["http"]["matcher"]["method"].lower(), mock["http"]["matcher"]["path"]):
                  mock["http"]["response"].get("body") for mock in result.mocks}
        for path, item in (spec.get("paths") or {}).items():
            for method, operation in (item or {}).items():
                schema = _generated_schema(operation, references)
                body = bodies.get((method, path))
                if schema is None or not isinstance(body, (dict, list)):
                    continue
                missing = _missing_required(body, schema, references, ())
                assert missing == [], f"{document.relative_to(root)} {method} {path}: {missing}"
                checked += 1
    assert checked > 10


def _generated_schema(operation, references):
    """The schema a mock body was generated from, or None (an example was used)."""
    if not isinstance(operation, dict) or not isinstance(operation.get("responses"), dict):
        return None
    codes = [str(code) for code in operation["responses"]]
    chosen = choose_status(codes)
    if chosen is None:
        return None
    response = _deref(operation["responses"].get(chosen, operation["responses"].get(
        int(chosen) if chosen.isdigit() else chosen)), references)
    content = response.get("content") if isinstance(response, dict) else None
    if not isinstance(content, dict) or not content:
        return None
    media = next(iter(content.values()))
    if not isinstance(media, dict) or "example" in media or media.get("examples"):
        return None
    schema = _deref(media.get("schema"), references)
    return None if not isinstance(schema, dict) or "example" in schema else schema


def _deref(value, references, limit=20):
    while isinstance(value, dict) and isinstance(value.get("$ref"), str) and limit:
        value, limit = references.resolve(value["$ref"]), limit - 1
    return value


def _missing_required(value, schema, references, seen):
    """``["<json path>.<name>"]`` of required properties missing from ``value``."""
    schema = _deref(schema, references)
    if not isinstance(schema, dict) or id(schema) in seen or len(seen) > 30:
        return []
    seen = (*seen, id(schema))
    if "example" in schema or "enum" in schema or "default" in schema:
        return []
    missing = []
    for member in schema.get("allOf") or []:
        missing += _missing_required(value, member, references, seen)
    if isinstance(value, dict):
        for name in schema.get("required") or []:
            if name not in value:
                missing.append(name)
        for name, child in (schema.get("properties") or {}).items():
            if name in value and value[name] is not None:
                missing += [f"{name}.{inner}" for inner in
                            _missing_required(value[name], child, references, seen)]
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for index, item in enumerate(value):
            if item is not None:
                missing += [f"[{index}].{inner}" for inner in
                            _missing_required(item, schema["items"], references, seen)]
    return missing
