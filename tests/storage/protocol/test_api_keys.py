"""storage.protocol.api_keys, the API keys Kafka 3.9's client knows: every key 0-87, each fact in one home (a stated
row only where kraftsman's spec is missing or from a later release), and the table agrees with Kafka 3.9's own
specs (shared/reference/kafka-schemas) and with what a real Kafka 3.9 kafka-broker-api-versions printed
(shared/fixtures/kafka-admin-3.9)."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from kraftsman.storage.protocol.api_keys import api_keys, from_schemas, stated
from kraftsman.storage.protocol.schema import Versions

SHARED = Path(__file__).resolve().parents[3].parent / "shared"
KAFKA_SCHEMAS = SHARED / "reference" / "kafka-schemas"
RECORDED = SHARED / "fixtures" / "kafka-admin-3.9" / "apiversions-broker4" / "stdout.txt"
LINE = re.compile(r"^\t(\w+)\((\d+)\): (?:UNSUPPORTED|(\d+)(?: to (\d+))? \[usable: (\d+)\]),?$")


def test_every_key_of_kafka_39_once_in_order():
    assert list(api_keys()) == list(range(88))         # Kafka 3.9's ApiKeys: 0 Produce .. 87 ReadShareGroupStateSummary
    assert (api_keys()[0].name, api_keys()[87].name) == ("Produce", "ReadShareGroupStateSummary")


def test_a_stated_row_is_missing_from_the_schemas_or_differs_from_them():
    ours = from_schemas()
    for key, row in stated().items():
        assert key not in ours or ours[key] != row, f"{row.name} is stated but kraftsman's spec says the same"
    # the nine from a later release, as the module's Rules name them
    assert sorted(k for k in stated() if k in ours) == [1, 3, 45, 52, 57, 58, 60, 67, 80]
    assert [api_keys()[k].latest for k in (1, 3, 45, 57, 80)] == [17, 12, 0, 1, 0]     # 3.9's tops
    assert (api_keys()[52].latest, api_keys()[60].latest) == (1, 1)           # Vote, DescribeCluster: 3.9's v1
    assert all("zkBroker" in api_keys()[k].listeners for k in (58, 67))       # Envelope, AllocateProducerIds


def test_client_apis_are_the_broker_and_zookeeper_listeners():
    controller_only = {k for k, a in api_keys().items() if not a.client_api}
    assert controller_only == {52, 53, 54, 59, 62, 63, 70, 73, 82}
    assert api_keys()[7].client_api and api_keys()[58].client_api     # ControlledShutdown, Envelope: zkBroker


def test_unstable_last_versions_count_as_the_client_speaks_them():
    # ShareFetch's only version in 3.9 is unstable; ApiKeys.latestVersion() includes it
    assert (api_keys()[78].oldest, api_keys()[78].latest) == (0, 0)


def _kafka_spec(path: Path) -> dict:
    return json.loads(re.sub(r"^\s*//.*$", "", path.read_text(), flags=re.M))


def test_agrees_with_kafka_39s_own_specs():
    if not KAFKA_SCHEMAS.is_dir():
        pytest.skip(f"Kafka's specs not found at {KAFKA_SCHEMAS} (../shared is absent)")
    compared = 0
    for path in KAFKA_SCHEMAS.glob("*Request.json"):
        spec = _kafka_spec(path)
        if spec.get("type") != "request":
            continue
        versions = Versions.parse(spec["validVersions"])
        row = api_keys()[spec["apiKey"]]
        assert (row.name, row.oldest, row.latest, row.listeners) == (
            spec["name"].removesuffix("Request"), versions.lo, versions.hi, frozenset(spec["listeners"])), path.name
        compared += 1
    assert compared >= 20


def test_agrees_with_what_kafka_39_printed_for_a_broker():
    if not RECORDED.is_file():
        pytest.skip(f"the admin fixtures are absent ({RECORDED})")
    block = RECORDED.read_text().split("\n)\n")[0].splitlines()[1:]
    printed = {}
    for line in block:
        name, key, low, high, usable = LINE.match(line).groups()
        printed[int(key)] = (name, usable)
    # a 3.9 broker's block lists every client API (served or UNSUPPORTED) and nothing else
    assert set(printed) == {k for k, a in api_keys().items() if a.client_api}
    for key, (name, usable) in printed.items():
        assert name == api_keys()[key].name
        if usable is not None:
            assert int(usable) <= api_keys()[key].latest
