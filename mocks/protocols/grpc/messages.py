"""Protobuf messages <-> their JSON form, and schema-typed fake messages.

* :func:`to_document`: a message as the JSON object templates and matchers read (protobuf's
  JSON mapping: lowerCamelCase field names, 64-bit integers as strings, enums by name, every
  field present, zero values included).
* :func:`encode`: a JSON value (a rendered ``response``) as message bytes. Template output is
  text ("a substituted value is emitted as text"), so strings are first converted to the
  field's type where they spell one (``"42"`` for an ``int32``, ``"true"`` for a ``bool``);
  keys may be the ``.proto`` names or lowerCamelCase. Raises :class:`MessageError`.
* :func:`fake_document`: a fake message of a type as JSON: strings by field name (``email``,
  ``name``, ``id`` ...), numbers by name, enums, nested messages (3 levels), repeated fields
  of 2 items, maps of one entry, the well-known types in their JSON form; one field of each
  ``oneof``. Every draw comes from the ``rng`` given, so a seeded one repeats.
* :func:`canonical_steps`: a field path written with ``.proto`` names rewritten to the JSON
  names :func:`to_document` uses.

Source: behavior notes §10 (``grpc``); SPEC "Templating" ("a substituted value is emitted as
text"). Django-free.
"""
from __future__ import annotations

import base64
import datetime
import random
from typing import Any

from google.protobuf import json_format
from google.protobuf.descriptor import FieldDescriptor

from mocks.protocols.graphql.fake import fake_float, fake_int, fake_string

#: Nested messages are faked this deep; deeper message fields are left out.
FAKE_DEPTH = 3

_INTEGER_TYPES = {FieldDescriptor.TYPE_INT32, FieldDescriptor.TYPE_INT64,
                  FieldDescriptor.TYPE_UINT32, FieldDescriptor.TYPE_UINT64,
                  FieldDescriptor.TYPE_SINT32, FieldDescriptor.TYPE_SINT64,
                  FieldDescriptor.TYPE_FIXED32, FieldDescriptor.TYPE_FIXED64,
                  FieldDescriptor.TYPE_SFIXED32, FieldDescriptor.TYPE_SFIXED64}
_FLOAT_TYPES = {FieldDescriptor.TYPE_FLOAT, FieldDescriptor.TYPE_DOUBLE}
_WRAPPERS = {
    "google.protobuf.StringValue": FieldDescriptor.TYPE_STRING,
    "google.protobuf.BytesValue": FieldDescriptor.TYPE_BYTES,
    "google.protobuf.BoolValue": FieldDescriptor.TYPE_BOOL,
    "google.protobuf.Int32Value": FieldDescriptor.TYPE_INT32,
    "google.protobuf.Int64Value": FieldDescriptor.TYPE_INT64,
    "google.protobuf.UInt32Value": FieldDescriptor.TYPE_UINT32,
    "google.protobuf.UInt64Value": FieldDescriptor.TYPE_UINT64,
    "google.protobuf.FloatValue": FieldDescriptor.TYPE_FLOAT,
    "google.protobuf.DoubleValue": FieldDescriptor.TYPE_DOUBLE,
}
_EPOCH = datetime.datetime(2023, 1, 1, tzinfo=datetime.timezone.utc)


class MessageError(ValueError):
    """A JSON value that does not fit the message type; ``str`` says which field and why."""


def to_document(message: Any) -> dict[str, Any]:
    """``message`` in its JSON form (see the module docstring)."""
    return json_format.MessageToDict(message, always_print_fields_with_no_presence=True)


def _field(descriptor: Any, key: str) -> Any:
    field = descriptor.fields_by_name.get(key)
    if field is None:
        for candidate in descriptor.fields:
            if candidate.json_name == key:
                return candidate
    return field


def _is_map(field: Any) -> bool:
    message_type = field.message_type
    return (message_type is not None and message_type.GetOptions().map_entry
            and field.is_repeated)


def _scalar(value: Any, field_type: int) -> Any:
    """A template's text turned into the scalar type protobuf's JSON parser wants."""
    if not isinstance(value, str):
        return value
    text = value.strip()
    if field_type == FieldDescriptor.TYPE_BOOL:
        lowered = text.lower()
        if lowered in ("true", "1", "yes"):
            return True
        if lowered in ("false", "0", "no", ""):
            return False
        return value
    if field_type in _INTEGER_TYPES:
        if text == "":
            return 0
        try:
            return int(text)
        except ValueError:
            try:
                number = float(text)
            except ValueError:
                return value
            return int(number) if number.is_integer() else value
    if field_type in _FLOAT_TYPES:
        if text == "":
            return 0.0
        try:
            return float(text)
        except ValueError:
            return value
    return value


def coerce(value: Any, descriptor: Any) -> Any:
    """``value`` (JSON of a message of type ``descriptor``) with template text converted to
    the field types it spells (see :func:`_scalar`); unknown keys are kept (the parser then
    names them)."""
    if not isinstance(value, dict):
        return value
    full_name = descriptor.full_name
    if full_name in _WRAPPERS:
        return value
    out: dict[str, Any] = {}
    for key, item in value.items():
        field = _field(descriptor, key) if isinstance(key, str) else None
        out[key] = item if field is None else _coerce_field(item, field)
    return out


def _coerce_field(value: Any, field: Any) -> Any:
    if _is_map(field):
        if not isinstance(value, dict):
            return value
        value_field = field.message_type.fields_by_name["value"]
        return {key: _coerce_single(item, value_field) for key, item in value.items()}
    if field.is_repeated:
        if isinstance(value, list):
            return [_coerce_single(item, field) for item in value]
        return value
    return _coerce_single(value, field)


def _coerce_single(value: Any, field: Any) -> Any:
    if field.type == FieldDescriptor.TYPE_MESSAGE:
        wrapped = _WRAPPERS.get(field.message_type.full_name)
        if wrapped is not None:
            return _scalar(value, wrapped)
        return coerce(value, field.message_type)
    if field.type == FieldDescriptor.TYPE_ENUM:
        if isinstance(value, str) and value.strip().lstrip("-").isdigit():
            return int(value)
        return value
    if field.type == FieldDescriptor.TYPE_STRING and isinstance(value, (int, float)):
        # A table's sequence id (7) in a string field (``string id = 1``).
        return ("true" if value else "false") if isinstance(value, bool) else str(value)
    return _scalar(value, field.type)


def encode(value: Any, message_class: Any, pool: Any) -> bytes:
    """The serialized message of JSON ``value``; ``None`` is the empty message.

    Raises :class:`MessageError` naming the field protobuf's JSON parser rejected.
    """
    message = message_class()
    if value is not None:
        if not isinstance(value, dict):
            raise MessageError(f"a {message_class.DESCRIPTOR.full_name} answer must be a JSON "
                               f"object, got {type(value).__name__}")
        try:
            json_format.ParseDict(coerce(value, message_class.DESCRIPTOR), message,
                                  descriptor_pool=pool)
        except json_format.ParseError as error:
            raise MessageError(str(error)) from None
    return message.SerializeToString()


def canonical_steps(descriptor: Any, steps: list[str]) -> list[str]:
    """``steps`` (field names of a path into a message of type ``descriptor``) with every
    ``.proto`` name rewritten to its JSON name; list indexes and unknown names are kept."""
    out = []
    current = descriptor
    for step in steps:
        field = _field(current, step) if current is not None else None
        if field is None:
            out.append(step)
            if not step.isdigit():
                current = None
            continue
        out.append(field.json_name)
        current = field.message_type if field.type == FieldDescriptor.TYPE_MESSAGE else None
        if current is not None and _is_map(field):
            current = None
    return out


# ---------------------------------------------------------------------------- fake messages


def fake_document(descriptor: Any, rng: random.Random, depth: int = 0) -> dict[str, Any]:
    """A fake message of type ``descriptor`` in JSON form (see the module docstring)."""
    special = _fake_well_known(descriptor.full_name, rng)
    if special is not _NOT_SPECIAL:
        return special
    out: dict[str, Any] = {}
    seen_oneofs: set[str] = set()
    for field in descriptor.fields:
        oneof = field.containing_oneof
        if oneof is not None and not _synthetic(oneof):
            if oneof.name in seen_oneofs:
                continue
            seen_oneofs.add(oneof.name)
        if field.type == FieldDescriptor.TYPE_MESSAGE and depth >= FAKE_DEPTH \
                and field.message_type.full_name not in _WRAPPERS:
            continue
        if _is_map(field):
            entry = field.message_type
            key = _fake_scalar(entry.fields_by_name["key"], rng, depth, "key")
            out[field.json_name] = {str(key): _fake_single(entry.fields_by_name["value"], rng,
                                                           depth)}
        elif field.is_repeated:
            out[field.json_name] = [_fake_single(field, rng, depth) for _ in range(2)]
        else:
            out[field.json_name] = _fake_single(field, rng, depth)
    return out


def _synthetic(oneof: Any) -> bool:
    """A proto3 ``optional`` field's one-field oneof (not a real choice)."""
    return len(oneof.fields) == 1 and oneof.name.startswith("_")


_NOT_SPECIAL: Any = object()


def _fake_well_known(full_name: str, rng: random.Random) -> Any:
    if full_name == "google.protobuf.Timestamp":
        moment = _EPOCH + datetime.timedelta(seconds=rng.randrange(3 * 365 * 24 * 3600))
        return moment.isoformat().replace("+00:00", "Z")
    if full_name == "google.protobuf.Duration":
        return f"{rng.randint(1, 3600)}s"
    if full_name in ("google.protobuf.Struct", "google.protobuf.Empty"):
        return {}
    if full_name == "google.protobuf.Value":
        return fake_string("value", rng)
    if full_name == "google.protobuf.ListValue":
        return []
    if full_name == "google.protobuf.FieldMask":
        return ""
    if full_name == "google.protobuf.Any":
        return {}
    return _NOT_SPECIAL


def _fake_single(field: Any, rng: random.Random, depth: int) -> Any:
    if field.type == FieldDescriptor.TYPE_MESSAGE:
        full_name = field.message_type.full_name
        wrapped = _WRAPPERS.get(full_name)
        if wrapped is not None:
            return _fake_scalar_of(wrapped, field.name, rng)
        if full_name == "google.protobuf.Any":
            return None
        return fake_document(field.message_type, rng, depth + 1)
    return _fake_scalar(field, rng, depth, field.name)


def _fake_scalar(field: Any, rng: random.Random, depth: int, name: str) -> Any:
    if field.type == FieldDescriptor.TYPE_ENUM:
        values = [value.name for value in field.enum_type.values]
        choices = values[1:] or values
        return rng.choice(choices)
    if field.type == FieldDescriptor.TYPE_MESSAGE:
        return _fake_single(field, rng, depth)
    return _fake_scalar_of(field.type, name, rng)


def _fake_scalar_of(field_type: int, name: str, rng: random.Random) -> Any:
    if field_type == FieldDescriptor.TYPE_STRING:
        return fake_string(_camel(name), rng)
    if field_type == FieldDescriptor.TYPE_BOOL:
        return rng.random() < 0.5
    if field_type == FieldDescriptor.TYPE_BYTES:
        return base64.b64encode(bytes(rng.randrange(256) for _ in range(8))).decode()
    if field_type in _FLOAT_TYPES:
        return fake_float(_camel(name), rng)
    if field_type in (FieldDescriptor.TYPE_UINT32, FieldDescriptor.TYPE_UINT64,
                      FieldDescriptor.TYPE_FIXED32, FieldDescriptor.TYPE_FIXED64):
        return abs(fake_int(_camel(name), rng))
    return fake_int(_camel(name), rng)


def _camel(name: str) -> str:
    """``created_at`` -> ``createdAt`` (the fake-value hints read camelCase and snake_case
    endings alike; this keeps ``Id``/``At`` suffix tests working for proto names)."""
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)
