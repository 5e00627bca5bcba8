"""MetadataImage: an immutable view of the whole cluster metadata at one point of the log.

Rules:
- An image is never changed; MetadataDelta builds the next one, sharing every untouched area.
- write() yields records that rebuild the image (features first, as Kafka's MetadataImage.write);
  write_values() yields the same records encoded (snapshots).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from kraftsman.storage.records.metadata import write_metadata_record

from .acls import AclsImage
from .cluster import ClusterImage
from .configs import ConfigsImage
from .features import FeaturesImage
from .keyed import KeyedImage
from .producer_ids import ProducerIdsImage, Provenance
from .quotas import ClientQuotasImage
from .scram import ScramImage
from .tokens import DelegationTokensImage
from .topics import TopicsImage


@dataclass(frozen=True)
class MetadataImage:
    """Every area of the metadata image plus its provenance."""

    provenance: Provenance = field(default_factory=Provenance)
    features: FeaturesImage = field(default_factory=FeaturesImage)
    cluster: ClusterImage = field(default_factory=ClusterImage)
    topics: TopicsImage = field(default_factory=TopicsImage)
    configs: ConfigsImage = field(default_factory=ConfigsImage)
    client_quotas: ClientQuotasImage = field(default_factory=ClientQuotasImage)
    producer_ids: ProducerIdsImage = field(default_factory=ProducerIdsImage)
    acls: AclsImage = field(default_factory=AclsImage)
    scram: ScramImage = field(default_factory=ScramImage)
    delegation_tokens: DelegationTokensImage = field(default_factory=DelegationTokensImage)

    def is_empty(self) -> bool:
        """Tell whether no record was ever applied."""
        areas = (self.features, self.cluster, self.topics, self.configs, self.client_quotas,
                 self.producer_ids, self.acls, self.scram, self.delegation_tokens)
        return all(area.is_empty() for area in areas)

    def write(self, release: str | None = None):
        """Yield ApiMessageAndVersion records that rebuild this image from an empty one (as `release`'s
        snapshots hold them, when given: the features area differs by release)."""
        yield from self.features.write(release)
        for area in (self.cluster, self.topics, self.configs, self.client_quotas,
                     self.producer_ids, self.acls, self.scram, self.delegation_tokens):
            yield from area.write()

    def write_values(self, release: str | None = None):
        """Yield write_metadata_record() of every record write() yields, in order; raw partitions that are
        already those bytes are not encoded again (snapshots)."""
        for record in self.features.write(release):
            yield write_metadata_record(record)
        for area in (self.cluster, self.topics, self.configs, self.client_quotas,
                     self.producer_ids, self.acls, self.scram, self.delegation_tokens):
            if area is self.topics:
                yield from area.write_values()
            else:
                for record in area.write():
                    yield write_metadata_record(record)


EMPTY = MetadataImage()

__all__ = ["EMPTY", "KeyedImage", "MetadataImage"]
