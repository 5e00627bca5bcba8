"""The metadata history pipeline: decode fleets of KRaft metadata logs and snapshots into tables.

`decode` is the pure per-file decoder (dump-log's own record decoding, rows as tuples), `tables`
names the columns, `inputs` turns arguments into tasks (files or batch-aligned byte ranges),
`derived` holds the Spark SQL of the derived tables, `spark_job` is the only module that imports
pyspark, `progress` shows the phases, `report` draws the HTML report from the tables, and `command`
is `kraftsman pipeline` / `kafka-metadata-export`.
"""
