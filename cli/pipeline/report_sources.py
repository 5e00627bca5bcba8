"""What the report says about each cluster besides its events: its brokers' endpoints and the log folders read.

Rules:
- Spark SQL over the written `records` table (registered as the view `records`), as report_rows reads the
  derived tables; no pyspark import here (the session is the caller's).
- hosts: host:port of every endpoint a RegisterBrokerRecord names; folders: the folder of every source file.
"""
from __future__ import annotations

from .tables import RECORDS

_QUERIES = {
    "hosts": """SELECT cluster_id, collect_set(concat(e.host, ':', CAST(e.port AS STRING))) AS found FROM records
                LATERAL VIEW explode(from_json(get_json_object(data, '$.endPoints'),
                                               'array<struct<host:string,port:int>>')) x AS e
                WHERE type = 'REGISTER_BROKER_RECORD' AND e.host IS NOT NULL GROUP BY cluster_id""",
    "folders": """SELECT cluster_id, collect_set(regexp_replace(source, '/[^/]*$', '')) AS found FROM records
                  GROUP BY cluster_id""",
}


def cluster_names(spark_job, spark, out: str, fmt: str) -> dict[str, dict[str, list[str]]]:
    """Return {cluster id: {"hosts": [...], "folders": [...]}} from the written `records` table."""
    spark_job.read_table(spark, out, "records", fmt, RECORDS).createOrReplaceTempView("records")
    names: dict[str, dict[str, list[str]]] = {}
    for key, query in _QUERIES.items():
        for row in spark.sql(query).collect():
            names.setdefault(row["cluster_id"], {})[key] = sorted(row["found"])
    return names
