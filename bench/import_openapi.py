"""Import benchmark: a generated ~10 MB OpenAPI 3.0 document through the import path.

The document is shaped like large real-world specs (cloud provider APIs): shared component
schemas with nested ``$ref``s, ``allOf`` composition, enums, arrays, long descriptions,
path and query parameters, several responses per operation, some with examples.

Measures, each on a fresh process where it matters:
  convert   ``import_path(compile=False)`` in process (parse, convert, schema check: the
            client-side work of a real import)
  dry-run   ``mockd import FILE --dry-run --json`` (the whole CLI with the compile check, no
            server)
  import    ``mockd import FILE --json`` into a running ``mockd start`` (converted config
            posted to ``POST /config``, stored and compiled by the engine)

Usage: python bench/import_openapi.py [--megabytes 10] [--skip-server]
Prints one line per measurement and the commands used.
"""
from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

WORDS = ("account resource region network policy quota zone cluster instance volume snapshot "
         "gateway route table subnet rule certificate key secret vault pipeline stage job "
         "artifact build release metric alert dashboard").split()


def sentence(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words)).capitalize() + "."


def generate(megabytes: float, seed: int = 7) -> dict:
    """An OpenAPI 3.0 document of about ``megabytes`` MB of JSON."""
    rng = random.Random(seed)
    schemas: dict = {}
    names = [f"{rng.choice(WORDS).capitalize()}{index}" for index in range(400)]
    for index, name in enumerate(names):
        properties = {
            "id": {"type": "string", "format": "uuid", "description": sentence(rng, 12)},
            "name": {"type": "string", "description": sentence(rng, 20)},
            "state": {"type": "string", "enum": ["active", "pending", "deleted", "failed"]},
            "createdAt": {"type": "string", "format": "date-time"},
            "count": {"type": "integer", "minimum": 0, "maximum": 5000},
            "ratio": {"type": "number"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "labels": {"type": "object", "additionalProperties": {"type": "string"}},
        }
        for extra in range(6):
            properties[f"{rng.choice(WORDS)}_{extra}"] = {
                "type": rng.choice(["string", "integer", "boolean"]),
                "description": sentence(rng, 25)}
        if index > 0:
            properties["parent"] = {"$ref": f"#/components/schemas/{names[rng.randrange(index)]}"}
            properties["children"] = {"type": "array", "items": {
                "$ref": f"#/components/schemas/{names[rng.randrange(index)]}"}}
        schema: dict = {"type": "object", "description": sentence(rng, 40),
                        "properties": properties, "required": ["id", "name"]}
        if index > 10 and index % 3 == 0:
            schema = {"allOf": [{"$ref": f"#/components/schemas/{names[index - 5]}"}, schema]}
        schemas[name] = schema
    schemas["Error"] = {"type": "object", "properties": {
        "code": {"type": "string"}, "message": {"type": "string"}}}
    paths: dict = {}
    document = {"openapi": "3.0.3", "info": {"title": "Generated cloud API", "version": "1"},
                "paths": paths, "components": {"schemas": schemas}}
    target = megabytes * 1_000_000
    index = 0
    size = len(json.dumps(document))
    while size < target:
        resource = names[index % len(names)]
        base = f"/v1/{rng.choice(WORDS)}s{index}"
        item = f"{base}/{{{resource.lower()}Id}}"
        reference = {"$ref": f"#/components/schemas/{resource}"}
        error = {"description": sentence(rng, 8), "content": {"application/json": {
            "schema": {"$ref": "#/components/schemas/Error"}}}}
        parameters = [{"name": "pageSize", "in": "query", "description": sentence(rng, 15),
                       "schema": {"type": "integer"}},
                      {"name": "filter", "in": "query", "description": sentence(rng, 30),
                       "schema": {"type": "string"}}]
        paths[base] = {
            "get": {"operationId": f"list{resource}{index}", "summary": sentence(rng, 5),
                    "description": sentence(rng, 60), "parameters": parameters,
                    "responses": {"200": {"description": "OK", "content": {"application/json": {
                        "schema": {"type": "object", "properties": {
                            "items": {"type": "array", "items": reference},
                            "nextPageToken": {"type": "string"}}}}}},
                        "400": error, "403": error}},
            "post": {"operationId": f"create{resource}{index}", "summary": sentence(rng, 5),
                     "description": sentence(rng, 60),
                     "requestBody": {"content": {"application/json": {"schema": reference}}},
                     "responses": {"201": {"description": "Created", "content": {
                         "application/json": {"schema": reference,
                                              "example": {"id": f"r-{index}", "name": "x"}}}},
                         "400": error}}}
        paths[item] = {
            "parameters": [{"name": f"{resource.lower()}Id", "in": "path", "required": True,
                            "schema": {"type": "string"}}],
            "get": {"operationId": f"get{resource}{index}", "description": sentence(rng, 40),
                    "responses": {"200": {"description": "OK", "content": {
                        "application/json": {"schema": reference}}}, "404": error}},
            "patch": {"operationId": f"update{resource}{index}",
                      "description": sentence(rng, 40),
                      "responses": {"200": {"description": "OK", "content": {
                          "application/json": {"schema": reference}}}, "404": error}},
            "delete": {"operationId": f"delete{resource}{index}",
                       "description": sentence(rng, 20),
                       "responses": {"204": {"description": "Deleted"}, "404": error}}}
        index += 1
        if index % 50 == 0:
            size = len(json.dumps(document))
    return document


def timed(argv: list[str]) -> tuple[float, subprocess.CompletedProcess]:
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    return time.perf_counter() - started, done


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=float, default=10.0)
    parser.add_argument("--skip-server", action="store_true")
    options = parser.parse_args()
    mockd = str(Path(sys.executable).parent / "mockd")
    with tempfile.TemporaryDirectory() as folder:
        spec = Path(folder) / "generated-openapi.json"
        spec.write_text(json.dumps(generate(options.megabytes)))
        megabytes = spec.stat().st_size / 1_000_000
        operations = sum(len([key for key in item if key != "parameters"])
                         for item in json.loads(spec.read_text())["paths"].values())
        print(f"document: {megabytes:.1f} MB, {operations} operations")

        from mocks.portability.importers import import_path

        started = time.perf_counter()
        result = import_path(spec, as_prefix="cloud", compile=False)
        print(f"convert  (import_path, in process, schema check, no compile; what "
              f"'mockd import' does before posting): {time.perf_counter() - started:.2f} s, "
              f"{len(result.mocks)} mocks, config "
              f"{len(json.dumps(result.config_document())) / 1_000_000:.1f} MB")

        seconds, done = timed([mockd, "import", str(spec), "--dry-run", "--json"])
        assert done.returncode == 0, done.stderr
        print(f"dry-run  ($ mockd import {spec.name} --dry-run --json): {seconds:.2f} s")

        if not options.skip_server:
            from tests.helpers import start_server

            with start_server(Path(folder)) as server:
                seconds, done = timed([mockd, "import", str(spec), "--json", "--admin-url",
                                       server.admin])
                assert done.returncode == 0, done.stderr
                print(f"import   ($ mockd import {spec.name} --json --admin-url ...; into "
                      f"mockd start): {seconds:.2f} s -> {done.stdout.strip()[:80]!r}")
                with server.client() as client:
                    answer = client.get("/v1/" + next(iter(result.mocks))["http"]["matcher"]
                                        ["path"].split("/v1/", 1)[1])
                print(f"served: first imported path answers {answer.status_code}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
