"""Golden: the client requests a real Kafka 3.9 controller received (kafka-wire-3.9/envelope-inner), replayed in
order through our handlers on a cluster like the recorded one (brokers 4 and 5, metadata.version 3.9-IV0).

Each response must encode to the real response frame byte for byte, once the random topic ids are swapped for
the real ones (CreateTopics v7 with every default config, DeleteTopics v6, IncrementalAlterConfigs v1,
AlterConfigs v2, ListPartitionReassignments v0).
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from kraftsman.controller.quorum import configuration_control, replication_control
from kraftsman.storage.protocol import framing

from .replication_fixtures import broker, cluster, context, replay

HANDLERS = {**replication_control.HANDLERS, **configuration_control.HANDLERS}

WIRE = Path(__file__).resolve().parents[3].parent / "shared" / "fixtures" / "kafka-wire-3.9"
INNER = WIRE / "envelope-inner"
HANDLED = {19, 20, 33, 44, 46}


def _exchanges():
    if not (INNER / "index.json").is_file():
        pytest.skip(f"Kafka wire fixtures not found at {WIRE} (../shared is absent)")
    entries = json.loads((INNER / "index.json").read_text())
    requests = [e for e in entries if e["direction"] == "req" and e["inner_api_key"] in HANDLED]
    responses = {(e["inner_api_key"], e["inner_correlation_id"], e["envelope_seq"]): e
                 for e in entries if e["direction"] == "resp"}
    for req in requests:
        later = [k for k in responses if k[:2] == (req["inner_api_key"], req["inner_correlation_id"])
                 and k[2] > req["envelope_seq"]]
        yield req, responses[min(later, key=lambda k: k[2])]


def _frame(entry) -> bytes:
    return framing.strip_size((WIRE / entry["file"]).read_bytes())


def _swap_topic_ids(api_key: int, ours, real, ids: dict) -> None:
    """Replace our random topic ids by the real ones (remembering the mapping for later requests)."""
    items = ours.topics if api_key == 19 else ours.responses if api_key == 20 else []
    real_items = real.topics if api_key == 19 else real.responses if api_key == 20 else []
    for mine, theirs in zip(items, real_items):
        ids[bytes(mine.topic_id)] = theirs.topic_id
        mine.topic_id = theirs.topic_id


def test_recorded_admin_requests_get_byte_identical_responses():
    image = cluster(broker(4), broker(5), mv=21)
    ids, checked = {}, []
    for req, resp in _exchanges():
        header, request = framing.decode_request(_frame(req))
        info = framing.api_info(header.request_api_key)
        version = header.request_api_version
        result = HANDLERS[info.name](context(image, version), request)
        image = replay(image, result.records)
        real_header, real = framing.decode_response(info.api_key, version, _frame(resp))
        _swap_topic_ids(info.api_key, result.response, real, ids)
        ours = framing.encode_response_frame(info.api_key, version, real_header, result.response)
        assert ours == framing.with_size(_frame(resp)), (req["file"], result.response, real)
        checked.append(info.name)
    assert sorted(set(checked)) == ["AlterConfigs", "CreateTopics", "DeleteTopics", "IncrementalAlterConfigs",
                                    "ListPartitionReassignments"]
    assert set(image.topics.by_name) == {"t-three", "t-six", "t-single", "t-after-failover"}
    assert image.configs.resources[(2, "t-three")] == {"max.message.bytes": "2000000", "retention.ms": "3600000"}
    assert image.configs.resources[(4, "")] == {"log.cleaner.threads": "2"}
