"""Import and export end to end through real ``mockd start`` / ``mockd engine`` processes and
the ``mockd import`` / ``mockd export`` commands (SPEC "Import and export", "Import entry",
"Client-collection exports"; behavior notes §1, §13, §15).

Server A starts from a config that imports the petstore fixture (``as: shop``) and binds it
to a table; the CLI imports more formats into it; its export is imported into a fresh
server B, which must then answer exactly like A (the round trip).
"""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import httpx
import pytest
import yaml

from tests.helpers import run_mockd, start_engine, start_server
from tests.import_golden import FIXTURES

pytestmark = pytest.mark.integration

PETSTORE = FIXTURES / "openapi" / "petstore-3.0.yaml"


def config_with_imports(directory: Path) -> dict:
    (directory / "specs").mkdir(exist_ok=True)
    (directory / "specs" / "petstore.yaml").write_text(PETSTORE.read_text())
    return {"version": "1.0",
            "mocks": [{"id": "own", "http": {"matcher": {"method": "GET", "path": "/own"},
                                             "response": {"body": "mine"}}}],
            "imports": [{"path": "specs/petstore.yaml", "as": "shop"}],
            "tables": [{"name": "pets", "idStrategy": "prefix", "idPrefix": "pet_",
                        "seedData": [{"id": "pet_1", "name": "Rex"}]}],
            "extend": [{"mock": "shop.createPet", "table": "pets", "action": "create"},
                       {"mock": "deletePet", "table": "pets", "action": "delete"},
                       {"mock": "GET /pets/{petId}/photo", "table": "pets", "action": "get"}]}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    directory = tmp_path_factory.mktemp("import-a")
    with start_server(directory, config_with_imports(directory)) as process:
        process.directory = directory
        yield process


def cli(server, *args: str) -> subprocess.CompletedProcess:
    return run_mockd([*args, "--admin-url", server.admin], server.directory)


def mock_ids(server) -> list[str]:
    with server.admin_client() as admin:
        return [mock["id"] for mock in admin.get("/mocks").json()["mocks"]]


# ---------------------------------------------------------------------------- imports: in a config


def test_start_serves_imported_mocks_with_bindings_from_the_config(server):
    with server.client() as client:
        listing = client.get("/pets", params={"status": "available"})
        assert listing.status_code == 200 and listing.json()[0]["name"] == "doggie"
        # parameter examples are not conditions: the plain request matches too
        plain = client.get("/pets")
        assert plain.status_code == 200 and plain.json() == listing.json()
        created = client.post("/pets", json={"name": "Tom"})
        assert created.status_code == 201 and created.json()["id"].startswith("pet_")
        photo = client.get(f"/pets/{created.json()['id']}/photo")
        assert photo.status_code == 200 and photo.json()["name"] == "Tom"
        assert client.get("/own").text == "mine"


def test_list_shows_imported_mocks(server):
    done = cli(server, "list", "--json")
    assert done.returncode == 0, done.stderr
    ids = [row["id"] for row in json.loads(done.stdout)]
    assert ids[0] == "own" and "shop.listPets" in ids and "shop.getInventory" in ids


def test_engine_serves_imports_tables_and_bindings_like_start(tmp_path):
    with start_engine(tmp_path, config_with_imports(tmp_path)) as engine:
        with engine.client() as client:
            created = client.post("/pets", json={"name": "Kit"})
            assert created.status_code == 201
            pet_id = created.json()["id"]
            assert client.delete(f"/pets/{pet_id}", headers={"X-Tenant": "acme"}) \
                .status_code == 204
            assert client.get(f"/pets/{pet_id}/photo").status_code == 404
            assert client.get("/store/inventory").json() == {}


def test_engine_with_a_broken_import_exits_naming_the_entry(tmp_path):
    (tmp_path / "bad.json").write_text('{"openapi": "3.0.0", "paths": {"/x": {"get": 1}}}')
    (tmp_path / "c.yaml").write_text(yaml.safe_dump({"version": "1.0", "imports": [
        {"path": "bad.json"}]}))
    done = run_mockd(["engine", "-c", str(tmp_path / "c.yaml"), "--port", "0"], tmp_path,
                     timeout=60)
    assert done.returncode == 2
    assert ("imports[0]: openapi: nothing could be imported: 1 item skipped; first: "
            "paths./x.get: expected a mapping, got a number") in done.stderr


# ---------------------------------------------------------------------------- mockd import


def test_import_json_output_and_the_mocks_are_served(server):
    done = cli(server, "import", str(FIXTURES / "har" / "browser-session.har"), "--json")
    assert done.returncode == 0, done.stderr
    output = json.loads(done.stdout)
    assert output == {"imported": 4, "total": output["total"], "format": "har",
                      "replace": False, "source": str(FIXTURES / "har" / "browser-session.har"),
                      "skipped": []}
    assert output["total"] == len(mock_ids(server))
    assert "static asset request(s) skipped" in done.stderr
    with server.client() as client:
        answer = client.get("/v1/projects", params={"page": "2", "sort": "name"})
    assert answer.json()["data"][0]["name"] == "Apollo {{codename}}"


@pytest.mark.parametrize(("path", "arguments", "request_args", "status"), [
    pytest.param("postman/shop-collection-v2.1.json", (),
                 ("GET", "/api/products", {"X-Api-Key": "secret-123"}), 200, id="postman"),
    pytest.param("wiremock/recorded-directory", (), ("GET", "/api/users", {}), 200,
                 id="wiremock directory"),
    pytest.param("mockoon/demo-environment.json", (), ("GET", "/api/v1/products/LAMP-1", {}),
                 200, id="mockoon crud"),
    pytest.param("curl/api-calls.sh", ("--format", "curl"), ("GET", "/v1/search?q=red+shoes",
                                                             {}), 200, id="curl"),
    pytest.param("openapi/swagger-2.0.json", ("--format", "swagger", "--as", "v2"),
                 ("POST", "/v2/users", {}), 201, id="swagger alias"),
])
def test_import_each_format_is_served(server, path, arguments, request_args, status):
    done = cli(server, "import", str(FIXTURES / path), *arguments)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Imported ")
    method, url, headers = request_args
    with server.client() as client:
        assert client.request(method, url, headers=headers).status_code == status


def test_import_wsdl_creates_soap_mocks(server):
    done = cli(server, "import", str(FIXTURES / "wsdl" / "inventory-service.wsdl"), "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["format"] == "wsdl"
    with server.admin_client() as admin:
        mock = admin.get("/mocks/soap_InventoryService").json()
    assert mock["type"] == "soap" and set(mock["soap"]["operations"]) == {"GetItem",
                                                                          "ListItems"}


def test_import_dry_run_reports_and_imports_nothing(server):
    before = mock_ids(server)
    done = cli(server, "import", str(FIXTURES / "openapi" / "openapi-3.1-tree.yaml"),
               "--dry-run", "--json")
    assert done.returncode == 0, done.stderr
    output = json.loads(done.stdout)
    assert output["dryRun"] is True and output["format"] == "openapi" and output["count"] == 4
    assert output["mocks"][1]["name"] == "startExport"
    assert set(output["mocks"][0]) == {"id", "name", "method", "path"}
    assert mock_ids(server) == before


@pytest.mark.parametrize(("content", "arguments", "message"), [
    pytest.param('{"openapi": "3.0.0", "paths": {"/users": {"get": {"responses": []}}}}', (),
                 "Error: openapi: nothing could be imported: 1 item skipped; first: "
                 "paths./users.get: responses: expected a mapping, got a list",
                 id="malformed openapi"),
    pytest.param("hello: world\n", (), "Error: unknown: not a recognised document",
                 id="unknown document"),
    pytest.param("curl https://x.test/a\n", (), "Error: unknown: this looks like a curl "
                 "command; import it with --format curl", id="curl without format"),
    pytest.param('{"mocks": [{"http": {"matcher": {"path": "x"}}}]}', ("--format", "native"),
                 "Error: mockd: mocks[0].http.matcher.path: converted mock is invalid",
                 id="invalid mock"),
    pytest.param("{}", ("--format", "raml"), "Error: raml: unknown format", id="bad format"),
])
def test_import_bad_document_exits_2_with_one_line_and_imports_nothing(server, tmp_path, content,
                                                                       arguments, message):
    before = mock_ids(server)
    document = tmp_path / "document.txt"
    document.write_text(content)
    done = cli(server, "import", str(document), *arguments)
    assert done.returncode == 2
    assert done.stderr.startswith(message)
    assert len(done.stderr.strip().splitlines()) == 1
    assert mock_ids(server) == before


def test_import_missing_file_exits_2(server, tmp_path):
    done = cli(server, "import", str(tmp_path / "nope.json"))
    assert done.returncode == 2 and "cannot read" in done.stderr


# ---------------------------------------------------------------------------- export and routes


def test_export_routes_answer_the_documented_types(server):
    with server.admin_client() as admin:
        openapi_json = admin.get("/openapi.json")
        openapi_yaml = admin.get("/openapi.yaml")
        v4 = admin.get("/insomnia.json")
        v5 = admin.get("/insomnia.yaml")
        forced = admin.get("/insomnia.json", params={"format": "v5"})
    assert openapi_json.headers["content-type"] == "application/json"
    assert openapi_json.json()["paths"]["/pets"]["get"]["operationId"] == "shop.listPets"
    assert openapi_yaml.headers["content-type"] == "application/x-yaml"
    assert yaml.safe_load(openapi_yaml.text)["openapi"] == "3.0.3"
    assert v4.headers["content-disposition"].startswith("attachment")
    assert v4.json()["__export_format"] == 4
    requests = {item["_id"]: item for item in v4.json()["resources"]}
    assert requests["req_shop.listPets"]["url"] == "{{ _.base_url }}/pets"
    admin_port = int(server.admin.rsplit(":", 1)[1])
    environment = requests["env_mockd_base"]["data"]
    assert environment["base_url"] == f"http://localhost:{admin_port - 10}"  # notes §1
    assert environment["admin_url"] == f"http://localhost:{admin_port}"
    assert v5.headers["content-type"] == "application/x-yaml"
    assert yaml.safe_load(v5.text)["type"] == "collection.insomnia.rest/5.0"
    assert forced.headers["content-type"] == "application/x-yaml"


def test_export_stdout_is_yaml_and_file_format_follows_extension(server, tmp_path):
    done = cli(server, "export")
    assert done.returncode == 0, done.stderr
    collection = yaml.safe_load(done.stdout)
    assert collection["kind"] == "MockCollection" and collection["name"] == "exported-config"
    assert "tables" not in collection and "extend" not in collection
    assert collection["statefulResources"][0]["name"] == "pets"
    create = next(mock for mock in collection["mocks"] if mock["id"] == "shop.createPet")
    assert create["http"]["statefulBinding"] == {"table": "pets", "action": "create"}
    target = tmp_path / "out.json"
    done = cli(server, "export", "-o", str(target), "-n", "team")
    assert done.returncode == 0 and done.stdout.startswith("Exported ")
    assert json.loads(target.read_text())["name"] == "team"


# ---------------------------------------------------------------------------- round trip

#: Requests whose answers must be the same on A and on a fresh server holding A's export.
PROBES = [
    ("GET", "/pets?status=available", {}), ("GET", "/pets/pet_1/photo", {}),
    ("GET", "/pets/7", {"X-Tenant": "acme"}), ("GET", "/store/inventory", {}),
    ("POST", "/store/order", {}), ("GET", "/own", {}), ("GET", "/api/users", {}),
    ("GET", "/api/v1/products", {}), ("GET", "/dashboard", {}), ("GET", "/missing", {}),
]


def without_timestamps(value):
    """Table items carry the time they were seeded, which differs between two servers."""
    if isinstance(value, dict):
        return {key: without_timestamps(item) for key, item in value.items()
                if key not in ("createdAt", "updatedAt")}
    if isinstance(value, list):
        return [without_timestamps(item) for item in value]
    return value


def answers(base: str) -> list[tuple[int, str, object]]:
    with httpx.Client(base_url=base, trust_env=False, timeout=10) as client:
        results = []
        for method, url, headers in PROBES:
            answer = client.request(method, url, headers=headers)
            if answer.status_code == 404:
                body: object = None  # near-miss hints name other mocks
            else:
                try:
                    body = without_timestamps(answer.json())
                except ValueError:
                    body = answer.text
            results.append((answer.status_code, answer.headers.get("content-type", ""), body))
        return results


def test_round_trip_export_then_import_into_a_fresh_server_answers_the_same(server, tmp_path):
    exported = tmp_path / "export.yaml"
    assert cli(server, "export", "-o", str(exported)).returncode == 0
    expected = answers(server.base)
    with start_server(tmp_path) as fresh:
        done = run_mockd(["import", str(exported), "--json", "--admin-url", fresh.admin],
                         tmp_path)
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["format"] == "mockd"
        assert answers(fresh.base) == expected
        # the OpenAPI export reproduces the static answers too (replacing everything)
        document = tmp_path / "api.json"
        assert run_mockd(["export", "--format", "openapi", "-o", str(document),
                          "--admin-url", server.admin], tmp_path).returncode == 0
        done = run_mockd(["import", str(document), "--replace", "--json", "--admin-url",
                          fresh.admin], tmp_path)
        output = json.loads(done.stdout)
        assert output["replace"] is True and output["total"] == output["imported"]
        with fresh.client() as client:
            inventory = client.get("/store/inventory")
            assert inventory.status_code == 200 and inventory.json() == {}
            assert client.get("/own").text == "mine"
            assert client.get("/pets", params={"status": "available"}).json()[0]["name"] \
                == "doggie"
