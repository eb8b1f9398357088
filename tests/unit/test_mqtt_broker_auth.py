"""MQTT broker credentials: constant-time password checks (behavior notes §10 "GraphQL,
gRPC, WebSocket, MQTT mock configs", ``auth.users``)."""
from __future__ import annotations

import hmac

import pytest

pytest.importorskip("amqtt")

from mocks.protocols.mqtt import broker  # noqa: E402
from mocks.protocols.mqtt.broker import credentials_match  # noqa: E402

USERS = {"app": ("pw", ()), "blank": ("", ()), "ünï": ("päss", ())}


@pytest.mark.parametrize("username, password, expected", [
    pytest.param("app", "pw", True, id="right password"),
    pytest.param(b"app", b"pw", True, id="bytes"),
    pytest.param("app", "pw2", False, id="wrong password"),
    pytest.param("app", None, False, id="no password"),
    pytest.param("blank", None, True, id="user with an empty password"),
    pytest.param("nobody", "", False, id="unknown user, empty password"),
    pytest.param("nobody", "pw", False, id="unknown user"),
    pytest.param(None, None, False, id="anonymous"),
    pytest.param("ünï", "päss", True, id="non-ASCII"),
])
def test_credentials_match(username, password, expected):
    assert credentials_match(USERS, username, password) is expected


@pytest.mark.parametrize("username", ["app", "nobody"])
def test_every_check_compares_in_constant_time(monkeypatch, username):
    calls = []
    compare = hmac.compare_digest

    def recording(left, right):
        calls.append((left, right))
        return compare(left, right)

    monkeypatch.setattr(broker.hmac, "compare_digest", recording)
    credentials_match(USERS, username, "guess")
    assert calls == [(b"guess", b"pw" if username == "app" else b"")]
