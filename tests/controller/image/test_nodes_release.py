"""The shell's node tree per release (controller.image.nodes.NODE_RULES): 4.x prints metadataVersion as an Optional,
lists ACLs under /image/acls/byId, and 4.2 drops zkMigrationState; the --output json data is the same in every
release."""
from __future__ import annotations

import pytest

from kraftsman.controller.image.features import FeaturesImage
from kraftsman.controller.image.image import MetadataImage
from kraftsman.controller.image.nodes import image_node


def _image(level: int | None) -> MetadataImage:
    return MetadataImage(features=FeaturesImage(level, {"group.version": 1}))


@pytest.mark.parametrize("release, text, children, acls", [
    ("3.9", "3.9-IV0", ["finalized_group.version", "metadataVersion", "zkMigrationState"], []),
    ("4.0", "Optional[3.9-IV0]", ["finalized_group.version", "metadataVersion", "zkMigrationState"], ["byId"]),
    ("4.1", "Optional[3.9-IV0]", ["finalized_group.version", "metadataVersion", "zkMigrationState"], ["byId"]),
    ("4.2", "Optional[3.9-IV0]", ["finalized_group.version", "metadataVersion"], ["byId"]),
])
def test_each_release_prints_its_own_features_and_acls(release, text, children, acls):
    root = image_node(_image(21), release)
    features = root.child("features")
    assert sorted(features.child_names()) == children
    assert features.child("metadataVersion").text == text
    assert features.child("metadataVersion").data() == "3.9-IV0"
    assert features.child("finalized_group.version").data() == 1
    assert root.child("acls").child_names() == acls


def test_no_metadata_version_yet_is_optional_empty_in_4x():
    assert image_node(_image(None), "4.2").child("features").child("metadataVersion").text == "Optional.empty"
