"""MetadataDelta: replay metadata records on top of an image, then apply() to get the next image.

Rules:
- replay(record) takes an ApiMessageAndVersion of any type and version of the schemas; replay_value()
  takes a raw frame value and keeps partition records undecoded until read (bulk loads);
  replay_encoded(record, value) takes both (the active controller) and keeps partition records as their
  values, so the leader's image holds what a follower's holds.
- Transaction markers (Begin/End/AbortTransactionRecord) and NoOpRecord do not change the image here;
  the batch loader handles transactions as Kafka's MetadataBatchLoader does.
- Unknown record types are ignored (newer Kafka); a record that contradicts the image raises
  ImageReplayError and leaves the delta as it was before that record.
"""
from __future__ import annotations

from kraftsman.storage.records.metadata import ApiMessageAndVersion, read_metadata_record

from .acls import AclsDelta
from .cluster import ClusterDelta
from .configs import ConfigsDelta
from .features import FeaturesDelta
from .image import EMPTY, MetadataImage
from .producer_ids import ProducerIdsImage, Provenance
from .quotas import ClientQuotasDelta
from .scram import ScramDelta
from .tokens import DelegationTokensDelta
from .topics import TopicsDelta

PARTITION_RECORD, PARTITION_CHANGE_RECORD = 3, 5
_RAW_FAST = {PARTITION_RECORD: "replay_partition_raw", PARTITION_CHANGE_RECORD: "replay_partition_change_raw"}


class MetadataDelta:
    """Changes on top of `image`; replay records, then apply()."""

    def __init__(self, image: MetadataImage = EMPTY):
        self.image = image
        self.features = FeaturesDelta(image.features)
        self.cluster = ClusterDelta(image.cluster)
        self.topics = TopicsDelta(image.topics)
        self.configs = ConfigsDelta(image.configs)
        self.client_quotas = ClientQuotasDelta(image.client_quotas)
        self.producer_ids = image.producer_ids
        self.acls = AclsDelta(image.acls)
        self.scram = ScramDelta(image.scram)
        self.delegation_tokens = DelegationTokensDelta(image.delegation_tokens)
        self._handlers = self._build_handlers()

    def _build_handlers(self) -> dict:
        c, t, f = self.cluster, self.topics, self.features
        return {
            0: lambda m, v: c.replay_register_broker(m, v), 1: lambda m, v: c.replay_unregister_broker(m),
            2: lambda m, v: t.replay_topic(m), 3: lambda m, v: t.replay_partition(m, v),
            4: lambda m, v: self.configs.replay(m), 5: lambda m, v: t.replay_partition_change(m),
            7: lambda m, v: c.replay_fence(m, True), 8: lambda m, v: c.replay_fence(m, False),
            9: self._replay_remove_topic, 10: self.delegation_tokens.replay_token,
            11: self.scram.replay_credential, 12: lambda m, v: f.replay_feature_level(m),
            14: lambda m, v: self.client_quotas.replay(m), 15: self._replay_producer_ids,
            17: lambda m, v: c.replay_registration_change(m), 18: self.acls.replay_acl,
            19: lambda m, v: self.acls.replay_remove(m), 21: lambda m, v: f.replay_zk_migration_state(m),
            22: lambda m, v: self.scram.replay_remove(m), 26: lambda m, v: self.delegation_tokens.replay_remove(m),
            27: c.replay_register_controller, 28: lambda m, v: t.replay_clear_elr(m),
        }

    def replay(self, record: ApiMessageAndVersion) -> None:
        """Apply one decoded metadata record."""
        handler = self._handlers.get(record.api_key)
        if handler is not None:
            handler(record.message, record.version)

    def replay_value(self, value: bytes) -> None:
        """Apply one raw metadata record value (frame version 1); partition records stay lazy."""
        if len(value) > 23 and value[0] == 1 and value[2] < 128:
            fast = _RAW_FAST.get(value[1])
            if fast is not None:
                getattr(self.topics, fast)(value)
                return
        self.replay(read_metadata_record(value))

    def replay_values(self, values) -> None:
        """Apply raw metadata record values in order (replay_value of each)."""
        partition_raw, replay_value = self.topics.replay_partition_raw, self.replay_value
        for value in values:
            if len(value) > 23 and value[1] == PARTITION_RECORD and value[0] == 1 and value[2] < 128:
                partition_raw(value)
            else:
                replay_value(value)

    def replay_encoded(self, record: ApiMessageAndVersion, value: bytes) -> None:
        """Apply one record given decoded and as its frame value (write_metadata_record(record));
        partition records are kept as the value, the others are replayed decoded."""
        fast = _RAW_FAST.get(record.api_key)
        if fast is not None and len(value) > 23 and value[0] == 1 and value[2] < 128:
            getattr(self.topics, fast)(value)
        else:
            self.replay(record)

    def _replay_remove_topic(self, message, version: int) -> None:
        """Apply RemoveTopicRecord: the topic and its configs go (Kafka's MetadataDelta.replay)."""
        self.topics.replay_remove_topic(message)
        self.configs.delete_resource((2, self.topics.removed[bytes(message.topic_id)]))

    def _replay_producer_ids(self, message, version: int) -> None:
        self.producer_ids = ProducerIdsImage(message, version)

    def apply(self, provenance: Provenance | None = None) -> MetadataImage:
        """Return the image with every replayed change; share the areas that did not change."""
        return MetadataImage(
            provenance=provenance or self.image.provenance, features=self.features.apply(),
            cluster=self.cluster.apply(), topics=self.topics.apply(), configs=self.configs.apply(),
            client_quotas=self.client_quotas.apply(), producer_ids=self.producer_ids, acls=self.acls.apply(),
            scram=self.scram.apply(), delegation_tokens=self.delegation_tokens.apply())
