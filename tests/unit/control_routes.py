"""Calling an engine-control port route function (``route_mqtt``, ``route_soap``, ...) without
a server, for unit tests."""
from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any


def route_caller(route: Callable[..., Any], control: Any) -> Callable[..., tuple[int, Any]]:
    """``call(method, path, query=None, body=b"") -> (status, payload)``: runs
    ``route(control, method, path, query, read_body, answer)`` and answers what it sent;
    fails the test when the route does not handle ``path``."""
    answers: list[tuple[int, Any]] = []

    async def answer(status: int, payload: Any) -> None:
        answers.append((status, payload))

    def call(method: str, path: str, query: dict[str, str] | None = None,
             body: bytes = b"") -> tuple[int, Any]:
        async def read() -> bytes:
            return body
        handled = asyncio.run(route(control, method, path, query or {}, read, answer))
        assert handled, f"{method} {path} was not handled"
        return answers[-1]

    return call
