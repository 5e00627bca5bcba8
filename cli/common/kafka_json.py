"""JSON input files read as Kafka's admin tools read them (org.apache.kafka.server.util.Json over Jackson's tree, and
DecodeJson's typed reads), with the texts of the exceptions they throw, and JSON written as Jackson writes it.

Rules:
- read_file(path) is Utils.readFileAsString: a missing or unreadable file is the java.nio exception Java throws
  (NoSuchFileException, AccessDeniedException: the path; an IOException "Is a directory").
- parse_full(text) is Json.parseFull: None when the text is not JSON (or empty). try_parse_full(text) is
  Json.tryParseFull: an empty text is a JsonParseException "The input string shouldn't be empty", text that ends too
  early Jackson's exception and words (jackson_eof), other bad JSON a JsonParseException with kraftsman's
  description of the fault (line and column). As Jackson's
  readTree, only the first value is read (trailing text is ignored), NaN and Infinity are refused, and a text of
  only blanks is Jackson's MissingNode (MISSING), which prints as nothing.
- Values are Python's (dict, list, str, int, float, bool, None); an int outside Java's int range is Jackson's
  LongNode or BigIntegerNode, so it is no `Integer`. node_text(v) is Jackson's JsonNode.toString().
- The typed reads raise JsonMappingException with DecodeJson's, JsonValue's and JsonObject's texts:
  "Expected JSON object, received X", "Expected JSON array, received X", "No such field exists: `name`",
  "Expected `Integer` value, received X", "Expected `String` value, received X".
"""
from __future__ import annotations

import json

from kraftsman.storage.protocol.javafmt import jackson_string, java_double

from .jopt import KafkaError

MAPPING = "com.fasterxml.jackson.databind.JsonMappingException"
PARSE = "com.fasterxml.jackson.core.JsonParseException"
MISSING = object()                     # Jackson's MissingNode (a blank text)
INT_RANGE = range(-2**31, 2**31)


def read_file(path: str, cwd: str | None = None) -> str:
    """Return the file's text as Utils.readFileAsString does (a relative path from `cwd`, the run's working
    directory), or raise the exception Java would (naming the path as given)."""
    import os

    try:
        with open(os.path.join(cwd, path) if cwd else path, "rb") as f:
            return f.read().decode("utf-8", "replace")
    except FileNotFoundError:
        raise KafkaError(path, "java.nio.file.NoSuchFileException") from None
    except PermissionError:
        raise KafkaError(path, "java.nio.file.AccessDeniedException") from None
    except IsADirectoryError:
        raise KafkaError("Is a directory", "java.io.IOException") from None
    except OSError as e:
        raise KafkaError(e.strerror or str(e), "java.io.IOException") from None


def _no_constant(name: str):
    raise ValueError(f"Non-standard token '{name}': enable JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS to allow")


def try_parse_full(text: str):
    """Return the first JSON value of `text` (see Rules) or raise a JsonParseException."""
    if not text:
        raise KafkaError("The input string shouldn't be empty", PARSE)
    stripped = text.lstrip(" \t\r\n")
    if not stripped:
        return MISSING
    decoder = json.JSONDecoder(parse_constant=_no_constant)
    try:
        value, _ = decoder.raw_decode(stripped)
    except json.JSONDecodeError as e:
        from .jackson_eof import eof_error

        ended = eof_error(text)
        if ended is not None:
            raise KafkaError(ended[1], ended[0]) from None
        line, column = _position(text, len(text) - len(stripped) + e.pos)
        raise KafkaError(f"{e.msg} at line {line}, column {column}", PARSE) from None
    except ValueError as e:
        raise KafkaError(str(e), PARSE) from None
    return value


def _position(text: str, offset: int) -> tuple[int, int]:
    before = text[:offset]
    return before.count("\n") + 1, offset - (before.rfind("\n") + 1) + 1


def parse_full(text: str):
    """Return the first JSON value of `text`, or None when it is empty or not JSON (Json.parseFull)."""
    try:
        return try_parse_full(text)
    except KafkaError:
        return None


def node_text(value) -> str:
    """Return Jackson's JsonNode.toString() of a parsed value (compact JSON; doubles as Java prints them)."""
    if value is MISSING:
        return ""
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, float):
        return java_double(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return jackson_string(value)
    if isinstance(value, list):
        return "[" + ",".join(node_text(v) for v in value) + "]"
    return "{" + ",".join(f"{jackson_string(k)}:{node_text(v)}" for k, v in value.items()) + "}"


def mapping_error(message: str) -> KafkaError:
    """Return a JsonMappingException with `message`."""
    return KafkaError(message, MAPPING)


def as_object(value) -> dict:
    """Return `value` if it is a JSON object (JsonValue.asJsonObject), else raise."""
    if isinstance(value, dict):
        return value
    raise mapping_error(f"Expected JSON object, received {node_text(value)}")


def as_array(value) -> list:
    """Return `value` if it is a JSON array (JsonValue.asJsonArray), else raise."""
    if isinstance(value, list):
        return value
    raise mapping_error(f"Expected JSON array, received {node_text(value)}")


def field(obj: dict, name: str):
    """Return the field `name` (JsonObject.apply), or raise when it is absent."""
    if name not in obj:
        raise mapping_error(f"No such field exists: `{name}`")
    return obj[name]


def to_int(value) -> int:
    """Return `value` as Java's int (DecodeInteger: Jackson's IntNode only), else raise."""
    if isinstance(value, int) and not isinstance(value, bool) and value in INT_RANGE:
        return value
    raise mapping_error(f"Expected `Integer` value, received {node_text(value)}")


def to_str(value) -> str:
    """Return `value` as a String (DecodeString: textual nodes only), else raise."""
    if isinstance(value, str):
        return value
    raise mapping_error(f"Expected `String` value, received {node_text(value)}")


def to_list(value, item) -> list:
    """Return `value` as a list of item(each) (DecodeJson.decodeList), else raise."""
    if not isinstance(value, list):
        raise mapping_error(f"Expected `JSON array` value, received {node_text(value)}")
    return [item(v) for v in value]


def write(value) -> str:
    """Return `value` as Jackson's ObjectMapper.writeValueAsString writes maps, lists, strings and ints."""
    return node_text(value)
