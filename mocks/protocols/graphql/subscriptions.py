"""GraphQL over WebSocket at a ``graphql`` mock's path: subscriptions (and queries and
mutations) with the ``graphql-transport-ws`` protocol or the legacy ``graphql-ws`` one.

Protocol choice: the subprotocol the client offers (``graphql-transport-ws`` preferred);
a client offering neither gets ``graphql-transport-ws``.

``graphql-transport-ws``: ``connection_init`` -> ``connection_ack`` (no init within 10 s:
close 4408; a second init: 4429); ``ping`` -> ``pong``; ``subscribe {id, payload}`` ->
``next`` messages then ``complete`` (``error`` with a list of GraphQL errors when the
document is invalid); ``complete {id}`` stops one operation; ``subscribe`` before the ack:
close 4401; a duplicate id: 4409; a message that is not valid: 4400.

``graphql-ws`` (subscriptions-transport-ws): ``connection_init`` -> ``connection_ack`` (and a
``ka``); ``start`` -> ``data`` messages then ``complete``; ``stop {id}``; ``error`` for an
invalid document; ``connection_terminate`` closes.

Events of a subscription field come from ``subscriptions.<field>``: each event's ``data`` is
the field's value (strings are templates, with ``{{args.<name>}}``), or the operation's data
object ``{"<field>": value}`` (its only key the field's name), run through the
operation's selection set like a query; before each event the server waits the event's
``delay``, else ``timing.fixedDelay`` plus a random part of ``timing.randomDelay``;
``timing.repeat`` starts the list over (true: until the client stops; a number: that many
rounds). A field without configured events sends three fake events of its type. Then
``complete``.

Every operation is checked against the mock's ``limits`` before it runs, like over HTTP
(:mod:`~mocks.protocols.graphql.limits`: a document over one is an ``error`` message), and
each run (a query, a mutation, one subscription event) has the time budget
``limits.timeoutMs``: past it the operation ends with an ``error`` message.

Every operation is one request-log entry (``protocol: graphql``, status 101,
``graphqlOpType``, ``graphqlOperationName``, ``wsConnectionId``, ``events`` sent). A changed
or removed mock closes its connections with 1012.

Source: behavior notes §10 (``subscriptions: {field: {events:[{data, delay}], timing:
{fixedDelay, randomDelay "100ms-500ms", repeat}}}`` over WebSocket at the same path), §1
(request log); the graphql-transport-ws and subscriptions-transport-ws protocol documents.
"""
from __future__ import annotations

import asyncio
import logging
import random
import secrets
import time
from typing import Any

import orjson
from graphql import OperationType

from mocks.core.templating import (RenderContext, TemplateError, TemplateState,
                                   ValueTemplate, compile_value, resolve_seed)
from mocks.core.errors import ConfigError
from mocks.protocols.graphql.config import Subscription
from mocks.protocols.graphql.executor import (EventRoot, GraphQLExecutor, RunContext,
                                              result_document, run_to_result)
from mocks.protocols.graphql.fake import fake_value
from mocks.protocols.graphql.limits import time_budget_error
# The upgrade request as WebSocket mocks build it (headers, query, peer of the handshake).
from mocks.protocols.websocket.session import _upgrade_request

logger = logging.getLogger("mockd.graphql")

TRANSPORT_WS = "graphql-transport-ws"
LEGACY_WS = "graphql-ws"
#: Seconds a client has to send ``connection_init``.
INIT_TIMEOUT = 10.0
#: Operations one connection may run at once.
MAX_OPERATIONS = 100
#: Messages a client may have waiting to be sent before it is closed (it is not reading).
SEND_QUEUE_LIMIT = 1024
#: Fake events sent for a subscription field without configured events.
FAKE_EVENT_COUNT = 3
#: Largest incoming message, in bytes.
MAX_MESSAGE_BYTES = 1024 * 1024


class CompiledSubscription:
    """``subscriptions.<field>``, compiled: event templates and timing (seconds).

    An event's ``data`` written as the operation's data object, ``{"<field>": value}`` (its
    only key the field's name), gives the field ``value``; any other ``data`` is the field's
    value itself (behavior notes §10 "Shapes inside those configs", GraphQL subscription).

    Raises :class:`ConfigError` at ``key`` for a bad template.
    """

    __slots__ = ("events", "fixed", "random_range", "repeat")

    def __init__(self, subscription: Subscription, key: str, field_name: str = ""):
        events: list[tuple[ValueTemplate, float | None]] = []
        for index, event in enumerate(subscription.events or ()):
            data, where = event.data, f"{key}.events[{index}].data"
            if isinstance(data, dict) and len(data) == 1 and field_name in data:
                data, where = data[field_name], f"{where}.{field_name}"
            try:
                template = compile_value(data)
            except TemplateError as error:
                raise ConfigError(f"{where}{error.location}",
                                  error.detail) from None
            events.append((template, event.delay / 1000.0 if event.delay is not None else None))
        self.events: tuple[tuple[ValueTemplate, float | None], ...] | None = \
            tuple(events) if subscription.events is not None else None
        timing = subscription.timing
        self.fixed = timing.fixed_delay / 1000.0
        self.random_range = (None if timing.random_delay is None else
                             (timing.random_delay[0] / 1000.0, timing.random_delay[1] / 1000.0))
        self.repeat = timing.repeat

    def wait_before(self, event_delay: float | None) -> float:
        """Seconds to wait before an event."""
        if event_delay is not None:
            return event_delay
        extra = random.uniform(*self.random_range) if self.random_range else 0.0
        return self.fixed + extra

    def rounds(self) -> int | None:
        """How many times the event list is sent (None: until the client stops)."""
        if self.repeat is True:
            return None
        if self.repeat is False:
            return 1
        return int(self.repeat)


DEFAULT_SUBSCRIPTION = CompiledSubscription(Subscription(), "subscriptions")


class GraphQLWebSocketEndpoint:
    """The raw ASGI ``websocket`` app of one ``graphql`` mock (see the module docstring).

    Args:
        executor: the mock's executor.
        subscriptions: ``{field name: CompiledSubscription}``.
        mock_id: for the request log.
        path: the mock's path.
        template_state: the engine's template state.
        serve_event: the engine's serve-event sink (``**fields`` of a ServeEvent) or None.
    """

    def __init__(self, executor: GraphQLExecutor, subscriptions: dict[str, CompiledSubscription],
                 mock_id: str, path: str, template_state: TemplateState, serve_event: Any):
        self.executor = executor
        self.subscriptions = subscriptions
        self.mock_id = mock_id
        self.path = path
        self.template_state = template_state
        self.serve_event = serve_event
        self.connections: set[_Connection] = set()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        first = await receive()
        if first.get("type") != "websocket.connect":
            return
        offered = [str(name) for name in scope.get("subprotocols") or ()]
        if TRANSPORT_WS in offered or LEGACY_WS not in offered:
            protocol = TRANSPORT_WS
        else:
            protocol = LEGACY_WS
        await send({"type": "websocket.accept",
                    "subprotocol": protocol if protocol in offered else None})
        connection = _Connection(self, scope, protocol, receive, send)
        self.connections.add(connection)
        try:
            await connection.run()
        finally:
            self.connections.discard(connection)

    def retire(self) -> None:
        """Close every connection with 1012 (the mock changed or is gone)."""
        for connection in list(self.connections):
            connection.close(1012, "mock changed")


class _Operation:
    """One running operation of a connection (for the request log)."""

    __slots__ = ("id", "kind", "name", "started", "events", "task")

    def __init__(self, operation_id: str, kind: str, name: str | None):
        self.id = operation_id
        self.kind = kind
        self.name = name
        self.started = time.time()
        self.events = 0
        self.task: asyncio.Task[None] | None = None


class _Connection:
    """The tasks and state of one WebSocket connection."""

    def __init__(self, endpoint: GraphQLWebSocketEndpoint, scope: dict[str, Any], protocol: str,
                 receive: Any, send: Any):
        self.endpoint = endpoint
        self.protocol = protocol
        self.legacy = protocol == LEGACY_WS
        self.receive = receive
        self.send = send
        self.id = f"ws_{secrets.token_hex(8)}"
        self.request = _upgrade_request(scope)
        self.acknowledged = False
        self.operations: dict[str, _Operation] = {}
        self.outbox: asyncio.Queue[Any] = asyncio.Queue(maxsize=SEND_QUEUE_LIMIT)
        self.closing = False

    # ------------------------------------------------------------------ outgoing

    def push(self, message: dict[str, Any]) -> None:
        if self.closing:
            return
        try:
            self.outbox.put_nowait(orjson.dumps(message).decode())
        except asyncio.QueueFull:
            self.close(4400 if not self.legacy else 1008, "send queue full: not reading")

    def close(self, code: int, reason: str) -> None:
        if self.closing:
            return
        self.closing = True
        while not self.outbox.empty():
            self.outbox.get_nowait()
        self.outbox.put_nowait((code, reason))

    async def _write(self) -> None:
        while True:
            item = await self.outbox.get()
            if isinstance(item, tuple):
                await self.send({"type": "websocket.close", "code": item[0],
                                 "reason": item[1][:120]})
                return
            await self.send({"type": "websocket.send", "text": item})

    # ------------------------------------------------------------------ incoming

    async def run(self) -> None:
        writer = asyncio.ensure_future(self._write())
        init_timer = asyncio.get_running_loop().call_later(INIT_TIMEOUT, self._init_timeout)
        try:
            while True:
                message = await self.receive()
                kind = message.get("type")
                if kind == "websocket.disconnect":
                    return
                if kind != "websocket.receive" or self.closing:
                    continue
                text = message.get("text")
                if text is None:
                    text = (message.get("bytes") or b"").decode("utf-8", "replace")
                if len(text) > MAX_MESSAGE_BYTES:
                    self.close(4400 if not self.legacy else 1009, "message too large")
                    continue
                self._handle(text)
        finally:
            init_timer.cancel()
            for operation in list(self.operations.values()):
                if operation.task is not None and not operation.task.done():
                    operation.task.cancel()
            tasks = [operation.task for operation in self.operations.values()
                     if operation.task is not None]
            await asyncio.gather(*tasks, return_exceptions=True)
            writer.cancel()
            await asyncio.gather(writer, return_exceptions=True)

    def _init_timeout(self) -> None:
        if not self.acknowledged:
            self.close(4408, "Connection initialisation timeout")

    def _handle(self, text: str) -> None:
        try:
            message = orjson.loads(text)
        except orjson.JSONDecodeError:
            message = None
        if not isinstance(message, dict) or not isinstance(message.get("type"), str):
            if self.legacy:
                self.push({"type": "error", "payload": {"message": "Message must be a JSON "
                                                                   "object with a type."}})
            else:
                self.close(4400, "Invalid message received")
            return
        kind = message["type"]
        if kind == "connection_init":
            if self.acknowledged and not self.legacy:
                self.close(4429, "Too many initialisation requests")
                return
            self.acknowledged = True
            self.push({"type": "connection_ack"})
            if self.legacy:
                self.push({"type": "ka"})
            return
        if kind == "ping" and not self.legacy:
            self.push({"type": "pong", **({"payload": message["payload"]}
                                          if "payload" in message else {})})
            return
        if kind == "pong" and not self.legacy:
            return
        if kind in ("subscribe", "start"):
            if (kind == "subscribe") == self.legacy:
                self._invalid(kind)
                return
            self._start(message)
            return
        if kind in ("complete", "stop"):
            if (kind == "complete") == self.legacy:
                self._invalid(kind)
                return
            operation = self.operations.get(str(message.get("id")))
            if operation is not None and operation.task is not None:
                operation.task.cancel()
            return
        if kind == "connection_terminate" and self.legacy:
            self.close(1000, "terminated")
            return
        self._invalid(kind)

    def _invalid(self, kind: str) -> None:
        if self.legacy:
            self.push({"type": "error", "payload": {"message": f"Unknown message type "
                                                               f"{kind!r}."}})
        else:
            self.close(4400, f"Invalid message type {kind!r}"[:120])

    def _start(self, message: dict[str, Any]) -> None:
        operation_id = message.get("id")
        payload = message.get("payload")
        if not isinstance(operation_id, str) or not operation_id or not isinstance(payload,
                                                                                   dict):
            self._refuse(operation_id, 4400, "an operation needs an id and a payload")
            return
        if not self.acknowledged:
            self._refuse(operation_id, 4401, "Unauthorized: send connection_init first")
            return
        if operation_id in self.operations:
            if not self.legacy:
                self.close(4409, f"Subscriber for {operation_id} already exists"[:120])
            return
        if len(self.operations) >= MAX_OPERATIONS:
            self._error(operation_id, [{"message": f"At most {MAX_OPERATIONS} operations may "
                                                   f"run on one connection."}])
            return
        operation = _Operation(operation_id, "", None)
        self.operations[operation_id] = operation
        operation.task = asyncio.ensure_future(self._operate(operation, payload))

    def _refuse(self, operation_id: Any, code: int, reason: str) -> None:
        """graphql-ws: an ``error`` message; graphql-transport-ws: close with ``code``."""
        if self.legacy:
            self.push({"type": "error", "id": operation_id, "payload": {"message": reason}})
        else:
            self.close(code, reason)

    def _error(self, operation_id: str, errors: list[dict[str, Any]]) -> None:
        if self.legacy:
            self.push({"type": "error", "id": operation_id,
                       "payload": errors[0] if len(errors) == 1 else {"errors": errors}})
        else:
            self.push({"type": "error", "id": operation_id, "payload": errors})

    def _next(self, operation_id: str, document: dict[str, Any]) -> None:
        self.push({"type": "data" if self.legacy else "next", "id": operation_id,
                   "payload": document})

    # ------------------------------------------------------------------ operations

    async def _operate(self, operation: _Operation, payload: dict[str, Any]) -> None:
        completed = False
        failed = False
        try:
            failed = await self._execute(operation, payload)
            completed = True
        except asyncio.CancelledError:
            # The client stopped it (graphql-ws answers a stop with complete), or the
            # connection ended.
            if self.legacy:
                self.push({"type": "complete", "id": operation.id})
        except Exception:  # noqa: BLE001 - one failed operation, never a dead connection
            logger.exception("graphql mock %s: operation failed", self.endpoint.mock_id)
            self._error(operation.id, [{"message": "The mock failed to run the operation; "
                                                   "see the server log."}])
            failed = True
        finally:
            self.operations.pop(operation.id, None)
            if completed and not failed:
                self.push({"type": "complete", "id": operation.id})
            self._log(operation, failed)

    async def _execute(self, operation: _Operation, payload: dict[str, Any]) -> bool:
        """Run one operation; True when it ended with an ``error`` message."""
        executor = self.endpoint.executor
        query = payload.get("query")
        variables = payload.get("variables")
        name = payload.get("operationName")
        if not isinstance(query, str) or not query.strip():
            self._error(operation.id, [{"message": "Must provide query string."}])
            return True
        if variables is not None and not isinstance(variables, dict):
            self._error(operation.id, [{"message": "Variables must be a JSON object."}])
            return True
        prepared = executor.documents.cached(query) or await executor.documents.prepare(query)
        if prepared.errors:
            self._error(operation.id, [error.formatted for error in prepared.errors])
            return True
        chosen = prepared.operation(name if isinstance(name, str) else None)
        if isinstance(chosen, str):
            self._error(operation.id, [{"message": chosen}])
            return True
        operation.kind = chosen.operation.value
        operation.name = chosen.name.value if chosen.name else None
        if operation.name in prepared.introspective:
            status, document = await executor.introspect(query, prepared, operation.name,
                                                         variables)
            if status != 200:
                self._error(operation.id, document.get("errors") or [])
                return True
            operation.events += 1
            self._next(operation.id, document)
            return False
        run = RunContext(self.request, resolve_seed(self.request, None),
                         self.endpoint.template_state, executor.limits.timeout_ms)
        if chosen.operation is not OperationType.SUBSCRIPTION:
            result = await run_to_result(executor.execute(prepared.document, operation.name,
                                                          variables, run, prepared=prepared))
            if run.over_budget:
                self._error(operation.id, [time_budget_error(executor.limits.timeout_ms)])
                return True
            if result.data is None and result.errors:
                self._error(operation.id, [error.formatted for error in result.errors])
                return True
            operation.events += 1
            self._next(operation.id, result_document(result))
            return False
        return await self._stream(operation, prepared.document, chosen, variables, run)

    async def _stream(self, operation: _Operation, document: Any, chosen: Any,
                      variables: dict[str, Any] | None, run: RunContext) -> bool:
        """Send the events of a subscription operation; True when it failed."""
        executor = self.endpoint.executor
        schema = executor.schema
        field_node = chosen.selection_set.selections[0]
        field_name = field_node.name.value
        compiled = self.endpoint.subscriptions.get(field_name, DEFAULT_SUBSCRIPTION)
        rounds = compiled.rounds()
        number = 0
        while rounds is None or number < rounds:
            number += 1
            if compiled.events is None:
                seeded = random.Random(f"{run.seed}:{field_name}:{number}") \
                    if run.seed is not None else random.Random()
                events = [(None, None)] * FAKE_EVENT_COUNT
            else:
                events = list(compiled.events)
                if not events:
                    break
            for template, delay in events:
                await asyncio.sleep(compiled.wait_before(delay))
                if template is None:
                    root = EventRoot(lambda args, info: fake_value(info.return_type, field_name,
                                                                   seeded, schema))
                else:
                    root = EventRoot(lambda args, info, template=template: template.render(
                        RenderContext(self.request, {}, run.seed, run.state, args)))
                run.restart_budget()
                result = await run_to_result(executor.execute(
                    document, operation.name, variables, run, root_value=root))
                if run.over_budget:
                    self._error(operation.id, [time_budget_error(executor.limits.timeout_ms)])
                    return True
                if result.data is None and result.errors:
                    self._error(operation.id, [error.formatted for error in result.errors])
                    return True
                operation.events += 1
                self._next(operation.id, result_document(result))
        return False

    def _log(self, operation: _Operation, failed: bool) -> None:
        sink = self.endpoint.serve_event
        if sink is None:
            return
        details: dict[str, Any] = {}
        if operation.kind:
            details["graphqlOpType"] = operation.kind
        if operation.name:
            details["graphqlOperationName"] = operation.name
        details.update(wsConnectionId=self.id, subprotocol=self.protocol,
                       graphql={"operationType": operation.kind or None,
                                "operationName": operation.name, "operationId": operation.id,
                                "events": operation.events, "errors": 1 if failed else 0})
        try:
            sink(request=self.request, received_at=operation.started,
                 duration_ms=(time.time() - operation.started) * 1000.0, status=101,
                 mock_id=self.endpoint.mock_id, path_template=self.endpoint.path,
                 protocol="graphql", details=details)
        except Exception:  # noqa: BLE001 - logging must never break a connection
            logger.exception("graphql subscription log failed")


