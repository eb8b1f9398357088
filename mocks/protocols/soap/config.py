"""The config model of a ``soap`` mock: path, WSDL, operations.

Shape (durations are ``"400ms"``, ``"5s"`` or an integer of ms; stored as int ms)::

    soap:
      path: /soap/users                  # POST envelopes here; GET /soap/users?wsdl
      wsdl: "<definitions ...>"          # or wsdlFile: ./users.wsdl (relative to the config)
      documents: {"types.xsd": "<xs:schema ...>"}   # files an inline wsdl imports, by name
      operations:                        # optional with a WSDL: every WSDL operation answers
        GetUser:                         # its sample response unless overridden here
          soapAction: urn:users/GetUser  # the SOAPAction (1.1) or action= (1.2) naming it
          response: |                    # XML of the body element, templated
            <GetUserResponse><id>{{xpath '//GetUser/id'}}</id></GetUserResponse>
          match: {xpath: {"//GetUser/id": "42"}}   # all must hold, else the variants
          variants:                      # tried in order when match is absent or fails
            - match: {xpath: {"//GetUser/id": "0"}}
              fault: {code: soap:Client, string: "no user 0", detail: "<id>0</id>"}
          delay: 200ms
        CreateUser: {statefulResource: users, statefulAction: create}
        Transfer: {statefulAction: custom, operation: transfer-funds}

Source: SPEC "SOAP mock"; behavior notes §10 ("SOAP operation": ``soapAction``, ``response``
(XML of the body element, templated), ``fault: {code, string, detail?}``, ``delay``,
``match: {xpath: value}``, ``statefulResource``, ``statefulAction``).
"""
from __future__ import annotations

from typing import Any, Literal

from pydantic import AliasChoices, Field, field_validator, model_validator

from mocks.core.durations import DurationMs
from mocks.core.schema import Strict, scalar_text

#: ``statefulAction`` values (SPEC "SOAP mock"; behavior notes §10).
StatefulAction = Literal["list", "get", "create", "update", "patch", "delete", "custom"]


class SoapFault(Strict):
    """``fault``: the operation answers a SOAP fault (HTTP 500).

    Attributes:
        code: the fault code; SOAP 1.1 writes it as ``faultcode`` (``soap:Server``,
            ``soap:Client``, or any QName), SOAP 1.2 as ``Code/Value`` with ``Client`` ->
            ``Sender`` and ``Server`` -> ``Receiver``.
        string: the human-readable reason (``faultstring`` / ``Reason/Text``); templated.
            ``message`` is accepted as another name.
        detail: XML (or text) put inside ``detail`` / ``Detail``; templated.
    """

    code: str = "soap:Server"
    string: str = Field("Server error", validation_alias=AliasChoices("string", "message"))
    detail: str | None = None


class XPathMatch(Strict):
    """``match``: ``{xpath: {"<XPath>": "<expected text>"}}``; every XPath must select that
    text in the request envelope (namespaces ignored, see :mod:`mocks.core.xmldoc`)."""

    xpath: dict[str, str] = Field(default_factory=dict)

    @field_validator("xpath", mode="before")
    @classmethod
    def _texts(cls, value: Any) -> Any:
        if isinstance(value, dict):
            return {key: scalar_text(item) for key, item in value.items()}
        return value

    @model_validator(mode="after")
    def _not_empty(self) -> "XPathMatch":
        if not self.xpath:
            raise ValueError("give at least one XPath, e.g. xpath: {\"//GetUser/id\": \"42\"}")
        return self


class SoapAnswer(Strict):
    """What an operation (or one of its variants) answers: ``response`` XML or a ``fault``,
    after ``delay``."""

    response: str | None = None
    fault: SoapFault | None = None
    delay: DurationMs = 0

    @model_validator(mode="after")
    def _one_answer(self) -> "SoapAnswer":
        if self.response is not None and self.fault is not None:
            raise ValueError("give either response or fault, not both")
        return self


class SoapVariant(SoapAnswer):
    """One entry of ``variants``: a ``match`` and its answer."""

    match: XPathMatch


class SoapOperation(SoapAnswer):
    """One entry of ``operations`` (see the module docstring).

    Attributes:
        soap_action: the ``SOAPAction`` naming this operation (``soapAction``).
        match: conditions for the operation's own answer; when they fail the ``variants``
            are tried, and when none matches the client gets a SOAP fault.
        variants: ``[{match, response | fault, delay}]`` tried in order before the
            operation's own answer.
        stateful_resource: the table the operation works on (``statefulResource``).
        stateful_action: ``get``, ``list``, ``create``, ``update``, ``patch``, ``delete`` or
            ``custom`` (``statefulAction``).
        operation: the custom operation run by ``statefulAction: custom`` (default: the SOAP
            operation's name).
    """

    soap_action: str | None = Field(None, alias="soapAction")
    match: XPathMatch | None = None
    variants: list[SoapVariant] = Field(default_factory=list)
    stateful_resource: str | None = Field(None, alias="statefulResource")
    stateful_action: StatefulAction | None = Field(None, alias="statefulAction")
    operation: str | None = None

    @model_validator(mode="after")
    def _stateful_pair(self) -> "SoapOperation":
        if self.stateful_resource is not None and self.stateful_action is None:
            raise ValueError("statefulResource needs a statefulAction (get, list, create, "
                             "update, patch, delete or custom)")
        if self.stateful_action is not None and self.stateful_action != "custom" and \
                not self.stateful_resource:
            raise ValueError(f"statefulAction {self.stateful_action} needs a "
                             f"statefulResource (the table name)")
        if self.operation is not None and self.stateful_action != "custom":
            raise ValueError("operation is only used with statefulAction: custom")
        if self.stateful_action is not None and self.fault is not None:
            raise ValueError("a stateful operation answers from its table; remove fault")
        return self


class SoapMock(Strict):
    """The ``soap`` block of a mock (see the module docstring).

    Attributes:
        path: the exact path the service is served at (starts with ``/``).
        wsdl: the WSDL 1.1 document, inline.
        wsdl_file: a file holding it (``wsdlFile``; relative to the config file's folder).
            The files it imports (``wsdl:import``, ``xs:import``, ``xs:include``) are read
            from its folder and below.
        documents: the files an inline ``wsdl`` imports: ``{name: text}``, each name as the
            WSDL (or the file importing it) refers to it, relative to the WSDL
            (``types.xsd``, ``schemas/common.xsd``); ``mockd import`` writes them.
        operations: operation name -> :class:`SoapOperation`.
    """

    path: str
    wsdl: str | None = None
    wsdl_file: str | None = Field(None, alias="wsdlFile")
    documents: dict[str, str] = Field(default_factory=dict)
    operations: dict[str, SoapOperation] = Field(default_factory=dict)

    @field_validator("path")
    @classmethod
    def _absolute(cls, value: str) -> str:
        if not value.startswith("/"):
            raise ValueError(f"must start with '/', got {value!r}")
        if "?" in value or "#" in value:
            raise ValueError("a path, without query or fragment")
        return value

    @model_validator(mode="after")
    def _something_to_serve(self) -> "SoapMock":
        if self.wsdl is not None and self.wsdl_file is not None:
            raise ValueError("give either wsdl or wsdlFile, not both")
        if self.documents and self.wsdl is None:
            raise ValueError("documents go with an inline wsdl; with wsdlFile the files it "
                             "imports are read from its folder")
        if self.wsdl is None and self.wsdl_file is None and not self.operations:
            raise ValueError("give operations, a wsdl or a wsdlFile")
        return self
