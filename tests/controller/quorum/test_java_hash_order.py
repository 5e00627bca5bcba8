"""Kafka's own hash-table order (timeline.BaseHashTable) and Uuid.hashCode, from their definitions worked by hand."""
from __future__ import annotations

from kraftsman.controller.quorum.java_hash_order import timeline_order, uuid_hash
from kraftsman.storage.protocol.uuids import Uuid


def test_uuid_hash_xors_the_longs_then_the_ints():
    assert uuid_hash(bytes(Uuid.from_longs(1, 0))) == 1
    assert uuid_hash(bytes(Uuid.from_longs(1 << 32, 1 << 32))) == 0          # the longs cancel
    assert uuid_hash(bytes(Uuid.from_longs(1 << 32, 0))) == 1                  # the high int folds down
    assert uuid_hash(bytes(Uuid.from_longs(0x80000000, 0))) == -(1 << 31)     # a signed int


def test_timeline_order_takes_the_top_bits_of_the_fibonacci_product():
    # 1 * -7046029254386353131 mod 2**64 = 11400714819323198485: top bit 1, top two bits 0b10
    # 2 * ... = 4354685564936845354: top bit 0, top two bits 0b00;  3 * ... = 15755400384260043839: 0b11
    same = int.__index__
    assert timeline_order([1, 2], hash_of=same) == [2, 1]              # two slots
    assert timeline_order([1, 2, 3], hash_of=same) == [2, 1, 3]        # the third insert doubles the table to 4
    assert timeline_order([3, 1, 2], hash_of=same) == [2, 1, 3]


def test_a_slot_keeps_its_chain_in_insertion_order():
    assert timeline_order([5, 1], hash_of=lambda k: 1) == [5, 1]
    assert timeline_order([1, 5], hash_of=lambda k: 1) == [1, 5]
