"""kraftsman's broker start time (tag 10000 of RegisterBrokerRecord): kept by the image, its snapshots and the
codec; invisible in every Kafka-compatible text (dump-log, the shell's BrokerRegistration), shown in kraftsman's
structured outputs."""
from __future__ import annotations

import io
import json
import re

from kraftsman.cli.common.boundary import run_command
from kraftsman.cli.common.environment import Environment
from kraftsman.cli.dump_log.tool import run as dump_log
from kraftsman.controller.image.delta import MetadataDelta
from kraftsman.controller.image.start_time import START_TIME_TAG, start_time_ms, with_start_time
from kraftsman.shell.runner import run_line
from kraftsman.shell.state import ShellState
from kraftsman.storage.protocol import codec
from kraftsman.storage.protocol.uuids import Uuid
from kraftsman.storage.records.batch import build_batch
from kraftsman.storage.records.metadata import ApiMessageAndVersion, read_metadata_record, write_metadata_record

STARTED = 1_700_000_000_123


def register(start: int | None = None, version: int = 3):
    cls = codec.message_class("RegisterBrokerRecord")
    message = cls(broker_id=7, incarnation_id=Uuid(b"\x07" * 16), broker_epoch=42, rack="r1", fenced=True,
                  end_points=[cls.BrokerEndpoint(name="PLAINTEXT", host="b7", port=9092, security_protocol=0)],
                  features=[], log_dirs=[Uuid(b"\x70" * 16)])
    return ApiMessageAndVersion(message if start is None else with_start_time(message, start), version)


def unfence():
    return ApiMessageAndVersion(codec.message_class("BrokerRegistrationChangeRecord")(
        broker_id=7, broker_epoch=42, fenced=-1), 2)


def image_of(*records):
    delta = MetadataDelta()
    for record in records:
        delta.replay(record)
    return delta.apply()


def test_the_tagged_bytes_are_hand_derived():
    # tagged section: count 02; Kafka's LogDirs (tag 00, size 0x11: count 02 + one uuid); then tag 10000 = varint
    # 90 4e, size 08, int64 1700000000123 = 0x0000018bcfe5687b, in tag order
    value = codec.encode("RegisterBrokerRecord", 3, register(STARTED).message)
    assert value.endswith(bytes.fromhex("02" "00" "11" "02" + "70" * 16 + "904e" "08" "0000018bcfe5687b"))
    assert START_TIME_TAG == 10000


def test_decode_reencode_and_json_of_kafka_ignore_it():
    value = codec.encode("RegisterBrokerRecord", 3, register(STARTED).message)
    decoded = codec.decode("RegisterBrokerRecord", 3, value)
    assert start_time_ms(decoded) == STARTED
    assert codec.encode("RegisterBrokerRecord", 3, decoded) == value
    assert codec.to_json("RegisterBrokerRecord", 3, decoded) == codec.to_json("RegisterBrokerRecord", 3,
                                                                              register().message)
    assert start_time_ms(register().message) == -1


def test_with_start_time_replaces_and_removes_and_keeps_other_unknown_tags():
    message = register().message
    message._unknown_tagged_fields = [(20000, b"\x01")]
    twice = with_start_time(with_start_time(message, 5), STARTED)
    assert start_time_ms(twice) == STARTED and (20000, b"\x01") in twice._unknown_tagged_fields
    assert [tag for tag, _ in twice._unknown_tagged_fields] == [10000, 20000]
    assert with_start_time(twice, -1)._unknown_tagged_fields == [(20000, b"\x01")]


def test_fencing_changes_and_snapshots_keep_it():
    image = image_of(register(STARTED), unfence())
    assert not image.cluster.brokers[7].record.fenced and image.cluster.brokers[7].start_time_ms == STARTED
    snapshot = [read_metadata_record(write_metadata_record(r)) for r in image.write()]    # as a snapshot holds them
    assert image_of(*snapshot).cluster.brokers[7].start_time_ms == STARTED


def test_the_shell_text_is_kafkas_and_its_json_shows_the_start_time():
    tagged, plain = image_of(register(STARTED)), image_of(register())
    assert str(tagged.cluster.brokers[7]) == str(plain.cluster.brokers[7])
    out = []
    assert run_line(ShellState(tagged), "cat -o json /image/cluster/brokers/7", out.append) == 0
    assert json.loads("".join(out))["start_time_ms"] == STARTED


def _dump(tmp_path, record, *flags) -> str:
    value = write_metadata_record(record)
    (tmp_path / "00000000000000000000.log").write_bytes(build_batch([(None, value)], 0, timestamp=5))
    out, err = io.StringIO(), io.StringIO()
    status = run_command(dump_log, ["--cluster-metadata-decoder", *flags, "--files",
                                    str(tmp_path / "00000000000000000000.log")],
                         Environment(stdout=out, stderr=err), prog="kafka-dump-log")
    assert (status, err.getvalue()) == (0, "")
    return out.getvalue()


def test_dump_log_text_is_what_kafka_prints_without_the_tag(tmp_path):
    # Kafka's JsonConverter prints no unknown tag: only the sizes, the CRC and later positions move
    with_tag, without = _dump(tmp_path, register(STARTED)), _dump(tmp_path, register())
    assert '"brokerId":7' in with_tag and "10000" not in with_tag and str(STARTED) not in with_tag

    def sizes_aside(text: str) -> str:
        return re.sub(r"(size|Size|crc|position|Position): -?\d+", r"\1: N", text)

    assert sizes_aside(with_tag) == sizes_aside(without)
    assert with_tag != without


def test_dump_log_jsonl_shows_the_start_time_beside_kafkas_json(tmp_path):
    """kraftsman's JSONL names the start time (start_time_ms) while `data` stays Kafka's JSON (no tag 10000)."""
    from importlib import resources

    import jsonschema

    schema = json.loads(resources.files("kraftsman.cli").joinpath("schemas/dump-log-jsonl.schema.json").read_text())
    for record, expected in ((register(STARTED), STARTED), (register(), -1)):
        lines = [json.loads(line) for line in _dump(tmp_path, record, "--output", "jsonl").splitlines()]
        found = [obj for obj in lines if obj.get("kind") == "record"]
        assert [obj["start_time_ms"] for obj in found] == [expected]
        assert found[0]["data"]["brokerId"] == 7 and "10000" not in json.dumps(found[0]["data"])
        for obj in lines:
            jsonschema.validate(obj, schema)
