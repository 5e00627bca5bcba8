"""Check the fuzz harness itself: the oracle fails on a foreign exception and on a hang; mutations stay bytes."""
from __future__ import annotations

import pytest
from fuzzkit import Hang, check, fuzz_settings, mutated, single_mutations, time_limit
from hypothesis import given


def test_an_allowed_error_passes_and_a_foreign_one_fails_with_the_input():
    assert check(lambda d: int(d), b"x", (ValueError,)) is None
    with pytest.raises(AssertionError, match="IndexError.*input \\(2 bytes\\): 6162"):
        check(lambda d: d[5], b"ab", (ValueError,))


def test_a_hang_is_a_crash_even_inside_a_nested_limit():
    with pytest.raises(Hang):
        with time_limit(0.2):
            with time_limit(5):
                pass
            while True:
                pass


def test_single_mutations_cover_every_prefix_and_position_of_a_small_seed():
    mutants = list(single_mutations(b"\x01\x02\x03"))
    assert [b""] + [b"\x01", b"\x01\x02"] == mutants[:3]
    assert b"\x00\x02\x03" in mutants and b"\x01\x02\xff" in mutants


@fuzz_settings(50)
@given(mutated([b"seed-one", b"\x00" * 20]))
def test_mutations_are_bytes(data):
    assert isinstance(data, bytes)
