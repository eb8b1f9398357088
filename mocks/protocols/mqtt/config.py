"""The config model of an ``mqtt`` mock: a broker on its own port, topics, auth and TLS.

Shape (durations are ``"400ms"``, ``"5s"`` or an integer of ms; stored as int ms)::

    mqtt:
      port: 1883                         # required, 1-65535; its own broker
      tls: {enabled: true, certFile: server.pem, keyFile: server.key,
            clientAuth: require, caCertFile: clients-ca.pem, allowedCNs: [sensor-1]}
      websocket: {port: 9001, path: /mqtt}  # MQTT over WebSocket on a port of its own
      auth:
        enabled: true
        users:
          - {username: app, password: secret,
             acl: [{topic: "sensors/#", access: read}, {topic: "cmd/+", access: readwrite}]}
      topics:
        - topic: sensors/temp            # a topic, or a filter with + and # for onPublish
          qos: 1                         # 0-2: QoS of the mock's own publishes
          retain: true                   # the broker keeps the last published message
          messages:                      # published by the broker itself
            - {payload: '{"t": {{random.int(18,25)}}}', delay: 1s, repeat: true, interval: 5s}
          onPublish:                     # what a client publishes on a matching topic
            response: {payload: '{"ack": "{{payload.id}}"}', topic: 'acks/{{wildcard.0}}',
                       qos: 1}
            forward: archive/temp        # the received payload is also published there
          deviceSimulation: {enabled: true, deviceCount: 10, deviceIdPattern: "sensor-{n}"}

Payload templates see the core expressions (``uuid``, ``now``, ``faker.*``, ``sequence``,
...) and ``{{payload}}`` / ``{{payload.<json path>}}`` (the received message),
``{{topic}}`` (the received or published topic), ``{{wildcard.<i>}}`` (the level matched by
the i-th ``+`` or ``#`` of the topic filter, from 0) and ``{{device.id}}`` (a simulated
device).

Source: behavior notes §10 (``mqtt`` row; durations), §14 (``serverConfig.mtls`` keys, which
``tls`` mirrors for client certificates); SPEC "Mock kinds", "Templating" (MQTT response
bodies); SPEC "Validation" (MQTT qos 0-2).
"""
from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from mocks.core.durations import DurationMs
from mocks.core.schema import Strict
from mocks.server_config import MtlsClientAuth

#: ``acl[].access`` values: ``read`` (subscribe and receive), ``write`` (publish),
#: ``readwrite`` (both).
Access = Literal["read", "write", "readwrite"]

#: The largest number of simulated devices of one topic.
MAX_DEVICES = 10_000


def topic_filter_problem(text: str, *, wildcards: bool = True) -> str | None:
    """Why ``text`` is not a valid MQTT topic filter (or topic when ``wildcards`` is False),
    or None when it is. Rules: non-empty, at most 65535 bytes, no NUL; ``+`` fills a whole
    level; ``#`` fills the last level only."""
    if not text:
        return "a topic must not be empty"
    if len(text.encode("utf-8")) > 65535:
        return "a topic is at most 65535 bytes"
    if "\x00" in text:
        return "a topic must not contain NUL"
    levels = text.split("/")
    for index, level in enumerate(levels):
        if "#" in level:
            if not wildcards:
                return "a topic to publish on cannot hold the wildcard '#'"
            if level != "#" or index != len(levels) - 1:
                return "'#' must be a whole level and the last one (sensors/#)"
        if "+" in level:
            if not wildcards:
                return "a topic to publish on cannot hold the wildcard '+'"
            if level != "+":
                return "'+' must be a whole level (sensors/+/temp)"
    return None


def _payload_text(value: Any) -> Any:
    if value is None or isinstance(value, str):
        return value
    import orjson

    return orjson.dumps(value).decode()


class MqttTls(Strict):
    """``tls``: serve MQTT over TLS (``mqtts``) with a PEM certificate chain and key, and
    optionally ask clients for certificates, with the keys of ``serverConfig.mtls`` (behavior
    notes §14).

    Attributes:
        enabled: off by default.
        certFile, keyFile: PEM files (relative to the config file's folder); required when
            enabled.
        clientAuth: ``none`` (the default: no certificate asked), ``request`` and
            ``verify-if-given`` (asked; one that is sent must be signed by the CA files),
            ``require`` and ``require-and-verify`` (a client without a certificate signed by
            the CA files fails the TLS handshake).
        caCertFile, caCertFiles: PEM files of the CAs that sign client certificates; at least
            one is required when ``clientAuth`` is not ``none``.
        allowedCNs, allowedOUs: accept only certificates with one of these Common Names /
            Organizational Units (empty: any); another certificate gets CONNACK "not
            authorized".
    """

    enabled: bool = False
    certFile: str | None = None
    keyFile: str | None = None
    clientAuth: MtlsClientAuth = "none"
    caCertFile: str | None = Field(None, min_length=1)
    caCertFiles: list[str] = Field(default_factory=list)
    allowedCNs: list[str] = Field(default_factory=list)
    allowedOUs: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _files(self) -> "MqttTls":
        if self.enabled and (not self.certFile or not self.keyFile):
            raise ValueError("tls.enabled needs certFile and keyFile (PEM files)")
        if self.enabled and self.clientAuth != "none" and not (self.caCertFile
                                                                or self.caCertFiles):
            raise ValueError(f"tls.clientAuth {self.clientAuth!r} needs caCertFile (the PEM "
                             f"file of the CA that signs client certificates)")
        return self


class MqttWebSocket(Strict):
    """``websocket``: MQTT over WebSocket (``ws://``, ``wss://`` with ``tls``) on a port of
    its own, for browser dashboards and MQTT.js; the same broker as ``port``.

    Attributes:
        enabled: on by default when the block is given.
        port: 1-65535, other than the mock's ``port``.
        path: the only request path accepted (others get 404); None (the default) accepts
            every path.
    """

    enabled: bool = True
    port: int = Field(ge=1, le=65535)
    path: str | None = None

    @field_validator("path")
    @classmethod
    def _path(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith("/"):
            raise ValueError("path must start with '/' (/mqtt)")
        return value


class MqttAcl(Strict):
    """One ``acl`` entry: ``topic`` (a filter with ``+``/``#``) and ``access``."""

    topic: str
    access: Access = "readwrite"

    @field_validator("topic")
    @classmethod
    def _topic(cls, value: str) -> str:
        problem = topic_filter_problem(value)
        if problem:
            raise ValueError(problem)
        return value


class MqttUser(Strict):
    """One user: ``username``, ``password`` and ``acl`` (empty: every topic, both ways)."""

    username: str = Field(min_length=1)
    password: str = ""
    acl: list[MqttAcl] = Field(default_factory=list)


class MqttAuth(Strict):
    """``auth``: when ``enabled``, CONNECT must carry one of ``users`` (else CONNACK refuses
    with "not authorized") and its ACL is enforced on subscribe, publish and delivery."""

    enabled: bool = False
    users: list[MqttUser] = Field(default_factory=list)


class MqttMessage(Strict):
    """One scheduled message the broker publishes on the topic.

    Attributes:
        payload: the text published (an object or array is sent as JSON); templated.
        delay: ms after the broker starts before the first publish.
        repeat: publish again every ``interval`` until the mock changes.
        interval: ms between repeats (default 1000 when ``repeat``; at least 10).
    """

    payload: Any = ""
    delay: DurationMs = 0
    repeat: bool = False
    interval: DurationMs = 0

    @field_validator("payload", mode="before")
    @classmethod
    def _text(cls, value: Any) -> Any:
        return _payload_text(value)

    @model_validator(mode="after")
    def _interval(self) -> "MqttMessage":
        if self.repeat and self.interval == 0:
            self.interval = 1000
        if self.repeat and self.interval < 10:
            raise ValueError("interval of a repeated message must be at least 10ms")
        return self


class MqttResponse(Strict):
    """``onPublish.response``: the answer published to ``topic`` (templated; default: the
    topic the client published on) with ``payload`` (templated), after ``delay`` ms, at
    ``qos`` (0-2; default: the topic entry's ``qos`` when the config gives one, else the QoS
    of the client's publish)."""

    payload: Any = ""
    topic: str | None = None
    delay: DurationMs = 0
    qos: int | None = Field(default=None, ge=0, le=2)

    @field_validator("payload", mode="before")
    @classmethod
    def _text(cls, value: Any) -> Any:
        return _payload_text(value)


class MqttOnPublish(Strict):
    """``onPublish``: what happens when a client publishes on a matching topic.

    Attributes:
        response: an answer to publish, or None.
        forward: a topic the received payload is published to as well, or None.
        statefulResource, statefulAction: write the JSON payload into a table (``create``:
            a new row), so REST reads it (``GET /<resource>``).
    """

    response: MqttResponse | None = None
    forward: str | None = None
    statefulResource: str | None = None
    statefulAction: Literal["create", "update"] | None = None

    @field_validator("forward")
    @classmethod
    def _forward(cls, value: str | None) -> str | None:
        if value is not None:
            problem = topic_filter_problem(value, wildcards=False)
            if problem:
                raise ValueError(problem)
        return value


class MqttDevices(Strict):
    """``deviceSimulation``: ``deviceCount`` devices each publish the topic's ``messages``
    on its own topic. The device topic is the topic with ``{deviceId}`` replaced, else its
    first ``+`` level replaced, else ``<topic>/<device id>``. ``deviceIdPattern``: ``{n}`` is
    the device number from 1 (default ``device-{n}``)."""

    enabled: bool = False
    deviceCount: int = Field(default=1, ge=1, le=MAX_DEVICES)
    deviceIdPattern: str = "device-{n}"


class MqttTopic(Strict):
    """One ``topics`` entry (see the module docstring).

    Attributes:
        topic: a topic, or a filter (``+``, ``#``) matched against what clients publish.
        qos: 0-2, the QoS of the mock's own publishes and of retained copies; when the
            config gives it, also of the ``onPublish`` answer (unless ``response.qos`` says
            otherwise) and forward, which otherwise go out at the QoS of the client's
            publish. A subscriber gets a message at the lower of this QoS and its own.
        retain: the broker keeps the mock's last publish on the topic for new subscribers.
    """

    topic: str
    qos: int = Field(default=0, ge=0, le=2)
    retain: bool = False
    messages: list[MqttMessage] = Field(default_factory=list)
    onPublish: MqttOnPublish | None = None
    deviceSimulation: MqttDevices | None = None

    @field_validator("topic")
    @classmethod
    def _topic(cls, value: str) -> str:
        problem = topic_filter_problem(value.replace("{deviceId}", "x"))
        if problem:
            raise ValueError(problem)
        return value


class MqttMock(Strict):
    """The ``mqtt`` block of a mock (see the module docstring)."""

    port: int = Field(ge=1, le=65535)
    tls: MqttTls | None = None
    auth: MqttAuth | None = None
    websocket: MqttWebSocket | None = None
    topics: list[MqttTopic] = Field(default_factory=list)

    @model_validator(mode="after")
    def _ports(self) -> "MqttMock":
        if self.websocket is not None and self.websocket.port == self.port:
            raise ValueError(f"websocket.port {self.port} is the MQTT port itself; give the "
                             f"WebSocket listener a port of its own (such as 9001)")
        return self
