"""Input files read as Kafka's tools read them (cli.common.kafka_json), the Java exception texts they fail with
(cli.common.jopt's KafkaError: causes, suppressed exceptions) and the exception class of each Kafka error code
(storage.protocol.errors.exception_class)."""
from __future__ import annotations

import pytest

from kraftsman.cli.common import kafka_json as kj
from kraftsman.cli.common.jopt import KafkaError, server_error, stack_trace, wrapped
from kraftsman.controller.client.admin import ServerError
from kraftsman.storage.protocol.errors import exception_class


@pytest.mark.parametrize("code, name", [
    (80, "org.apache.kafka.common.errors.PreferredLeaderNotAvailableException"),
    (3, "org.apache.kafka.common.errors.UnknownTopicOrPartitionException"),
    (7, "org.apache.kafka.common.errors.TimeoutException"),
    (36, "org.apache.kafka.common.errors.TopicExistsException"),
    (17, "org.apache.kafka.common.errors.InvalidTopicException"),          # the name ends in EXCEPTION already
    (12, "org.apache.kafka.common.errors.OffsetMetadataTooLarge"),         # no "Exception" suffix in Kafka
    (87, "org.apache.kafka.common.InvalidRecordException"),                 # the one outside the errors package
    (84, "org.apache.kafka.common.errors.ElectionNotNeededException"),
    (98, "org.apache.kafka.common.errors.PositionOutOfRangeException"),     # SNAPSHOT_NOT_FOUND
    (999, "org.apache.kafka.common.errors.UnknownServerException"),         # Errors.forCode of an unknown code
])
def test_exception_class_of_error_codes(code, name):
    assert exception_class(code) == name


def test_blank_empty_malformed_and_trailing_text():
    with pytest.raises(KafkaError) as e:
        kj.try_parse_full("")
    assert e.value.java_string() == "com.fasterxml.jackson.core.JsonParseException: The input string shouldn't be empty"
    assert kj.try_parse_full(" \n") is kj.MISSING and kj.node_text(kj.MISSING) == ""
    assert kj.parse_full('{"partitions":[{"topic":"t-assign",') is None
    assert kj.parse_full("NaN") is None and kj.parse_full('{"a": Infinity}') is None
    assert kj.try_parse_full('{"a": 1} trailing words') == {"a": 1}       # readTree stops after the first value
    with pytest.raises(KafkaError) as e:
        kj.try_parse_full('{\n "a": ]')
    assert e.value.java_class == kj.PARSE and "line 2, column 7" in e.value.message


@pytest.mark.parametrize("value, text", [
    (1, "1"), (1.0, "1.0"), (1e20, "1.0E20"), ("a\"b\n", '"a\\"b\\n"'), (True, "true"), (None, "null"),
    ({"topic": "t", "p": [1, 2.5]}, '{"topic":"t","p":[1,2.5]}'),
])
def test_node_text_is_jacksons(value, text):
    assert kj.node_text(value) == text


def test_typed_reads_fail_with_decode_jsons_texts():
    cases = [(lambda: kj.as_object([1]), "Expected JSON object, received [1]"),
             (lambda: kj.as_array({"a": 1}), 'Expected JSON array, received {"a":1}'),
             (lambda: kj.field({}, "topic"), "No such field exists: `topic`"),
             (lambda: kj.to_int("1"), 'Expected `Integer` value, received "1"'),
             (lambda: kj.to_int(2**31), "Expected `Integer` value, received 2147483648"),
             (lambda: kj.to_int(True), "Expected `Integer` value, received true"),
             (lambda: kj.to_int(1.0), "Expected `Integer` value, received 1.0"),
             (lambda: kj.to_str(5), "Expected `String` value, received 5"),
             (lambda: kj.to_list(5, kj.to_int), "Expected `JSON array` value, received 5")]
    for call, message in cases:
        with pytest.raises(KafkaError) as e:
            call()
        assert (e.value.java_class, e.value.message) == (kj.MAPPING, message)
    assert kj.to_int(-2**31) == -2**31 and kj.to_list([1, 2], kj.to_int) == [1, 2]


def test_reading_a_missing_file_or_a_directory(tmp_path):
    with pytest.raises(KafkaError) as e:
        kj.read_file(str(tmp_path / "nope.json"))
    assert e.value.java_string() == f"java.nio.file.NoSuchFileException: {tmp_path / 'nope.json'}"
    with pytest.raises(KafkaError) as e:
        kj.read_file(str(tmp_path))
    assert e.value.java_string() == "java.io.IOException: Is a directory"


def test_stack_trace_layout_with_cause_and_suppressed():
    def fail():
        raise wrapped("java.lang.RuntimeException", KafkaError("No such field exists: `topic`", kj.MAPPING))

    with pytest.raises(KafkaError) as e:
        fail()
    lines = stack_trace(e.value).split("\n")
    assert lines[0] == ("java.lang.RuntimeException: com.fasterxml.jackson.databind.JsonMappingException: "
                        "No such field exists: `topic`")
    assert lines[1].startswith("\tat tests.cli.test_kafka_json.")
    assert lines[-3:] == ["Caused by: com.fasterxml.jackson.databind.JsonMappingException: No such field exists: "
                          "`topic`", "\tat <unknown>", ""]           # a cause never raised has no frames of its own
    failed = KafkaError("1 replica(s) could not be elected", "org.apache.kafka.server.common.AdminCommandFailedException",
                        suppressed=[server_error(ServerError(80, "The preferred leader was not available."))])
    assert stack_trace(failed).split("\n")[2:] == [       # ApiExceptions carry no frames
        "\tSuppressed: org.apache.kafka.common.errors.PreferredLeaderNotAvailableException: The preferred leader was "
        "not available.", ""]
    assert KafkaError(None, "java.lang.NullPointerException").java_string() == "java.lang.NullPointerException"
    assert KafkaError("", "java.lang.IllegalStateException").java_string() == "java.lang.IllegalStateException: "


REDACTED = "[Source: REDACTED (`StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION` disabled); line: {}, column: {}]"


@pytest.mark.parametrize("text, java_class, message", [
    ('{"partitions":[{"topic":"t-assign",', kj.PARSE, "Unexpected end-of-input within/between Object entries\n at "
     + REDACTED.format(1, 36)),
    ('{"version":1,"partitions":[{"topic":"t-move"', "com.fasterxml.jackson.core.io.JsonEOFException",
     "Unexpected end-of-input: expected close marker for Object (start marker at " + REDACTED.format(1, 28) + ")\n at "
     + REDACTED.format(1, 45)),
    ('{"partitions": [\n  {"topic": "t", "partition": 1,\n', kj.PARSE,
     "Unexpected end-of-input within/between Object entries\n at " + REDACTED.format(3, 1)),
    ('{"a":', "com.fasterxml.jackson.core.io.JsonEOFException", "Unexpected end-of-input within/between Object "
                                                              "entries\n at " + REDACTED.format(1, 6)),
    ('{"a', "com.fasterxml.jackson.core.io.JsonEOFException", "Unexpected end-of-input in field name\n at "
                                                             + REDACTED.format(1, 4)),
    ('["x', "com.fasterxml.jackson.core.io.JsonEOFException", "Unexpected end-of-input: was expecting closing quote "
                                                             "for a string value\n at " + REDACTED.format(1, 4)),
])
def test_text_that_ends_too_early_is_jacksons_exception(text, java_class, message):
    with pytest.raises(KafkaError) as e:
        kj.try_parse_full(text)
    assert (e.value.java_class, e.value.message) == (java_class, message)
