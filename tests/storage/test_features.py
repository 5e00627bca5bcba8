"""metadata.version and feature tables per release (3.9 as kraftsman serves it, 4.0, 4.1, 4.2)."""
import pytest

from kraftsman.storage import feature_texts as texts
from kraftsman.storage import features as f
from kraftsman.storage.metadata_versions import TABLES, FeatureError, metadata_changed

T39, T40, T41, T42 = (TABLES[r] for r in ("3.9", "4.0", "4.1", "4.2"))
F39, F40, F41, F42 = (f.FEATURE_SETS[r] for r in ("3.9", "4.0", "4.1", "4.2"))


def test_levels_and_strings():
    assert [mv.level for mv in T39.levels] == list(range(1, 26))
    assert T39.by_level(21).version == "3.9-IV0" and T39.latest_production.version == "3.9-IV0"
    assert T39.by_level(11).version == "3.5-IV2"
    assert [(t.levels[0].level, t.latest_production.level, t.latest_testing.level) for t in (T40, T41, T42)] == [
        (7, 25, 26), (7, 27, 29), (7, 29, 30)]


@pytest.mark.parametrize("text,expected", [("3.9", "3.9-IV0"), ("3.7", "3.7-IV4"), ("3.3", "3.3-IV3"),
                                           ("3.6-IV2", "3.6-IV2"), ("4.0", "4.0-IV3"), ("3.9.1", "3.9-IV0")])
def test_from_version_string(text, expected):
    assert T39.parse(text).version == expected


@pytest.mark.parametrize("table,text,expected", [(T40, "4.0", "4.0-IV3"), (T41, "4.1.1", "4.1-IV1"),
                                                 (T41, "4.2-IV1", "4.2-IV1"), (T42, "4.2", "4.2-IV1"),
                                                 (T42, "3.7", "3.7-IV4"), (T42, "4.0", "4.0-IV3")])
def test_4x_release_strings_name_the_newest_production_version(table, text, expected):
    assert table.parse(text, unstable_enabled=True).version == expected


def test_4x_parse_errors():
    with pytest.raises(FeatureError, match=r"^Version 4\.2 is not a valid version\. The minimum version is 3\.3-IV3 "
                                           r"and the maximum version is 4\.2-IV1$"):
        T41.parse("4.2")         # no production 4.2 version in 4.1
    listed = ", ".join(mv.version for mv in T42.levels[:-1])
    with pytest.raises(FeatureError) as e:
        T42.parse("4.3-IV0")     # known but not production
    assert str(e.value) == f"Unknown metadata.version '4.3-IV0'. Supported metadata.version are: {listed}"
    assert T42.parse("4.3-IV0", unstable_enabled=True).level == 30
    with pytest.raises(FeatureError, match=r"^No MetadataVersion with feature level 6\. Valid feature levels are "
                                           r"from 7 to 30\.$"):
        T42.by_level(6)


def test_pre_kraft_versions_parse_in_3_9_only():
    assert T39.parse("2.8").version == "2.8-IV1"
    assert T39.parse("0.10.0").version == "0.10.0-IV1"
    assert not T39.parse("3.0-IV0").is_kraft_supported
    with pytest.raises(FeatureError, match="^Version 3.0-IV0 is not a valid version. The minimum"):
        T40.parse("3.0-IV0")


@pytest.mark.parametrize("text", ["2.9", "3.9-IV9", "foo", "1.2.3"])
def test_from_version_string_rejects(text):
    with pytest.raises(FeatureError, match=f"^Version {text} is not a valid version$"):
        T39.parse(text)


def test_defaults():
    assert F39.default_levels(T39.latest_production) == {"kraft.version": 1, "transaction.version": 0,
                                                         "group.version": 0}
    assert F39.default_levels(T39.by_level(22)) == {"kraft.version": 1, "transaction.version": 0, "group.version": 1}
    assert F39.default_levels(T39.by_level(20))["kraft.version"] == 0
    assert F39.default_levels(T39.latest_testing)["transaction.version"] == 2
    assert list(F42.default_levels(T42.by_level(29)).values()) == [1, 2, 1, 1, 1, 1]
    assert list(F41.default_levels(T41.by_level(27)).values()) == [1, 2, 1, 1, 0, 0]
    assert list(F40.default_levels(T40.by_level(25)).values()) == [1, 2, 1, 0]


def test_supported_ranges():
    assert F39.supported_ranges() == {"metadata.version": (1, 21), "kraft.version": (0, 1)}
    assert F41.supported_ranges() == {"metadata.version": (7, 27), "kraft.version": (0, 1),
                                      "transaction.version": (0, 2), "group.version": (0, 1),
                                      "eligible.leader.replicas.version": (0, 1), "share.version": (0, 1)}
    assert F42.supported_ranges()["streams.version"] == (0, 1)
    assert F42.supported_ranges(unstable_enabled=True)["metadata.version"] == (7, 30)


def test_parse_feature_assignment():
    assert f.parse_feature_assignment("kraft.version=1") == ("kraft.version", 1)
    with pytest.raises(FeatureError, match="^Can't parse feature=level string foo: equals sign not found.$"):
        f.parse_feature_assignment("foo")
    with pytest.raises(FeatureError, match="unable to parse x as a short.$"):
        f.parse_feature_assignment("a=x")
    with pytest.raises(FeatureError, match="unable to parse 40000 as a short.$"):
        f.parse_feature_assignment("a=40000")


def test_dependencies():
    assert F39.dependencies_of("kraft.version", 1) == (("metadata.version", 21),)
    assert F40.dependencies_of("kraft.version", 1) == (("metadata.version", 21),)
    assert F42.dependencies_of("kraft.version", 1) == ()
    assert F42.dependencies_of("eligible.leader.replicas.version", 1) == (("metadata.version", 23),)
    assert F39.dependencies_of("group.version", 1) == ()
    with pytest.raises(FeatureError, match="^Unknown metadata.version 99$"):
        F39.dependencies_of("metadata.version", 99)
    with pytest.raises(FeatureError, match="^Unknown feature: foo$"):
        F39.dependencies_of("foo", 1)
    with pytest.raises(FeatureError, match="^Unknown feature: share.version$"):
        F40.dependencies_of("share.version", 1)
    with pytest.raises(FeatureError, match="^Feature level 5 is not supported for feature group.version$"):
        F39.dependencies_of("group.version", 5)


def test_validate_levels():
    F39.validate_levels({"metadata.version": 21, "kraft.version": 1}, False)
    with pytest.raises(FeatureError, match="^kraft.version 1 must be used with metadata.version 21$"):
        F39.validate_levels({"metadata.version": 20, "kraft.version": 1}, False)
    with pytest.raises(FeatureError, match="^No feature:group.version with feature level 1$"):
        F39.validate_levels({"metadata.version": 21, "group.version": 1}, False)
    F39.validate_levels({"metadata.version": 25, "group.version": 1}, True)
    with pytest.raises(FeatureError, match="^eligible.leader.replicas.version could not be set to 1 because it "
                                           "depends on metadata.version level 23$"):
        F42.validate_levels({"metadata.version": 22, "eligible.leader.replicas.version": 1}, False)
    with pytest.raises(FeatureError, match=r"^share.version could not be set to 1 because it depends on "
                                           r"metadata.version=7 \(3.3-IV3\)$"):
        F42.validate("share.version", 1, {"metadata.version": 6})
    F42.validate_levels({"metadata.version": 21, "share.version": 1, "streams.version": 1}, False)
    with pytest.raises(FeatureError, match="^No feature:streams.version with feature level 1$"):
        F41.validate_levels({"metadata.version": 27, "streams.version": 1}, False)


def test_metadata_changed():
    assert metadata_changed(21, 29) and not metadata_changed(23, 29) and metadata_changed(16, 21)


def test_lookup_texts():
    assert texts.version_mapping("4.2", "4.0") == ("metadata.version=25 (4.0)\nkraft.version=1\ntransaction.version=2\n"
                                                   "group.version=1\neligible.leader.replicas.version=0\n"
                                                   "share.version=0\nstreams.version=0\n")
    with pytest.raises(FeatureError, match="^Unknown release version 'x'. Supported versions are: 3.3-IV3 to "
                                           "4.1-IV1$"):
        texts.version_mapping("4.1", "x")
    assert texts.feature_dependencies("4.2", ["eligible.leader.replicas.version=1", "kraft.version=1"]) == (
        "eligible.leader.replicas.version=1 requires:\n    metadata.version=23 (4.0-IV1)\n"
        "kraft.version=1 has no dependencies.\n")
    with pytest.raises(FeatureError, match="^Invalid feature format: group.version. Expected format"):
        texts.feature_dependencies("4.2", ["group.version"])
