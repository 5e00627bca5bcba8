"""The pipeline on Spark: the one module that imports pyspark (an optional extra).

Flow: the driver plans tasks (files or batch-aligned byte ranges, `inputs`), groups them by bytes into
about three groups per core and parallelizes the groups, so every core decodes whole files read by
the Python workers themselves (never `binaryFiles`, which packs many files into one partition). Each
worker runs the pure decoder and yields rows of one wide union schema tagged with their table; the
union is persisted, split into `records`, `batches` and `errors`, and the derived tables are Spark SQL
(`derived`) over the written `records`. URIs (hdfs://, s3a://, file://, ...) are read by Spark's
`binaryFile` source and decoded by the same function, with the identity of the meta.properties found
beside them (tables.UNKNOWN_CLUSTER without one). Every table is partitioned by cluster id. Mode
overwrite replaces the tables; append adds only files whose source is not in them yet, and rewrites the
derived tables over all records.

Rules:
- Only this module imports pyspark / py4j (import-linter contract in pyproject.toml), and only inside
  functions, so that the module itself imports without the extra (CI imports every module of the wheel).
- Quiet by default: log4j off before the JVM starts (a failure reaches the user as the command's
  one-line error, not as the JVM's stack traces), no console progress bar of Spark's own;
  the progress shown is ours (stage tasks done / total) on a terminal stderr.
"""
from __future__ import annotations

import contextlib
import functools
import json
import os
import shutil
import tempfile
import time
import uuid
from typing import TYPE_CHECKING

from .arrow_tables import arrow_schema, to_arrow, write_empty_part, write_parts
from .decode import RECORDS_ONLY, STRUCTURE
from .derived import DERIVED
from .inputs import Task, balance, is_remote, local_path
from .progress import Progress
from .tables import (
    BASE_TABLES,
    BATCHES,
    ERRORS,
    PARTITION_COLUMN,
    RECORDS,
    UNKNOWN_CLUSTER,
    ddl,
    names,
    union_columns,
)

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

_LOG4J = """rootLogger.level = off
rootLogger.appenderRef.console.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n
"""
FORMATS = {"parquet": "parquet", "jsonl": "json"}


def require() -> None:
    """Import what the Spark extra installs; raise ImportError (naming the missing module) if absent."""
    import pandas  # noqa: F401  (mapInArrow checks for it)
    import pyarrow  # noqa: F401
    import pyspark  # noqa: F401


def active_session() -> SparkSession | None:
    """Return the SparkSession already running in this process, if any (a caller's: not ours to stop)."""
    from pyspark.sql import SparkSession

    return SparkSession.getActiveSession()


def start_session(master: str, conf: dict[str, str], quiet: bool = True) -> SparkSession:
    """Start (or reuse) a SparkSession on `master`; user --conf values win over our defaults."""
    from pyspark.sql import SparkSession

    defaults = {"spark.ui.showConsoleProgress": "false", "spark.sql.sources.partitionOverwriteMode": "static",
                "spark.sql.session.timeZone": "UTC", "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",
                "spark.sql.sources.partitionColumnTypeInference.enabled": "false",
                # up to 8 clusters' files open at once per task, so that writing partitioned by cluster id
                # does not sort every row first (about twice as fast for `records` through Spark's writers)
                "spark.sql.maxConcurrentOutputFileWriters": "8"}
    if master.startswith("local"):
        defaults.update({"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": str(2 * (os.cpu_count() or 2))})
    if quiet:
        path = os.path.join(tempfile.gettempdir(), "kraftsman-pipeline-log4j2.properties")
        with open(path, "w") as f:
            f.write(_LOG4J)
        defaults["spark.driver.extraJavaOptions"] = f"-Dlog4j2.configurationFile=file:{path}"
    builder = SparkSession.builder.master(master).appName("kraftsman-pipeline")
    for key, value in {**defaults, **conf}.items():
        builder = builder.config(key, value)
    if not quiet or active_session() is not None:
        return builder.getOrCreate()
    spark = _quiet_start(builder)
    spark.sparkContext.setLogLevel("OFF")
    import logging

    logging.getLogger("SQLQueryContextLogger").setLevel(logging.CRITICAL + 1)  # pyspark's own error log lines
    return spark


def _quiet_start(builder) -> SparkSession:
    """Start the JVM with its stderr (start-up lines, JVM warnings, the Python workers' stderr) sent to
    a file instead of ours; if Spark cannot start, name the JVM's last line in the error."""
    import sys

    log = os.path.join(tempfile.gettempdir(), f"kraftsman-pipeline-{os.getpid()}-jvm.log")
    sys.stderr.flush()
    saved, fd = os.dup(2), os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.dup2(fd, 2)  # the JVM's process inherits fd 2 as it is now
        return builder.getOrCreate()
    except Exception as e:
        jvm = _last_line(log)
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        raise RuntimeError(f"{first} ({jvm})" if jvm else first) from e
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(log)  # the JVM keeps writing to the unlinked file; nothing is left behind


def _last_line(path: str) -> str:
    try:
        with open(path, errors="replace") as f:
            lines = [line.strip() for line in f if line.strip() and not line.startswith("WARNING: Using incubator")]
    except OSError:
        return ""
    return lines[-1] if lines else ""


def _task_rows(tasks, selected: frozenset, convert):
    """Yield the rows of the selected tables for every task (runs in a Python worker)."""
    from .decode import decode_file

    for task in tasks:
        for table, row in decode_file(task.path, task.source, start=task.start, end=task.end,
                                      cluster_id=task.cluster_id, node_id=task.node_id, tables=selected):
            yield convert(table, row)


def _input_tasks(batches, identities: dict):
    """Yield the tasks of the input Arrow batches: planned groups, or files Spark read (URIs), these
    with the cluster and node id of the meta.properties beside them or one level up."""
    for batch in batches:
        if "tasks" in batch.schema.names:
            for text in batch.column("tasks").to_pylist():
                yield from (Task(*t) for t in json.loads(text))
            continue
        for path, content in zip(batch.column("path").to_pylist(), batch.column("content").to_pylist()):
            folder = path.rstrip("/").rsplit("/", 1)[0]
            cluster_id, node_id = (identities.get(folder) or identities.get(folder.rsplit("/", 1)[0])
                                   or (UNKNOWN_CLUSTER, None))
            with tempfile.TemporaryDirectory(prefix="kraftsman-pipeline-") as tmp:
                local = os.path.join(tmp, path.rstrip("/").rsplit("/", 1)[-1])
                if content is not None:  # else gone: decoded as a local path that is not there
                    with open(local, "wb") as f:
                        f.write(content)
                yield Task(local, path, cluster_id=cluster_id, node_id=node_id)


def decode_pass(selected: frozenset, columns, identities: dict | None = None):
    """Return the mapInArrow function decoding the input tasks into rows of `columns`."""
    identities = identities or {}

    def run(batches):
        from .tables import union_converters

        if selected == RECORDS_ONLY:
            def convert(table, row):
                return row
        else:
            by_table = union_converters(tuple(t for t in BASE_TABLES if t in selected))

            def convert(table, row):
                return by_table[table](row)
        with gc_paused():
            yield from to_arrow(_task_rows(_input_tasks(batches, identities), selected, convert), columns)

    return run


def inputs_frame(spark: SparkSession, tasks: list[Task], files: list[str], missing: list[str] = ()):
    """Return the DataFrames the decode passes map over: one row per local task group (one group per
    partition), and one per listed URI file, read by Spark's binaryFile source (a URI that matched
    nothing is a row without content: the decoder reports it in `errors`)."""
    sc = spark.sparkContext
    frames = []
    if tasks:
        groups = [(json.dumps(g),) for g in balance(tasks, 3 * sc.defaultParallelism)]
        frames.append(spark.createDataFrame(sc.parallelize(groups, len(groups)), "tasks string"))
    if files or missing:
        read = spark.read.format("binaryFile").load(files).select("path", "content") if files else None
        if missing:
            gone = spark.createDataFrame([(uri, None) for uri in missing], "path string, content binary")
            read = gone if read is None else read.unionByName(gone)
        frames.append(read)
    return frames


def list_uris(spark: SparkSession, uris: list[str]) -> tuple[list[str], list[str]]:
    """Return (files, URIs that matched nothing): every .log and .checkpoint below each URI (a glob, a
    folder or a file), listed on the driver through Hadoop's file system. Spark's own folder listing is
    not used: it skips names starting with '_' or '.', so every __cluster_metadata-0 folder."""
    from .decode import file_type_of

    jvm, conf = spark.sparkContext._jvm, spark.sparkContext._jsc.hadoopConfiguration()
    files, missing = [], []
    for uri in uris:
        path = jvm.org.apache.hadoop.fs.Path(uri)
        statuses = path.getFileSystem(conf).globStatus(path) or []
        for status in statuses:
            if not status.isDirectory():
                files.append(status.getPath().toString())
                continue
            found = status.getPath().getFileSystem(conf).listFiles(status.getPath(), True)
            while found.hasNext():
                child = found.next().getPath()
                if file_type_of(child.getName()):
                    files.append(child.toString())
        if not statuses:
            missing.append(uri)
    return sorted(dict.fromkeys(files)), missing


def uri_identities(spark: SparkSession, files: list[str]) -> dict[str, tuple[str | None, int | None]]:
    """Return folder URI -> (cluster id, node id) from the meta.properties files beside the listed
    files or one level up (read on the driver through Hadoop's file system, as the files are)."""
    from kraftsman.storage.log import meta_properties

    folders = {f.rstrip("/").rsplit("/", 1)[0] for f in files}
    folders |= {f.rsplit("/", 1)[0] for f in folders}
    found = [f for f in sorted(folders) if _exists(spark, f + "/meta.properties")]
    out = {}
    if found:
        props = spark.read.format("binaryFile").load([f + "/meta.properties" for f in found]).collect()
        for row in props:
            try:
                meta = meta_properties.parse(bytes(row["content"]).decode("utf-8", "replace"))
            except ValueError:
                continue
            out[row["path"].rsplit("/", 1)[0]] = (meta.cluster_id or UNKNOWN_CLUSTER, meta.node_id)
    return out


def _exists(spark: SparkSession, uri: str) -> bool:
    jvm, sc = spark.sparkContext._jvm, spark.sparkContext
    path = jvm.org.apache.hadoop.fs.Path(uri)
    return bool(path.getFileSystem(sc._jsc.hadoopConfiguration()).exists(path))


def table_path(out: str, table: str) -> str:
    """Return where a table is written below the output directory."""
    return out.rstrip("/") + "/" + table


def _write(df, out: str, table: str, fmt: str, mode: str = "overwrite") -> None:
    df.write.mode(mode).format(FORMATS[fmt]).partitionBy(PARTITION_COLUMN).save(table_path(out, table))


def read_table(spark: SparkSession, out: str, table: str, fmt: str, columns=None):
    """Read a written table back (with its schema when given: a table with no rows has no files).
    The partition column, cluster_id, comes last, as Spark reads partitioned tables."""
    reader = spark.read.format(FORMATS[fmt])
    if columns is not None:
        reader = reader.schema(ddl(columns))
    return reader.load(table_path(out, table))


def _decoded(frames, selected: frozenset, columns, identities: dict | None = None):
    parts = [f.mapInArrow(decode_pass(selected, columns, identities), ddl(columns)) for f in frames]
    return functools.reduce(lambda a, b: a.unionByName(b), parts)


_RECORD_ERRORS = ("SELECT source, file_type, cluster_id, node_id, batch_position AS position, offset, "
                  "error AS reason FROM records WHERE error IS NOT NULL")


def known_sources(spark: SparkSession, out: str, fmt: str) -> set[str]:
    """Return the sources already in the output's `batches` and `errors` tables (empty without them)."""
    found: set[str] = set()
    for table, columns in (("batches", BATCHES), ("errors", ERRORS)):
        try:
            sources = read_table(spark, out, table, fmt, columns).select("source").distinct().collect()
        except Exception as e:  # noqa: BLE001 (pyspark's AnalysisException: the table is not there)
            if "PATH_NOT_FOUND" not in str(e) and "does not exist" not in str(e):
                raise
            continue
        found.update(row["source"] for row in sources)
    return found


def run_job(spark: SparkSession, tasks: list[Task], remote: list[str], out: str, fmt: str = "parquet",
            progress=None, derived: bool = True, direct: bool | None = None,
            mode: str = "overwrite") -> dict[str, int]:
    """Decode, write every table below `out`, and return the rows this run added to the base tables.

    mode "overwrite" replaces the tables; "append" adds the rows of the files whose source is not in
    them yet (so a re-run over the same files adds nothing), then rewrites the derived tables over all
    of `records`. Local Parquet output on a local master (or `direct=True`): one pass, each worker
    writing its part of the base tables (write_base_tables). Otherwise Spark's writers, two passes
    over the files: `records` (the full decode), then `batches` and `errors` (batch headers, CRCs and
    record framing only); record-level errors are read back from the written records.
    """
    progress = progress or Progress(None)
    files, missing = list_uris(spark, remote) if remote else ([], [])
    known = known_sources(spark, out, fmt) if mode == "append" else set()
    tasks = [t for t in tasks if t.source not in known]
    files, missing = [f for f in files if f not in known], [u for u in missing if u not in known]
    if (direct_write(spark, remote, out, fmt) if direct is None else direct) and not (files or missing):
        counts = write_base_tables(spark, tasks, out, progress, mode)
    else:
        frames = inputs_frame(spark, tasks, files, missing)
        identities = uri_identities(spark, files)
        counts = write_with_spark(spark, frames, out, fmt, progress, mode, identities, known)
    if derived:
        write_derived(spark, out, fmt, progress)
    give_columns_to_empty_tables(spark, out, fmt, derived)
    return counts


def give_columns_to_empty_tables(spark: SparkSession, out: str, fmt: str, derived: bool = True) -> list[str]:
    """Write an empty part with its columns into each local Parquet table that has no part file (Spark writes
    none for no rows, and pandas or pyarrow then see no columns); return those tables."""
    if fmt != "parquet" or is_remote(out):
        return []
    from pyspark.sql.pandas.types import to_arrow_schema

    root, empty = local_path(out), []
    for table in [*BASE_TABLES, *(DERIVED if derived else ())]:
        folder = os.path.join(root, table)
        if any(name.endswith(".parquet") for _, _, files in os.walk(folder) for name in files):
            continue
        schema = (arrow_schema(BASE_TABLES[table]) if table in BASE_TABLES
                  else to_arrow_schema(spark.sql(DERIVED[table]).schema, timezone="UTC"))
        write_empty_part(folder, schema)
        empty.append(table)
    return empty


def write_with_spark(spark: SparkSession, frames, out: str, fmt: str, progress, mode: str, identities: dict,
                     known: set[str]) -> dict[str, int]:
    """Write the base tables with Spark's writers (clusters, URIs, JSON Lines); return the rows added."""
    before = {t: 0 for t in BASE_TABLES}
    if known:
        before = {t: read_table(spark, out, t, fmt, c).count() for t, c in BASE_TABLES.items()}
    if frames:
        write_records(spark, frames, out, fmt, progress, mode, identities)
        write_structure(spark, frames, out, fmt, progress, mode, identities, known)
    else:
        read_table(spark, out, "records", fmt, RECORDS).createOrReplaceTempView("records")
    return {t: read_table(spark, out, t, fmt, c).count() - before[t] for t, c in BASE_TABLES.items()}


def direct_write(spark: SparkSession, remote: list[str], out: str, fmt: str) -> bool:
    """Tell whether the workers write the base tables themselves: Parquet, local files, local master
    (every worker then sees the output folder); otherwise Spark's writers do."""
    return fmt == "parquet" and not remote and not is_remote(out) and spark.sparkContext.master.startswith("local")


def write_base_tables(spark: SparkSession, tasks: list[Task], out: str, progress,
                      mode: str = "overwrite") -> dict[str, int]:
    """Decode every task once on the workers, each writing its part of `records`, `batches` and
    `errors` with pyarrow into a staging folder; then move the tables into place (replacing an
    earlier run's, or beside it in append mode) and register `records` as a view. Return the rows
    per table."""
    sc = spark.sparkContext
    root = os.path.abspath(local_path(out))
    run = uuid.uuid4().hex
    staging = os.path.join(root, f"_staging-{run}")
    for table in BASE_TABLES:  # an output folder that cannot be written fails here, in the driver
        os.makedirs(os.path.join(staging, table))
    groups = list(enumerate(balance(tasks, 3 * sc.defaultParallelism))) or [(0, [])]
    try:
        with progress.phase("decoding"):
            write = functools.partial(_write_group, staging, run)
            written = sc.parallelize(groups, len(groups)).map(write).collect()
        for table in BASE_TABLES:
            place = _merge if mode == "append" else _replace
            place(os.path.join(staging, table), os.path.join(root, table))
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    read_table(spark, out, "records", "parquet", RECORDS).createOrReplaceTempView("records")
    return {t: sum(w[t] for w in written) for t in BASE_TABLES}


def _write_group(staging: str, run: str, group) -> dict[str, int]:
    """Write one task group's parts (runs in a Python worker, garbage collection paused)."""
    index, tasks = group
    with gc_paused():
        return write_parts([Task(*t) for t in tasks], staging, f"part-{index:05d}-{run}.snappy.parquet")


@contextlib.contextmanager
def gc_paused():
    """Pause the garbage collector while a worker decodes (rows are freed by reference counting; the
    collector would only walk the long-lived decoders again and again), then restore it."""
    import gc

    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _replace(staged: str, final: str) -> None:
    """Put a staged table folder in place of `final`, marked complete with _SUCCESS as Spark does."""
    with open(os.path.join(staged, "_SUCCESS"), "wb"):
        pass
    old = None
    if os.path.lexists(final):
        old = f"{final}.old-{uuid.uuid4().hex}"
        os.rename(final, old)
    os.rename(staged, final)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def _merge(staged: str, final: str) -> None:
    """Move a staged table's part files into `final` (append mode), partition folder by folder."""
    os.makedirs(final, exist_ok=True)
    for partition in os.listdir(staged):
        os.makedirs(os.path.join(final, partition), exist_ok=True)
        for name in os.listdir(os.path.join(staged, partition)):
            os.rename(os.path.join(staged, partition, name), os.path.join(final, partition, name))
    with open(os.path.join(final, "_SUCCESS"), "wb"):
        pass


def write_records(spark: SparkSession, frames, out: str, fmt: str, progress, mode: str = "overwrite",
                  identities: dict | None = None) -> None:
    """Decode the records and write them; register the written table as the view `records`."""
    with progress.phase("decoding records"):
        _write(_decoded(frames, RECORDS_ONLY, RECORDS, identities), out, "records", fmt, mode)
    read_table(spark, out, "records", fmt, RECORDS).createOrReplaceTempView("records")


def write_structure(spark: SparkSession, frames, out: str, fmt: str, progress, mode: str = "overwrite",
                    identities: dict | None = None, known: set[str] = frozenset()) -> None:
    """Write `batches`, and `errors` (the structure pass's plus this run's records' own, from the view
    `records` less the `known` sources of earlier runs)."""
    from pyspark import StorageLevel
    from pyspark.sql import functions as F

    structure = _decoded(frames, STRUCTURE, union_columns(("batches", "errors")), identities)
    structure = structure.persist(StorageLevel.MEMORY_AND_DISK)
    try:
        with progress.phase("decoding batches"):
            _write(structure.where(F.col("table") == "batches").select(*names(BATCHES)), out, "batches", fmt, mode)
        with progress.phase("writing errors"):
            errors = structure.where(F.col("table") == "errors").select(*names(ERRORS))
            record_errors = spark.sql(_RECORD_ERRORS)
            if known:
                known_frame = spark.createDataFrame([(k,) for k in sorted(known)], "source string")
                record_errors = record_errors.join(known_frame, "source", "left_anti")
            _write(errors.unionByName(record_errors.select(*names(ERRORS))), out, "errors", fmt, mode)
    finally:
        structure.unpersist()


def write_derived(spark: SparkSession, out: str, fmt: str, progress) -> None:
    """Write the derived tables, Spark SQL over the view `records`: their jobs are submitted together
    (one driver thread each) so that the small ones' planning and commits overlap the big ones' tasks;
    each table's own time is kept in progress.timings as 'table <name>'."""
    from concurrent.futures import ThreadPoolExecutor

    def write(name: str) -> None:
        started = time.monotonic()
        _write(spark.sql(DERIVED[name]), out, name, fmt)
        progress.timings[f"table {name}"] = time.monotonic() - started

    with progress.phase("writing derived tables"), ThreadPoolExecutor(len(DERIVED)) as pool:
        for future in [pool.submit(write, name) for name in DERIVED]:
            future.result()


def progress_for(spark: SparkSession, stream, live: bool = False, color: bool = True) -> Progress:
    """Return the progress display of a job on `spark`: task counts from its status tracker."""
    return Progress(stream, live, spark.sparkContext.statusTracker(), color)


_REPORT_QUERIES = {
    "broker_events": """SELECT DISTINCT cluster_id, offset, timestamp, broker_id, event, fenced FROM broker_events
                        WHERE file_type = 'log'""",
    "isr_changes": """
        WITH h AS (
            SELECT cluster_id, offset, timestamp, topic_id, topic_name, partition_id, change, isr, isr_changed_to,
                   adding_replicas,
                   lag(size(isr)) OVER (PARTITION BY source, topic_id, partition_id ORDER BY offset) AS before
            FROM partition_history WHERE file_type = 'log')
        SELECT DISTINCT cluster_id, offset, timestamp, topic_id, topic_name, partition_id, kind FROM h
        LATERAL VIEW explode(array(
            CASE WHEN change = 'change' AND isr_changed_to IS NOT NULL AND size(isr) < before THEN 'isr shrink'
                 WHEN change = 'change' AND isr_changed_to IS NOT NULL AND size(isr) > before THEN 'isr expand' END,
            CASE WHEN change = 'change' AND coalesce(size(adding_replicas), 0) > 0 THEN 'reassignment' END)) k AS kind
        WHERE kind IS NOT NULL""",
    "topic_events": """SELECT DISTINCT cluster_id, offset, timestamp, event AS kind, topic_id, topic_name
                       FROM topic_lifecycle WHERE file_type = 'log'""",
    "config_changes": """SELECT DISTINCT cluster_id, offset, timestamp, resource_type_name, resource_name, name, action
                         FROM config_changes WHERE file_type = 'log'""",
}
_REPORT_TABLES = {"broker_events": "broker_events", "isr_changes": "partition_history",
                  "topic_events": "topic_lifecycle", "config_changes": "config_changes"}


def report_rows(spark: SparkSession, out: str, fmt: str, limit: int = 200_000) -> tuple[dict, list[str]]:
    """Return ({cluster id: {report table: [row dict]}}, notes) for the report, read from the written
    derived tables: events of metadata logs only, each once per cluster (every node keeps a copy of the
    log), in log order, times as UTC datetimes; at most `limit` rows per table (a note says so)."""
    from datetime import timezone

    read_table(spark, out, "records", fmt, RECORDS).createOrReplaceTempView("records")  # the SQL's schemas
    for table in set(_REPORT_TABLES.values()):
        schema = spark.sql(DERIVED[table]).schema  # JSON Lines need it; Parquet agrees with it
        spark.read.format(FORMATS[fmt]).schema(schema).load(table_path(out, table)).createOrReplaceTempView(table)
    clusters: dict = {}
    notes = []
    for name, query in _REPORT_QUERIES.items():
        rows = spark.sql(f"SELECT * FROM ({query}) ORDER BY cluster_id, offset LIMIT {limit + 1}").collect()
        if len(rows) > limit:
            notes.append(f"{name}: only the first {limit:,} rows are drawn")
            rows = rows[:limit]
        for row in rows:
            item = row.asDict()
            if item["timestamp"] is not None:
                item["timestamp"] = item["timestamp"].astimezone(timezone.utc)  # naive local time -> UTC
            clusters.setdefault(item["cluster_id"], {t: [] for t in _REPORT_QUERIES})[name].append(item)
    return clusters, notes
