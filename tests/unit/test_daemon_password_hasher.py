"""The test-only password hasher switch of ``mockd_project.daemon``: the test suite's servers
hash the first superuser's password with MD5 (cheap), a real server keeps Django's hashers."""
from __future__ import annotations

import pytest
from django.contrib.auth.hashers import get_hashers, make_password

from mockd_project import daemon

MD5 = "django.contrib.auth.hashers.MD5PasswordHasher"
PBKDF2 = "django.contrib.auth.hashers.PBKDF2PasswordHasher"


@pytest.fixture
def real_hashers(settings):
    """Django's default hashers, as a real server has them (restored after the test)."""
    settings.PASSWORD_HASHERS = [PBKDF2]
    return settings


@pytest.mark.parametrize("value", [None, "", "1", "true"])
def test_without_the_exact_value_nothing_changes(real_hashers, monkeypatch, value):
    if value is None:
        monkeypatch.delenv(daemon.CHEAP_PASSWORD_HASH_ENV, raising=False)
    else:
        monkeypatch.setenv(daemon.CHEAP_PASSWORD_HASH_ENV, value)
    assert daemon.use_cheap_password_hasher_in_tests() is False
    assert real_hashers.PASSWORD_HASHERS == [PBKDF2]


def test_the_switch_puts_md5_first_and_keeps_the_others(real_hashers, monkeypatch):
    monkeypatch.setenv(daemon.CHEAP_PASSWORD_HASH_ENV, daemon.CHEAP_PASSWORD_HASH_VALUE)
    assert daemon.use_cheap_password_hasher_in_tests() is True
    assert daemon.use_cheap_password_hasher_in_tests() is True  # a second call adds nothing
    assert real_hashers.PASSWORD_HASHERS == [MD5, PBKDF2]
    assert [hasher.algorithm for hasher in get_hashers()] == ["md5", "pbkdf2_sha256"]
    assert make_password("pw").startswith("md5$")
