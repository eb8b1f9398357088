"""HTTP recordings (the recording proxy's traffic) -> a config fragment of mocks.

:func:`convert_http_recordings` turns recording documents into ``{"mocks": [...]}`` (plus
``"tables"`` and ``"extend"`` with ``stateful``), a fragment that ``mockd start -c`` loads as
it is and that ``POST /recordings/convert`` hands to the config service.
:func:`convert_http_recordings_result` returns the same as an
:class:`~mocks.portability.importers.result.ImportResult` (STYLE §10), with the warnings.

Rules, in the order they apply:

* **Input.** A recording is ``{id, sessionId, timestamp, request: {method, url, path, host,
  scheme, headers: {name: [values]}, body: base64}, response: {statusCode, statusText,
  headers, body: base64}, duration (ns)}``. A recording that cannot be read (no request, a
  method mockd does not match, a status outside 200..599 or an informational one, a body that
  is not base64) is skipped with a warning naming it; the rest is converted. Recordings are
  taken in timestamp order (ties: input order). At most :data:`MAX_RECORDINGS`.
* **Path shapes.** A path segment that looks like an identifier (a number, a UUID, a ULID,
  8+ hex characters with a digit, a prefixed id like ``cus_9f3K2x``, a long token mixing
  letters and digits) becomes a ``{param}`` capture: the last one of a path is ``{id}``,
  an earlier one the singular of the collection segment before it plus ``Id``
  (``/users/42/orders/7`` -> ``/users/{userId}/orders/{id}``). Recordings of the same
  method and path shape make one mock (``GET /users/{id}``).
* **Discriminators.** When recordings of one shape got different answers, the request keys
  that tell them apart become conditions, fewest first: a captured path segment (the mock
  then matches that literal path, ``GET /users/42`` next to ``GET /users/43``), a query
  parameter (``queryParams``; ``{absent: true}`` where a recording lacked it) or a scalar of
  a JSON request body (``bodyJsonPath``; ``{exists: false}`` where absent; a request body
  the recorder cut is not read). Query parameters and body fields that look like nonces
  (``_``, ``timestamp``, ``nonce``, ``requestId``, ... or UUID values) or were redacted
  (``[REDACTED]``) are never used. Keys that do not tell answers apart are
  left out, so the mock matches any value.
* **Repeated requests.** Recordings with the same conditions but different answers give a
  ``responses`` list served in turn (``responseMode: sequential``, starting again after the
  last). With ``deduplicate`` (default) identical answers are merged, so the list holds each
  distinct answer once in the order first seen (one answer: a plain ``response``); without
  it the list holds every recorded answer in order (one recording: a plain ``response``).
* **Responses** keep the status, the body (JSON types as JSON values, UTF-8 text as text
  with ``{{`` escaped, other bytes as ``bodyBase64``; gzip/deflate bodies are stored
  decoded, other encodings keep their ``Content-Encoding``) and ``Content-Type``. With
  ``include_headers`` the other headers too, except hop-by-hop and transport ones
  (``Content-Length``, ``Date``, ...), ``Set-Cookie`` and any value that was redacted.
  A body the recorder cut (``bodyTruncated``) is served as cut; the mock's ``description``
  and a warning say so.
* **Stateful** (``stateful=True``): a collection ``C`` (its last segment literal) with
  traffic on ``C/{id}`` (GET, PUT, PATCH or DELETE) and on ``C`` itself (GET or POST), two
  recordings or more, JSON answers and an id field found in them becomes a table named after
  ``C``'s last segment. Its seed data are the items seen in the answers (list answers and
  item answers, deleted ones included, the last version of each; stored in reverse order
  of first appearance so that a default list, newest first, shows the recorded order), its ``idField`` the field
  whose value equals the captured id (``id`` preferred), its ``idStrategy`` guessed from the
  ids seen (numbers: ``sequence``; UUIDs: ``uuid``; ``cus_...``: ``prefix``). The CRUD mocks
  (``GET C`` list, ``POST C`` create, ``GET``/``PUT``/``PATCH``/``DELETE C/{id}``) are bound
  to it by ``extend`` entries and keep the recorded success status; the table's ``response``
  transform shapes a list like the recorded one (the array's key, the other envelope keys;
  a bare JSON array becomes ``{"data": [...]}``, said in a warning) and hides the table's
  ``createdAt``/``updatedAt`` when the recorded items had none. A nested collection
  (``/users/{userId}/orders``) gets ``parentField: userId``. Everything else stays a static
  mock.
* **Ids and names.** A mock's ``name`` is its method and path (``GET /users/{id}``, with
  its query or body conditions after it); its ``id`` the same text made URL-safe
  (``get-users-id``), made unique with ``-2``, ``-3``; ``id_prefix`` goes in front. The
  same input gives the same output.

Pure and Django-free: no I/O, no clock, no randomness.

Source: SPEC "Proxy, CA and recordings", "Proxy recording", "Configuration file",
"HTTP mock", "Matcher", "Response", "Table", "Extend binding"; behavior notes §1
(``POST /recordings/convert``).
"""
from __future__ import annotations

import base64
import binascii
import json
import re
import zlib
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from mocks.core.redaction import REDACTED, SENSITIVE_HEADERS
from mocks.portability.importers.common import (IdAllocator, TRANSPORT_HEADERS, body_value,
                                                http_mock, split_url)
from mocks.portability.importers.result import ImportResult

FORMAT = "recordings"
#: Most recordings one conversion reads; the rest are left out with a warning.
MAX_RECORDINGS = 10_000
#: Most bytes of one body after decompression.
MAX_BODY_BYTES = 16 * 1024 * 1024
#: Most discriminating keys one shape may use, and most candidates looked at.
MAX_KEYS = 4
MAX_CANDIDATES = 64
#: JSON request bodies: deepest level and most scalar leaves looked at.
MAX_BODY_DEPTH = 4
MAX_BODY_LEAVES = 64
#: Methods a mock can match (SPEC "Matcher").
METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS")
#: Query parameters and body fields never used to tell requests apart (names compared
#: lower-case without ``_`` and ``-``).
VOLATILE_NAMES = frozenset((
    "", "t", "ts", "cb", "cachebuster", "nocache", "rand", "random", "nonce", "timestamp",
    "time", "requestid", "reqid", "correlationid", "traceid", "spanid", "idempotencykey",
    "mockseed", "mockdseed"))

_UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-"
                   r"[0-9a-fA-F]{12}$")
_ULID = re.compile(r"^[0-9A-HJKMNP-TV-Z]{26}$")
_HEX = re.compile(r"^[0-9a-fA-F]{8,}$")
_PREFIXED = re.compile(r"^([A-Za-z]{1,8}_)[A-Za-z0-9]{4,}$")
_TOKEN = re.compile(r"^[A-Za-z0-9_-]{16,}$")
_WORD = re.compile(r"^[A-Za-z][A-Za-z0-9_-]*$")
_JSON_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_ABSENT = ("absent",)


def looks_like_id(segment: str) -> bool:
    """Whether a path segment looks like an identifier rather than a collection name:
    a number, a UUID, a ULID, 8+ hex characters with a digit, a prefixed id
    (``cus_9f3K2x``, with a digit or mixed case after the prefix) or a 16+ character token
    mixing letters and digits."""
    if segment.isdigit() or _UUID.match(segment) or _ULID.match(segment):
        return True
    has_digit = any(char.isdigit() for char in segment)
    if _HEX.match(segment):
        return has_digit
    prefixed = _PREFIXED.match(segment)
    if prefixed:
        rest = segment[len(prefixed.group(1)):]
        return any(char.isdigit() for char in rest) or (rest.lower() != rest != rest.upper())
    return bool(_TOKEN.match(segment)) and has_digit and any(char.isalpha() for char in segment)


def singular(word: str) -> str:
    """English singular of a collection segment, as a camelCase name
    (``users`` -> ``user``, ``line-items`` -> ``lineItem``, ``categories`` -> ``category``)."""
    parts = [part for part in re.split(r"[-_]+", word) if part]
    last = parts[-1] if parts else word
    lower = last.lower()
    if lower.endswith("ies") and len(last) > 3:
        last = last[:-3] + "y"
    elif lower.endswith(("sses", "xes", "ches", "shes", "uses")):
        last = last[:-2]
    elif lower.endswith("s") and not lower.endswith(("ss", "us", "is")) and len(last) > 1:
        last = last[:-1]
    parts[-1:] = [last]
    return parts[0][:1].lower() + parts[0][1:] + "".join(part[:1].upper() + part[1:]
                                                         for part in parts[1:])


# ---------------------------------------------------------------------------- reading


@dataclass
class Exchange:
    """One readable recording.

    Attributes:
        order: position after sorting (ties broken by input order).
        label: how warnings name it (``recordings[3] (GET /users)`` or its id).
        method, path, segments, query: the request (query: first value per name).
        request_json: the parsed JSON request body, or None.
        status, headers, body: the answer (headers as ``[(name, value)]``, body decoded).
        content_type: the answer's Content-Type ("" without one).
        encoding: a Content-Encoding kept because the body could not be decoded ("").
        truncated: the recorder cut the answer's body.
        answer_key: identity of the answer as served (set after reading), for comparing
            answers.
    """

    order: int
    label: str
    method: str
    path: str
    segments: tuple[str, ...]
    query: dict[str, str]
    request_json: Any
    status: int
    headers: list[tuple[str, str]]
    body: bytes
    content_type: str
    encoding: str = ""
    truncated: bool = False
    answer_key: tuple = field(default=(), repr=False)


class RecordingError(ValueError):
    """A recording that cannot be converted; ``str()`` says where and why."""


def _decode_base64(value: Any, where: str) -> bytes:
    if value in (None, ""):
        return b""
    if not isinstance(value, str):
        raise RecordingError(f"{where}: expected base64 text")
    try:
        return base64.b64decode("".join(value.split()), validate=True)
    except (binascii.Error, ValueError):
        raise RecordingError(f"{where}: not valid base64") from None


def _header_list(value: Any) -> list[tuple[str, str]]:
    """``{name: [values]}`` (or ``{name: value}``) as ``[(name, value)]`` in order."""
    pairs: list[tuple[str, str]] = []
    if isinstance(value, dict):
        for name, values in value.items():
            for item in values if isinstance(values, list) else [values]:
                if item is not None:
                    pairs.append((str(name), str(item)))
    return pairs


def _header(pairs: list[tuple[str, str]], name: str) -> str:
    lower = name.lower()
    return next((value for key, value in pairs if key.lower() == lower), "")


def _truncated(record: dict[str, Any], side: str) -> bool:
    """Whether the recorder flagged ``side``'s body (``request``/``response``) as cut.

    The side's own ``bodyTruncated`` decides when either side carries one (the record-level
    flag then only repeats them); otherwise a record-level ``bodyTruncated`` (``true``, or
    ``{request, response}`` flags) counts for both sides."""
    part, other = record.get(side), record.get("request" if side == "response" else "response")
    if isinstance(part, dict) and "bodyTruncated" in part:
        return bool(part["bodyTruncated"])
    if isinstance(other, dict) and "bodyTruncated" in other:
        return False
    flag = record.get("bodyTruncated")
    return bool(flag.get(side)) if isinstance(flag, dict) else bool(flag)


def _decompress(body: bytes, encoding: str) -> bytes | None:
    """``body`` decoded from gzip or deflate (bounded), or None when it cannot be."""
    kinds = {"gzip": (16 + zlib.MAX_WBITS,), "x-gzip": (16 + zlib.MAX_WBITS,),
             "deflate": (zlib.MAX_WBITS, -zlib.MAX_WBITS)}
    for wbits in kinds.get(encoding, ()):
        try:
            inflater = zlib.decompressobj(wbits)
            data = inflater.decompress(body, MAX_BODY_BYTES)
            if inflater.unconsumed_tail:
                return None
            return data
        except zlib.error:
            continue
    return None


def read_recording(record: Any, order: int, label: str) -> Exchange:
    """One recording document as an :class:`Exchange`. Raises :class:`RecordingError`."""
    if not isinstance(record, dict):
        raise RecordingError("expected a mapping")
    request, response = record.get("request"), record.get("response")
    if not isinstance(request, dict):
        raise RecordingError("request: expected a mapping")
    if not isinstance(response, dict):
        raise RecordingError("response: expected a mapping")
    method = str(request.get("method") or "GET").upper()
    if method not in METHODS:
        raise RecordingError(f"request.method: {method} is not one a mock matches")
    url = str(request.get("url") or "")
    raw_path = str(request.get("path") or "") or url
    if not raw_path:
        raise RecordingError("request: needs a path or url")
    path, query = split_url(raw_path)
    if url and not query:
        query = split_url(url)[1]
    status = response.get("statusCode")
    if isinstance(status, bool) or not isinstance(status, int) or not 200 <= status <= 599:
        raise RecordingError(f"response.statusCode: expected a final HTTP status "
                             f"(200..599), got {status!r}")
    request_body = _decode_base64(request.get("body"), "request.body")
    headers = _header_list(response.get("headers"))
    body = _decode_base64(response.get("body"), "response.body")
    truncated = _truncated(record, "response")
    encoding = _header(headers, "Content-Encoding").strip().lower()
    if body and encoding and encoding != "identity":
        decoded = None if truncated else _decompress(body, encoding)
        if decoded is not None:
            body, encoding = decoded, ""
    else:
        encoding = ""
    request_json = None
    if request_body and not _truncated(record, "request"):
        text = request_body.strip()
        if text[:1] in (b"{", b"["):
            try:
                request_json = json.loads(text)
            except ValueError:
                request_json = None
    return Exchange(order=order, label=label, method=method, path=path,
                    segments=tuple(part for part in path.split("/")[1:]), query=query,
                    request_json=request_json, status=status, headers=headers, body=body,
                    content_type=_header(headers, "Content-Type"), encoding=encoding,
                    truncated=truncated)


def _label(index: int, record: Any) -> str:
    request = record.get("request") if isinstance(record, dict) else None
    if isinstance(request, dict) and (request.get("path") or request.get("url")):
        path = split_url(str(request.get("path") or request.get("url")))[0]
        return f"recordings[{index}] ({str(request.get('method') or 'GET').upper()} {path})"
    return f"recordings[{index}]"


# ---------------------------------------------------------------------------- answers


@dataclass
class Answer:
    """One response as the mock will serve it (``response`` object of the config)."""

    document: dict[str, Any]
    truncated: bool

    @property
    def key(self) -> str:
        """Identity of the answer, for merging identical ones."""
        return json.dumps(self.document, sort_keys=True, ensure_ascii=False)


def _answer_headers(exchange: Exchange, include_headers: bool) -> dict[str, str]:
    headers: dict[str, str] = {}
    seen: set[str] = set()
    for name, value in exchange.headers:
        lower = name.lower()
        if lower in seen or name.startswith(":"):
            continue
        keep = lower == "content-type" or (lower == "content-encoding" and exchange.encoding)
        if not keep and include_headers:
            keep = (lower not in TRANSPORT_HEADERS and lower not in SENSITIVE_HEADERS
                    and REDACTED not in value)
        if keep:
            seen.add(lower)
            headers[name] = value
    return headers


def make_answer(exchange: Exchange, include_headers: bool) -> Answer:
    """The ``response`` object of one recording (see the module docstring)."""
    headers = _answer_headers(exchange, include_headers)
    body: Any = None
    raw = exchange.body
    if raw and not exchange.encoding:
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            text = None
        if text is not None and "\x00" not in text:
            body = body_value(text, exchange.content_type)
            raw = b""
    mock = http_mock("x", name=None, method=None, path=None, status=exchange.status,
                     headers=headers or None, body=body)
    document = mock["http"]["response"]
    if raw and "body" not in document:
        document["bodyBase64"] = base64.b64encode(raw).decode("ascii")
    return Answer(document, exchange.truncated)


# ---------------------------------------------------------------------------- shapes


@dataclass
class Shape:
    """A method and path shape: literal segments, and ``None`` where a capture goes."""

    method: str
    pattern: tuple[str | None, ...]
    names: tuple[str | None, ...] = ()
    exchanges: list[Exchange] = field(default_factory=list)

    @property
    def path(self) -> str:
        """The matcher path with its captures (``/users/{id}``)."""
        return "/" + "/".join(segment if segment is not None else "{" + name + "}"
                              for segment, name in zip(self.pattern, self.names))

    def literal_path(self, values: dict[int, str]) -> str:
        """The path with the captures at ``values``' positions filled in."""
        return "/" + "/".join(
            values[index] if index in values else
            (segment if segment is not None else "{" + str(name) + "}")
            for index, (segment, name) in enumerate(zip(self.pattern, self.names)))


def capture_names(pattern: tuple[str | None, ...]) -> tuple[str | None, ...]:
    """Capture names of a path shape: the last capture ``id``, an earlier one the singular
    of the literal segment before it plus ``Id`` (``id`` with a number when that is not a
    word, or when the name is taken)."""
    positions = [index for index, segment in enumerate(pattern) if segment is None]
    names: list[str | None] = [None] * len(pattern)
    taken: set[str] = set()
    for place, index in enumerate(positions):
        before = pattern[index - 1] if index else None
        if place == len(positions) - 1:
            wanted = "id"
        elif before is not None and _WORD.match(before):
            wanted = singular(before) + "Id"
        else:
            wanted = "id"
        name, number = wanted, 2
        while name in taken or (name == "id" and place < len(positions) - 1):
            name = f"{wanted}{number}"
            number += 1
        taken.add(name)
        names[index] = name
    return tuple(names)


def group_shapes(exchanges: list[Exchange]) -> list[Shape]:
    """Exchanges grouped by method and path shape, in order of first appearance."""
    shapes: dict[tuple[str, tuple[str | None, ...]], Shape] = {}
    for exchange in exchanges:
        pattern = tuple(None if looks_like_id(segment) else segment
                        for segment in exchange.segments)
        key = (exchange.method, pattern)
        if key not in shapes:
            shapes[key] = Shape(exchange.method, pattern, capture_names(pattern))
        shapes[key].exchanges.append(exchange)
    return list(shapes.values())


# ---------------------------------------------------------------------------- discriminators


def _volatile(name: str) -> bool:
    return re.sub(r"[-_\s]", "", name.lower()) in VOLATILE_NAMES


def _unusable(value: str) -> bool:
    """A value no condition should test: a UUID (a nonce) or a redacted value."""
    return bool(_UUID.match(value)) or REDACTED in value


def _body_leaves(value: Any, path: str = "$", depth: int = 0,
                 leaves: dict[str, Any] | None = None) -> dict[str, Any]:
    """``{jsonpath: scalar}`` of the object keys of a JSON body (bounded; arrays and keys
    that are not plain names are not entered)."""
    leaves = {} if leaves is None else leaves
    if not isinstance(value, dict) or depth >= MAX_BODY_DEPTH:
        return leaves
    for key, item in value.items():
        if len(leaves) >= MAX_BODY_LEAVES:
            break
        if not isinstance(key, str) or not _JSON_KEY.match(key) or _volatile(key):
            continue
        where = f"{path}.{key}"
        if isinstance(item, dict):
            _body_leaves(item, where, depth + 1, leaves)
        elif not isinstance(item, list):
            leaves[where] = item
    return leaves


def _key_value(exchange: Exchange, key: tuple[str, Any], leaves: dict[int, dict]) -> Any:
    kind, name = key
    if kind == "path":
        return exchange.segments[name]
    if kind == "query":
        return exchange.query.get(name, _ABSENT)
    found = leaves[exchange.order]
    return json.dumps(found[name]) if name in found else _ABSENT


def _impurity(exchanges: list[Exchange], keys: list[tuple[str, Any]],
              leaves: dict[int, dict]) -> int:
    """How many answers more than one per group remain when grouping by ``keys``."""
    groups: dict[tuple, set] = {}
    for exchange in exchanges:
        values = tuple(_key_value(exchange, key, leaves) for key in keys)
        groups.setdefault(values, set()).add(exchange.answer_key)
    return sum(len(answers) - 1 for answers in groups.values())


def _candidates(shape: Shape, leaves: dict[int, dict]) -> list[tuple[str, Any]]:
    """Keys that could tell the shape's requests apart: captured segments, query
    parameters, JSON body scalars, each varying across the exchanges."""
    keys: list[tuple[str, Any]] = [("path", index) for index, segment
                                   in enumerate(shape.pattern) if segment is None]
    query_names: dict[str, None] = {}
    body_paths: dict[str, None] = {}
    for exchange in shape.exchanges:
        for name, value in exchange.query.items():
            if not _volatile(name) and not _unusable(value):
                query_names.setdefault(name)
        body_paths.update(dict.fromkeys(
            where for where, value in leaves[exchange.order].items()
            if not (isinstance(value, str) and _unusable(value))))
    keys += [("query", name) for name in query_names]
    keys += [("body", where) for where in body_paths]
    varying = [key for key in keys
               if len({_key_value(exchange, key, leaves) for exchange in shape.exchanges}) > 1]
    return varying[:MAX_CANDIDATES]


def choose_keys(shape: Shape, leaves: dict[int, dict]) -> list[tuple[str, Any]]:
    """The fewest keys (greedy) that tell apart requests with different answers; a key
    with fewer distinct values wins a tie, then the earlier one."""
    chosen: list[tuple[str, Any]] = []
    current = _impurity(shape.exchanges, chosen, leaves)
    candidates = _candidates(shape, leaves) if current else []
    while current and len(chosen) < MAX_KEYS:
        best: tuple[int, int, int] | None = None
        best_key = None
        for position, key in enumerate(candidates):
            if key in chosen:
                continue
            score = _impurity(shape.exchanges, chosen + [key], leaves)
            distinct = len({_key_value(exchange, key, leaves) for exchange in shape.exchanges})
            rank = (score, distinct, position)
            if best is None or rank < best:
                best, best_key = rank, key
        if best is None or best[0] >= current:
            break
        chosen.append(best_key)
        current = best[0]
    return chosen


# ---------------------------------------------------------------------------- conversion


@dataclass
class _Context:
    deduplicate: bool
    include_headers: bool
    ids: IdAllocator
    id_prefix: str
    result: ImportResult


def mock_id(name: str, prefix: str = "") -> str:
    """A URL-safe id from a mock name: ``GET /users/{id}`` -> ``get-users-id``."""
    slug = re.sub(r"[^A-Za-z0-9]+", "-", name).strip("-")
    slug = (slug[:1].lower() + slug[1:]) if slug else "mock"
    parts = slug.split("-", 1)
    slug = parts[0].lower() + ("-" + parts[1] if len(parts) > 1 else "")
    return (prefix + slug)[:200]


def _responses(exchanges: list[Exchange], context: _Context) -> tuple[dict[str, Any], bool]:
    """``{response}`` or ``{responses, responseMode}`` of a list of exchanges, and whether
    a cut body is among them."""
    answers = [make_answer(exchange, context.include_headers) for exchange in exchanges]
    if context.deduplicate:
        unique: dict[str, Answer] = {}
        for answer in answers:
            unique.setdefault(answer.key, answer)
        answers = list(unique.values())
    truncated = any(answer.truncated for answer in answers)
    if len(answers) == 1:
        return {"response": answers[0].document}, truncated
    return {"responses": [answer.document for answer in answers],
            "responseMode": "sequential"}, truncated


def _describe(keys: list[tuple[str, Any]], values: tuple) -> tuple[dict, dict, dict[int, str]]:
    """Query and body conditions (and literal path values) of one variant."""
    query: dict[str, Any] = {}
    body: dict[str, Any] = {}
    literal: dict[int, str] = {}
    for (kind, name), value in zip(keys, values):
        if kind == "path":
            literal[name] = value
        elif kind == "query":
            query[name] = {"absent": True} if value is _ABSENT else value
        else:
            body[name] = {"exists": False} if value is _ABSENT else json.loads(value)
    return query, body, literal


def _variant_name(shape: Shape, path: str, query: dict, body: dict) -> str:
    name = f"{shape.method} {path}"
    if query:
        name += "?" + "&".join(f"{key}=" + ("(absent)" if isinstance(value, dict) else value)
                               for key, value in query.items())
    if body:
        name += " [" + ", ".join(
            f"{key}" + (" absent" if isinstance(value, dict) else "=" + json.dumps(value))
            for key, value in body.items()) + "]"
    return name


def static_mocks(shape: Shape, context: _Context, leaves: dict[int, dict]) -> None:
    """Append the static mocks of one shape to the result (one per variant)."""
    keys = choose_keys(shape, leaves)
    variants: dict[tuple, list[Exchange]] = {}
    for exchange in shape.exchanges:
        values = tuple(_key_value(exchange, key, leaves) for key in keys)
        variants.setdefault(values, []).append(exchange)
    for values, exchanges in variants.items():
        query, body, literal = _describe(keys, values)
        path = shape.literal_path(literal) if literal else shape.path
        name = _variant_name(shape, path, query, body)
        extra = {"bodyJsonPath": body} if body else None
        mock = http_mock(context.ids.claim(mock_id(name, context.id_prefix),
                                           context.result.warnings),
                         name=name, method=shape.method, path=path,
                         query_params=query or None, matcher_extra=extra)
        answer, truncated = _responses(exchanges, context)
        http = {"matcher": mock["http"]["matcher"], **answer}
        mock["http"] = http
        if truncated:
            mock["description"] = ("A recorded response body was cut at the recording's "
                                   "body cap; this mock serves it as cut.")
            context.result.warnings.append(
                f"{name}: a recorded response body was truncated; the mock serves it as cut")
        context.result.mocks.append(mock)


# ---------------------------------------------------------------------------- tables

#: (method, item path?) -> table action (SPEC "Extend binding").
CRUD_ACTIONS = {("GET", False): "list", ("POST", False): "create", ("GET", True): "get",
                ("PUT", True): "update", ("PATCH", True): "patch", ("DELETE", True): "delete"}
ITEM_ACTIONS = frozenset(("get", "update", "patch", "delete"))
#: List-envelope keys the table computes itself (never copied as constants).
META_NAMES = frozenset(("total", "limit", "offset", "count"))
PAGING_NAMES = frozenset(("page", "per_page", "perPage", "pages", "total_count", "totalCount",
                          "next", "previous", "prev", "cursor", "next_cursor", "nextCursor"))
#: Preferred names of the array in a list envelope.
DATA_KEYS = ("data", "items", "results", "records", "values")


def _json_body(exchange: Exchange) -> Any:
    """The parsed JSON answer of a 2xx exchange, or None."""
    if not 200 <= exchange.status <= 299 or exchange.truncated or exchange.encoding:
        return None
    text = exchange.body.strip()
    if text[:1] not in (b"{", b"["):
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def _list_items(answer: Any) -> tuple[str | None, list[dict[str, Any]]] | None:
    """``(envelope key or None for a bare array, items)`` of a list answer, or None."""
    if isinstance(answer, list):
        return (None, [item for item in answer if isinstance(item, dict)]) \
            if all(isinstance(item, dict) for item in answer) else None
    if not isinstance(answer, dict):
        return None
    arrays = [key for key, value in answer.items()
              if isinstance(value, list) and all(isinstance(item, dict) for item in value)]
    if not arrays:
        return None
    key = next((name for name in DATA_KEYS if name in arrays), arrays[0])
    return key, answer[key]


@dataclass
class _Member:
    """One shape of a collection: its position, action and the path it binds."""

    position: int
    action: str
    shape: Shape


def _id_field(members: list[_Member]) -> str | None:
    """The item field whose value equals the captured id of item paths (``id`` first), else
    ``id`` when items have one."""
    counts: Counter[str] = Counter()
    seen_id = False
    for member in members:
        for exchange in member.shape.exchanges:
            answer = _json_body(exchange)
            if not isinstance(answer, dict):
                continue
            seen_id = seen_id or "id" in answer
            if member.action in ITEM_ACTIONS:
                captured = exchange.segments[-1]
                counts.update(key for key, value in answer.items()
                              if not isinstance(value, (dict, list)) and value is not None
                              and str(value) == captured)
    if "id" in counts or (not counts and seen_id):
        return "id"
    return counts.most_common(1)[0][0] if counts else None


def _id_strategy(ids: list[Any]) -> dict[str, str]:
    """``idStrategy`` (and ``idPrefix``) that makes new ids like ``ids``."""
    if ids and all(isinstance(value, int) and not isinstance(value, bool) for value in ids):
        return {"idStrategy": "sequence"}
    texts = [str(value) for value in ids]
    if texts and all(_UUID.match(text) for text in texts):
        return {"idStrategy": "uuid"}
    if texts and all(_ULID.match(text) for text in texts):
        return {"idStrategy": "ulid"}
    prefixes = {match.group(1) if match else None for match in map(_PREFIXED.match, texts)}
    if len(prefixes) == 1 and None not in prefixes:
        return {"idStrategy": "prefix", "idPrefix": prefixes.pop()}
    if texts and all(re.fullmatch(r"[0-9a-f]{16}", text) for text in texts):
        return {"idStrategy": "short"}
    return {"idStrategy": "uuid"}


def _collections(shapes: list[Shape]) -> dict[tuple[str | None, ...], list[_Member]]:
    """Shapes grouped by the collection they act on (CRUD methods only)."""
    found: dict[tuple[str | None, ...], list[_Member]] = {}
    for position, shape in enumerate(shapes):
        pattern = shape.pattern
        is_item = len(pattern) >= 2 and pattern[-1] is None and pattern[-2] is not None
        is_list = bool(pattern) and pattern[-1] is not None
        action = CRUD_ACTIONS.get((shape.method, is_item))
        if action is None or not (is_item or is_list):
            continue
        collection = pattern[:-1] if is_item else pattern
        found.setdefault(collection, []).append(_Member(position, action, shape))
    return found


def _table_name(collection: tuple[str | None, ...], taken: IdAllocator) -> str:
    last = str(collection[-1])
    return taken.claim(re.sub(r"[^A-Za-z0-9_-]+", "_", last).strip("_") or "items")


def _seed(members: list[_Member], id_field: str, parent: tuple[int, str] | None
          ) -> tuple[list[dict[str, Any]], list[tuple[str | None, dict]], bool]:
    """Seed items (last version of each, in order first seen), the list answers'
    envelopes ``(key, answer)``, and whether a recorded item carried the parent field (a
    nested collection: the field is added to seed items from the path)."""
    items: dict[str, dict[str, Any]] = {}
    parent_seen = False
    envelopes: list[tuple[str | None, dict]] = []
    exchanges = sorted(((exchange, member.action) for member in members
                        for exchange in member.shape.exchanges),
                       key=lambda pair: pair[0].order)
    for exchange, action in exchanges:
        answer = _json_body(exchange)
        found: list[dict[str, Any]] = []
        if action == "list":
            listed = _list_items(answer)
            if listed is not None:
                found = listed[1]
                envelopes.append((listed[0], answer if isinstance(answer, dict) else {}))
        elif action != "delete" and isinstance(answer, dict):
            found = [answer]
        for item in found:
            value = item.get(id_field)
            if value is None or isinstance(value, (dict, list, bool)):
                continue
            item = dict(item)
            if parent is not None:
                parent_seen = parent_seen or parent[1] in item
                item.setdefault(parent[1], exchange.segments[parent[0]])
            items[str(value)] = item
    # Stored newest first, so that a list (newest first by default) shows the recorded order.
    return list(reversed(items.values())), envelopes, parent_seen


def _transform(items: list[dict[str, Any]], envelopes: list[tuple[str | None, dict]],
               hide: list[str], deletes: list[Exchange], id_field: str,
               warnings: list[str], table: str) -> dict[str, Any]:
    """The table's ``response`` transform: list envelope, timestamps, hidden fields and
    the delete answer, shaped like the recorded ones."""
    transform: dict[str, Any] = {}
    if not any("createdAt" in item or "updatedAt" in item for item in items):
        transform["timestamps"] = {"format": "none"}
    if hide:
        transform["fields"] = {"hide": hide}
    if envelopes:
        key, answer = envelopes[-1]
        if key is None:
            transform["list"] = {"dataField": "data", "hideMeta": True}
            warnings.append(f"table {table}: the recorded list answers are bare JSON arrays; "
                            f"the table answers them as {{\"data\": [...]}}")
        else:
            extra = {name: value for name, value in answer.items()
                     if name != key and name not in META_NAMES and name not in PAGING_NAMES
                     and not isinstance(value, list)}
            shape: dict[str, Any] = {"dataField": key}
            if extra:
                shape["extraFields"] = extra
            if not META_NAMES <= set(answer):
                shape["hideMeta"] = True
            transform["list"] = shape
    for exchange in deletes:
        answer = _json_body(exchange)
        if exchange.status != 204 and isinstance(answer, dict):
            captured = exchange.segments[-1]
            body = {name: ("{{item.%s}}" % id_field if str(value) == captured
                           and not isinstance(value, (dict, list)) else value)
                    for name, value in answer.items()}
            transform["delete"] = {"status": exchange.status, "body": body}
            break
    return transform


def _bound_mock(member: _Member, names: tuple[str | None, ...], context: _Context
                ) -> dict[str, Any]:
    """The mock of one CRUD shape, named with the collection's capture names; its response
    keeps the recorded success status and headers (the table gives the body)."""
    shape = Shape(member.shape.method, member.shape.pattern, names)
    name = f"{shape.method} {shape.path}"
    mock = http_mock(context.ids.claim(mock_id(name, context.id_prefix),
                                       context.result.warnings),
                     name=name, method=shape.method, path=shape.path)
    successes = [exchange for exchange in member.shape.exchanges
                 if 200 <= exchange.status <= 299]
    if successes:
        status = Counter(exchange.status for exchange in successes).most_common(1)[0][0]
        first = next(exchange for exchange in successes if exchange.status == status)
        response: dict[str, Any] = {"statusCode": status}
        headers = _answer_headers(first, context.include_headers)
        headers = {key: value for key, value in headers.items()
                   if key.lower() != "content-encoding"}
        if headers and status != 204:
            response["headers"] = headers
        mock["http"]["response"] = response
    else:
        del mock["http"]["response"]
    return mock


def stateful_tables(shapes: list[Shape], context: _Context) -> set[int]:
    """Tables, bound mocks and ``extend`` entries for the CRUD collections among
    ``shapes`` (see the module docstring, "Stateful"), appended to the result; returns the
    positions of the shapes they cover (the others become static mocks).

    A collection that looks like CRUD traffic but has no JSON items or no id field stays
    static, with a warning naming it.
    """
    bound: set[int] = set()
    tables = IdAllocator()
    for collection, members in _collections(shapes).items():
        actions = {member.action for member in members}
        recorded = sum(len(member.shape.exchanges) for member in members)
        if not actions & ITEM_ACTIONS or not actions & {"list", "create"} or recorded < 2:
            continue
        label = "/" + "/".join(segment or "{}" for segment in collection)
        id_field = _id_field(members)
        if id_field is None:
            context.result.warnings.append(
                f"{label}: CRUD traffic without JSON items carrying an id; kept as static mocks")
            continue
        names = capture_names(collection + (None,))
        names = tuple(singular(str(collection[index - 1])) + "Id"
                      if segment is None and index and collection[index - 1] is not None
                      and _WORD.match(str(collection[index - 1])) else names[index]
                      for index, segment in enumerate(collection)) + ("id",)
        captures = [index for index, segment in enumerate(collection) if segment is None]
        parent = (captures[-1], str(names[captures[-1]])) if captures else None
        items, envelopes, parent_seen = _seed(members, id_field, parent)
        if not items and not envelopes:
            context.result.warnings.append(
                f"{label}: CRUD traffic without JSON answers; kept as static mocks")
            continue
        name = _table_name(collection, tables)
        hide = [parent[1]] if parent and not parent_seen else []
        deletes = [exchange for member in members if member.action == "delete"
                   for exchange in member.shape.exchanges if 200 <= exchange.status <= 299]
        table: dict[str, Any] = {"name": name}
        if id_field != "id":
            table["idField"] = id_field
        table.update(_id_strategy([item[id_field] for item in items]))
        if parent:
            table["parentField"] = parent[1]
        table["seedData"] = items
        transform = _transform(items, envelopes, hide, deletes, id_field,
                               context.result.warnings, name)
        if transform:
            table["response"] = transform
        context.result.tables.append(table)
        for member in sorted(members, key=lambda member: member.position):
            pattern_names = names if member.action in ITEM_ACTIONS else names[:-1]
            mock = _bound_mock(member, pattern_names, context)
            context.result.mocks.append(mock)
            context.result.extend.append({"mock": mock["id"], "table": name,
                                          "action": member.action})
            bound.add(member.position)
    return bound


def convert_http_recordings_result(records: list[dict], *, deduplicate: bool = True,
                                   include_headers: bool = False, stateful: bool = False,
                                   id_prefix: str = "") -> ImportResult:
    """:func:`convert_http_recordings` as an :class:`ImportResult` (format
    ``recordings``): ``mocks``, ``tables``, ``extend``, ``warnings`` (skipped recordings,
    truncated bodies, approximations) and ``skipped``.

    Raises :class:`ValueError` when ``records`` is not a list.
    """
    if not isinstance(records, list):
        raise ValueError("records: expected a list of HTTP recording documents")
    result = ImportResult(format=FORMAT, source="recordings")
    if len(records) > MAX_RECORDINGS:
        result.warnings.append(f"{len(records) - MAX_RECORDINGS} recording(s) beyond the "
                               f"first {MAX_RECORDINGS} left out")
        records = records[:MAX_RECORDINGS]
    indexed = sorted(enumerate(records), key=lambda pair: (
        str(pair[1].get("timestamp") or "") if isinstance(pair[1], dict) else "", pair[0]))
    exchanges: list[Exchange] = []
    for index, record in indexed:
        label = _label(index, record)
        try:
            exchange = read_recording(record, len(exchanges), label)
        except RecordingError as error:
            result.skip(label, str(error))
            continue
        exchanges.append(exchange)
    context = _Context(deduplicate, include_headers, IdAllocator(), id_prefix, result)
    for exchange in exchanges:
        exchange.answer_key = (make_answer(exchange, include_headers).key,)
    leaves = {exchange.order: _body_leaves(exchange.request_json) for exchange in exchanges}
    shapes = group_shapes(exchanges)
    bound: set[int] = set()
    if stateful:
        bound = stateful_tables(shapes, context)
    for position, shape in enumerate(shapes):
        if position not in bound:
            static_mocks(shape, context, leaves)
    return result


def convert_http_recordings(records: list[dict], *, deduplicate: bool = True,
                            include_headers: bool = False, stateful: bool = False,
                            id_prefix: str = "") -> dict[str, Any]:
    """HTTP recordings -> a config-file fragment ``{"mocks": [...]}`` (plus ``"tables"`` and
    ``"extend"`` when ``stateful`` found a collection) that ``mockd start -c`` loads as it is.

    Args:
        records: HTTP recording documents (behavior notes §1 "Recording"), in any order.
        deduplicate: merge identical answers to the same request (see the module
            docstring, "Repeated requests").
        include_headers: keep the recorded response headers besides ``Content-Type``.
        stateful: turn CRUD traffic on a collection into a table with bindings.
        id_prefix: text put in front of every mock id (to convert several sessions into one
            config).

    Returns the fragment; warnings are on :func:`convert_http_recordings_result`. A
    recording that cannot be read is left out (never an error). Raises :class:`ValueError`
    when ``records`` is not a list.

    Source: SPEC "Proxy, CA and recordings"; behavior notes §1 (``POST /recordings/convert``).
    """
    result = convert_http_recordings_result(records, deduplicate=deduplicate,
                                            include_headers=include_headers,
                                            stateful=stateful, id_prefix=id_prefix)
    fragment: dict[str, Any] = {"mocks": result.mocks}
    if result.tables:
        fragment["tables"] = result.tables
    if result.extend:
        fragment["extend"] = result.extend
    return fragment
