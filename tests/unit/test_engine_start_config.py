"""An HTTP-only config pays only for what it uses (issue "mockd engine ready in under 0.5 s").

:class:`mocks.config.Mock` types each protocol block with a :class:`~mocks.config.ProtocolBlock`,
which imports and builds the block's config model the first time a block of that type is
validated. These tests check that loading an HTTP-only config builds no other protocol's
model, and that the lazy blocks validate, report errors, serialise and publish their JSON
Schema exactly as a ``Mock`` built eagerly from every protocol's model does.
"""
from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from pydantic import ValidationError, create_model

from mocks.config import ConfigFile, Mock, MockFields
from mocks.core.errors import validation_issues
from mocks.protocols import MOCK_TYPES, config_models

ROOT = Path(__file__).resolve().parents[2]

#: ``Mock`` as it was built before the blocks were lazy: every protocol's model, eagerly.
EagerMock = create_model("Mock", __base__=MockFields, __module__="mocks.config",
                         __doc__=Mock.__doc__,
                         **{kind: (model | None, None) for kind, model in config_models().items()})
EagerConfigFile = create_model("ConfigFile", __base__=ConfigFile, __module__="mocks.config",
                               mocks=(list[EagerMock], []))

#: Config modules of the protocols other than http (and the streaming part of http).
OTHER_PROTOCOL_MODELS = ("mocks.protocols.graphql.config", "mocks.protocols.grpc.config",
                         "mocks.protocols.websocket.config", "mocks.protocols.mqtt.config",
                         "mocks.protocols.soap.config", "oidc.config")


def _loaded_after(code: str) -> set[str]:
    script = code + "\nimport sys\nprint(' '.join(sys.modules))"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          cwd=ROOT, timeout=60)
    assert done.returncode == 0, done.stderr
    return set(done.stdout.split())


def test_loading_an_http_only_config_builds_no_other_protocol_model():
    loaded = _loaded_after("from mocks.loader import load_config_file\n"
                           "config = load_config_file('examples/quickstart.yaml')\n"
                           "assert config.mocks and {m.type for m in config.mocks} == {'http'}")
    assert sorted(loaded & set(OTHER_PROTOCOL_MODELS)) == []


def test_a_grpc_block_builds_the_grpc_model_when_it_is_validated():
    loaded = _loaded_after(
        "from mocks.config import Mock\n"
        "mock = Mock.model_validate({'type': 'grpc',\n"
        "                            'grpc': {'port': 50051, 'protoFile': 'a.proto'}})\n"
        "assert type(mock.grpc).__name__ == 'GrpcMock', type(mock.grpc)")
    assert "mocks.protocols.grpc.config" in loaded
    assert "mocks.protocols.mqtt.config" not in loaded


def _documented_mocks() -> list[dict]:
    """Every mock of the YAML files and YAML blocks the repository ships (examples, docs)."""
    texts = [path.read_text() for path in sorted((ROOT / "examples").rglob("*.yaml"))]
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        texts += [block.split("```", 1)[0]
                  for block in page.read_text().split("```yaml\n")[1:]]
    mocks = []
    for text in texts:
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError:
            continue
        items = data.get("mocks") if isinstance(data, dict) else data
        if isinstance(items, list):
            mocks += [item for item in items if isinstance(item, dict)]
    return mocks


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
    eager = EagerConfigFile.model_json_schema(by_alias=True, mode=mode)
    assert lazy["$defs"].keys() == eager["$defs"].keys()
    assert lazy["$defs"]["Mock"] == eager["$defs"]["Mock"]
    assert set(MOCK_TYPES) <= set(lazy["$defs"]["Mock"]["properties"])
