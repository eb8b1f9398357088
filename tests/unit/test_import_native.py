"""Our own format: collections and config files, upgraded by one-step converters (STYLE §10)."""
from __future__ import annotations

import json

import pytest

from mocks.portability.importers import ImportDocumentError, import_document
from mocks.portability.importers.native import FORMAT_VERSION, UPGRADES, document_version, upgrade
from tests.import_golden import assert_matches_golden, case_name, cases


@pytest.mark.parametrize("source", cases("mockd"), ids=case_name)
def test_native_golden_file_converts_to_expected_config(source):
    assert_matches_golden(source)


@pytest.mark.parametrize(("document", "version"), [
    ({"version": "1.0"}, "1.0"), ({"version": 1}, "1.0"), ({"version": 1.0}, "1.0"),
    ({"mocks": []}, "0"), ([], "0"), ({"version": "2.0"}, "2.0")])
def test_native_document_version(document, version):
    assert document_version(document) == version


@pytest.mark.parametrize(("document", "mocks"), [
    pytest.param([{"id": "a", "matcher": {"path": "/a"}}], [{"id": "a", "matcher": {"path": "/a"}}],
                 id="bare list"),
    pytest.param({"id": "a", "type": "http", "http": {}}, [{"id": "a", "type": "http", "http": {}}],
                 id="single mock"),
    pytest.param({"mocks": [{"id": "b"}]}, [{"id": "b"}], id="mapping without version"),
])
def test_native_unversioned_documents_upgrade_to_the_current_version(document, mocks):
    upgraded = upgrade(document)
    assert upgraded["version"] == FORMAT_VERSION and upgraded["mocks"] == mocks


def test_native_every_upgrade_step_leads_to_the_current_version():
    for version in UPGRADES:
        seen = {version}
        while version != FORMAT_VERSION:
            version = UPGRADES[version][0]
            assert version not in seen
            seen.add(version)


def test_native_unknown_version_is_an_error_listing_readable_versions():
    with pytest.raises(ImportDocumentError) as caught:
        import_document(json.dumps({"version": "2.0", "mocks": []}))
    assert str(caught.value) == ("mockd: version: unsupported version '2.0'; this mockd reads "
                                 "versions 0, 1.0")


@pytest.mark.parametrize("alias", ["native", "own", "json", "yaml", "mockd", "MOCKD"])
def test_native_format_aliases(alias):
    document = '{"mocks": [{"http": {"matcher": {"path": "/a"}}}]}'
    assert import_document(document, format=alias).format == "mockd"


def test_native_invalid_mock_is_reported_with_its_config_path():
    with pytest.raises(ImportDocumentError) as caught:
        import_document(json.dumps({"version": "1.0", "mocks": [
            {"id": "a", "http": {"matcher": {"path": "no-slash"}}}]}))
    assert str(caught.value) == ("mockd: mocks[0].http.matcher.path: converted mock is invalid: "
                                 "path must start with '/', got 'no-slash'")


def test_native_nested_imports_are_not_followed():
    result = import_document(json.dumps({"version": "1.0", "mocks": [
        {"http": {"matcher": {"path": "/a"}}}], "imports": [{"path": "x.yaml"}]}))
    assert result.warnings == ["the document's own 'imports' are not followed; import those "
                               "files separately"]
