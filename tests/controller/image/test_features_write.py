"""FeaturesImage.write as Kafka's: the features in its HashMap's order, the ZK migration state per release."""
from __future__ import annotations

from pathlib import Path

import pytest

from kraftsman.controller.image.features import FeaturesImage
from kraftsman.storage.log.snapshot import read_snapshot_records

REPO = Path(__file__).resolve().parents[3]
REAL = REPO.parent / "shared" / "fixtures" / "kraft-real" / "data"
SNAPSHOTS = sorted(p for p in REAL.rglob("*.checkpoint") if p.name != "bootstrap.checkpoint") if REAL.is_dir() else []


def _features(records) -> list[tuple[str, int]]:
    return [(r.message.name, r.message.feature_level) for r in records if r.message.api_key == 12]


@pytest.mark.skipif(not SNAPSHOTS, reason=f"real snapshots not found under {REAL} (../shared absent)")
def test_feature_records_come_in_the_order_kafka_wrote_them():
    checked = 0
    for path in SNAPSHOTS:
        real = _features(read_snapshot_records(path))
        if len(real) < 3:
            continue
        image = FeaturesImage(real[0][1], {name: level for name, level in sorted(real[1:])})
        assert _features(image.write()) == real, path
        checked += 1
    assert checked >= 7         # the 4.1 and 4.2 nodes' snapshots


@pytest.mark.parametrize("release,level,expected", [("3.9", 21, [0]), ("3.9", 7, []), ("4.2", 29, []),
                                                    (None, 21, [])])
def test_the_zk_migration_state_is_written_as_the_release_writes_it(release, level, expected):
    written = [r.message.zk_migration_state for r in FeaturesImage(level).write(release) if r.message.api_key == 21]
    assert written == expected
