"""The config model of an ``http`` mock: matcher, response, streaming and validation.

Source: SPEC "HTTP mock", "Matcher", "Response"; behavior notes §7 (request validation), §9
(``sse``/``chunked`` instead of ``response``), §14 (validator rules).
"""
from __future__ import annotations

import base64
import binascii
from typing import Annotated, Any, Literal, Union

from pydantic import ConfigDict, Discriminator, Field, Tag, field_validator, model_validator

from mocks.core.lazymodel import LazyModel, untitled_json_schema
from mocks.core.request import CLIENT_CERT_FIELDS
from mocks.core.schema import Strict, scalar_text
from tables.rules import FieldRule

HTTP_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS")


class _Block(Strict):
    """:class:`Strict`, built on its first validation (``defer_build``): importing this module
    builds no model, and the first ``http`` block validated builds :class:`HttpMock` once,
    its matcher and response models inside it."""

    model_config = ConfigDict(defer_build=True)


class JsonPathExists(_Block):
    """``{exists: true|false}`` as a ``bodyJsonPath`` value."""

    exists: bool


#: The operators of a :class:`ValueMatch` (exactly one per object).
VALUE_OPERATORS = ("equalTo", "contains", "matches", "doesNotMatch", "absent")
#: The operators of a :class:`BodyMatch` (exactly one per entry).
BODY_OPERATORS = ("equalTo", "contains", "matches", "doesNotMatch", "equalToJson",
                  "equalToXml", "matchesJsonPath")


def _given_operators(model: Any, operators: tuple[str, ...]) -> list[str]:
    """The operator keys (camelCase) set on ``model``."""
    fields = type(model).model_fields
    return [fields[name].alias or name for name in model.model_fields_set
            if (fields[name].alias or name) in operators]


def _one_operator(model: Any, operators: tuple[str, ...]) -> str:
    """The one operator key set on ``model``; raises ValueError when none or several are."""
    given = _given_operators(model, operators)
    if len(given) != 1:
        raise ValueError(f"give exactly one of {', '.join(operators)}"
                         + (f", not {' and '.join(sorted(given))}" if given else ""))
    return given[0]


class ValueMatch(_Block):
    """A header or query-parameter value given as an object instead of text.

    Exactly one of ``equalTo`` (the whole value), ``contains`` (a substring), ``matches``
    (a regular expression that must match the WHOLE value), ``doesNotMatch`` (a regular
    expression that must not match the whole value) or ``absent: true`` (the header or
    parameter must be missing). A missing header or parameter fails every kind except
    ``absent``, ``doesNotMatch`` included. ``caseInsensitive: true`` compares without case
    (``equalTo``, ``contains``, and the regular expressions).

    Raises (as a config error naming the key): no operator or more than one, ``absent`` other
    than ``true``, ``caseInsensitive`` with ``absent``. A bad regular expression is reported
    when the matcher compiles (``...headers['X-Id'].matches: ...``).

    Source: SPEC "Matcher"; WireMock import (``equalTo``, ``contains``, ``matches``,
    ``doesNotMatch``, ``absent``, ``caseInsensitive``).
    """

    equal_to: str | None = Field(None, alias="equalTo")
    contains: str | None = None
    matches: str | None = None
    does_not_match: str | None = Field(None, alias="doesNotMatch")
    absent: bool | None = None
    case_insensitive: bool | None = Field(None, alias="caseInsensitive")

    @field_validator("equal_to", "contains", mode="before")
    @classmethod
    def _scalar_as_text(cls, value: Any) -> Any:
        return scalar_text(value)

    @model_validator(mode="after")
    def _exactly_one_operator(self) -> "ValueMatch":
        _one_operator(self, VALUE_OPERATORS)
        if self.absent is not None and self.absent is not True:
            raise ValueError("absent must be true (leave the key out to accept any value)")
        if self.absent and self.case_insensitive:
            raise ValueError("caseInsensitive does not apply to absent")
        return self


class BodyMatch(_Block):
    """One entry of ``matcher.bodyMatchers``; every entry must hold.

    Exactly one of: ``equalTo`` (the whole body), ``contains``, ``matches`` / ``doesNotMatch``
    (a regular expression over the WHOLE body), ``equalToJson`` (JSON text or any JSON value;
    semantic equality: white space and key order do not matter; ``ignoreArrayOrder``,
    ``ignoreExtraElements`` (extra object keys and array items of the request allowed at
    every depth); the strings ``${json-unit.ignore}``, ``${json-unit.any-string}``,
    ``${json-unit.any-number}`` and ``${json-unit.any-boolean}`` in the expected value match
    any value, string, number or boolean), ``equalToXml`` (XML equality ignoring
    insignificant white space, comments, attribute order and namespace prefixes) or
    ``matchesJsonPath`` (a JSONPath that must find something in the JSON body).
    ``caseInsensitive`` applies to ``equalTo``, ``contains``, ``matches`` and
    ``doesNotMatch``; ``ignoreArrayOrder`` and ``ignoreExtraElements`` to ``equalToJson``.

    Raises (as a config error naming the key): no operator or more than one, an option that
    does not apply to the operator. Bad JSON, XML, regular expressions and JSONPaths are
    reported when the matcher compiles.

    Source: SPEC "Matcher"; WireMock import (``bodyPatterns``).
    """

    equal_to: str | None = Field(None, alias="equalTo")
    contains: str | None = None
    matches: str | None = None
    does_not_match: str | None = Field(None, alias="doesNotMatch")
    equal_to_json: Any = Field(None, alias="equalToJson")
    equal_to_xml: str | None = Field(None, alias="equalToXml")
    matches_json_path: str | None = Field(None, alias="matchesJsonPath")
    case_insensitive: bool | None = Field(None, alias="caseInsensitive")
    ignore_array_order: bool | None = Field(None, alias="ignoreArrayOrder")
    ignore_extra_elements: bool | None = Field(None, alias="ignoreExtraElements")

    @property
    def operator(self) -> str:
        """The operator key of this entry (``equalToJson``, ...)."""
        return _given_operators(self, BODY_OPERATORS)[0]

    @model_validator(mode="after")
    def _exactly_one_operator(self) -> "BodyMatch":
        operator = _one_operator(self, BODY_OPERATORS)
        if self.case_insensitive and operator not in VALUE_OPERATORS:
            raise ValueError(f"caseInsensitive does not apply to {operator}")
        for option, on in (("ignoreArrayOrder", self.ignore_array_order),
                           ("ignoreExtraElements", self.ignore_extra_elements)):
            if on and operator != "equalToJson":
                raise ValueError(f"{option} applies to equalToJson only, not {operator}")
        return self


def _text_or_object(value: Any) -> str:
    return "tagged-union[object]" if isinstance(value, (dict, ValueMatch)) else "tagged-union[text]"


#: A ``headers``/``queryParams`` value: text or a :class:`ValueMatch`. The union is tagged by
#: the value's shape so that an error names only the branch that was meant (the tag names
#: are left out of error paths).
TextOrValueMatch = Annotated[Union[Annotated[str, Tag("tagged-union[text]")],
                                   Annotated[ValueMatch, Tag("tagged-union[object]")]],
                             Discriminator(_text_or_object)]


class Matcher(_Block):
    """SPEC "Matcher": every field present becomes one condition; all must hold.

    ``headers`` and ``queryParams`` values are text (headers: exact, ``prefix*``, ``*suffix``,
    ``*contains*``; query parameters: exact) or a :class:`ValueMatch` object.
    ``bodyMatchers`` is a list of :class:`BodyMatch` entries that must all hold; each entry
    counts as one condition for precedence.
    ``clientCert`` tests the certificate an HTTPS client presented, by field (``cn``, ``ou``,
    ``o``, ``subject``, ``issuer``, ``serial``), with the same value forms as ``headers``.

    Source: SPEC "Matcher"; WireMock import (value and body matcher objects).
    """

    method: str | None = None
    path: str | None = None
    path_pattern: str | None = Field(None, alias="pathPattern")
    query_params: dict[str, TextOrValueMatch] | None = Field(None, alias="queryParams")
    headers: dict[str, TextOrValueMatch] | None = None
    body_contains: str | None = Field(None, alias="bodyContains")
    body_equals: str | None = Field(None, alias="bodyEquals")
    body_pattern: str | None = Field(None, alias="bodyPattern")
    body_json_path: dict[str, JsonPathExists | str | int | float | bool | None] | None = Field(
        None, alias="bodyJsonPath")
    body_matchers: list[BodyMatch] | None = Field(None, alias="bodyMatchers")
    client_cert: dict[str, TextOrValueMatch] | None = Field(None, alias="clientCert")

    @field_validator("client_cert")
    @classmethod
    def _client_cert_keys(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        for key in value or ():
            if key.lower() not in CLIENT_CERT_FIELDS:
                raise ValueError(f"unknown clientCert field {key!r}; use one of "
                                 f"{', '.join(CLIENT_CERT_FIELDS)}")
        return {key.lower(): item for key, item in value.items()} if value else value

    @field_validator("method")
    @classmethod
    def _method_known(cls, value: str | None) -> str | None:
        if value is None:
            return None
        upper = value.upper()
        if upper not in HTTP_METHODS:
            raise ValueError(f"unknown method {value!r}; use one of {', '.join(HTTP_METHODS)}")
        return upper

    @field_validator("path")
    @classmethod
    def _path_absolute(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith("/"):
            raise ValueError(f"path must start with '/', got {value!r}")
        return value

    @field_validator("query_params", "headers", "client_cert", mode="before")
    @classmethod
    def _scalar_values_as_text(cls, value: Any) -> Any:
        # YAML turns `page: 1` into an int; the matcher compares text.
        if isinstance(value, dict):
            return {key: scalar_text(item) for key, item in value.items()}
        return value


class Response(_Block):
    """SPEC "Response": a static or templated answer.

    At most one of ``body`` (text or JSON; templates allowed), ``bodyFile`` (a file read as
    bytes) and ``bodyBase64`` (standard base64 text of raw bytes, served exactly; never a
    template) gives the body. ``bodyBase64`` is kept as written (exports show it verbatim);
    white space inside it is ignored.

    Raises (through the loader, as a config error naming the key):
    ``response.bodyBase64`` when the text is not standard base64, ``response`` when more than
    one body key is given.

    Source: SPEC "Response"; HAR import (binary bodies).
    """

    status_code: int = Field(200, alias="statusCode", ge=100, le=599)
    headers: dict[str, str] | None = None
    body: Any = None
    body_file: str | None = Field(None, alias="bodyFile")
    body_base64: str | None = Field(None, alias="bodyBase64")
    delay_ms: int = Field(0, alias="delayMs", ge=0, le=30000)
    seed: int | None = None

    @field_validator("headers", mode="before")
    @classmethod
    def _header_values_as_text(cls, value: Any) -> Any:
        if isinstance(value, dict):
            return {key: scalar_text(item) for key, item in value.items()}
        return value

    @field_validator("body_base64")
    @classmethod
    def _standard_base64(cls, value: str | None) -> str | None:
        if value is not None:
            decode_base64_body(value)
        return value

    @model_validator(mode="after")
    def _body_xor_body_file(self) -> "Response":
        given = [key for key, value in (("body", self.body), ("bodyFile", self.body_file),
                                        ("bodyBase64", self.body_base64)) if value is not None]
        if len(given) > 1:
            raise ValueError(f"give only one of body, bodyFile and bodyBase64, not "
                             f"{' and '.join(given)}")
        return self


def decode_base64_body(text: str) -> bytes:
    """The bytes of a ``bodyBase64`` value: standard base64 (``A-Z a-z 0-9 + /``, ``=``
    padding to a multiple of 4 characters); white space (line breaks of a long value) is
    ignored.

    Raises :class:`ValueError` saying why the text is not standard base64.
    Source: SPEC "Response" (``bodyBase64``).
    """
    compact = "".join(text.split())
    if "-" in compact or "_" in compact:
        raise ValueError("not standard base64: '-' and '_' belong to the URL-safe alphabet; "
                         "use '+' and '/' instead")
    if len(compact) % 4:
        raise ValueError(f"not valid base64: {len(compact)} characters, expected a multiple "
                         f"of 4 (pad the end with '=')")
    try:
        return base64.b64decode(compact, validate=True)
    except (binascii.Error, ValueError):
        raise ValueError("not valid base64: only A-Z, a-z, 0-9, '+' and '/' are allowed, "
                         "with '=' padding at the end") from None


class RequestValidation(_Block):
    """``http.validation``: rules the request must satisfy before the mock answers (behavior
    notes §7). Rule keys and formats are those of table validation (:class:`FieldRule`).

    Attributes:
        mode: ``strict`` (default: any failure rejects), ``warn`` (never rejects; the issues
            go to the ``X-Mockd-Validation-Warnings`` header), ``permissive`` (only
            ``required`` failures reject).
        fields: ``{dot.path: rule}`` over the JSON body (``items.sku`` reaches every element).
        required: body dot paths that must be present and not null.
        path_params, query_params, headers: ``{name: rule}`` over the text values of the path
            parameters, the query (first value) and the headers (names compared without case);
            ``type: integer|number|boolean`` parses the text first.
        json_schema: a JSON Schema object (``schema``): its ``properties``/``required`` become
            body rules, its root ``type`` is checked (code ``schema``) and
            ``additionalProperties: false`` reports other top-level keys (``unknown_field``).
        fail_status: status of the rejection (default 400).
    """

    mode: Literal["strict", "warn", "permissive"] = "strict"
    fields: dict[str, FieldRule] = Field(default_factory=dict)
    required: list[str] = Field(default_factory=list)
    path_params: dict[str, FieldRule] = Field(default_factory=dict, alias="pathParams")
    query_params: dict[str, FieldRule] = Field(default_factory=dict, alias="queryParams")
    headers: dict[str, FieldRule] = Field(default_factory=dict)
    json_schema: dict[str, Any] | None = Field(None, alias="schema")
    fail_status: int = Field(400, alias="failStatus", ge=100, le=599)


#: The state every scenario starts in (and returns to on a reset).
SCENARIO_STARTED = "Started"


class Scenario(_Block):
    """``http.scenario``: this mock takes part in a stateful flow.

    Attributes:
        name: the scenario (per workspace); it starts in the state ``Started``.
        required_state: the mock matches only while the scenario is in this state (absent:
            in any state).
        new_state: after the mock is chosen to answer a request, the scenario moves to this
            state (before the response's ``delayMs``).

    Source: WireMock import (``scenarioName``, ``requiredScenarioState``,
    ``newScenarioState``); scenario admin routes ``/scenarios``.
    """

    name: str = Field(min_length=1)
    required_state: str | None = Field(None, alias="requiredState", min_length=1)
    new_state: str | None = Field(None, alias="newState", min_length=1)


#: The keys of an ``http`` block that each decide the answer (behavior notes §9 "Placement").
ANSWER_KEYS = (("response", "response"), ("sse", "sse"), ("chunked", "chunked"),
               ("stateful_operation", "statefulOperation"),
               ("stateful_binding", "statefulBinding"))


def check_stream_placement(http: Any) -> None:
    """Raise ``ValueError`` when ``sse`` or ``chunked`` sits beside another answer key.

    Behavior notes §9: ``sse`` and ``chunked`` go beside ``matcher`` *instead of* ``response``,
    and exactly one of ``response``, ``sse``, ``chunked``, ``statefulOperation``,
    ``statefulBinding`` is given. Only the streaming keys are checked here: ``response`` next
    to ``statefulBinding`` is the table feature's documented combination (status and headers
    of a bound mock), and a mock with no answer key answers an empty 200.
    """
    streaming = [alias for attribute, alias in ANSWER_KEYS[1:3]
                 if getattr(http, attribute, None) is not None]
    if not streaming:
        return
    others = [alias for attribute, alias in ANSWER_KEYS
              if alias not in streaming[:1] and getattr(http, attribute, None) is not None]
    if others:
        raise ValueError(f"{streaming[0]} replaces the mock's answer: give exactly one of "
                         f"response, sse, chunked, statefulOperation, statefulBinding "
                         f"(also got {', '.join(others)})")


#: The keys of :class:`HttpMock` typed through :class:`LazyModel` (untitled in the schema).
LAZY_KEYS = ("sse", "chunked", "statefulBinding")


class HttpMock(_Block):
    """SPEC "HTTP mock" (``http`` key of a mock).

    ``sse`` and ``chunked`` hold a :class:`~mocks.protocols.streaming.config.SseConfig` and a
    :class:`~mocks.protocols.streaming.config.ChunkedConfig`, ``statefulBinding`` a
    :class:`tables.config.StatefulBinding`: their modules are imported when such a block is
    first validated.
    """

    priority: int = Field(0, ge=0)
    matcher: Matcher
    scenario: Scenario | None = None
    response: Response | None = None
    #: Several answers taken in turn (``sequential``, cycling) or at random (``random``)
    #: instead of one ``response``; see :mod:`mocks.protocols.http.sequence`.
    responses: list[Response] | None = Field(None, min_length=1)
    response_mode: Literal["sequential", "random"] | None = Field(None, alias="responseMode")
    # Typed by their models through LazyModel: the streaming and table schemas are imported
    # and built only for a config that has one of these keys.
    sse: Annotated[Any, LazyModel("mocks.protocols.streaming.config:SseConfig")] | None = None
    chunked: Annotated[Any, LazyModel("mocks.protocols.streaming.config:ChunkedConfig")] | None \
        = None
    stateful_operation: str | None = Field(None, alias="statefulOperation")
    stateful_binding: Annotated[Any, LazyModel("tables.config:StatefulBinding")] | None = \
        Field(None, alias="statefulBinding")
    credential_query_params: list[str] = Field([], alias="credentialQueryParams")  # never list filters
    #: Query parameters the imported API operation declares (OpenAPI ``parameters`` with
    #: ``in: query``): a table-bound ``list`` filters on one only when some item of the table
    #: has that field (docs/tables.md "List queries").
    declared_query_params: list[str] = Field([], alias="declaredQueryParams")
    validation: RequestValidation | None = None

    @classmethod
    def __get_pydantic_json_schema__(cls, core_schema: Any, handler: Any) -> dict[str, Any]:
        return untitled_json_schema(handler(core_schema), handler, LAZY_KEYS)

    @model_validator(mode="after")
    def _stream_replaces_response(self) -> "HttpMock":
        check_stream_placement(self)  # behavior notes §9: sse/chunked instead of response
        return self

    @model_validator(mode="after")
    def _responses_replace_response(self) -> "HttpMock":
        if self.responses is None:
            if self.response_mode is not None:
                raise ValueError("responseMode needs a responses list")
            return self
        others = [key for key, value in (("response", self.response), ("sse", self.sse),
                                         ("chunked", self.chunked)) if value is not None]
        if others:
            raise ValueError(f"give either responses or {others[0]}, not both")
        return self
