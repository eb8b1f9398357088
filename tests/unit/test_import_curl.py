"""curl command import (SPEC "Import and export": only with ``--format curl``)."""
from __future__ import annotations

import pytest

from mocks.portability.importers import ImportDocumentError, detect_format, import_document
from mocks.portability.importers.curl import split_commands
from tests.import_golden import assert_matches_golden, case_name, cases


@pytest.mark.parametrize("source", cases("curl"), ids=case_name)
def test_curl_golden_file_converts_to_expected_config(source):
    assert_matches_golden(source)


def matcher_of(command):
    return import_document(command, format="curl").mocks[0]["http"]["matcher"]


def test_curl_is_never_detected_and_the_error_says_to_use_format_curl():
    assert detect_format("curl https://x.test/a") is None
    with pytest.raises(ImportDocumentError) as caught:
        import_document("curl https://x.test/a")
    assert str(caught.value) == ("unknown: this looks like a curl command; import it with "
                                 "--format curl")


def test_curl_commands_split_on_curl_lines_with_continuations_joined():
    text = "# comment\ncurl a \\\n  -H 'X: 1'\n\ncurl b\n"
    assert split_commands(text) == ["curl a    -H 'X: 1'", "curl b"]


@pytest.mark.parametrize(("command", "method"), [
    ("curl https://x.test/a", "GET"), ("curl -d a=1 https://x.test/a", "POST"),
    ("curl --data-raw x https://x.test/a", "POST"), ("curl -G -d a=1 https://x.test/a", "GET"),
    ("curl -XDELETE https://x.test/a", "DELETE"), ("curl --request=put https://x.test/a", "PUT"),
    ("curl -I https://x.test/a", "HEAD"), ("curl -F f=@a.txt https://x.test/a", "POST")])
def test_curl_method_rules(command, method):
    assert matcher_of(command)["method"] == method


def test_curl_host_without_scheme_and_query_from_get_data():
    matcher = matcher_of("curl -G example.com/search -d q=a -d page=2")
    assert matcher["path"] == "/search" and matcher["queryParams"] == {"q": "a", "page": "2"}


def test_curl_cookie_and_basic_auth_become_conditions():
    matcher = matcher_of("curl -b 'sid=abc; theme=dark' -u ada:pw https://x.test/a")
    assert matcher["headers"] == {"Cookie": "*sid=abc*", "Authorization": "Basic YWRhOnB3"}


@pytest.mark.parametrize(("text", "message"), [
    pytest.param("wget https://x.test", "curl: no command starting with 'curl' found",
                 id="not curl"),
    pytest.param("curl -H 'X: 1'", "curl: command 1: no URL", id="no url"),
    pytest.param("curl 'https://x.test", "curl: command 1: No closing quotation",
                 id="unbalanced quote"),
])
def test_curl_malformed_command_names_the_command(text, message):
    with pytest.raises(ImportDocumentError) as caught:
        import_document(text, format="curl")
    assert str(caught.value) == message
