"""Java .properties reading and writing match java.util.Properties load/store, case by case."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kraftsman.storage.properties import (
    MALFORMED_UNICODE,
    PropertiesError,
    dumps,
    java_date,
    load,
    loads,
    parse_java_int,
)

# Each expectation was derived by stepping through Properties.LineReader.readLine and load0.
LOADS_CASES = [
    ("a=b", {"a": "b"}),
    ("  a  =  b  ", {"a": "b  "}),
    ("a:b", {"a": "b"}),
    ("a b", {"a": "b"}),
    ("a\t\tb", {"a": "b"}),
    ("a\fb", {"a": "b"}),
    ("a = = b", {"a": "= b"}),
    ("a  :  :b", {"a": ":b"}),
    ("a\\=b=c", {"a=b": "c"}),
    ("a\\:b:c", {"a:b": "c"}),
    ("a\\ b c", {"a b": "c"}),
    ("a\\\\=b", {"a\\": "b"}),
    ("#c\n!d\na=1", {"a": "1"}),
    ("  # indented comment\n\t! another\nx=y", {"x": "y"}),
    ("a=b # not a comment", {"a": "b # not a comment"}),
    ("a=b\\\n   c", {"a": "bc"}),
    ("a=b\\\n\t \fc\\\n d", {"a": "bcd"}),
    ("a=b\\\\\nc", {"a": "b\\", "c": ""}),
    ("a=b\\\\\\\nc", {"a": "b\\c"}),
    ("a=b\\\r\n  c", {"a": "bc"}),
    ("a=b\\\r  c", {"a": "bc"}),
    ("a=b\\", {"a": "b"}),
    ("a=b\\\\", {"a": "b\\"}),
    ("a=b\\\n", {"a": "b"}),
    ("a=b\\\n   ", {"a": "b"}),
    ("\\", {"": ""}),
    ("a=b\n\\", {"a": "b", "": ""}),
    ("\\\n#x=y", {}),
    ("\\\n\nz", {"z": ""}),
    ("a\\\n\nb", {"a": "", "b": ""}),
    ("#comment\\\nx=y", {"x": "y"}),
    ("key", {"key": ""}),
    ("key   ", {"key": ""}),
    ("=v", {"": "v"}),
    (":v", {"": "v"}),
    (" =v", {"": "v"}),
    ("a=\\u0041\\t\\n\\r\\f\\q\\\\", {"a": "A\t\n\r\fq\\"}),
    ("a=\\uD83D\\uDE00", {"a": "\U0001F600"}),
    ("a=\\ud83d", {"a": "\ud83d"}),
    ("\\u00e9=\\u00E9", {"\u00e9": "\u00e9"}),
    ("a=1\na=2", {"a": "2"}),
    ("a=1\nb=2\na=3", {"a": "3", "b": "2"}),
    ("k\r\nv=2\rw=3", {"k": "", "v": "2", "w": "3"}),
    ("\n\n  \n\t\na=b\n\n", {"a": "b"}),
    ("a=\x0bb\x0b", {"a": "\x0bb\x0b"}),
    ("a=\u2028b\x85", {"a": "\u2028b\x85"}),
    ("", {}),
    ("#only a comment", {}),
]


@pytest.mark.parametrize("text,expected", LOADS_CASES)
def test_loads_follows_java(text, expected):
    assert loads(text) == expected


def test_loads_keeps_first_insertion_order():
    assert list(loads("b=1\na=2\nc=3\nb=4")) == ["b", "a", "c"]


@pytest.mark.parametrize("text", ["a=\\u12", "a=\\u12G4", "\\uzzzz=1", "a=\\u", "a=x\\u00e"])
def test_malformed_unicode_escape(text):
    with pytest.raises(PropertiesError) as info:
        loads(text)
    assert str(info.value) == "Malformed \\uxxxx encoding."
    assert str(info.value) == MALFORMED_UNICODE


def test_load_reads_iso_8859_1_by_default(tmp_path):
    path = tmp_path / "p.properties"
    path.write_bytes("k=\u00e9\n".encode("utf-8"))
    assert load(path) == {"k": "\u00c3\u00a9"}
    assert load(path, encoding="utf-8") == {"k": "\u00e9"}


def test_load_reports_undecodable_bytes(tmp_path):
    path = tmp_path / "p.properties"
    path.write_bytes(b"k=\xff\n")
    with pytest.raises(PropertiesError, match="not valid utf-8 at byte 2"):
        load(path, encoding="utf-8")


DUMPS_CASES = [
    ({"a": "b"}, "a=b\n"),
    ({" a b": " x  y "}, "\\ a\\ b=\\ x  y \n"),
    ({"#k": "!v"}, "\\#k=\\!v\n"),
    ({"k=:": "a=b:c#!"}, "k\\=\\:=a\\=b\\:c\\#\\!\n"),
    ({"t": "\t\n\r\f\\"}, "t=\\t\\n\\r\\f\\\\\n"),
    ({"\u00e9": "\u65e5\u672c\x01\x7f"}, "\u00e9=\u65e5\u672c\x01\x7f\n"),
    ({"": ""}, "=\n"),
    ({"a": "1", "b": "2"}, "a=1\nb=2\n"),
]


@pytest.mark.parametrize("mapping,expected", DUMPS_CASES)
def test_dumps_escapes_like_store_writer(mapping, expected):
    assert dumps(mapping) == expected


def test_dumps_escape_unicode_like_store_output_stream():
    text = dumps({"\u00e9": "\u65e5\U0001F600\x7f\x1f"}, escape_unicode=True)
    assert text == "\\u00E9=\\u65E5\\uD83D\\uDE00\\u007F\\u001F\n"


def test_dumps_header_is_kafkas():
    text = dumps({"version": "1"}, comment="", date_line="Thu Oct 24 19:33:01 UTC 2024")
    assert text == "#\n#Thu Oct 24 19:33:01 UTC 2024\nversion=1\n"


@pytest.mark.parametrize("comment,expected", [
    ("", "#\n"),
    ("hello", "#hello\n"),
    ("a\nb", "#a\n#b\n"),
    ("a\r\nb", "#a\n#b\n"),
    ("a\rb", "#a\n#b\n"),
    ("a\n#b\n!c", "#a\n#b\n!c\n"),
    ("a\n", "#a\n#\n"),
    ("\u00ff\u0100\U0001F600", "#\u00ff\\u0100\\uD83D\\uDE00\n"),
])
def test_comment_block_like_write_comments(comment, expected):
    assert dumps({}, comment=comment) == expected


def test_dumps_rejects_non_strings_and_broken_date_line():
    with pytest.raises(PropertiesError, match="must be strings"):
        dumps({"a": 1})
    with pytest.raises(PropertiesError, match="line break"):
        dumps({}, date_line="Thu\nOct")


@pytest.mark.parametrize("moment,expected", [
    (datetime(2024, 10, 24, 19, 33, 1, tzinfo=timezone.utc), "Thu Oct 24 19:33:01 UTC 2024"),
    (datetime(2025, 2, 7, 6, 3, 45), "Fri Feb 07 06:03:45 UTC 2025"),
    (datetime(2025, 12, 30, 12, 20, 15, tzinfo=timezone(timedelta(hours=-8))), "Tue Dec 30 20:20:15 UTC 2025"),
])
def test_java_date(moment, expected):
    assert java_date(moment) == expected


def test_java_date_defaults_to_now():
    text = java_date()
    assert text.endswith(f" UTC {datetime.now(timezone.utc).year}") and len(text) == 28


@pytest.mark.parametrize("text,bits,expected", [
    ("0", 32, 0), ("+7", 32, 7), ("-7", 32, -7), ("2147483647", 32, 2147483647),
    ("-2147483648", 32, -2147483648), ("2147483648", 32, None), ("2147483648", 64, 2147483648),
    ("", 32, None), ("-", 32, None), (" 1", 32, None), ("1 ", 32, None), ("1_0", 32, None),
    ("0x1", 32, None), ("1.0", 32, None), ("\u0661\u0662", 32, 12),
])
def test_parse_java_int(text, bits, expected):
    assert parse_java_int(text, bits) == expected


# ---------------------------------------------------------------- properties of the functions

SPECIAL = " \t\f\r\n\\=:#!u0aF\x0b\u00e9\u65e5\U0001F600"
texts = st.text(alphabet=st.sampled_from(SPECIAL) | st.characters(), max_size=30)


@settings(max_examples=400)
@given(st.dictionaries(texts, texts, max_size=6), st.booleans(), st.none() | texts,
       st.none() | texts.filter(lambda t: "\r" not in t and "\n" not in t))
def test_dumps_then_loads_round_trips(mapping, escape_unicode, comment, date_line):
    text = dumps(mapping, comment, date_line, escape_unicode=escape_unicode)
    assert loads(text) == mapping
    assert list(loads(text)) == list(mapping)


@settings(max_examples=400)
@given(st.text(alphabet=st.sampled_from(SPECIAL) | st.characters(), max_size=60))
def test_loads_raises_only_properties_error(text):
    try:
        result = loads(text)
    except PropertiesError as e:
        assert str(e) == MALFORMED_UNICODE
    else:
        assert all(isinstance(k, str) and isinstance(v, str) for k, v in result.items())
