"""The handler of ``mqtt`` mocks: one mock -> the broker service of its port.

Compiling a mock compiles every topic's payload and response templates
(:mod:`mocks.protocols.mqtt.topics`), checks the TLS files (confined to the context's file
roots like every file a config names; :mod:`mocks.protocols.mqtt.tls`) and returns one
:class:`~mocks.protocols.mqtt.broker.MqttPortService` named ``mqtt:<port>``. The snapshot
merges the services of mocks that share a port (:meth:`~mocks.protocols.mqtt.broker.
MqttPortService.merged`); the engine's :class:`~mocks.protocols.mqtt.broker.MqttHub` lives in
``context.shared["mqtt"]``.

Source: behavior notes §10 (``mqtt`` row), §14 (``mtls`` keys), §15 (files a config may
read); SPEC "Mock kinds", "Mocks" (MQTT mocks of one port share it), "Tables" (``onPublish``
may write a table). Django-free.
"""
from __future__ import annotations

import logging
from typing import Any

from mocks.core.errors import ConfigError
from mocks.protocols import CompileContext, CompiledMock
from mocks.protocols.mqtt.broker import BrokerTable, CompiledTopic, MqttPortService
from mocks.protocols.mqtt.config import MqttMock, topic_filter_problem
from mocks.protocols.mqtt.tls import compile_tls
from mocks.protocols.mqtt.topics import compile_payload

logger = logging.getLogger("mocks.mqtt")


def _device_ids(pattern: str, count: int) -> tuple[str, ...]:
    if "{n}" not in pattern:
        pattern += "-{n}"
    return tuple(pattern.replace("{n}", str(number)) for number in range(1, count + 1))


class MqttHandler:
    """Compiles ``mqtt`` mocks (see the module docstring)."""

    mock_type = "mqtt"
    config_model = MqttMock

    def compile(self, mock: Any, context: CompileContext) -> CompiledMock:
        """One :class:`~mocks.protocols.mqtt.broker.MqttPortService` for ``mqtt.port``.

        Raises :class:`~mocks.core.errors.ConfigError` naming the key:
        ``mocks[0].mqtt.topics[1].messages[0].payload: unknown expression ...``,
        ``mocks[0].mqtt.tls.certFile: file not found: ...`` (or outside the folders files
        may be read from), ``mocks[0].mqtt.tls: cannot load the certificate, key or CA
        files: ...``, ``mocks[0].mqtt.topics[0].deviceSimulation: needs messages to
        publish``.
        """
        config: MqttMock = mock.mqtt
        key_path = f"{context.key_path}.mqtt"
        topics = []
        for index, topic in enumerate(config.topics):
            key = f"{key_path}.topics[{index}]"
            messages = tuple(
                (compile_payload(message.payload or "", f"{key}.messages[{number}].payload"),
                 message.delay / 1000.0, message.repeat, message.interval / 1000.0)
                for number, message in enumerate(topic.messages))
            simulation = topic.deviceSimulation
            devices: tuple[str, ...] = ()
            if simulation is not None and simulation.enabled:
                if not messages:
                    raise ConfigError(f"{key}.deviceSimulation",
                                      "needs messages to publish (each device publishes the "
                                      "topic's messages)")
                devices = _device_ids(simulation.deviceIdPattern, simulation.deviceCount)
            elif messages:
                problem = topic_filter_problem(topic.topic, wildcards=False)
                if problem:
                    raise ConfigError(f"{key}.topic", f"{problem} (messages are published "
                                                      f"on it)")
            response = None
            forward = None
            table = None
            on_publish = topic.onPublish
            if on_publish is not None:
                forward = on_publish.forward
                if on_publish.response is not None:
                    answer = on_publish.response
                    response = (compile_payload(answer.payload or "",
                                                f"{key}.onPublish.response.payload"),
                                compile_payload(answer.topic, f"{key}.onPublish.response.topic")
                                if answer.topic else None,
                                answer.delay / 1000.0)
                if on_publish.statefulResource:
                    table = (on_publish.statefulResource,
                             on_publish.statefulAction or "create")
            # A topic's `qos`, when the config gives it, is also that of its answers and
            # forwards; without it they go out at the QoS of the client's publish.
            topic_qos = topic.qos if "qos" in topic.model_fields_set else None
            answer_qos = (on_publish.response.qos if on_publish is not None
                          and on_publish.response is not None
                          and on_publish.response.qos is not None else topic_qos)
            topics.append(CompiledTopic(mock.id, topic.topic, topic.qos, topic.retain,
                                        messages, devices, response, forward, table, key,
                                        answer_qos, topic_qos))
        tls = compile_tls(config.tls, context.base_dir, context.body_file_roots,
                          f"{key_path}.tls")
        websocket = config.websocket
        users = None
        if config.auth is not None and config.auth.enabled:
            users = {user.username: (user.password,
                                     tuple((acl.topic, acl.access) for acl in user.acl))
                     for user in config.auth.users}
        table_ = BrokerTable(config.port, (mock.id,), tuple(topics), tls, users,
                             (websocket.port, websocket.path)
                             if websocket is not None and websocket.enabled else None)
        return CompiledMock(services=(MqttPortService(table_, context.shared,
                                                      context.tables),))


#: The registered handler object (:data:`mocks.protocols.PROTOCOLS`).
HANDLER = MqttHandler()
