import pytest

from kraftsman.storage import features as f


def test_levels_and_strings():
    assert [mv.level for mv in f.VERSIONS] == list(range(1, 26))
    assert f.by_level(21).version == "3.9-IV0"
    assert f.LATEST_PRODUCTION.version == "3.9-IV0"
    assert f.by_level(11).version == "3.5-IV2"


@pytest.mark.parametrize("text,expected", [("3.9", "3.9-IV0"), ("3.7", "3.7-IV4"), ("3.3", "3.3-IV3"),
                                           ("3.6-IV2", "3.6-IV2"), ("4.0", "4.0-IV3"), ("3.9.1", "3.9-IV0")])
def test_from_version_string(text, expected):
    assert f.from_version_string(text).version == expected


def test_pre_kraft_versions_parse_but_are_not_kraft():
    assert f.from_version_string("2.8").version == "2.8-IV1"
    assert f.from_version_string("0.10.0").version == "0.10.0-IV1"
    assert not f.from_version_string("3.0-IV0").is_kraft_supported
    assert f.from_version_string("3.0-IV0") < f.MINIMUM_KRAFT_VERSION < f.LATEST_PRODUCTION


@pytest.mark.parametrize("text", ["2.9", "3.9-IV9", "foo", "1.2.3"])
def test_from_version_string_rejects(text):
    with pytest.raises(f.FeatureError, match=f"^Version {text} is not a valid version$"):
        f.from_version_string(text)


def test_defaults():
    assert f.default_levels(f.LATEST_PRODUCTION) == {"kraft.version": 1, "transaction.version": 0,
                                                      "group.version": 0}
    assert f.default_levels(f.by_level(22)) == {"kraft.version": 1, "transaction.version": 0, "group.version": 1}
    assert f.default_levels(f.by_level(20))["kraft.version"] == 0
    assert f.default_levels(f.LATEST_TESTING)["transaction.version"] == 2


def test_parse_feature_assignment():
    assert f.parse_feature_assignment("kraft.version=1") == ("kraft.version", 1)
    with pytest.raises(f.FeatureError, match="^Can't parse feature=level string foo: equals sign not found.$"):
        f.parse_feature_assignment("foo")
    with pytest.raises(f.FeatureError, match="unable to parse x as a short.$"):
        f.parse_feature_assignment("a=x")
    with pytest.raises(f.FeatureError, match="unable to parse 40000 as a short.$"):
        f.parse_feature_assignment("a=40000")


def test_dependencies():
    assert f.dependencies_of("kraft.version", 1) == (("metadata.version", 21),)
    assert f.dependencies_of("group.version", 1) == ()
    with pytest.raises(f.FeatureError, match="^Unknown metadata.version 99$"):
        f.dependencies_of("metadata.version", 99)
    with pytest.raises(f.FeatureError, match="^Unknown feature: foo$"):
        f.dependencies_of("foo", 1)
    with pytest.raises(f.FeatureError, match="^Feature level 5 is not supported for feature group.version$"):
        f.dependencies_of("group.version", 5)


def test_validate_levels():
    f.validate_levels({"metadata.version": 21, "kraft.version": 1}, False)
    with pytest.raises(f.FeatureError, match="^kraft.version 1 must be used with metadata.version 21$"):
        f.validate_levels({"metadata.version": 20, "kraft.version": 1}, False)
    with pytest.raises(f.FeatureError, match="^No feature:group.version with feature level 1$"):
        f.validate_levels({"metadata.version": 21, "group.version": 1}, False)
    f.validate_levels({"metadata.version": 25, "group.version": 1}, True)
