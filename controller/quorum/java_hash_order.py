"""Java's HashMap iteration order, where Kafka's responses or records follow it.

Rules:
- A key's hash is Java's hashCode: String.hashCode over UTF-16 code units; a map (ClientQuotaEntity) hashes
  as the sum of key ^ value hashes, null as 0. HashMap spreads it (h ^ h >>> 16); bucket = hash & (capacity - 1).
- Capacity starts at tableSizeFor(initial capacity) (16 by default) and doubles whenever the size passes
  0.75 of it; it never shrinks. Entries of one bucket keep insertion order (a re-put keeps its place).
- Kafka's maps here never hold 8 entries in one bucket, so treeified bins are not modelled.
- Integer hashes are the value; TopicPartition's is 31 * (31 + partition) + the topic's String hash (int overflow).
- java_sorted sorts strings as Java's String.compareTo does (by UTF-16 code unit).
- timeline_order is Kafka's own TimelineHashMap/TimelineHashSet order (timeline.BaseHashTable, the controller's
  BrokersToIsrs and BrokersToElrs): slot = the top bits of hashCode times -7046029254386353131 (64-bit), a table
  of 2 slots doubling before an insert that would take it past 0.75, each slot's chain in insertion order. Kafka
  Uuid's hashCode xors its two longs, then the two ints of that.
- scala_hash_order is Scala 2.13's mutable.HashMap iteration order (Kafka's Scala code builds maps so, e.g. a
  broker's DescribeConfigs answer for a topic: ConfigHelper.allConfigs): the same spread hash, a table of 16
  slots doubling once the size reaches 0.75 of it, and each slot's entries kept in ascending (signed) hash order.
"""
from __future__ import annotations

_MASK = 0xFFFFFFFF


def string_hash(text: str | None) -> int:
    """Return Java's String.hashCode of `text` as an unsigned 32-bit int (0 for null)."""
    if text is None:
        return 0
    h = 0
    data = text.encode("utf-16-be", "surrogatepass")
    for i in range(0, len(data), 2):
        h = (31 * h + (data[i] << 8 | data[i + 1])) & _MASK
    return h


def entity_hash(entity) -> int:
    """Return the hashCode of a Map<String, String> given as (key, value) pairs (AbstractMap.hashCode)."""
    return sum(string_hash(k) ^ string_hash(v) for k, v in entity) & _MASK


def int_hash(value: int) -> int:
    """Return Java's Integer.hashCode (the value) as an unsigned 32-bit int."""
    return value & _MASK


def topic_partition_hash(tp: tuple[str, int]) -> int:
    """Return the hashCode of Kafka's TopicPartition (topic, partition): 31 * (31 + partition) + topic's hash."""
    topic, partition = tp
    return (31 * (31 + partition) + string_hash(topic)) & _MASK


def uuid_hash(uuid: bytes) -> int:
    """Return Kafka's Uuid.hashCode of a 16-byte id as a signed 32-bit int."""
    hilo = int.from_bytes(uuid[:8], "big") ^ int.from_bytes(uuid[8:16], "big")
    h = ((hilo >> 32) ^ hilo) & _MASK
    return h - (1 << 32) if h >= 1 << 31 else h


def timeline_order(keys, hash_of=uuid_hash) -> list:
    """Return distinct `keys` in the order a Kafka TimelineHashMap iterates them after inserting them in this order
    (none removed)."""
    keys = list(keys)
    capacity = 2
    for size in range(len(keys)):
        if (size + 1) * 0.75 > capacity:
            capacity <<= 1
    shift = 64 - (capacity.bit_length() - 1)
    return sorted(keys, key=lambda k: ((hash_of(k) * -7046029254386353131) & 0xFFFFFFFFFFFFFFFF) >> shift)


def _table_size_for(capacity: int) -> int:
    size = 1
    while size < capacity:
        size <<= 1
    return size


class JavaHashMap:
    """A dict that iterates in the order a java.util.HashMap with the same history would."""

    __slots__ = ("_entries", "_capacity", "_hash")

    def __init__(self, initial_capacity: int | None = None, hash_of=string_hash):
        self._entries: dict = {}
        self._capacity = 16 if initial_capacity is None else _table_size_for(initial_capacity)
        self._hash = hash_of

    def __contains__(self, key) -> bool:
        return key in self._entries

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key, default=None):
        """Return the value of `key`, or `default`."""
        return self._entries.get(key, default)

    def put(self, key, value) -> None:
        """Set `key` (a new key goes last in its bucket), growing the table as HashMap.putVal does."""
        self._entries[key] = value
        while len(self._entries) > int(self._capacity * 0.75):
            self._capacity <<= 1

    def pop(self, key, default=None):
        """Remove `key` and return its value, or `default`."""
        return self._entries.pop(key, default)

    def _bucket(self, key) -> int:
        h = self._hash(key)
        return (h ^ (h >> 16)) & (self._capacity - 1)

    def keys(self) -> list:
        """Return the keys in Java's iteration order."""
        return sorted(self._entries, key=self._bucket)

    def items(self) -> list:
        """Return (key, value) pairs in Java's iteration order."""
        return [(k, self._entries[k]) for k in self.keys()]


def hash_set_order(items, hash_of=string_hash) -> list:
    """Return distinct `items` in the order a java.util.HashSet iterates them after adding them in this order."""
    table = JavaHashMap(hash_of=hash_of)
    for item in items:
        if item not in table:
            table.put(item, True)
    return table.keys()


def java_order(text: str) -> bytes:
    """Return the sort key of `text` in Java's natural String order (String.compareTo: UTF-16 code units)."""
    return text.encode("utf-16-be", "surrogatepass")


def java_sorted(texts) -> list:
    """Return `texts` sorted as Java's natural String order."""
    return sorted(texts, key=java_order)


def _signed(h: int) -> int:
    return h - (1 << 32) if h >= 1 << 31 else h


def scala_hash_order(keys, hash_of=string_hash) -> list:
    """Return `keys` (distinct) in the order a Scala 2.13 mutable.HashMap built from them iterates."""
    keys = list(keys)
    capacity = 16
    while len(keys) >= int(capacity * 0.75):      # put0 grows before an insert that reaches the threshold
        capacity <<= 1
    spread = {k: _signed((h := hash_of(k)) ^ (h >> 16)) for k in keys}
    return sorted(keys, key=lambda k: (spread[k] & (capacity - 1), spread[k]))
