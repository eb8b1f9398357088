"""``http.responses`` + ``responseMode`` served by the data-plane app, and their config
errors; literal ``{{name}}`` text in a matcher path."""
from __future__ import annotations

import asyncio

import pytest

from mocks.core.errors import ConfigError
from mocks.engine.app import DataPlaneApp
from tests.helpers import engine_with


def sequence_mock(mode=None, answers=("a", "b", "c")):
    http = {"matcher": {"method": "GET", "path": "/turns"},
            "responses": [{"statusCode": 200 + index, "body": text}
                          for index, text in enumerate(answers)]}
    if mode:
        http["responseMode"] = mode
    return {"id": "turns", "type": "http", "http": http}


def get(app, path, query=b""):
    sent = []

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):
        sent.append(message)

    scope = {"type": "http", "method": "GET", "path": path, "query_string": query,
             "headers": [], "scheme": "http", "server": ("127.0.0.1", 4280),
             "client": ("127.0.0.1", 5000)}
    asyncio.run(app(scope, receive, send))
    start = next(message for message in sent if message["type"] == "http.response.start")
    body = b"".join(message.get("body", b"") for message in sent
                    if message["type"] == "http.response.body")
    return start["status"], body.decode()


@pytest.mark.parametrize("mode", [None, "sequential"])
def test_sequential_responses_answer_in_turn_and_start_again(mode):
    app = DataPlaneApp(engine_with(sequence_mock(mode)))
    answers = [get(app, "/turns") for _ in range(5)]
    assert answers == [(200, "a"), (201, "b"), (202, "c"), (200, "a"), (201, "b")]


def test_random_responses_use_every_answer_and_follow_the_seed():
    app = DataPlaneApp(engine_with(sequence_mock("random")))
    seen = {get(app, "/turns")[1] for _ in range(200)}
    assert seen == {"a", "b", "c"}
    seeded = {get(app, "/turns", b"_mock_seed=42") for _ in range(20)}
    assert len(seeded) == 1


@pytest.mark.parametrize(("extra", "message"), [
    ({"response": {"statusCode": 200}}, "give either responses or response, not both"),
    ({"responses": []}, "at least 1 item"),
])
def test_responses_config_errors_name_the_problem(extra, message):
    mock = sequence_mock()
    mock["http"].update(extra)
    with pytest.raises(ConfigError) as caught:
        engine_with(mock)
    assert message in str(caught.value)


def test_response_mode_without_responses_is_an_error():
    mock = {"id": "m", "http": {"matcher": {"path": "/x"}, "response": {},
                                "responseMode": "random"}}
    with pytest.raises(ConfigError) as caught:
        engine_with(mock)
    assert "responseMode needs a responses list" in str(caught.value)


def test_double_braces_in_a_path_are_literal_text():
    app = DataPlaneApp(engine_with(
        {"id": "literal", "http": {"matcher": {"path": "/posts/{{slug}}"},
                                   "response": {"body": "literal"}}},
        {"id": "mixed", "http": {"matcher": {"path": "/u/{{team}}/{id}"},
                                 "response": {"body": "id {{request.pathParam.id}}"}}}))
    assert get(app, "/posts/{{slug}}") == (200, "literal")
    assert get(app, "/posts/hello")[0] == 404
    assert get(app, "/u/{{team}}/7") == (200, "id 7")
    assert get(app, "/u/red/7")[0] == 404
