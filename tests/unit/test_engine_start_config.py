"""An HTTP-only config pays only for what it uses (issue "mockd engine ready in under 0.5 s").

:class:`mocks.config.Mock` types each protocol block with a :class:`~mocks.config.ProtocolBlock`,
and :class:`~mocks.config.ConfigFile` its ``serverConfig``, ``server``, ``tables``, ``extend``,
``customOperations`` and ``statefulResources`` with a :class:`~mocks.config.LazyModel`: each
model is imported and built the first time a value of it is validated. These tests check that
loading an HTTP-only config builds no other protocol's model and no server, chaos or custom
operation model, and that the lazy fields validate, report errors, serialise and publish
their JSON Schema exactly as models built eagerly from every model do.
"""
from __future__ import annotations

import copy
import os
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from pydantic import Field, ValidationError, create_model

from mocks.config import ConfigFile, Mock, MockFields
from mocks.core.errors import validation_issues
from mocks.protocols import MOCK_TYPES, config_models
from mocks.server_config import ServerBlock, ServerConfig
from chaos.config import ChaosConfig
from tables.config import ExtendBinding, StatefulResourceConfig, TableConfig
from tables.operations_config import CustomOperationConfig

ROOT = Path(__file__).resolve().parents[2]

#: ``Mock`` as it was built before the blocks were lazy: every protocol's model, eagerly.
EagerMock = create_model("Mock", __base__=MockFields, __module__="mocks.config",
                         __doc__=Mock.__doc__,
                         **{kind: (model | None, None) for kind, model in config_models().items()})
EagerServerConfig = create_model(
    "ServerConfig", __base__=ServerConfig, __module__="mocks.server_config",
    __doc__=ServerConfig.__doc__, chaos=(ChaosConfig | None, None))
EagerConfigFile = create_model(
    "ConfigFile", __base__=ConfigFile, __module__="mocks.config", __doc__=ConfigFile.__doc__,
    server_config=(EagerServerConfig | None, Field(None, alias="serverConfig")),
    server=(ServerBlock | None, None),
    mocks=(list[EagerMock], Field(default_factory=list)),
    tables=(list[TableConfig], Field(default_factory=list)),
    extend=(list[ExtendBinding], Field(default_factory=list)),
    custom_operations=(list[CustomOperationConfig],
                       Field(default_factory=list, alias="customOperations")),
    stateful_resources=(list[StatefulResourceConfig],
                        Field(default_factory=list, alias="statefulResources")))

#: Config modules of the protocols other than http (and the streaming part of http).
OTHER_PROTOCOL_MODELS = ("mocks.protocols.graphql.config", "mocks.protocols.grpc.config",
                         "mocks.protocols.websocket.config", "mocks.protocols.mqtt.config",
                         "mocks.protocols.soap.config", "oidc.config")


def _loaded_after(code: str) -> set[str]:
    """The modules loaded once ``code`` ran in a fresh interpreter."""
    script = code + "\nimport sys\nprint(' '.join(sys.modules))"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          cwd=ROOT, timeout=60)
    assert done.returncode == 0, done.stderr
    return set(done.stdout.split())


#: The steps of :func:`loaded_after`, run in this order in one fresh interpreter.
STEPS = {
    "http-only file": "from mocks.loader import load_config_file\n"
                      "config = load_config_file('examples/quickstart.yaml')\n"
                      "assert config.mocks and {m.type for m in config.mocks} == {'http'}",
    "server settings": "from mocks.config import ConfigFile\n"
                       "config = ConfigFile.model_validate({'serverConfig': {'httpPort': 1}})\n"
                       "assert config.server_config.http_port == 1",
    "grpc block": "from mocks.config import Mock\n"
                  "mock = Mock.model_validate({'type': 'grpc',\n"
                  "                            'grpc': {'port': 50051, 'protoFile': 'a.proto'}})\n"
                  "assert type(mock.grpc).__name__ == 'GrpcMock', type(mock.grpc)",
}


@pytest.fixture(scope="module")
def loaded_after() -> dict[str, set[str]]:
    """``{step: the modules loaded once it ran}`` for the :data:`STEPS`, run in order in one
    fresh interpreter: an HTTP-only file first (so its set is a fresh start's), then server
    settings without chaos, then a gRPC block. Each later set includes the earlier ones, which
    the earlier tests check hold none of the modules a later test looks for."""
    script = "import sys\n" + "".join(
        f"{code}\nprint({name!r} + '|' + ' '.join(sys.modules))\n" for name, code in STEPS.items())
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          cwd=ROOT, timeout=60)
    assert done.returncode == 0, done.stderr
    shown = dict(line.split("|", 1) for line in done.stdout.splitlines() if "|" in line)
    assert list(shown) == list(STEPS), done.stdout
    return {name: set(modules.split()) for name, modules in shown.items()}


def test_loading_an_http_only_config_builds_no_other_protocol_or_server_model(loaded_after):
    loaded = loaded_after["http-only file"]
    assert sorted(loaded & {*OTHER_PROTOCOL_MODELS, "mocks.server_config", "chaos.config",
                            "tables.operations_config"}) == []


def test_server_settings_without_chaos_build_no_chaos_model(loaded_after):
    loaded = loaded_after["server settings"]
    assert "mocks.server_config" in loaded and "chaos.config" not in loaded


def test_a_grpc_block_builds_the_grpc_model_when_it_is_validated(loaded_after):
    loaded = loaded_after["grpc block"]
    assert "mocks.protocols.grpc.config" in loaded
    assert "mocks.protocols.mqtt.config" not in loaded


def _documented_documents() -> list:
    """Every YAML file and YAML block the repository ships (examples, docs), parsed."""
    texts = [path.read_text() for path in sorted((ROOT / "examples").rglob("*.yaml"))]
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        texts += [block.split("```", 1)[0]
                  for block in page.read_text().split("```yaml\n")[1:]]
    documents = []
    for text in texts:
        try:
            documents.append(yaml.safe_load(text))
        except yaml.YAMLError:
            continue
    return documents


def _documented_mocks() -> list[dict]:
    """Every mock of :func:`_documented_documents`."""
    mocks = []
    for data in _documented_documents():
        items = data.get("mocks") if isinstance(data, dict) else data
        if isinstance(items, list):
            mocks += [item for item in items if isinstance(item, dict)]
    return mocks


#: The config keys typed through LazyModel, with a value of the wrong shape for each.
LAZY_KEYS = {"serverConfig": {"httpPort": "x", "bogus": 1,
                              "chaos": {"latency": {"probability": 3}, "nope": 1}},
             "server": {"tls": 3},
             "tables": [{"name": 5}, "text"], "extend": [{"mock": 1}],
             "customOperations": [{"steps": "no"}], "statefulResources": [{}]}


def _variants(mock: dict) -> list[dict]:
    """``mock`` and broken copies of it: an unknown key, a block of the wrong shape, a
    second block, wrongly typed values, a null block."""
    kind = mock.get("type") or "http"
    block = mock.get(kind)
    variants = [mock]
    if isinstance(block, dict):
        for broken in (dict(block, bogusKey=1), "text", [1], None,
                       {key: 123 if not isinstance(value, (int, float)) else "x"
                        for key, value in block.items()}):
            variant = copy.deepcopy(mock)
            variant[kind] = broken
            variants.append(variant)
        variant = copy.deepcopy(mock)
        variant["grpc" if kind != "grpc" else "http"] = {}
        variants.append(variant)
    return variants


def _outcome(model, document: dict) -> tuple:
    try:
        mock = model.model_validate(document)
    except ValidationError as error:
        return ("error", [str(issue) for issue in validation_issues(error, "mocks[0]")],
                json.dumps(error.errors(include_url=False), default=str, sort_keys=True))
    dumped = mock.model_dump(mode="json", by_alias=True, exclude_unset=True)
    if not document.get("id"):
        dumped.pop("id")  # generated
    return ("ok", dumped, type(getattr(mock, mock.type)).__name__)


def test_lazy_blocks_validate_and_report_errors_as_eager_models_do():
    mocks = _documented_mocks()
    assert {mock.get("type", "http") for mock in mocks} >= {"http", "grpc", "graphql", "soap",
                                                            "websocket", "mqtt", "oauth"}
    compared = 0
    for mock in mocks:
        for document in _variants(mock):
            assert _outcome(Mock, document) == _outcome(EagerMock, document), document
            compared += 1
    assert compared > 300


def test_config_documents_validate_and_report_errors_as_eager_models_do():
    documents = [data for data in _documented_documents()
                 if isinstance(data, dict) and ("mocks" in data or set(data) & set(LAZY_KEYS))]
    assert {key for data in documents for key in data} >= {"serverConfig", "tables", "extend",
                                                           "customOperations"}
    compared = 0
    for data in documents:
        variants = [data] + [{**data, key: broken} for key, broken in LAZY_KEYS.items()]
        for document in variants:
            outcomes = []
            for model in (ConfigFile, EagerConfigFile):
                try:
                    config = model.model_validate(document)
                except ValidationError as error:
                    outcomes.append([str(issue) for issue in validation_issues(error)])
                    continue
                dumped = config.model_dump(mode="json", by_alias=True, exclude_unset=True)
                for mock in dumped.get("mocks", []):
                    mock.pop("id")  # generated when not given
                outcomes.append(dumped)
            assert outcomes[0] == outcomes[1], document
            compared += 1
    assert compared > 100


def test_a_config_file_error_is_worded_and_placed_as_before():
    document = {"mocks": [{"id": "a", "type": "mqtt", "mqtt": {"port": "nope", "extra": 1}},
                          {"id": "b", "http": {"matcher": {"method": "GET"}, "bogus": 1}}]}
    with pytest.raises(ValidationError) as lazy:
        ConfigFile.model_validate(document)
    with pytest.raises(ValidationError) as eager:
        EagerConfigFile.model_validate(document)
    assert [str(issue) for issue in validation_issues(lazy.value)] == \
        [str(issue) for issue in validation_issues(eager.value)]
    assert any("mocks[0].mqtt.port" in str(issue) for issue in validation_issues(lazy.value))


@pytest.mark.parametrize("mode", ["validation", "serialization"])
def test_the_published_json_schema_is_the_eager_one(mode):
    assert Mock.model_json_schema(by_alias=True, mode=mode) == \
        EagerMock.model_json_schema(by_alias=True, mode=mode)
    lazy = ConfigFile.model_json_schema(by_alias=True, mode=mode)
    assert lazy == EagerConfigFile.model_json_schema(by_alias=True, mode=mode)
    assert set(MOCK_TYPES) <= set(lazy["$defs"]["Mock"]["properties"])
    assert {"ServerConfig", "TableConfig", "ChaosConfig"} <= set(lazy["$defs"])


def test_table_actions_keep_their_published_order_whichever_protocol_is_built_first():
    # typing caches `Literal[...] | None` by equality; the gRPC model names the actions in
    # another order than the table models, and the schema must not depend on which is first.
    loaded = _loaded_after(
        "from mocks.config import PROTOCOL_BLOCKS\n"
        "PROTOCOL_BLOCKS['soap'].model()  # as the first SOAP mock validated does\n"
        "from mocks.control.config_schema import config_json_schema\n"
        "schema = config_json_schema()['$defs']\n"
        "for name in ('GrpcMethod', 'SoapOperation'):\n"
        "    enum = schema[name]['properties']['statefulAction']['anyOf'][0]['enum']\n"
        "    assert enum[:2] == ['list', 'get'], (name, enum)")
    assert "mocks.protocols.soap.config" in loaded


# ---------------------------------------------------------------------------- start functions

def test_a_taken_port_is_a_startup_failure_naming_the_listener_or_the_given_error():
    """``bind_socket`` (mockd_project/engine_start.py): exit 1 and ``cannot listen on
    HOST:PORT for the WHAT`` for the CLI, or the caller's exception with the same message
    (the library's ``ServerStartError``)."""
    from mockd.errors import ServerStartError
    from mockd_project.engine_start import StartupFailure, bind_socket

    taken = bind_socket("127.0.0.1", 0, "mock server")
    port = taken.getsockname()[1]
    try:
        with pytest.raises(StartupFailure) as failure:
            bind_socket("127.0.0.1", port, "mock server")
        assert failure.value.exit_code == 1
        assert failure.value.message.startswith(
            f"cannot listen on 127.0.0.1:{port} for the mock server: ")
        with pytest.raises(ServerStartError, match=f"127.0.0.1:{port} for the engine control"):
            bind_socket("127.0.0.1", port, "engine control", error=ServerStartError)
    finally:
        taken.close()


def test_the_pydantic_plugin_scan_is_skipped_unless_the_environment_says_otherwise(
        monkeypatch):
    from mockd_project.engine_start import skip_pydantic_plugin_scan

    monkeypatch.delenv("PYDANTIC_DISABLE_PLUGINS", raising=False)
    skip_pydantic_plugin_scan()
    assert os.environ["PYDANTIC_DISABLE_PLUGINS"] == "__all__"
    monkeypatch.setenv("PYDANTIC_DISABLE_PLUGINS", "logfire")
    skip_pydantic_plugin_scan()
    assert os.environ["PYDANTIC_DISABLE_PLUGINS"] == "logfire"
