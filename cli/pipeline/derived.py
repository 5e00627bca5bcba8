"""The derived tables: Spark SQL over the `records` view, one statement per table.

Rules:
- Pure text: the Spark job registers the written `records` table as the view `records` and writes
  the result of each statement as the table of the same name. No pyspark here.
- History is read per source file: offsets order events within a file; snapshots (file_type
  'snapshot' or 'bootstrap') describe state at a point, so their topics are 'in_snapshot', not 'create'.
- Codes come from Kafka: ConfigResource.Type, AclResourceType, PatternType, AclOperation,
  AclPermissionType; BrokerRegistrationChangeRecord.Fenced 1 = fence, -1 = unfence (0 = no change);
  InControlledShutdown 1 = entered controlled shutdown. Tagged fields at their default are absent.
"""
from __future__ import annotations

_WHERE = "source, cluster_id, node_id, file_type, offset, timestamp"

BROKER_EVENTS = f"""
SELECT {_WHERE}, broker_id, broker_epoch, event,
       CASE event WHEN 'fence' THEN true WHEN 'unfence' THEN false
                  WHEN 'register' THEN CAST(get_json_object(data, '$.fenced') AS BOOLEAN) END AS fenced,
       type AS record_type
FROM records
LATERAL VIEW explode(filter(array(
    CASE type WHEN 'REGISTER_BROKER_RECORD' THEN 'register' WHEN 'UNREGISTER_BROKER_RECORD' THEN 'unregister'
              WHEN 'FENCE_BROKER_RECORD' THEN 'fence' WHEN 'UNFENCE_BROKER_RECORD' THEN 'unfence' END,
    CASE WHEN type = 'BROKER_REGISTRATION_CHANGE_RECORD' THEN
         CASE CAST(get_json_object(data, '$.fenced') AS INT) WHEN 1 THEN 'fence' WHEN -1 THEN 'unfence' END END,
    CASE WHEN type = 'BROKER_REGISTRATION_CHANGE_RECORD'
          AND CAST(get_json_object(data, '$.inControlledShutdown') AS INT) = 1 THEN 'controlled_shutdown' END
), e -> e IS NOT NULL)) events AS event
WHERE type IN ('REGISTER_BROKER_RECORD', 'UNREGISTER_BROKER_RECORD', 'FENCE_BROKER_RECORD',
               'UNFENCE_BROKER_RECORD', 'BROKER_REGISTRATION_CHANGE_RECORD')
"""

_TOPIC_NAMES = """topic_names AS (
    SELECT topic_id, first(topic_name, true) AS topic_name FROM records WHERE type = 'TOPIC_RECORD'
    GROUP BY topic_id)"""

# leader / isr / replicas after each change: a PartitionChangeRecord leaves absent fields unchanged, so
# its state is the last non-null value over the partition's earlier records (a window). A PartitionRecord
# carries the whole state, so partitions that never change (most rows of a log, all of a snapshot) skip
# the window (the shuffle and sort of every row) and are read as they are.
_PARTITION_KEY = "p.source = k.source AND p.topic_id = k.topic_id AND p.partition_id = k.partition_id"
_PARTITION_ROW = ("p.source, p.cluster_id, p.node_id, p.file_type, p.offset, p.timestamp, p.topic_id, "
                  "p.partition_id, p.change")
_CHANGED_TO = "p.leader AS leader_changed_to, p.isr AS isr_changed_to, p.replicas AS replicas_changed_to"
PARTITION_HISTORY = f"""
WITH {_TOPIC_NAMES},
parts AS (
    SELECT {_WHERE}, topic_id, partition_id, leader, leader_epoch, isr, replicas, adding_replicas,
           removing_replicas, CASE type WHEN 'PARTITION_RECORD' THEN 'create' ELSE 'change' END AS change
    FROM records WHERE type IN ('PARTITION_RECORD', 'PARTITION_CHANGE_RECORD')),
changed AS (
    SELECT DISTINCT source, topic_id, partition_id FROM records WHERE type = 'PARTITION_CHANGE_RECORD'),
history AS (
    SELECT {_PARTITION_ROW}, last(p.leader, true) OVER w AS leader, p.leader_epoch,
           last(p.isr, true) OVER w AS isr, last(p.replicas, true) OVER w AS replicas,
           p.adding_replicas, p.removing_replicas, {_CHANGED_TO}
    FROM parts p LEFT SEMI JOIN changed k ON {_PARTITION_KEY}
    WINDOW w AS (PARTITION BY p.source, p.topic_id, p.partition_id ORDER BY p.offset
                 ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)),
unchanged AS (
    SELECT {_PARTITION_ROW}, p.leader, p.leader_epoch, p.isr, p.replicas, p.adding_replicas,
           p.removing_replicas, {_CHANGED_TO}
    FROM parts p LEFT ANTI JOIN changed k ON {_PARTITION_KEY}),
together AS (SELECT * FROM history UNION ALL SELECT * FROM unchanged)
SELECT /*+ BROADCAST(n) */ c.source, c.cluster_id, c.node_id, c.file_type, c.offset, c.timestamp, c.topic_id,
       n.topic_name, c.partition_id, c.change, c.leader, c.leader_epoch, c.isr, c.replicas, c.adding_replicas,
       c.removing_replicas, c.leader_changed_to, c.isr_changed_to, c.replicas_changed_to
FROM together c LEFT JOIN topic_names n ON c.topic_id = n.topic_id
"""

# A topic's batch holds its TopicRecord and its first PartitionRecords; PartitionRecords in a batch
# without the TopicRecord are partitions added later. One full join of the two (a topic created with
# no partitions has no `parts` row) and one aggregation of the partition records make both kinds.
TOPIC_LIFECYCLE = f"""
WITH {_TOPIC_NAMES},
created AS (
    SELECT {_WHERE}, batch_position, topic_id, topic_name FROM records WHERE type = 'TOPIC_RECORD'),
parts AS (
    SELECT source, first(cluster_id) AS cluster_id, first(node_id) AS node_id, first(file_type) AS file_type,
           min(offset) AS offset, min(timestamp) AS timestamp, batch_position, topic_id, count(*) AS partitions,
           array_sort(collect_list(partition_id)) AS partition_ids
    FROM records WHERE type = 'PARTITION_RECORD'
    GROUP BY source, batch_position, topic_id),
batches AS (
    SELECT c.topic_id IS NOT NULL AS created, coalesce(c.source, p.source) AS source,
           coalesce(c.cluster_id, p.cluster_id) AS cluster_id, coalesce(c.node_id, p.node_id) AS node_id,
           coalesce(c.file_type, p.file_type) AS file_type, coalesce(c.offset, p.offset) AS offset,
           coalesce(c.timestamp, p.timestamp) AS timestamp, coalesce(c.topic_id, p.topic_id) AS topic_id,
           c.topic_name, coalesce(p.partitions, 0) AS partitions, p.partition_ids
    FROM created c FULL OUTER JOIN parts p
      ON p.source = c.source AND p.batch_position = c.batch_position AND p.topic_id = c.topic_id)
SELECT /*+ BROADCAST(n) */ b.source, b.cluster_id, b.node_id, b.file_type, b.offset, b.timestamp,
       CASE WHEN NOT b.created THEN 'partitions_added' WHEN b.file_type = 'log' THEN 'create'
            ELSE 'in_snapshot' END AS event,
       b.topic_id, coalesce(b.topic_name, n.topic_name) AS topic_name, b.partitions, b.partition_ids
FROM batches b LEFT JOIN topic_names n ON b.topic_id = n.topic_id
WHERE b.created OR b.file_type = 'log'
UNION ALL
SELECT /*+ BROADCAST(n) */ r.source, r.cluster_id, r.node_id, r.file_type, r.offset, r.timestamp, 'delete',
       r.topic_id, n.topic_name, CAST(NULL AS BIGINT), CAST(NULL AS ARRAY<INT>)
FROM records r LEFT JOIN topic_names n ON r.topic_id = n.topic_id
WHERE r.type = 'REMOVE_TOPIC_RECORD'
"""

CONFIG_CHANGES = f"""
SELECT {_WHERE}, config_resource_type AS resource_type,
       CASE config_resource_type WHEN 2 THEN 'TOPIC' WHEN 4 THEN 'BROKER' WHEN 8 THEN 'BROKER_LOGGER'
            WHEN 16 THEN 'CLIENT_METRICS' WHEN 32 THEN 'GROUP' ELSE 'UNKNOWN' END AS resource_type_name,
       config_resource_name AS resource_name, config_name AS name, get_json_object(data, '$.value') AS value,
       CASE WHEN get_json_object(data, '$.value') IS NULL THEN 'delete' ELSE 'set' END AS action
FROM records WHERE type = 'CONFIG_RECORD'
"""


def _enum(expr: str, names: str) -> str:
    return f"coalesce(element_at(array({names}), CAST({expr} AS INT) + 1), 'UNKNOWN')"


_ACL_FIELDS = {
    "resource_type": "'UNKNOWN', 'ANY', 'TOPIC', 'GROUP', 'CLUSTER', 'TRANSACTIONAL_ID', 'DELEGATION_TOKEN', 'USER'",
    "pattern_type": "'UNKNOWN', 'ANY', 'MATCH', 'LITERAL', 'PREFIXED'",
    "operation": "'UNKNOWN', 'ANY', 'ALL', 'READ', 'WRITE', 'CREATE', 'DELETE', 'ALTER', 'DESCRIBE', "
                 "'CLUSTER_ACTION', 'DESCRIBE_CONFIGS', 'ALTER_CONFIGS', 'IDEMPOTENT_WRITE', 'CREATE_TOKENS', "
                 "'DESCRIBE_TOKENS'",
    "permission_type": "'UNKNOWN', 'ANY', 'DENY', 'ALLOW'",
}
_JSON_NAMES = {"resource_type": "resourceType", "pattern_type": "patternType", "operation": "operation",
               "permission_type": "permissionType"}
_ACL_COLUMNS = ", ".join(
    [_enum(f"get_json_object(data, '$.{_JSON_NAMES[k]}')", v) + f" AS {k}" for k, v in _ACL_FIELDS.items()]
    + ["get_json_object(data, '$.resourceName') AS resource_name",
       "get_json_object(data, '$.principal') AS principal", "get_json_object(data, '$.host') AS host"])

ACL_CHANGES = f"""
WITH acls AS (
    SELECT {_WHERE}, get_json_object(data, '$.id') AS acl_id, {_ACL_COLUMNS}
    FROM records WHERE type = 'ACCESS_CONTROL_ENTRY_RECORD'),
known AS (
    SELECT acl_id, first(resource_type) AS resource_type, first(pattern_type) AS pattern_type,
           first(operation) AS operation, first(permission_type) AS permission_type,
           first(resource_name) AS resource_name, first(principal) AS principal, first(host) AS host
    FROM acls GROUP BY acl_id)
SELECT source, cluster_id, node_id, file_type, offset, timestamp, 'create' AS action, acl_id, resource_type,
       pattern_type, operation, permission_type, resource_name, principal, host
FROM acls
UNION ALL
SELECT /*+ BROADCAST(k) */ r.source, r.cluster_id, r.node_id, r.file_type, r.offset, r.timestamp, 'delete',
       get_json_object(r.data, '$.id'),
       k.resource_type, k.pattern_type, k.operation, k.permission_type, k.resource_name, k.principal, k.host
FROM records r LEFT JOIN known k ON get_json_object(r.data, '$.id') = k.acl_id
WHERE r.type = 'REMOVE_ACCESS_CONTROL_ENTRY_RECORD'
"""

FEATURE_CHANGES = f"""
SELECT {_WHERE}, feature, level,
       lag(level) OVER (PARTITION BY source, feature ORDER BY offset) AS previous_level
FROM (SELECT {_WHERE}, get_json_object(data, '$.name') AS feature,
             CAST(get_json_object(data, '$.featureLevel') AS INT) AS level
      FROM records WHERE type = 'FEATURE_LEVEL_RECORD')
"""

DERIVED = {"broker_events": BROKER_EVENTS, "partition_history": PARTITION_HISTORY,
           "topic_lifecycle": TOPIC_LIFECYCLE, "config_changes": CONFIG_CHANGES, "acl_changes": ACL_CHANGES,
           "feature_changes": FEATURE_CHANGES}
