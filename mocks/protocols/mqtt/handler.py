"""The handler of ``mqtt`` mocks: one mock -> the broker service of its port.

Compiling a mock compiles every topic's payload and response templates
(:mod:`mocks.protocols.mqtt.topics`), checks the TLS files and returns one
:class:`~mocks.protocols.mqtt.broker.MqttPortService` named ``mqtt:<port>``. The snapshot
merges the services of mocks that share a port (:meth:`~mocks.protocols.mqtt.broker.
MqttPortService.merged`); the engine's :class:`~mocks.protocols.mqtt.broker.MqttHub` lives in
``context.shared["mqtt"]``.

Source: behavior notes §10 (``mqtt`` row); SPEC "Mock kinds", "Mocks" (MQTT mocks of one port
share it), "Tables" (``onPublish`` may write a table). Django-free.
"""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import orjson

from mocks.core.errors import ConfigError
from mocks.protocols import CompileContext, CompiledMock
from mocks.protocols.mqtt.broker import (BrokerTable, CompiledTopic, MqttPortService,
                                         tls_context)
from mocks.protocols.mqtt.config import MqttMock, topic_filter_problem
from mocks.protocols.mqtt.topics import compile_payload

logger = logging.getLogger("mocks.mqtt")


def _device_ids(pattern: str, count: int) -> tuple[str, ...]:
    if "{n}" not in pattern:
        pattern += "-{n}"
    return tuple(pattern.replace("{n}", str(number)) for number in range(1, count + 1))


def _file(base_dir: Path, name: str, key: str) -> str:
    path = Path(name)
    if not path.is_absolute():
        path = base_dir / path
    if not path.is_file():
        raise ConfigError(key, f"file not found: {path}")
    return str(path)


class MqttHandler:
    """Compiles ``mqtt`` mocks (see the module docstring)."""

    mock_type = "mqtt"
    config_model = MqttMock

    def compile(self, mock: Any, context: CompileContext) -> CompiledMock:
        """One :class:`~mocks.protocols.mqtt.broker.MqttPortService` for ``mqtt.port``.

        Raises :class:`~mocks.core.errors.ConfigError` naming the key:
        ``mocks[0].mqtt.topics[1].messages[0].payload: unknown expression ...``,
        ``mocks[0].mqtt.tls.certFile: file not found: ...``,
        ``mocks[0].mqtt.topics[0].deviceSimulation: needs messages to publish``.
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
            topics.append(CompiledTopic(mock.id, topic.topic, topic.qos, topic.retain,
                                        messages, devices, response, forward, table, key))
        tls = None
        if config.tls is not None and config.tls.enabled:
            cert = _file(context.base_dir, config.tls.certFile or "", f"{key_path}.tls.certFile")
            key_file = _file(context.base_dir, config.tls.keyFile or "",
                             f"{key_path}.tls.keyFile")
            try:
                tls_context(cert, key_file)
            except (OSError, ValueError) as error:
                raise ConfigError(f"{key_path}.tls", f"cannot load the certificate and key: "
                                                     f"{error}") from None
            tls = (cert, key_file)
        users = None
        if config.auth is not None and config.auth.enabled:
            users = {user.username: (user.password,
                                     tuple((acl.topic, acl.access) for acl in user.acl))
                     for user in config.auth.users}
        table_ = BrokerTable(config.port, (mock.id,), tuple(topics), tls, users)
        return CompiledMock(services=(MqttPortService(table_, context.shared,
                                                      context.tables),))


async def write_table(store: Any, entry: CompiledTopic, request: Any) -> None:
    """``onPublish`` with ``statefulResource``: the JSON object payload becomes a row
    (``create``) or updates the row of its id (``update``). A payload that is not a JSON
    object, or a table error, is logged and skipped."""
    from tables.errors import TableError
    from tables.store import OperationRequest

    resource, action = entry.table
    try:
        document = orjson.loads(request.body)
    except orjson.JSONDecodeError:
        logger.warning("MQTT payload on %s is not JSON; table %s not written", request.path,
                       resource)
        return
    if not isinstance(document, dict):
        return
    try:
        if action == "update" and document.get("id") not in (None, ""):
            store.execute(OperationRequest("update", resource, id=str(document["id"]),
                                           body=document))
        else:
            store.execute(OperationRequest("create", resource, body=document))
    except TableError as error:
        logger.warning("MQTT payload on %s not written to %s: %s", request.path, resource,
                       error.message)


#: The registered handler object (:data:`mocks.protocols.PROTOCOLS`).
HANDLER = MqttHandler()
