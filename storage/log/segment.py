"""Log segment files (`%020d.log`): stream record batches with their file positions.

Rules:
- Only this package opens log files; readers stream batch by batch with bounded memory.
- Strict reading raises CorruptRecordError (path, position) on a bad length, a truncated batch,
  an unsupported magic or a CRC mismatch. Lenient reading stops at the first unreadable batch and
  reports how many bytes were left, as Kafka's FileLogInputStream does.
"""
from __future__ import annotations

import struct
from pathlib import Path

from ..records.batch import LOG_OVERHEAD, RECORD_BATCH_OVERHEAD, CorruptRecordError, RecordBatch

_OFFSET_SIZE = struct.Struct(">qi")
HEADER_SIZE_UP_TO_MAGIC = 17
MIN_BATCH_LENGTH = RECORD_BATCH_OVERHEAD - LOG_OVERHEAD  # 49
RECORD_OVERHEAD_V0 = 14
DEFAULT_MAX_BATCH_SIZE = 2 ** 31 - 1
_READ_BUFFER = 1 << 20


def segment_name(base_offset: int, suffix: str = ".log") -> str:
    """Return Kafka's file name for a segment starting at `base_offset`."""
    return f"{base_offset:020d}{suffix}"


def parse_segment_offset(path) -> int:
    """Return the base offset encoded in a segment file name."""
    name = Path(path).name
    return int(name.split(".", 1)[0])


class BatchReader:
    """Iterate the batches of one file; after iteration `valid_bytes` and `trailing_bytes` are known."""

    def __init__(self, path, *, strict: bool = True, verify_crc: bool | None = None,
                 max_batch_size: int = DEFAULT_MAX_BATCH_SIZE, start: int = 0):
        self.path = Path(path)
        self.strict = strict
        self.verify_crc = strict if verify_crc is None else verify_crc
        self.max_batch_size = max_batch_size
        self.start = start
        self.valid_bytes = 0
        self.file_size = 0
        self.stop_reason: str | None = None

    @property
    def trailing_bytes(self) -> int:
        """Return how many bytes after the last readable batch were not read as batches."""
        return self.file_size - self.valid_bytes

    def __iter__(self):
        with open(self.path, "rb", buffering=_READ_BUFFER) as f:
            f.seek(0, 2)
            self.file_size = f.tell()
            f.seek(self.start)
            self.valid_bytes = pos = self.start
            while True:
                batch = self._next(f, pos)
                if batch is None:
                    return
                pos += batch.size_in_bytes
                self.valid_bytes = pos
                yield batch

    def _fail(self, message: str, pos: int):
        self.stop_reason = message
        if self.strict:
            raise CorruptRecordError(message, pos, str(self.path))
        return None

    def _next(self, f, pos: int):
        remaining = self.file_size - pos
        if remaining <= 0:
            return None
        if remaining < HEADER_SIZE_UP_TO_MAGIC:
            return self._fail(f"truncated batch header: {remaining} bytes left", pos)
        head = f.read(LOG_OVERHEAD)
        _, length = _OFFSET_SIZE.unpack(head)
        if length < RECORD_OVERHEAD_V0 or (length < MIN_BATCH_LENGTH and self.strict):
            return self._fail(f"Found record size {length} smaller than minimum record overhead "
                              f"({RECORD_OVERHEAD_V0 if length < RECORD_OVERHEAD_V0 else MIN_BATCH_LENGTH})", pos)
        if length > self.max_batch_size:
            return self._fail(f"Record size {length} exceeds the largest allowable message size "
                              f"({self.max_batch_size})", pos)
        if pos + LOG_OVERHEAD + length > self.file_size:
            return self._fail(f"truncated batch: it claims {length + LOG_OVERHEAD} bytes but only "
                              f"{remaining} remain", pos)
        buffer = head + f.read(length)
        return self._check(RecordBatch(buffer, pos) if length >= MIN_BATCH_LENGTH else None, buffer, pos)

    def _check(self, batch, buffer: bytes, pos: int):
        magic = buffer[16]
        if batch is None or magic != 2:
            return self._fail(f"unsupported record batch magic {magic} (only v2 batches are read)", pos)
        if self.verify_crc and not batch.is_valid():
            return self._fail(f"Record is corrupt (stored crc = {batch.crc}, computed crc = "
                              f"{batch.compute_crc()})", pos)
        return batch


def read_batches(path, **options):
    """Yield every batch of the file at `path` (strict by default)."""
    return iter(BatchReader(path, **options))
