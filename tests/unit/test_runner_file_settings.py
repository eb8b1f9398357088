"""Which of a run's options the config file fills (mockd_project/runner.py
``apply_file_settings``): flags > environment > file > defaults (behavior notes §14, §15)."""
from __future__ import annotations

from mocks.engine.core import DEFAULT_MAX_BODY_SIZE
from mocks.loader import validate_config
from mockd_project.runner import RunOptions, apply_file_settings

FILE = validate_config({"serverConfig": {"httpPort": 8081, "adminPort": 8091,
                                         "managementPort": 8082, "maxBodySize": 1024}})


def test_file_settings_fill_options_no_flag_gave():
    options = RunOptions(full=False)
    apply_file_settings(options, FILE)
    assert (options.port, options.admin_port, options.engine_port, options.max_body_size) == (
        8081, 8091, 8082, 1024)


def test_flags_win_over_the_file():
    options = RunOptions(full=False, port=0, admin_port=5000, engine_port=5001,
                         max_body_size=4096)
    apply_file_settings(options, FILE)
    assert (options.port, options.admin_port, options.engine_port, options.max_body_size) == (
        0, 5000, 5001, 4096)


def test_without_a_file_the_defaults_apply():
    options = RunOptions()
    apply_file_settings(options, None)
    assert (options.port, options.admin_port, options.engine_port, options.max_body_size) == (
        4280, 4290, None, DEFAULT_MAX_BODY_SIZE)


def test_management_port_is_ignored_in_full_mode():
    options = RunOptions(full=True)
    apply_file_settings(options, FILE)
    assert options.engine_port is None


def test_server_block_port_is_the_fallback_for_http_port():
    options = RunOptions(full=False)
    apply_file_settings(options, validate_config({"server": {"port": 8181}}))
    assert options.port == 8181
    options = RunOptions(full=False)
    apply_file_settings(options, validate_config({"server": {"port": 8181},
                                                  "serverConfig": {"httpPort": 8282}}))
    assert options.port == 8282
