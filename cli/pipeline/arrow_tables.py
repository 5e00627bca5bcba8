"""The decoder's rows as Arrow record batches, and a task group's tables written as Parquet parts.

`decode_arrow` is the per-file function the Spark workers run: the pure decoder (`decode`) with its
rows gathered into Arrow batches of the tables' schemas. `write_parts` runs it over a group of tasks
and writes each table as one Parquet part file below a staging folder, which is how the local job
writes (the Spark job commits the staged parts; see spark_job.write_base_tables).

Rules:
- pyarrow (part of the Spark extra) is imported inside functions only: the module imports without it.
- Columns keep the order and types of `tables`; the first four (source, file_type, cluster_id,
  node_id) are the same for every row of a file, so they are built once per batch, not per row.
- Tables are partitioned by cluster id as Spark's writers lay them out (`cluster_id=<id>/`, the
  column itself left out of the files, `__HIVE_DEFAULT_PARTITION__` for none); a part file is opened
  for a partition when its first rows come, so a table with no rows has no part file (as with Spark);
  the job then gives it one empty part with its columns (write_empty_part), so that readers which take
  the columns from the files (pandas, pyarrow, DuckDB) see them.
- Timestamps arrive as Kafka's milliseconds and leave as Arrow timestamp[us, UTC] (-1 is null).
"""
from __future__ import annotations

import os
import re
from typing import Iterator

from .decode import ALL, decode_file
from .tables import BASE_TABLES, ORIGIN, PARTITION_COLUMN, UNKNOWN_CLUSTER

CHUNK_ROWS = 4096
ROW_GROUP_ROWS = 131072
_ARROW_TYPES = {"string": "string", "bigint": "int64", "int": "int32", "boolean": "bool_"}


def arrow_schema(columns):
    """Return the Arrow schema Spark expects for a table's columns (tables.py types)."""
    import pyarrow as pa

    def kind(t: str):
        if t in _ARROW_TYPES:
            return getattr(pa, _ARROW_TYPES[t])()
        if t == "timestamp":
            return pa.timestamp("us", tz="UTC")
        if t == "array<int>":
            return pa.list_(pa.int32())
        if t == "array<struct<key:string,value:string>>":
            return pa.list_(pa.struct([("key", pa.string()), ("value", pa.string())]))
        raise ValueError(f"no Arrow type for {t}")

    return pa.schema([(name, kind(t)) for name, t in columns])


def batch_of(rows: list[tuple], schema, constant: int = 0):
    """Return one Arrow record batch of `rows` (tuples in schema order); the first `constant`
    columns hold one value for all rows."""
    import pyarrow as pa

    n = len(rows)
    first = rows[0]
    arrays = [pa.repeat(pa.scalar(first[i], schema.field(i).type), n) for i in range(constant)]
    columns = list(zip(*rows))
    arrays += [_array(columns[i], schema.field(i).type) for i in range(constant, len(schema))]
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def _array(values, kind):
    """Return an Arrow array of `values`; millisecond integers for a timestamp column (negative: null)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if not pa.types.is_timestamp(kind):
        return pa.array(values, kind)
    millis = pa.array(values, pa.int64())
    millis = pc.if_else(pc.less(millis, 0), pa.scalar(None, pa.int64()), millis)
    return millis.cast(pa.timestamp("ms", tz="UTC")).cast(kind)


def to_arrow(rows, columns, size: int = CHUNK_ROWS) -> Iterator:
    """Yield Arrow record batches of `size` rows (tuples in column order) of one table."""
    schema = arrow_schema(columns)
    buf: list = []
    for row in rows:
        buf.append(row)
        if len(buf) == size:
            yield batch_of(buf, schema)
            buf = []
    if buf:
        yield batch_of(buf, schema)


def decode_arrow(task, tables: frozenset = ALL, size: int = CHUNK_ROWS) -> Iterator[tuple[str, object]]:
    """Yield (table, Arrow record batch) for one task (inputs.Task): the decoder's rows, batched."""
    schemas = {t: arrow_schema(BASE_TABLES[t]) for t in tables}
    constant = {t: len(ORIGIN) if BASE_TABLES[t][:len(ORIGIN)] == ORIGIN else 0 for t in tables}
    buffers: dict[str, list] = {t: [] for t in tables}
    for table, row in decode_file(task.path, task.source, start=task.start, end=task.end,
                                  cluster_id=task.cluster_id, node_id=task.node_id, tables=tables):
        buf = buffers[table]
        buf.append(row)
        if len(buf) == size:
            yield table, batch_of(buf, schemas[table], constant[table])
            buf.clear()
    for table, buf in buffers.items():
        if buf:
            yield table, batch_of(buf, schemas[table], constant[table])


def write_parts(tasks, folder: str, name: str) -> dict[str, int]:
    """Decode `tasks` and write each base table's rows as `folder`/<table>/cluster_id=<id>/`name`
    (one Parquet file per table and cluster); return the rows written per table."""
    writers = _Writers(folder, name)
    try:
        for task in tasks:
            for table, batch in decode_arrow(task):
                writers.add(table, batch)
    finally:
        counts = writers.close()
    return counts


_UNSAFE = re.compile(r'[\x00-\x1f"#%\'*/:=?\\\x7f{\[\]^]')
DEFAULT_PARTITION = "__HIVE_DEFAULT_PARTITION__"


def partition_folder(value: str | None) -> str:
    """Return the folder of a cluster id's partition, escaped as Spark escapes partition values."""
    if not value:
        return f"{PARTITION_COLUMN}={DEFAULT_PARTITION}"
    return f"{PARTITION_COLUMN}=" + _UNSAFE.sub(lambda m: f"%{ord(m.group()):02X}", value)


def write_empty_part(table_folder: str, schema) -> str:
    """Write a Parquet part with no rows and `schema` (less the partition column) below `table_folder`, in
    the partition of files with no cluster id (every leaf stays one folder deep, as Spark reads them);
    return its path."""
    import pyarrow.parquet as pq

    folder = os.path.join(table_folder, partition_folder(UNKNOWN_CLUSTER))
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "part-00000-empty.snappy.parquet")
    index = schema.get_field_index(PARTITION_COLUMN)
    pq.write_table(schema.empty_table() if index < 0 else schema.remove(index).empty_table(), path,
                   compression="snappy")
    return path


class _Writers:
    """One Parquet writer per (table, cluster id), fed record batches, writing row groups of ROW_GROUP_ROWS."""

    def __init__(self, folder: str, name: str):
        import pyarrow.parquet as pq

        self.pq, self.folder, self.name = pq, folder, name
        self.pending: dict[tuple, list] = {}
        self.writers: dict[tuple, object] = {}
        self.counts = {t: 0 for t in BASE_TABLES}

    def add(self, table: str, batch) -> None:
        """Queue a batch (one cluster id throughout); write a row group once enough rows are queued."""
        column = batch.schema.get_field_index(PARTITION_COLUMN)
        key = (table, batch.column(column)[0].as_py())
        if key not in self.writers:
            self._open(key, batch.schema.remove(column))
        self.pending[key].append(batch.drop_columns([PARTITION_COLUMN]))
        self.counts[table] += batch.num_rows
        if sum(b.num_rows for b in self.pending[key]) >= ROW_GROUP_ROWS:
            self._flush(key)

    def _open(self, key: tuple, schema) -> None:
        table, cluster_id = key
        path = os.path.join(self.folder, table, partition_folder(cluster_id), self.name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        self.writers[key] = self.pq.ParquetWriter(path, schema, compression="snappy")
        self.pending[key] = []

    def _flush(self, key: tuple) -> None:
        import pyarrow as pa

        if self.pending[key]:
            self.writers[key].write_table(pa.Table.from_batches(self.pending[key]), row_group_size=ROW_GROUP_ROWS)
            self.pending[key] = []

    def close(self) -> dict[str, int]:
        """Write what is queued, close every file and return the rows per table."""
        for key, writer in self.writers.items():
            self._flush(key)
            writer.close()
        return self.counts
