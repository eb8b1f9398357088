"""The handler of ``soap`` mocks: one mock -> one data-plane route at ``soap.path``.

Serving (:class:`SoapEndpoint`, a :class:`~mocks.protocols.ProtocolRoute` action):

* ``GET <path>?wsdl`` (any case of ``wsdl``): the WSDL, with every ``soap:address`` /
  ``soap12:address`` / ``http:address`` location rewritten to ``<scheme>://<Host of the
  request><path>``, so clients built from it call the mock server whatever host and port it
  was reached on; ``text/xml``. The files it imports (:mod:`.documents`) are served at
  ``<path>?wsdl=N`` / ``<path>?xsd=N`` (or ``?xsd=<relative name>``), and every reference to
  them, in the WSDL and in the files themselves, names those URLs, so a client needs
  ``?wsdl`` alone. Without a WSDL: 404; an unknown document: 404. Another ``GET``: 405 with
  ``Allow: POST``.
* ``POST <path>``: the body is read as a SOAP envelope (:func:`mocks.core.xmldoc.parse_xml`:
  no DTD, no entities, no network, at most 2 MiB). The operation is the one whose
  ``soapAction`` (or a WSDL binding's action) equals the request's action (the SOAP 1.2
  content type's ``action``, else the ``SOAPAction`` header); with several, or when the
  action names an operation without one, the body's first element decides; without an
  action, the body's first element name. Then the operation's ``match`` and ``variants``
  choose the answer (in order: the operation's own answer when its ``match`` holds or it has
  none after variants failed), ``delay`` waits, and the answer is the ``response`` template
  (XML of the body content; substituted values are XML-escaped), a ``fault``, or the table
  result of a stateful operation, in an envelope of the request's SOAP version. A one-way
  operation (an input and no output in the WSDL) answers ``202 Accepted`` without a body
  unless the config gives it a ``response``.
* Requests that are not XML, are refused (a DTD: XML bombs, external entities), are no SOAP
  envelope, name an unknown operation or a ``SOAPAction`` that names nothing, or match no
  variant: a SOAP ``Client`` fault, HTTP 500, that says which.

Templates see the envelope through ``{{xpath '...'}}`` and ``{{request.body.<Element>.<Child>}}``
(the SOAP body as a map: ``{"GetUser": {"id": "42"}}``).

Each request is one request-log entry with ``protocol: soap``, ``soapOperation`` and
``soap: {operation, soapAction, soapVersion, fault, faultCode?}``. While the mock records
(``POST /soap/{id}/record/start``), each envelope answered is also a recording
(:mod:`mocks.protocols.soap.recordings`); otherwise recording costs one set check.

Source: SPEC "SOAP mock", "Templating"; behavior notes §1 (``soapOperation`` filter, SOAP
handler routes), §4 (SOAP path before HTTP mocks), §10 ("SOAP operation"), §12 (served under
the workspace's base path). Django-free.
"""
from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from mocks.core.errors import ConfigError
from mocks.core.request import MockRequest
from mocks.core.responses import body_file_path, send_simple
from mocks.core.templating import (RenderContext, Template, TemplateError, TemplateState,
                                   compile_template, resolve_seed)
from mocks.core.xmldoc import XmlRefused, compile_xpath, element_to_map, local_name, parse_xml
from mocks.protocols import CompileContext, CompiledMock, ProtocolRoute
from mocks.protocols.soap.config import SoapAnswer, SoapMock, SoapOperation, XPathMatch
from mocks.protocols.soap.documents import (DocumentSource, FolderSource, MappingSource,
                                            normalize)
from mocks.protocols.soap.envelope import (BODY_TAGS, CONTENT_TYPES, ENVELOPE_TAGS, Fault,
                                           client_fault, envelope, fault_body,
                                           request_action_and_version, xml_escape)
from mocks.protocols.soap.recordings import SoapHub, hub_of, recording_send
from mocks.protocols.soap.stateful import ResponseShape, operation_request, table_fault
from mocks.protocols.soap.wsdl import ADDRESS_PLACEHOLDER, WsdlDocument, WsdlError, read_wsdl
from tables.binding import member_bindings

#: Methods the route claims (OPTIONS stays with the engine's CORS handling).
ROUTE_METHODS = frozenset({"GET", "HEAD", "POST"})
#: Largest envelope read, in bytes.
MAX_ENVELOPE_BYTES = 2 * 1024 * 1024
#: Hosts whose rewritten WSDL is kept (per endpoint).
MAX_CACHED_HOSTS = 32


def _compile_template(text: str, key: str) -> Template:
    try:
        return compile_template(text, escape=xml_escape)
    except TemplateError as error:
        raise ConfigError(key, error.detail) from None


def _compile_match(match: XPathMatch | None, key: str) -> tuple[tuple[Any, str], ...] | None:
    if match is None:
        return None
    compiled = []
    for expression, expected in match.xpath.items():
        try:
            compiled.append((compile_xpath(expression), expected))
        except ValueError as error:
            raise ConfigError(f"{key}.xpath.{expression}", str(error)) from None
    return tuple(compiled)


class CompiledAnswer:
    """One answer (an operation's own or a variant's): conditions, delay, and a response
    template, a fault, or nothing (the stateful result)."""

    __slots__ = ("conditions", "delay", "response", "fault_code", "fault_string",
                 "fault_detail", "reads")

    def __init__(self, answer: SoapAnswer, match: XPathMatch | None, key: str,
                 stateful: bool):
        self.conditions = _compile_match(match, f"{key}.match")
        #: What the answer's templates read of the envelope ("xpath", "body"): the request
        #: only pays for the views some template uses.
        texts = " ".join(text for text in (answer.response, answer.fault and answer.fault.string,
                                            answer.fault and answer.fault.detail) if text).lower()
        self.reads = frozenset(name for name, marker in (("xpath", "xpath"),
                                                          ("body", "request.body"))
                               if marker in texts)
        self.delay = answer.delay / 1000.0
        self.response: Template | None = None
        if answer.response is not None and not stateful:
            self.response = _compile_template(answer.response, f"{key}.response")
            if self.response.is_static:
                _check_xml(answer.response, f"{key}.response")
        self.fault_code = self.fault_string = self.fault_detail = None
        if answer.fault is not None:
            self.fault_code = answer.fault.code
            self.fault_string = _compile_template(answer.fault.string, f"{key}.fault.string")
            if answer.fault.detail is not None:
                self.fault_detail = _compile_template(answer.fault.detail,
                                                      f"{key}.fault.detail")

    def matches(self, document: Any) -> bool:
        """Whether every condition selects its expected text (no conditions: True)."""
        return all(evaluate(document) == expected for evaluate, expected in self.conditions or ())


def _check_xml(text: str, key: str) -> None:
    try:
        parse_xml(f"<r>{text}</r>")
    except XmlRefused as error:
        raise ConfigError(key, f"{error.reason} (the XML of the SOAP body's content)") from None


@dataclass(slots=True)
class CompiledOperation:
    """One operation: its name, actions, answers (variants first, then its own) and the
    table wiring of a stateful operation."""

    name: str
    soap_action: str
    answers: tuple[CompiledAnswer, ...]
    stateful_action: str | None = None
    stateful_resource: str = ""
    custom_operation: str | None = None
    shape: ResponseShape | None = None
    #: Whether answering needs the parsed document (XPath conditions or templates).
    needs_document: bool = True
    #: Whether answering needs the SOAP body as a map (``request.body``, tables).
    needs_map: bool = True
    #: The answer when it is the only one and has no conditions (chosen without a call).
    only_answer: CompiledAnswer | None = None

    def __post_init__(self) -> None:
        if len(self.answers) == 1 and self.answers[0].conditions is None:
            self.only_answer = self.answers[0]

    def answer_for(self, document: Any) -> CompiledAnswer | None:
        """The first answer whose conditions hold, or None."""
        for answer in self.answers:
            if answer.conditions is None or answer.matches(document):
                return answer
        return None


def _read_wsdl(config: SoapMock, key_path: str, context: CompileContext) -> tuple[
        WsdlDocument | None, str | None]:
    """The parsed WSDL (with the files it imports) and its key (``wsdl``/``wsdlFile``), or
    ``(None, None)``."""
    source: DocumentSource | None = None
    name = ""
    if config.wsdl is not None:
        text: str | bytes = config.wsdl
        key = f"{key_path}.wsdl"
        if config.documents:
            source = MappingSource(config.documents)
    elif config.wsdl_file is not None:
        key = f"{key_path}.wsdlFile"
        path = body_file_path(config.wsdl_file, context.base_dir, context.body_file_roots, key)
        try:
            text = Path(path).read_bytes()
        except OSError as error:
            raise ConfigError(key, f"cannot read {str(path)!r}: "
                                   f"{error.strerror or error}") from None
        source = FolderSource(Path(path).parent, context.body_file_roots)
        name = Path(path).name
    else:
        return None, None
    try:
        document = read_wsdl(text, source, name)
        document.endpoints()  # reports a WSDL without SOAP services now, not per request
    except WsdlError as error:
        where = f"{error.location}: " if error.location else ""
        raise ConfigError(key, f"{where}{error.message}") from None
    return document, key


def compile_operations(config: SoapMock, key_path: str,
                       document: WsdlDocument | None) -> dict[str, CompiledOperation]:
    """Every operation the mock answers: the WSDL's (sample responses) overridden by the
    configured ones, which inherit the WSDL's ``soapAction`` when they give none.

    Raises :class:`~mocks.core.errors.ConfigError` naming
    ``<key_path>.operations.<Name>.<field>``."""
    derived = document.operations() if document is not None else {}
    namespace = document.target_namespace if document is not None else ""
    names = list(derived) + [name for name in config.operations if name not in derived]
    compiled: dict[str, CompiledOperation] = {}
    for name in names:
        key = f"{key_path}.operations.{name}"
        info = derived.get(name)
        operation = config.operations.get(name)
        if operation is None:
            operation = SoapOperation(soapAction=info.soap_action,
                                      response=None if info.one_way else info.response)
        stateful = operation.stateful_action is not None
        answers = [CompiledAnswer(variant, variant.match, f"{key}.variants[{index}]", stateful)
                   for index, variant in enumerate(operation.variants)]
        own = CompiledAnswer(operation, operation.match, key, stateful)
        if own.response is None and own.fault_code is None and not stateful and \
                not (info is not None and info.one_way):  # one-way: 202, no body
            own.response = _compile_template(info.response if info is not None else "",
                                             f"{key}.response")
        answers.append(own)
        soap_action = operation.soap_action if operation.soap_action is not None else (
            info.soap_action if info is not None else "")
        shape = None
        if stateful:
            shape_xml = operation.response if operation.response is not None and \
                "{{" not in operation.response else (info.response if info else None)
            shape = ResponseShape(name, shape_xml, namespace)
        if own.response is not None and "xpath" in own.response.source.lower():
            own.reads = own.reads | {"xpath"}  # a WSDL sample answer given as the template
        if own.response is not None and "request.body" in own.response.source.lower():
            own.reads = own.reads | {"body"}
        compiled[name] = CompiledOperation(
            name, soap_action or "", tuple(answers),
            operation.stateful_action, operation.stateful_resource or "",
            operation.operation or (name if operation.stateful_action == "custom" else None),
            shape,
            needs_document=any(answer.conditions or "xpath" in answer.reads
                               for answer in answers),
            needs_map=stateful or any("body" in answer.reads for answer in answers))
    return compiled


class SoapEndpoint:
    """The route action of one ``soap`` mock (see the module docstring).

    Same interface as a static response: ``async respond(request, path_params,
    template_state, send) -> status``. ``protocol`` tells the engine to log the request as
    ``soap``; the details of each request are left on it as ``log_details``. ``hub`` is the
    engine's :class:`~mocks.protocols.soap.recordings.SoapHub` (a private one by default):
    envelopes are recorded while ``mock_id`` is in its ``recording`` set.
    """

    protocol = "soap"

    def __init__(self, mock_id: str, path: str, operations: dict[str, CompiledOperation],
                 documents: list[bytes] | None, wsdl_actions: dict[str, str], tables: Any,
                 hub: SoapHub | None = None, document_names: dict[str, int] | None = None):
        self.mock_id = mock_id
        self.hub = hub if hub is not None else SoapHub()
        self.path = path
        self.operations = operations
        self.tables = tables
        #: The WSDL (index 0) and the files it imports, addresses as placeholders.
        self._documents = documents
        self._document_names = document_names or {}
        #: host -> the documents as served to it (filled as they are asked for)
        self._served_by_host: dict[str, list[bytes | None]] = {}
        #: action -> operation names it may name (configured first, then the WSDL's)
        self.by_action: dict[str, list[str]] = {}
        for name, operation in operations.items():
            if operation.soap_action:
                self.by_action.setdefault(operation.soap_action, []).append(name)
        for action, name in wsdl_actions.items():
            if name in operations and name not in self.by_action.get(action, ()):
                self.by_action.setdefault(action, []).append(name)
        #: action -> the operation it names when it names one only (the common case, which
        #: :meth:`_choose` would answer without looking at the body).
        self.single_by_action = {action: operations[names[0]]
                                 for action, names in self.by_action.items() if len(names) == 1}

    # ------------------------------------------------------------------ WSDL
    def wsdl_for(self, request: MockRequest, index: int = 0) -> bytes | None:
        """Document ``index`` (0: the WSDL, then the files it imports) with its addresses
        and imports pointing at ``<scheme>://<host><path>``; None without a WSDL."""
        documents = self._documents
        if documents is None:
            return None
        host = request.host
        served = self._served_by_host.get(host)
        if served is None:
            served = [None] * len(documents)
            if len(self._served_by_host) < MAX_CACHED_HOSTS:
                self._served_by_host[host] = served
        body = served[index]
        if body is None:
            address = xml_escape(f"{request.scheme}://{host}{request.path}").encode()
            body = served[index] = documents[index].replace(ADDRESS_PLACEHOLDER.encode(),
                                                            address)
        return body

    def document_index(self, key: str, value: str) -> int | None:
        """The document a ``?wsdl`` / ``?wsdl=N`` / ``?xsd=N`` / ``?xsd=<relative name>``
        query names (``key`` lower-cased), or None."""
        if key == "wsdl" and value == "":
            return 0
        if value.isdigit():
            index = int(value)
            return index if index < len(self._documents or ()) else None
        return self._document_names.get(normalize(unquote(value))) if value else None

    async def _get(self, request: MockRequest, head: bool, send: Any) -> int:
        """``GET``/``HEAD``: a document of the WSDL, else 404 or 405."""
        for name, value in request.query.items():
            key = name.lower()
            if key not in ("wsdl", "xsd"):
                continue
            if self._documents is None:
                await send_simple(send, 404, [(b"content-type", b"text/plain")],
                                  b"This SOAP mock has no WSDL (soap.wsdl or soap.wsdlFile)",
                                  head=head)
                return 404
            index = self.document_index(key, value)
            if index is None:
                await send_simple(send, 404, [(b"content-type", b"text/plain")],
                                  f"No document {value!r}: this SOAP mock serves ?wsdl and "
                                  f"?xsd=1 to ?xsd={len(self._documents) - 1}".encode(),
                                  head=head)
                return 404
            await send_simple(send, 200, [(b"content-type", b"text/xml; charset=utf-8")],
                              self.wsdl_for(request, index), head=head)
            return 200
        await send_simple(send, 405, [(b"content-type", b"text/plain"), (b"allow", b"POST")],
                          f"SOAP endpoint: POST an envelope, or GET {self.path}?wsdl"
                          .encode(), head=head)
        return 405

    # ------------------------------------------------------------------ serving
    async def respond(self, request: MockRequest, path_params: dict[str, str],
                      template_state: Any, send: Any) -> int:
        """Answer one request (never raises for any request input)."""
        if request.method in ("GET", "HEAD"):
            return await self._get(request, request.method == "HEAD", send)
        action, version = request_action_and_version(request)
        details: dict[str, Any] = {"soapAction": action, "soapVersion": version}
        request.__dict__["log_details"] = details
        recording = self.hub.recording
        if recording and self.mock_id in recording:
            send = recording_send(self.hub, self.mock_id, self.path, request, send, details)
        try:
            outcome = self._serve(request, details)
        except _FaultAnswer as answer:
            return await self._send_fault(send, answer.fault, details.get("soapVersion",
                                                                            version), details)
        version = details["soapVersion"]
        operation, answer = outcome
        state = template_state if template_state is not None else TemplateState()
        if answer.delay:
            await asyncio.sleep(answer.delay)
        context = RenderContext(request, path_params, resolve_seed(request, None), state)
        if answer.fault_code is not None:
            fault = Fault(answer.fault_code, answer.fault_string.render(context),
                          answer.fault_detail.render(context) if answer.fault_detail else None)
            return await self._send_fault(send, fault, version, details)
        if operation.stateful_action is not None:
            tables = self.tables
            result = None
            if tables is not None:
                table_request = operation_request(
                    operation.stateful_action, operation.stateful_resource,
                    operation.custom_operation, _operation_data(request, operation), tables)
                result = await tables.execute_async(table_request) if tables.remote \
                    else tables.execute(table_request)
            if result is None:
                return await self._send_fault(send, Fault(
                    "soap:Server", "no table store: stateful operations need a running "
                    "engine"), version, details)
            if result.error is not None:
                return await self._send_fault(send, table_fault(result.error), version, details)
            content = operation.shape.render(result)
        elif answer.response is None:
            # A one-way operation (the WSDL gives it no output): accepted, no envelope.
            await send_simple(send, 202, [], b"")
            details["soap"] = {"operation": operation.name, "soapAction": details["soapAction"],
                               "soapVersion": version, "fault": False}
            return 202
        else:
            content = answer.response.render(context).encode()
        await send_simple(send, 200, [(b"content-type", CONTENT_TYPES[version])],
                          envelope(version, content))
        details["soap"] = {"operation": operation.name, "soapAction": details["soapAction"],
                           "soapVersion": version, "fault": False}
        return 200

    def _serve(self, request: MockRequest, details: dict[str, Any]) -> tuple[
            CompiledOperation, CompiledAnswer]:
        """Parse, choose the operation and its answer; raises :class:`_FaultAnswer`."""
        try:
            root = parse_xml(request.body, MAX_ENVELOPE_BYTES)
        except XmlRefused as error:
            raise _FaultAnswer(client_fault(f"The request is not a readable SOAP envelope: "
                                            f"{error.reason}")) from None
        tag = root.tag
        version = ENVELOPE_TAGS.get(tag)  # the Envelope of SOAP 1.1 or 1.2, by its full tag
        if version is None:
            raise _FaultAnswer(client_fault(
                f"The request is not a SOAP envelope: expected an Envelope element in the SOAP "
                f"1.1 or 1.2 namespace, got <{local_name(tag) or tag}>"))
        details["soapVersion"] = version
        # One pass each over the envelope's and the body's children (local names inline).
        # Slices, not iterators: lxml builds a slice's list of children in C (half the cost).
        elements = []
        body_tag = BODY_TAGS[version]
        for child in root[:]:
            tag = child.tag
            if tag == body_tag or (tag.__class__ is str and tag[tag.rfind("}") + 1:] == "Body"):
                elements = [element for element in child[:] if element.tag.__class__ is str]
                break
        action = details["soapAction"]
        operation = self.single_by_action.get(action) if action else None
        if operation is None:
            if elements:
                tag = elements[0].tag
                first = tag[tag.rfind("}") + 1:]
            else:
                first = ""
            operation = self._choose(action, first)
        details["soapOperation"] = operation.name
        # Templates read the envelope: xpath over the parsed document (names match by local
        # name), request.body as the SOAP body's content by element name (each built only
        # when something reads it).
        if operation.needs_map:
            body_map = {}
            for element in elements:
                tag = element.tag
                body_map[tag[tag.rfind("}") + 1:]] = element_to_map(element)
            request.__dict__["json"] = body_map
        if operation.needs_document:
            request.__dict__["xml_document"] = root
        # XPath matches by local name: no stripping.
        answer = operation.only_answer or operation.answer_for(root)
        if answer is None:
            raise _FaultAnswer(client_fault(
                f"No answer of operation {operation.name!r} matches this request (its match "
                f"and every variant's match failed)"))
        return operation, answer

    def _choose(self, action: str, first: str) -> CompiledOperation:
        operations = self.operations
        if action:
            names = self.by_action.get(action)
            if names:
                if len(names) == 1 or first not in names:
                    return operations[names[0]]
                return operations[first]
            # An action naming an operation that declares no soapAction of its own.
            tail = action.replace("#", "/").rstrip("/").rsplit("/", 1)[-1].rsplit(":", 1)[-1]
            for candidate in (action, tail):
                operation = operations.get(candidate)
                if operation is not None and not operation.soap_action:
                    return operation
            if first in operations and not operations[first].soap_action:
                return operations[first]
            raise _FaultAnswer(client_fault(
                f"SOAPAction {action!r} names no operation of this service (known: "
                f"{', '.join(sorted(operations)) or 'none'})"))
        if not first:
            raise _FaultAnswer(client_fault("The SOAP Body holds no operation element and no "
                                            "SOAPAction was given"))
        operation = operations.get(first)
        if operation is None:
            raise _FaultAnswer(client_fault(
                f"Unknown operation {first!r} (known: "
                f"{', '.join(sorted(operations)) or 'none'})"))
        return operation

    @staticmethod
    async def _send_fault(send: Any, fault: Fault, version: str,
                          details: dict[str, Any]) -> int:
        await send_simple(send, 500, [(b"content-type", CONTENT_TYPES[version])],
                          fault_body(fault, version))
        details["soap"] = {"operation": details.get("soapOperation", ""),
                           "soapAction": details.get("soapAction", ""),
                           "soapVersion": version, "fault": True, "faultCode": fault.code,
                           "faultString": fault.string}
        details["soapVersion"] = version
        return 500


def _operation_data(request: MockRequest, operation: CompiledOperation) -> Any:
    """The operation element's content as a map (``{}`` when the body holds none)."""
    body = request.__dict__.get("json")
    if not isinstance(body, dict) or not body:
        return {}
    data = body.get(operation.name)
    if data is None:
        data = next(iter(body.values()))
    return data if isinstance(data, dict) else {}


class _FaultAnswer(Exception):
    """Control flow: answer this fault instead."""

    def __init__(self, fault: Fault):
        super().__init__(fault.string)
        self.fault = fault


class SoapHandler:
    """Compiles ``soap`` mocks (see the module docstring)."""

    mock_type = "soap"
    config_model = SoapMock

    @staticmethod
    def binding_member(text: str) -> str | None:
        """The operation name of an ``extend`` reference ``<mock id>.<Operation>``, else
        None."""
        return text if text and "/" not in text and "." not in text else None

    def compile(self, mock: Any, context: CompileContext) -> CompiledMock:
        """One :class:`~mocks.protocols.ProtocolRoute` at ``soap.path`` (GET ``?wsdl`` and
        POST envelopes).

        Raises :class:`~mocks.core.errors.ConfigError` naming the key: a WSDL that does not
        parse (``mocks[0].soap.wsdl: not well-formed XML at line 3: ...``), an unreadable
        ``wsdlFile``, a bad template, XPath or static response XML
        (``mocks[0].soap.operations.GetUser.match.xpath.//[: invalid XPath ...``);
        ``extend[0].mock: ...`` for a binding of the whole mock or of an operation it lacks,
        ``extend[0].response: ...`` for a binding with a response transform.
        """
        config: SoapMock = mock.soap
        key_path = f"{context.key_path}.soap"
        document, _ = _read_wsdl(config, key_path, context)
        config = _bind_operations(mock.id, context.binding, config, document)
        operations = compile_operations(config, key_path, document)
        documents = document.served() if document is not None else None
        actions = document.soap_actions() if document is not None else {}
        endpoint = SoapEndpoint(mock.id, config.path, operations, documents, actions,
                                context.tables, hub_of(context.shared),
                                document.documents.by_name if document is not None else None)
        return CompiledMock(routes=(ProtocolRoute(path=config.path, mock_id=mock.id,
                                                  action=endpoint, methods=ROUTE_METHODS),))


def _bind_operations(mock_id: str, binding: Any, config: SoapMock,
                     document: WsdlDocument | None) -> SoapMock:
    """``config`` with each operation an ``extend`` entry binds (``context.binding``:
    ``{"Operation": BindingSpec}``) answering from its table, as ``statefulResource`` /
    ``statefulAction`` on the operation would (its ``response``, or the WSDL's sample, gives
    the shape of the answer; a ``fault`` is dropped: SPEC "Extend binding" rule 1).

    Raises :class:`~mocks.core.errors.ConfigError` at ``extend[i].mock`` for a binding of
    the whole mock or of an operation neither the WSDL nor ``operations`` has, at
    ``extend[i].response`` for a response transform (the answer is the operation's XML)."""
    if binding is None:
        return config
    known = list(document.operations()) if document is not None else []
    known += [name for name in config.operations if name not in known]
    operations = dict(config.operations)
    for name, spec in member_bindings(binding, mock_id, "SOAP", "operation", "<Operation>",
                                      known, "a SOAP answer is the operation's XML").items():
        current = operations.get(name) or SoapOperation()
        operations[name] = current.model_copy(update={
            "fault": None, "stateful_resource": spec.table or None,
            "stateful_action": spec.action,
            "operation": spec.operation if spec.action == "custom" else None})
    return config.model_copy(update={"operations": operations})


#: The registered handler object (:data:`mocks.protocols.PROTOCOLS`).
HANDLER = SoapHandler()

