"""OpenAPI 3.0 / 3.1 and Swagger 2.0 -> one HTTP mock per path and method.

Rules (behavior notes §13, with the changes of "Imports that real files break"):

* paths sorted; methods in the order GET, POST, PUT, DELETE, PATCH, HEAD, OPTIONS;
  ``{param}`` segments kept; Swagger ``basePath`` prefixed (OpenAPI 3 ``servers`` ignored);
* status: 200, else 201, 202, 204, else the first 2xx, else the first listed;
* body: the media type's ``example`` (then its first ``examples`` entry) -> the schema's
  ``example`` (after ``$ref``) -> generated from the schema (:mod:`.placeholders`) -> a
  default (200 ``{"status": "ok"}``, 201 ``{"id": 1, "created": true}``, 204 none, 4xx and
  500 ``{"error": "<Reason>"}``, else ``{"status": N}``);
* ``Content-Type`` = the first media type (Swagger: the first ``produces``);
* a 3xx answer carries ``Location`` from the response's ``headers.Location`` (its
  ``example``, its schema's ``example``, its first ``examples`` value, else a URI generated
  from its schema, else ``/``);
* query and header parameters never become matcher conditions, with or without an
  ``example``: the documented request without them must match. Only a parameter the
  OpenAPI exporter marked ``x-mockd-condition: true`` is a condition again (round trip);
* a response marked ``x-mockd-template: true`` (the exporter's mark for a body or header
  holding ``{{...}}``) keeps its templates; every other example is literal text;
* query parameters that carry credentials (``securitySchemes`` / Swagger
  ``securityDefinitions`` of ``type: apiKey, in: query``) are listed in each mock's
  ``http.credentialQueryParams`` so a table-bound ``list`` does not filter on them;
* the other query parameters an operation declares (its own and its path's, conditions
  excepted) are listed in ``http.declaredQueryParams``, in document order: a table-bound
  ``list`` filters on one only when it names a field of the table's items, so credentials
  declared as plain parameters (Vonage's required ``api_key`` and ``api_secret``) do not
  filter the list empty;
* name = ``summary``, else ``operationId``, else ``"METHOD path"``;
* id = ``<as>.<operationId>`` with an ``as`` prefix, else ``http_<16 hex>``; both the
  ``operationId`` and ``<as>.<operationId>`` are recorded in
  :attr:`ImportResult.operation_ids` so extend bindings can name them.

``$ref`` values are resolved by :mod:`.openapi_refs`: percent-encoded JSON pointers, and
relative references to other files when the spec was imported from a file (only inside
its folder tree; URLs are never fetched).

Partial import: each operation converts inside ``result.item("paths.<path>.<method>")``,
so an operation that cannot be converted (a ``$ref`` that does not resolve, a malformed
response) is skipped with a warning naming it; problems of the document itself (version,
``paths`` not a mapping, a path without ``/``) still fail the whole import.

Errors name the place: ``openapi: paths./users.get.responses: expected a mapping``.

Source: SPEC "Import and export"; behavior notes §13.
"""
from __future__ import annotations

import random
from http import HTTPStatus
from pathlib import Path
from typing import Any

from mocks.portability.importers.common import IdAllocator, http_mock, new_http_id, safe_id, scalar_text
from mocks.portability.importers.openapi_refs import References
from mocks.portability.importers.placeholders import FORMAT_SAMPLES, SchemaSampler
from mocks.portability.importers.result import DocumentProbe, ImportDocumentError, ImportOptions, ImportResult

FORMAT = "openapi"
METHODS = ("get", "post", "put", "delete", "patch", "head", "options")
#: Preferred success statuses, in order (behavior notes §13).
PREFERRED_STATUSES = ("200", "201", "202", "204")
#: Header parameters OpenAPI says are described elsewhere (and a client always sends).
IGNORED_HEADER_PARAMETERS = frozenset(("accept", "content-type", "authorization"))
#: Report progress every this many operations.
PROGRESS_STEP = 200
#: A parameter extension the OpenAPI exporter writes on a mock's matcher conditions: such a
#: parameter's ``example`` is a matcher condition again when the document is imported.
CONDITION_EXTENSION = "x-mockd-condition"
#: A response extension the OpenAPI exporter writes when the body or a header holds
#: ``{{...}}`` templates: imported as templates, not escaped into literal text.
TEMPLATE_EXTENSION = "x-mockd-template"


class Base64Body:
    """A media example whose schema says ``format: byte``: base64 text of the answer's
    bytes, imported as ``response.bodyBase64``."""

    __slots__ = ("text",)

    def __init__(self, text: str):
        self.text = text


def _is_base64(text: str) -> bool:
    import base64
    import binascii

    try:
        base64.b64decode("".join(text.split()), validate=True)
    except (binascii.Error, ValueError):
        return False
    return bool(text.strip())


def default_body(status: int) -> Any:
    """The body of a response the document describes no content for (notes §13)."""
    if status == 200:
        return {"status": "ok"}
    if status == 201:
        return {"id": 1, "created": True}
    if status == 204:
        return None
    if 400 <= status < 500 or status == 500:
        try:
            return {"error": HTTPStatus(status).phrase}
        except ValueError:
            return {"error": f"Error {status}"}
    return {"status": status}


def choose_status(codes: list[str]) -> str | None:
    """The response key to mock: 200, else 201, 202, 204, else the first 2xx (``2XX``
    counts), else the first listed (None when there are none)."""
    for code in PREFERRED_STATUSES:
        if code in codes:
            return code
    for code in codes:
        if code.startswith("2"):
            return code
    return codes[0] if codes else None


def status_number(code: str) -> int:
    """``"201"`` -> 201; ``"2XX"`` -> 200; ``"default"`` (or anything else) -> 200."""
    if code.isdigit() and 100 <= int(code) <= 599:
        return int(code)
    if len(code) == 3 and code[0] in "12345" and code[1:].upper() == "XX":
        return int(code[0]) * 100
    return 200


class OpenAPIImporter:
    """``openapi`` / ``swagger`` documents (aliases ``swagger``, ``oas``)."""

    format = FORMAT
    #: The format's name and its detection rule in words, for ``GET /formats``.
    title = "OpenAPI 3.x or Swagger 2.0"
    detection = "an object with an 'openapi' or 'swagger' key"

    def detects(self, probe: DocumentProbe) -> bool:
        """A mapping with an ``openapi`` or ``swagger`` key."""
        data = probe.structured()
        return isinstance(data, dict) and ("openapi" in data or "swagger" in data)

    def convert(self, probe: DocumentProbe, options: ImportOptions) -> ImportResult:
        """See the module docstring. Raises :class:`ImportDocumentError`."""
        document = probe.data(FORMAT)
        if not isinstance(document, dict):
            raise ImportDocumentError(FORMAT, "", f"expected a mapping at the top level, got "
                                      f"{_kind(document)}")
        return OpenAPIConversion(document, options, probe.base_dir, probe.filename).run()


class OpenAPIConversion:
    """One document being converted (holds the ``$ref`` cache and the warnings)."""

    def __init__(self, document: dict[str, Any], options: ImportOptions,
                 base_dir: Path | None = None, filename: str = ""):
        self.document = document
        self.options = options
        self.warnings: list[str] = []
        self.ids = IdAllocator()
        self.references = References(document, base_dir, filename)
        self.swagger = "openapi" not in document
        self._check_version()
        self.base_path = self._base_path()
        self.produces = _string_list(document.get("produces"))
        self.credential_query_params = self._credential_query_params()

    # ------------------------------------------------------------------ document level

    def _check_version(self) -> None:
        if self.swagger:
            version = str(self.document.get("swagger"))
            if version not in ("2.0", "2"):
                raise ImportDocumentError(FORMAT, "swagger", f"unsupported version {version!r}; "
                                          "Swagger 2.0 and OpenAPI 3.x are supported")
        else:
            version = str(self.document.get("openapi"))
            if not version.startswith("3"):
                raise ImportDocumentError(FORMAT, "openapi", f"unsupported version {version!r}; "
                                          "OpenAPI 3.0, 3.1 and Swagger 2.0 are supported")

    def _base_path(self) -> str:
        if not self.swagger:
            return ""  # OpenAPI 3 `servers` are deliberately ignored (notes §13)
        base = self.document.get("basePath") or ""
        if not isinstance(base, str):
            raise ImportDocumentError(FORMAT, "basePath", "expected a string")
        base = base.rstrip("/")
        if base and not base.startswith("/"):
            base = "/" + base
        return base

    def _credential_query_params(self) -> list[str]:
        """Names of the query parameters the document's security schemes carry credentials
        in (``type: apiKey, in: query``), sorted; malformed schemes are ignored."""
        if self.swagger:
            schemes = self.document.get("securityDefinitions")
        else:
            components = self.document.get("components")
            schemes = components.get("securitySchemes") if isinstance(components, dict) \
                else None
        names: set[str] = set()
        for scheme in (schemes or {}).values() if isinstance(schemes, dict) else ():
            try:
                scheme = self._deref(scheme, "securitySchemes")
            except ImportDocumentError:
                continue
            if isinstance(scheme, dict) and scheme.get("type") == "apiKey" \
                    and scheme.get("in") == "query" and isinstance(scheme.get("name"), str):
                names.add(scheme["name"])
        return sorted(names)

    def run(self) -> ImportResult:
        """Convert every operation; returns the :class:`ImportResult`."""
        paths = self.document.get("paths")
        if paths is None:
            paths = {}
            self.warnings.append("the document has no paths; nothing to import")
        if not isinstance(paths, dict):
            raise ImportDocumentError(FORMAT, "paths", f"expected a mapping, got {_kind(paths)}")
        info = self.document.get("info")
        result = ImportResult(warnings=self.warnings, format=FORMAT,
                              name=info.get("title") if isinstance(info, dict) else None)
        operations = [(str(path), item) for path, item in paths.items()]
        operations.sort(key=lambda entry: entry[0])
        total = sum(1 for _, item in operations if isinstance(item, dict)
                    for method in METHODS if method in item)
        done = 0
        progress = self.options.progress
        for path, item in operations:
            location = f"paths.{path}"
            if not path.startswith("/"):
                raise ImportDocumentError(FORMAT, location, "a path must start with '/'")
            if isinstance(item, dict) and "$ref" in item:
                resolved: list[Any] = []
                with result.item(location):  # a path item in another file
                    resolved.append(self._deref(item, location))
                if not resolved:
                    continue
                item = resolved[0]
            if not isinstance(item, dict):
                raise ImportDocumentError(FORMAT, location, f"expected a mapping, got "
                                          f"{_kind(item)}")
            for method in METHODS:
                if method not in item:
                    continue
                where = f"{location}.{method}"
                with result.item(where):
                    operation = item[method]
                    if not isinstance(operation, dict):
                        raise ImportDocumentError(FORMAT, where,
                                                  f"expected a mapping, got {_kind(operation)}")
                    shared = self._parameters(item.get("parameters"), f"{location}.parameters")
                    result.mocks.append(self._mock(path, method, operation, shared, result,
                                                   where))
                done += 1
                if progress is not None and done % PROGRESS_STEP == 0:
                    progress(done, total)
        if progress is not None:
            progress(done, total)
        return result

    # ------------------------------------------------------------------ one operation

    def _mock(self, path: str, method: str, operation: dict[str, Any],
              shared: dict[tuple[str, str], dict[str, Any]], result: ImportResult,
              location: str) -> dict[str, Any]:
        upper = method.upper()
        full_path = self.base_path + path
        operation_id = operation.get("operationId")
        operation_id = str(operation_id) if operation_id not in (None, "") else None
        summary = operation.get("summary")
        name = (str(summary).strip() if summary else None) or operation_id or f"{upper} {path}"
        prefix = self.options.as_prefix
        if operation_id and prefix:
            mock_id = self.ids.claim(safe_id(f"{prefix}.{operation_id}"), self.warnings)
        else:
            mock_id = new_http_id()
        if operation_id:
            result.operation_ids.setdefault(operation_id, mock_id)
            if prefix:
                result.operation_ids.setdefault(f"{prefix}.{operation_id}", mock_id)

        parameters = dict(shared)
        parameters.update(self._parameters(operation.get("parameters"),
                                           f"{location}.parameters"))
        query_params: dict[str, str] = {}
        match_headers: dict[str, str] = {}
        declared = [parameter_name for where, parameter_name in parameters
                    if where == "query" and parameter_name not in self.credential_query_params]
        for (where, parameter_name), parameter in parameters.items():
            # Examples describe a request; they are not conditions (a plain request must
            # match), except the exporter's own conditions coming back.
            if "example" not in parameter or parameter.get(CONDITION_EXTENSION) is not True:
                continue
            value = scalar_text(parameter["example"])
            if where == "query":
                query_params[parameter_name] = value
            elif where == "header" and parameter_name.lower() not in IGNORED_HEADER_PARAMETERS:
                match_headers[parameter_name] = value

        responses = operation.get("responses")
        if responses is None:
            responses = {}
        if not isinstance(responses, dict):
            raise ImportDocumentError(FORMAT, f"{location}.responses",
                                      f"expected a mapping, got {_kind(responses)}")
        codes = [str(code) for code in responses]
        chosen = choose_status(codes)
        status = status_number(chosen) if chosen is not None else 200
        headers: dict[str, str] = {}
        body: Any = None
        found = False
        literal = True
        if chosen is not None:
            response_location = f"{location}.responses.{chosen}"
            response = self._deref(responses[_original_key(responses, chosen)],
                                   response_location)
            if not isinstance(response, dict):
                raise ImportDocumentError(FORMAT, response_location,
                                          f"expected a mapping, got {_kind(response)}")
            literal = response.get(TEMPLATE_EXTENSION) is not True
            rng = random.Random(f"{upper} {path}")
            if 300 <= status < 400:
                headers["Location"] = self._location(response, rng, response_location)
            if self.swagger:
                found, content_type, body = self._swagger_body(response, operation, rng,
                                                               response_location)
            else:
                found, content_type, body = self._openapi_body(response, rng,
                                                               response_location)
            if content_type:
                headers["Content-Type"] = content_type
        if not found:
            body = default_body(status)
        mock = http_mock(mock_id, name=name, method=upper, path=full_path, status=status,
                         headers=headers or None, body=body, query_params=query_params or None,
                         match_headers=match_headers or None,
                         literal=literal) if not isinstance(body, Base64Body) else \
            http_mock(mock_id, name=name, method=upper, path=full_path, status=status,
                      headers=headers or None, query_params=query_params or None,
                      match_headers=match_headers or None, literal=literal)
        if isinstance(body, Base64Body):
            mock["http"]["response"]["bodyBase64"] = body.text
        if self.credential_query_params:
            mock["http"]["credentialQueryParams"] = list(self.credential_query_params)
        declared = [name for name in declared if name not in query_params]
        if declared:
            mock["http"]["declaredQueryParams"] = declared
        return mock

    def _location(self, response: dict[str, Any], rng: random.Random, location: str) -> str:
        """The ``Location`` of a 3xx answer: the response's ``headers.Location`` (any
        case) ``example``, its schema's ``example``, its first ``examples`` value, else a
        URI generated from its schema, else ``/``."""
        declared = response.get("headers")
        if not isinstance(declared, dict):
            return "/"
        key = next((name for name in declared if str(name).lower() == "location"), None)
        if key is None:
            return "/"
        header = self._deref(declared[key], f"{location}.headers.{key}")
        if not isinstance(header, dict):
            return "/"
        if "example" in header:
            return scalar_text(header["example"])
        schema = header.get("schema", header if self.swagger else None)
        schema = self._deref(schema, f"{location}.headers.{key}.schema")
        if isinstance(schema, dict) and "example" in schema:
            return scalar_text(schema["example"])
        examples = header.get("examples")
        if isinstance(examples, dict) and examples:
            first = self._deref(next(iter(examples.values())), f"{location}.headers.{key}")
            if isinstance(first, dict) and "value" in first:
                return scalar_text(first["value"])
        if isinstance(schema, dict):
            schema = {**schema, "format": schema.get("format")
                      if schema.get("format") in FORMAT_SAMPLES else "uri"}
            value = self._sample(schema, rng, f"{location}.headers.{key}.schema")
            if isinstance(value, str) and value:
                return value
        return "/"

    def _openapi_body(self, response: dict[str, Any], rng: random.Random,
                      location: str) -> tuple[bool, str, Any]:
        """``(found, content type, body)`` of an OpenAPI 3 response object."""
        content = response.get("content")
        if content is None:
            return False, "", None
        if not isinstance(content, dict):
            raise ImportDocumentError(FORMAT, f"{location}.content",
                                      f"expected a mapping, got {_kind(content)}")
        if not content:
            return False, "", None
        content_type = str(next(iter(content)))
        media = content[content_type]
        if media is None:
            return False, content_type, None
        if not isinstance(media, dict):
            raise ImportDocumentError(FORMAT, f"{location}.content.{content_type}",
                                      f"expected a mapping, got {_kind(media)}")
        if "example" in media:
            schema = media.get("schema")
            if (isinstance(schema, dict) and schema.get("format") == "byte"
                    and isinstance(media["example"], str)
                    and _is_base64(media["example"])):
                # format: byte is base64 text: the answer is those bytes (bodyBase64).
                return True, content_type, Base64Body(media["example"])
            return True, content_type, media["example"]
        examples = media.get("examples")
        if isinstance(examples, dict) and examples:
            first = self._deref(next(iter(examples.values())),
                                f"{location}.content.{content_type}.examples")
            if isinstance(first, dict) and "value" in first:
                return True, content_type, first["value"]
        found, body = self._schema_body(media.get("schema"), rng,
                                        f"{location}.content.{content_type}.schema")
        return found, content_type, body

    def _swagger_body(self, response: dict[str, Any], operation: dict[str, Any],
                      rng: random.Random, location: str) -> tuple[bool, str, Any]:
        """``(found, content type, body)`` of a Swagger 2.0 response object."""
        produces = _string_list(operation.get("produces")) or self.produces
        examples = response.get("examples")
        schema = response.get("schema")
        if isinstance(examples, dict) and examples:
            content_type = next((kind for kind in produces if kind in examples),
                                str(next(iter(examples))))
            return True, content_type, examples[content_type]
        if schema is None:
            return False, "", None
        content_type = produces[0] if produces else "application/json"
        found, body = self._schema_body(schema, rng, f"{location}.schema")
        return found, content_type, body

    def _schema_body(self, schema: Any, rng: random.Random, location: str) -> tuple[bool, Any]:
        if schema is None:
            return False, None
        if not isinstance(schema, dict):
            raise ImportDocumentError(FORMAT, location, f"expected a mapping, got "
                                      f"{_kind(schema)}")
        resolved = self._deref(schema, location)
        if isinstance(resolved, dict) and "example" in resolved:
            return True, resolved["example"]
        value = self._sample(schema, rng, location)
        return value is not None, value

    def _sample(self, schema: Any, rng: random.Random, location: str) -> Any:
        """A value generated from ``schema``; a ``$ref`` inside it that cannot be read
        raises :class:`ImportDocumentError` naming ``location``."""
        try:
            return SchemaSampler(self.resolve, rng).sample(schema)
        except ImportDocumentError as error:
            raise ImportDocumentError(FORMAT, location, error.reason) from None

    # ------------------------------------------------------------------ parameters

    def _parameters(self, parameters: Any,
                    location: str) -> dict[tuple[str, str], dict[str, Any]]:
        """``{(in, name): parameter}`` with ``$ref`` parameters resolved."""
        if parameters is None:
            return {}
        if not isinstance(parameters, list):
            raise ImportDocumentError(FORMAT, location, f"expected a list, got "
                                      f"{_kind(parameters)}")
        found: dict[tuple[str, str], dict[str, Any]] = {}
        for index, parameter in enumerate(parameters):
            parameter = self._deref(parameter, f"{location}[{index}]")
            if not isinstance(parameter, dict):
                raise ImportDocumentError(FORMAT, f"{location}[{index}]",
                                          f"expected a mapping, got {_kind(parameter)}")
            if "name" in parameter and "in" in parameter:
                found[(str(parameter["in"]), str(parameter["name"]))] = parameter
        return found

    # ------------------------------------------------------------------ references

    def _deref(self, value: Any, location: str) -> Any:
        """``value`` with ``$ref`` chains followed (cycle-safe); a reference that cannot be
        resolved (see :mod:`.openapi_refs`) raises :class:`ImportDocumentError` naming
        ``location``."""
        seen: set[str] = set()
        while isinstance(value, dict) and isinstance(value.get("$ref"), str):
            reference = value["$ref"]
            if reference in seen:
                raise ImportDocumentError(FORMAT, location, f"$ref cycle through {reference!r}")
            seen.add(reference)
            try:
                value = self.resolve(reference)
            except ImportDocumentError as error:
                raise ImportDocumentError(FORMAT, location, error.reason) from None
        return value

    def resolve(self, reference: str) -> Any:
        """The value a ``$ref`` points at (:meth:`References.resolve`). Raises
        :class:`ImportDocumentError` (without a location) when it cannot be resolved."""
        return self.references.resolve(reference)


def _original_key(mapping: dict[Any, Any], text: str) -> Any:
    """The key of ``mapping`` whose text is ``text`` (YAML turns ``200:`` into an int)."""
    if text in mapping:
        return text
    return next(key for key in mapping if str(key) == text)


def _string_list(value: Any) -> list[str]:
    return [str(item) for item in value] if isinstance(value, list) else []


def _kind(value: Any) -> str:
    """A user-facing name of a value's type."""
    return {dict: "a mapping", list: "a list", str: "a string", bool: "a boolean",
            int: "a number", float: "a number", type(None): "nothing"}.get(type(value),
                                                                           type(value).__name__)
