"""CRC-32C (Castagnoli) of record batches, through the C-accelerated `crc32c` package.

Rules:
- Importing the `crc32c` package costs ~20 ms (it reads its own distribution metadata), more than a
  short command like `kafka-storage format` spends on everything else: the first few KiB of a
  process are checksummed by a table-driven pure-Python CRC, then the C library takes over.
"""
from __future__ import annotations

SMALL_BUDGET = 16 << 10   # bytes checksummed in pure Python before switching to the C library
_POLY = 0x82F63B78        # CRC-32C, reflected
_fast = None
_budget = SMALL_BUDGET


def _make_table() -> tuple[int, ...]:
    table = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ _POLY if c & 1 else c >> 1
        table.append(c)
    return tuple(table)


_TABLE = _make_table()


def _crc32c_py(data, value: int = 0) -> int:
    """Return the CRC-32C of `data` continuing from `value`, in pure Python (small inputs only)."""
    crc = value ^ 0xFFFFFFFF
    table = _TABLE
    for b in bytes(data):
        crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def crc32c(data, value: int = 0) -> int:
    """Return the CRC-32C of `data`, continuing from `value`."""
    global _fast, _budget
    if _fast is None:
        size = len(data) * getattr(data, "itemsize", 1)
        if size <= _budget:
            _budget -= size
            return _crc32c_py(data, value)
        from crc32c import crc32c as _fast
    return _fast(data, value)
