"""Kafka's Uuid rules: text form, errors, reserved values, random generation."""
from __future__ import annotations

import pytest

from kraftsman.storage.protocol.uuids import (
    METADATA_TOPIC_ID,
    ZERO_UUID,
    Uuid,
    UuidError,
    is_reserved_directory_id,
    random_directory_id,
    random_uuid,
)


def test_reserved_values_text():
    assert str(ZERO_UUID) == "AAAAAAAAAAAAAAAAAAAAAA"
    assert str(METADATA_TOPIC_ID) == "AAAAAAAAAAAAAAAAAAAAAQ"
    assert str(Uuid.from_longs(0, 2)) == "AAAAAAAAAAAAAAAAAAAAAg"


def test_round_trip_and_padding_accepted():
    u = Uuid.from_string("MkU3OEVBNTcwNTJENDM2Qg")
    assert str(u) == "MkU3OEVBNTcwNTJENDM2Qg"
    assert Uuid.from_string("MkU3OEVBNTcwNTJENDM2Qg==") == u


def test_errors_match_kafka():
    with pytest.raises(UuidError, match=r"Input string with prefix `AAAAAAAAAAAAAAAAAAAAAAAA` is too long"):
        Uuid.from_string("A" * 25)
    with pytest.raises(UuidError, match=r"decoded as 12 bytes, which is not equal to the expected 16 bytes"):
        Uuid.from_string("AAAAAAAAAAAAAAAA")


def test_signed_ordering_and_halves():
    u = Uuid.from_longs(-1, 5)
    assert (u.msb, u.lsb) == (-1, 5)
    assert sorted([Uuid.from_longs(1, 0), u], key=Uuid.sort_key)[0] == u


def test_random_uuids_follow_kafka_rules():
    seen = {random_uuid() for _ in range(2000)}
    assert len(seen) == 2000
    for u in seen:
        text = str(u)
        assert len(text) == 22 and not text.startswith("-")
        assert u not in (ZERO_UUID, METADATA_TOPIC_ID)
        assert u[6] >> 4 == 4 and u[8] >> 6 == 2  # version 4, variant 2 like java.util.UUID


def test_directory_ids_avoid_reserved_range():
    assert is_reserved_directory_id(Uuid.from_longs(0, 99))
    assert not is_reserved_directory_id(Uuid.from_longs(0, 100))
    assert not is_reserved_directory_id(random_directory_id())
