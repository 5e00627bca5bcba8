"""Java/Jackson text forms used in Kafka's JSON output: Double.toString and Jackson string escapes."""
from __future__ import annotations

import pytest

from kraftsman.storage.protocol import codec
from kraftsman.storage.protocol.javafmt import jackson_string, java_double


@pytest.mark.parametrize("value,text", [
    (1024.0, "1024.0"), (1.048576e7, "1.048576E7"), (1e7, "1.0E7"), (9999999.0, "9999999.0"),
    (0.001, "0.001"), (1e-4, "1.0E-4"), (0.0, "0.0"), (-0.0, "-0.0"), (-2.5, "-2.5"), (1e21, "1.0E21"),
    (float("nan"), "NaN"), (float("inf"), "Infinity"), (float("-inf"), "-Infinity"), (123.456, "123.456"),
])
def test_java_double(value, text):
    assert java_double(value) == text


@pytest.mark.parametrize("value,text", [
    ("plain", '"plain"'), ("é ü", '"é ü"'), ('q"b\\', '"q\\"b\\\\"'), ("\n\t\r\b\f", '"\\n\\t\\r\\b\\f"'),
    ("\x00\x1f\x7f", '"\\u0000\\u001F\x7f"'), ("/", '"/"'),
])
def test_jackson_string(value, text):
    assert jackson_string(value) == text


def test_record_json_uses_jackson_escapes():
    record = codec.message_class("TopicRecord")(name="a\x1fb")
    assert codec.to_json("TopicRecord", 0, record).startswith('{"name":"a\\u001Fb"')
