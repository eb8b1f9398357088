"""Serving GraphQL over HTTP at a ``graphql`` mock's exact path (the data-plane route action).

Requests:

* ``POST`` with a JSON body ``{query, variables?, operationName?}`` (any JSON media type, or
  none); a JSON array of such objects is a batch, answered with an array;
* ``POST`` with ``Content-Type: application/graphql``: the body is the query, ``variables``
  and ``operationName`` come from the query string;
* ``GET`` with ``?query=...&variables=<JSON>&operationName=...`` (queries only: a mutation
  gets 405 with ``Allow: POST``).

Answers (``application/json``): ``{"data": ..., "errors"?: [...]}``; 200 when the operation
ran (field errors included); 400 with ``{"errors": [...]}`` when the body is not JSON, there
is no query, the document goes over one of the mock's ``limits`` (depth, complexity, aliases:
checked before validation, :mod:`~mocks.protocols.graphql.limits`), does not parse or
validate against the schema (introspection too when it is off), the operation cannot be
chosen, the variables are not an object or do not fit, the operation is a subscription
(served over WebSocket at the same path), or it ran past its time budget
(``limits.timeoutMs``; ``extensions.code`` ``QUERY_TIMEOUT``); 405 for other methods. Never a
traceback: a failure inside execution is one GraphQL error. The operations of a batch run
one after another, the loop free to serve other requests between them.

An introspection-only query is answered from the schema's introspection memo (computed once
per query text, operation name and variables, on a worker thread; not subject to the time
budget: :mod:`~mocks.protocols.graphql.introspection`). On a schema that declares
``@defer`` / ``@stream``, an operation using them is answered incrementally as
``multipart/mixed`` (:class:`IncrementalAnswer`) when the client's ``Accept`` names
``multipart/mixed`` (:func:`reads_incremental`; not in a batch), else in one JSON answer
with every field.

Each request is one request-log entry with ``protocol: graphql``, ``graphqlOpType``
(``query`` | ``mutation`` | ``subscription``), ``graphqlOperationName`` and a ``graphql``
object ``{operationType, operationName, errors}``.

Source: behavior notes §10 (``graphql`` row), §1 (request log filter ``graphqlOpType``);
SPEC "Mock"; the GraphQL over HTTP draft (GET for queries only, ``application/graphql``;
a response without ``data`` is a 4xx) and its incremental delivery proposal
(``multipart/mixed``).
"""
from __future__ import annotations

import asyncio
import logging
from typing import Any

import orjson
from graphql import ExperimentalIncrementalExecutionResults, GraphQLError, OperationType

from mocks.core.request import INVALID_JSON, MockRequest
from mocks.core.responses import JSON_TYPE, Send, send_simple
from mocks.core.templating import TemplateState, resolve_seed
from mocks.protocols.graphql.executor import (GraphQLExecutor, RunContext, result_document,
                                              run_to_result)
from mocks.protocols.graphql.limits import time_budget_error

logger = logging.getLogger("mockd.graphql")

#: Methods the route claims (OPTIONS is left to the engine's CORS handling).
ROUTE_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"})
#: Largest batch answered (requests in one JSON array).
MAX_BATCH = 32
#: The media type of an incremental answer (``@defer`` / ``@stream``) and its part delimiters.
MULTIPART_TYPE = b'multipart/mixed; boundary="-"'
_PART = b"\r\n---\r\nContent-Type: application/json; charset=utf-8\r\n\r\n"
_LAST = b"\r\n-----\r\n"


class RequestProblem(Exception):
    """The request cannot run: ``status`` (400, 405) and GraphQL ``errors`` messages."""

    def __init__(self, status: int, message: str, headers: list[tuple[bytes, bytes]] = ()):
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = list(headers)


def _error_body(message: str) -> bytes:
    return orjson.dumps({"errors": [{"message": message}]})


class GraphQLHttpAction:
    """The route action of one ``graphql`` mock: ``async respond(request, path_params,
    template_state, send) -> status`` (see the module docstring).

    Attributes:
        protocol: ``graphql`` (the engine logs the request under it).
    """

    protocol = "graphql"

    __slots__ = ("executor", "mock_id")

    def __init__(self, executor: GraphQLExecutor, mock_id: str):
        self.executor = executor
        self.mock_id = mock_id

    async def respond(self, request: MockRequest, path_params: dict[str, str],
                      template_state: TemplateState, send: Send) -> int:
        """Answer one request; returns the status sent."""
        method = request.method
        head = method == "HEAD"
        try:
            if method not in ("GET", "HEAD", "POST"):
                raise RequestProblem(405, f"GraphQL is served with GET and POST, not {method}.",
                                     [(b"allow", b"GET, POST")])
            payload = self._payload(request)
            if isinstance(payload, list):
                if not payload or len(payload) > MAX_BATCH:
                    raise RequestProblem(400, f"A batch holds 1 to {MAX_BATCH} operations.")
                answers = []
                details = []
                for index, one in enumerate(payload):
                    if index:
                        # Other requests may run in between: each operation's time budget
                        # bounds one stretch, not the whole batch.
                        await asyncio.sleep(0)
                    status, document, detail = await self._run_one(request, one, template_state,
                                                                   method)
                    answers.append(document)
                    details.append(detail)
                request.log_details = _batch_details(details)
                body = orjson.dumps(answers)
                status = 200
            else:
                status, document, detail = await self._run_one(request, payload, template_state,
                                                               method, not head)
                request.log_details = detail
                if document.__class__ is IncrementalAnswer:
                    await document.send(send, self.mock_id)
                    return status
                body = orjson.dumps(document)
        except RequestProblem as problem:
            headers = [(b"content-type", JSON_TYPE), *problem.headers]
            await send_simple(send, problem.status, headers, _error_body(problem.message), head)
            return problem.status
        await send_simple(send, status, [(b"content-type", JSON_TYPE)], body, head)
        return status

    def _payload(self, request: MockRequest) -> Any:
        """The operation request(s) of ``request``: a dict, or a list of dicts."""
        if request.method in ("GET", "HEAD"):
            query = request.query
            if "query" not in query:
                raise RequestProblem(400, "Must provide query string.")
            return {"query": query.get("query"), "variables": _json_param(query, "variables"),
                    "operationName": query.get("operationName") or None}
        media = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
        if media == "application/graphql":
            query = request.query
            return {"query": request.text, "variables": _json_param(query, "variables"),
                    "operationName": query.get("operationName") or None}
        if not request.body.strip():
            raise RequestProblem(400, "Must provide a JSON body {\"query\": ...}.")
        payload = request.json
        if payload is INVALID_JSON:
            raise RequestProblem(400, "The body is not valid JSON; send {\"query\": \"...\", "
                                      "\"variables\": {...}} with Content-Type: "
                                      "application/json.")
        if isinstance(payload, list):
            return payload
        if not isinstance(payload, dict):
            raise RequestProblem(400, "The body must be a JSON object {\"query\": ...}.")
        return payload

    async def _run_one(self, request: MockRequest, payload: Any, state: TemplateState,
                       method: str, allow_incremental: bool = False
                       ) -> tuple[int, Any, dict[str, Any]]:
        """``(status, response document, log details)`` of one operation request; with
        ``allow_incremental`` the document may be an :class:`IncrementalAnswer`."""
        if not isinstance(payload, dict):
            raise RequestProblem(400, "Each operation must be a JSON object {\"query\": ...}.")
        query = payload.get("query")
        if not isinstance(query, str) or not query.strip():
            raise RequestProblem(400, "Must provide query string.")
        variables = payload.get("variables")
        if variables is not None and not isinstance(variables, dict):
            raise RequestProblem(400, "Variables must be a JSON object.")
        operation_name = payload.get("operationName")
        if operation_name is not None and not isinstance(operation_name, str):
            raise RequestProblem(400, "operationName must be a string.")
        executor = self.executor
        prepared = executor.documents.cached(query) or await executor.documents.prepare(query)
        if prepared.errors:
            return 400, {"errors": [error.formatted for error in prepared.errors]}, \
                _details(None, operation_name, True)
        operation = prepared.operation(operation_name)
        if isinstance(operation, str):
            raise RequestProblem(400, operation)
        kind = operation.operation
        name = operation.name.value if operation.name else None
        detail = _details(kind.value, name, False)
        if kind is OperationType.SUBSCRIPTION:
            detail["graphql"]["errors"] = 1
            return 400, {"errors": [{"message": "Subscriptions are served over WebSocket at "
                                                "this path (graphql-transport-ws or "
                                                "graphql-ws)."}]}, detail
        if kind is OperationType.MUTATION and method != "POST":
            raise RequestProblem(405, "Mutations are sent with POST.",
                                 [(b"allow", b"POST")])
        if name in prepared.introspective:
            status, document = await executor.introspect(query, prepared, name, variables)
            if document.get("errors"):
                detail["graphql"]["errors"] = len(document["errors"])
            return status, document, detail
        # An incremental answer only when the schema declares @defer / @stream, the text
        # may use one and the client reads our multipart answers (else the fields come in
        # one answer, which every client reads).
        incremental = allow_incremental and executor.incremental and (
            "@defer" in query or "@stream" in query) and \
            reads_incremental(request.headers.get("accept", ""))
        memo_key = (query, name, orjson.dumps(variables, option=orjson.OPT_SORT_KEYS)) \
            if kind is OperationType.QUERY and not incremental else None
        if memo_key is not None:
            remembered = executor.remembered(memo_key)
            if remembered is not None:
                if remembered[1].get("errors"):
                    detail["graphql"]["errors"] = len(remembered[1]["errors"])
                return remembered[0], remembered[1], detail
        run = RunContext(request, resolve_seed(request, None), state,
                         executor.limits.timeout_ms)
        try:
            result = await run_to_result(executor.execute(
                prepared.document, name, variables, run, prepared=prepared,
                variables_key=memo_key[2] if memo_key is not None else None,
                incremental=incremental))
        except GraphQLError as error:
            detail["graphql"]["errors"] = 1
            return 400, {"errors": [error.formatted]}, detail
        except Exception:  # noqa: BLE001 - one failed answer, never a traceback to the client
            logger.exception("graphql mock %s failed to execute an operation", self.mock_id)
            detail["graphql"]["errors"] = 1
            return 500, {"errors": [{"message": "The mock failed to execute the operation; "
                                                "see the server log."}]}, detail
        if run.over_budget:
            detail["graphql"]["errors"] = 1
            return 400, {"errors": [time_budget_error(executor.limits.timeout_ms)]}, detail
        if result.__class__ is ExperimentalIncrementalExecutionResults:
            return 200, IncrementalAnswer(result, run), detail
        document = result_document(result)
        if result.errors:
            detail["graphql"]["errors"] = len(result.errors)
        # No data at all: the request itself was wrong (variables that do not fit).
        status = 400 if result.data is None else 200
        if memo_key is not None and run.pure:
            executor.remember(memo_key, (status, document))
        return status, document, detail


class IncrementalAnswer:
    """An operation that defers or streams part of its answer, sent as ``multipart/mixed``
    (boundary ``-``): one ``application/json`` part per payload, graphql-core's incremental
    format (``{data, pending, hasNext}``, then ``{incremental, completed, hasNext}``),
    each part sent as soon as it is ready.

    Attributes:
        result: graphql-core's ``ExperimentalIncrementalExecutionResults``.
        run: the operation's run context (its time budget restarts before each later
            payload: the loop was free while the previous one was sent).
    """

    __slots__ = ("result", "run")

    def __init__(self, result: ExperimentalIncrementalExecutionResults, run: RunContext):
        self.result = result
        self.run = run

    async def send(self, send: Send, mock_id: str) -> None:
        """Send the whole answer (status 200); a failure while producing a later payload is
        logged and ends the answer."""
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", MULTIPART_TYPE),
                                (b"cache-control", b"no-cache")]})
        await send({"type": "http.response.body", "more_body": True,
                    "body": _PART + orjson.dumps(self.result.initial_result.formatted)})
        later = self.result.subsequent_results
        try:
            while True:
                self.run.restart_budget()
                try:
                    payload = await later.__anext__()
                except StopAsyncIteration:
                    break
                await send({"type": "http.response.body", "more_body": True,
                            "body": _PART + orjson.dumps(payload.formatted)})
        except Exception:  # noqa: BLE001 - end the answer, never a traceback to the client
            logger.exception("graphql mock %s failed while sending a later payload", mock_id)
        finally:
            close = getattr(later, "aclose", None)
            if close is not None:
                await close()
        await send({"type": "http.response.body", "body": _LAST, "more_body": False})


def reads_incremental(accept: str) -> bool:
    """Whether a client whose ``Accept`` header is ``accept`` reads graphql-core's incremental
    answers: it names ``multipart/mixed``, and not with ``deferSpec=20220824`` (Apollo
    Client 3 and routers asking for the 2022 payload format, with ``path`` and ``label``
    instead of ``pending`` ids; they get one JSON answer, which they read as well)."""
    lowered = accept.lower()
    return "multipart/mixed" in lowered and "deferspec=20220824" not in lowered


def _json_param(query: dict[str, str], name: str) -> Any:
    raw = query.get(name)
    if not raw:
        return None
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        raise RequestProblem(400, f"{name} must be JSON.") from None


def _details(kind: str | None, name: str | None, failed: bool) -> dict[str, Any]:
    """Request-log fields of one operation."""
    detail: dict[str, Any] = {"graphqlOpType": kind} if kind else {}
    if name:
        detail["graphqlOperationName"] = name
    detail["graphql"] = {"operationType": kind, "operationName": name,
                         "errors": 1 if failed else 0}
    return detail


def _batch_details(details: list[dict[str, Any]]) -> dict[str, Any]:
    kinds = [detail.get("graphqlOpType") for detail in details]
    first = next((kind for kind in kinds if kind), None)
    merged: dict[str, Any] = {"graphqlOpType": first} if first else {}
    merged["graphql"] = {"batch": [detail["graphql"] for detail in details]}
    return merged
