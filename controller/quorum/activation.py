"""The records a controller appends when it activates on an empty log (ActivationRecordsGenerator.recordsForEmptyLog).

Rules:
- The bootstrap records (bootstrap.checkpoint: metadata.version first, the other features, SCRAM) are wrapped in
  Begin/EndTransactionRecord ("Bootstrap records") from metadata.version 3.6-IV1 on; below it they are one atomic
  batch with no markers (the caller proposes the list as one batch either way).
- Inside the transaction, per release (ACTIVATION): Kafka 3.9 adds ZkMigrationStateRecord(NONE) (a de-novo KRaft
  cluster; only with transactions); Kafka 4.x, when the bootstrap enables eligible.leader.replicas.version, adds
  the cluster-level ConfigRecord min.insync.replicas=<the controller's min.insync.replicas>.
- Pure: records in, records out.
"""
from __future__ import annotations

from dataclasses import dataclass

from kraftsman.storage.features import ELR_VERSION, METADATA_VERSION
from kraftsman.storage.protocol import codec
from kraftsman.storage.records.metadata import ApiMessageAndVersion

from .feature_levels import METADATA_TRANSACTION_LEVEL


@dataclass(frozen=True)
class ActivationRules:
    """What one release's controller adds to the bootstrap records."""

    zk_migration_state: bool    # ZkMigrationStateRecord(NONE) after the bootstrap records (3.9)
    elr_min_insync: bool        # cluster-level min.insync.replicas when ELR is on (4.x)


ACTIVATION = {"3.9": ActivationRules(True, False), "4.0": ActivationRules(False, True),
              "4.1": ActivationRules(False, True), "4.2": ActivationRules(False, True)}


def _level(records, name: str) -> int:
    return next((r.message.feature_level for r in records
                 if r.message.api_key == 12 and r.message.name == name), 0)


def records_for_empty_log(bootstrap: list[ApiMessageAndVersion], release: str,
                          min_insync_replicas: int) -> list[ApiMessageAndVersion]:
    """Return what `release`'s controller appends on an empty log, bootstrap records included."""
    rules = ACTIVATION[release]
    transaction = _level(bootstrap, METADATA_VERSION) >= METADATA_TRANSACTION_LEVEL
    records = list(bootstrap)
    if rules.elr_min_insync and _level(bootstrap, ELR_VERSION) > 0:
        config = codec.message_class("ConfigRecord")(resource_type=4, resource_name="", name="min.insync.replicas",
                                                      value=str(min_insync_replicas))
        records.append(ApiMessageAndVersion(config, 0))
    if not transaction:
        return records
    if rules.zk_migration_state:
        records.append(ApiMessageAndVersion(codec.message_class("ZkMigrationStateRecord")(zk_migration_state=0), 0))
    begin = codec.message_class("BeginTransactionRecord")(name="Bootstrap records")
    end = codec.message_class("EndTransactionRecord")()
    return [ApiMessageAndVersion(begin, 0), *records, ApiMessageAndVersion(end, 0)]
