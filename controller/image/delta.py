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


class _Area:
    """One area of a MetadataDelta (its topics, configs, ...), built on top of the image's area when first used:
    most batches touch one or two of them. The built delta lands in the instance's __dict__, which later
    lookups find before this (non-data) descriptor."""

    def __init__(self, make):
        self.make = make

    def __set_name__(self, owner, name: str) -> None:
        self.name = name

    def __get__(self, delta, owner=None):
        if delta is None:
            return self
        area = delta.__dict__[self.name] = self.make(getattr(delta.image, self.name))
        return area


class MetadataDelta:
    """Changes on top of `image`; replay records, then apply()."""

    features = _Area(FeaturesDelta)
    cluster = _Area(ClusterDelta)
    topics = _Area(TopicsDelta)
    configs = _Area(ConfigsDelta)
    client_quotas = _Area(ClientQuotasDelta)
    acls = _Area(AclsDelta)
    scram = _Area(ScramDelta)
    delegation_tokens = _Area(DelegationTokensDelta)

    def __init__(self, image: MetadataImage = EMPTY):
        self.image = image
        self.producer_ids = image.producer_ids

    def feature_replays(self) -> int:
        """Return how many feature records were replayed here."""
        features = self.__dict__.get("features")
        return 0 if features is None else features.replays

    def replay(self, record: ApiMessageAndVersion) -> None:
        """Apply one decoded metadata record."""
        handler = _REPLAY.get(record.api_key)
        if handler is not None:
            handler(self, record.message, record.version)

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

    def _replay_configs(self, message, version: int) -> None:
        self.configs.replay(message)

    def _replay_quotas(self, message, version: int) -> None:
        self.client_quotas.replay(message)

    def _replay_remove_acl(self, message, version: int) -> None:
        self.acls.replay_remove(message)

    def _replay_remove_scram(self, message, version: int) -> None:
        self.scram.replay_remove(message)

    def _replay_remove_token(self, message, version: int) -> None:
        self.delegation_tokens.replay_remove(message)

    def apply(self, provenance: Provenance | None = None) -> MetadataImage:
        """Return the image with every replayed change; share the areas that did not change (or were never
        used)."""
        image, built = self.image, self.__dict__

        def area(name: str):
            delta = built.get(name)
            return getattr(image, name) if delta is None else delta.apply()
        return MetadataImage(
            provenance=provenance or image.provenance, features=area("features"), cluster=area("cluster"),
            topics=area("topics"), configs=area("configs"), client_quotas=area("client_quotas"),
            producer_ids=self.producer_ids, acls=area("acls"), scram=area("scram"),
            delegation_tokens=area("delegation_tokens"))


# api key -> fn(delta, message, version), one table for every delta (none is built per delta)
_REPLAY = {
    0: lambda d, m, v: d.cluster.replay_register_broker(m, v), 1: lambda d, m, v: d.cluster.replay_unregister_broker(m),
    2: lambda d, m, v: d.topics.replay_topic(m), 3: lambda d, m, v: d.topics.replay_partition(m, v),
    4: MetadataDelta._replay_configs, 5: lambda d, m, v: d.topics.replay_partition_change(m),
    7: lambda d, m, v: d.cluster.replay_fence(m, True), 8: lambda d, m, v: d.cluster.replay_fence(m, False),
    9: MetadataDelta._replay_remove_topic, 10: lambda d, m, v: d.delegation_tokens.replay_token(m, v),
    11: lambda d, m, v: d.scram.replay_credential(m, v), 12: lambda d, m, v: d.features.replay_feature_level(m),
    14: MetadataDelta._replay_quotas, 15: MetadataDelta._replay_producer_ids,
    17: lambda d, m, v: d.cluster.replay_registration_change(m), 18: lambda d, m, v: d.acls.replay_acl(m, v),
    19: MetadataDelta._replay_remove_acl, 21: lambda d, m, v: d.features.replay_zk_migration_state(m),
    22: MetadataDelta._replay_remove_scram, 26: MetadataDelta._replay_remove_token,
    27: lambda d, m, v: d.cluster.replay_register_controller(m, v), 28: lambda d, m, v: d.topics.replay_clear_elr(m),
}
