"""The columns of the tables the pipeline writes: names and Spark SQL types, in row order.

Rules:
- Pure data: the decoder builds rows as tuples in exactly this order; the Spark job turns these lists
  into DDL schemas. No pyspark here.
- Kafka's millisecond timestamps are TIMESTAMP columns (UTC; -1, Kafka's "no timestamp", is null);
  the decoder still yields milliseconds, converted where rows become Arrow batches.
- `batches` and `records` carry the fields of dump-log's `--output jsonl` batch and record objects
  under the same names (cli/schemas/dump-log-jsonl.schema.json), plus where they came from
  (source, file_type, cluster_id, node_id) and, for records, typed copies of the common fields.
"""
from __future__ import annotations

ORIGIN = [("source", "string"), ("file_type", "string"), ("cluster_id", "string"), ("node_id", "int")]

BATCHES = ORIGIN + [
    ("position", "bigint"), ("base_offset", "bigint"), ("last_offset", "bigint"), ("count", "int"),
    ("base_sequence", "int"), ("last_sequence", "int"), ("producer_id", "bigint"), ("producer_epoch", "int"),
    ("partition_leader_epoch", "int"), ("is_transactional", "boolean"), ("is_control", "boolean"),
    ("delete_horizon_ms", "bigint"), ("timestamp_type", "string"), ("base_timestamp", "timestamp"),
    ("max_timestamp", "timestamp"), ("size", "int"), ("magic", "int"), ("compression", "string"),
    ("crc", "bigint"), ("attributes", "int"), ("is_valid", "boolean"),
]

# typed copies of the common fields of `data` (Kafka's JSON names in comments)
TYPED = [
    ("broker_id", "int"),              # brokerId, FenceBrokerRecord/UnfenceBrokerRecord id
    ("broker_epoch", "bigint"),        # brokerEpoch, FenceBrokerRecord/UnfenceBrokerRecord epoch
    ("topic_id", "string"),            # topicId
    ("topic_name", "string"),          # TopicRecord name
    ("partition_id", "int"),           # partitionId
    ("leader", "int"),                 # leader
    ("leader_epoch", "int"),           # leaderEpoch
    ("isr", "array<int>"),             # isr
    ("replicas", "array<int>"),        # replicas
    ("adding_replicas", "array<int>"),  # addingReplicas
    ("removing_replicas", "array<int>"),  # removingReplicas
    ("config_resource_type", "int"),   # ConfigRecord resourceType
    ("config_resource_name", "string"),  # ConfigRecord resourceName
    ("config_name", "string"),         # ConfigRecord name
]

RECORDS = ORIGIN + [
    ("batch_position", "bigint"), ("batch_timestamp", "timestamp"), ("offset", "bigint"), ("timestamp", "timestamp"),
    ("key_size", "int"), ("value_size", "int"), ("sequence", "int"),
    ("headers", "array<struct<key:string,value:string>>"), ("key", "string"), ("control", "boolean"),
    ("control_type", "int"), ("type", "string"), ("api_key", "int"), ("version", "int"), ("data", "string"),
    ("value", "string"), ("error", "string"),
] + TYPED

# what could not be read: the file (source), the byte position of the batch or region (null for a whole
# file), the record's offset when one is known, and why
ERRORS = ORIGIN + [("position", "bigint"), ("offset", "bigint"), ("reason", "string")]

BASE_TABLES = {"records": RECORDS, "batches": BATCHES, "errors": ERRORS}
PARTITION_COLUMN = "cluster_id"  # every table is written partitioned by it (OUT/<table>/cluster_id=<id>/)
# the cluster id of files with no meta.properties beside them or one level up: a value, not null, because
# readers infer a partition column's type from its folder names and a table whose only folder is Hive's
# null (__HIVE_DEFAULT_PARTITION__) cannot be opened by pyarrow or pandas. Kafka's cluster ids are 22
# base64 characters, so no real one is spelt so.
UNKNOWN_CLUSTER = "unknown"


def names(columns) -> list[str]:
    """Return the column names of a table."""
    return [name for name, _ in columns]


def ddl(columns) -> str:
    """Return a table's Spark DDL schema ('source string, offset bigint, ...')."""
    return ", ".join(f"`{name}` {kind}" for name, kind in columns)


def union_columns(tables=tuple(BASE_TABLES)) -> list[tuple[str, str]]:
    """Return the columns of one output holding rows of several tables: `table`, then their columns once."""
    out, seen = [("table", "string")], {"table": "string"}
    for table in tables:
        for name, kind in BASE_TABLES[table]:
            if name in seen:
                if seen[name] != kind:
                    raise ValueError(f"column {name} is {seen[name]} in one table and {kind} in another")
                continue
            seen[name] = kind
            out.append((name, kind))
    return out


def union_converters(tables=tuple(BASE_TABLES)) -> dict:
    """Return table name -> fn(row) -> the row laid out as union_columns(tables) (missing columns null)."""
    union = names(union_columns(tables))
    out = {}
    for table in tables:
        where = [union.index(n) for n in names(BASE_TABLES[table])]
        if where == list(range(1, len(where) + 1)):  # a prefix of the union: append nulls (the hot path)
            head, tail = (table,), (None,) * (len(union) - len(where) - 1)
            out[table] = lambda row, head=head, tail=tail: head + row + tail
        else:
            out[table] = _scatter(table, where, len(union))
    return out


def _scatter(table: str, where: list[int], width: int):
    def convert(row: tuple) -> tuple:
        full = [None] * width
        full[0] = table
        for i, value in zip(where, row):
            full[i] = value
        return tuple(full)

    return convert
