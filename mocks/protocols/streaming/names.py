"""Names and limits of streaming mocks that the CLI needs without the config models.

Plain constants, no pydantic: the ``--sse*`` flags of ``mockd http add``
(:mod:`.cli`) offer them while a client command imports nothing but click and httpx;
:mod:`.config` and :mod:`.templates` take them from here. Source: SPEC "Limits"
(``keepaliveInterval``); behavior notes §9 (SSE templates).
"""
from __future__ import annotations

#: Smallest non-zero ``lifecycle.keepaliveInterval`` in seconds (SPEC "Limits").
KEEPALIVE_MINIMUM_SECONDS = 5
#: ``sse.template`` names of the LLM chat stream.
LLM_CHAT_NAMES = ("llm-chat", "openai-chat", "openai")
#: ``sse.template`` names of the notification stream.
NOTIFICATION_NAMES = ("notification-stream", "notification")
#: Every ``sse.template`` name.
TEMPLATE_NAMES = LLM_CHAT_NAMES + NOTIFICATION_NAMES

#: Events kept per mock for ``Last-Event-ID`` resumption when ``resume.bufferSize`` is not set.
DEFAULT_BUFFER_SIZE = 100
