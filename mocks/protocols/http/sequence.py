"""``http.responses`` with ``responseMode``: several answers for one mock, in turn or at random.

* ``sequential`` (the default): the first request gets ``responses[0]``, the next
  ``responses[1]``, ...; after the last the turn starts again at the first. The turn belongs
  to the compiled mock: it starts at the first answer when the server starts and whenever
  the mock is changed.
* ``random``: each request gets one of the answers, chosen uniformly; with a seed (the
  ``_mock_seed`` query parameter or the seed header) the choice is the same for the same seed.

Each answer is an ordinary response (templates, headers, ``delayMs``, ``bodyFile``,
``bodyBase64``), compiled once with the snapshot. This is how Mockoon's ``SEQUENTIAL`` and
``RANDOM`` route modes are imported.

Source: SPEC "Response" (each answer); Mockoon import (response modes).
"""
from __future__ import annotations

import random
from typing import Any, Sequence

from mocks.core.request import MockRequest
from mocks.core.templating import resolve_seed


class ResponseSequence:
    """Answers with one of ``actions`` per request (see the module docstring).

    Args:
        actions: compiled responses (anything with ``async respond(request, path_params,
            template_state, send) -> status``), at least one.
        mode: ``sequential`` or ``random``.
    """

    __slots__ = ("actions", "mode", "_turn", "_random")

    def __init__(self, actions: Sequence[Any], mode: str):
        if not actions:
            raise ValueError("ResponseSequence needs at least one action")
        self.actions = tuple(actions)
        self.mode = mode
        self._turn = 0
        self._random = random.Random()

    def choose(self, request: MockRequest) -> Any:
        """The action that answers ``request`` (advances the sequential turn)."""
        count = len(self.actions)
        if self.mode == "random":
            seed = resolve_seed(request, None)
            chooser = self._random if seed is None else random.Random(seed)
            return self.actions[chooser.randrange(count)]
        action = self.actions[self._turn % count]
        self._turn = (self._turn + 1) % count
        return action

    async def respond(self, request: MockRequest, path_params: dict[str, str], state: Any,
                      send: Any) -> int:
        """Send the chosen answer; returns the status sent."""
        return await self.choose(request).respond(request, path_params, state, send)
