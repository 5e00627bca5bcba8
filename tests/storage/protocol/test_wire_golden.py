"""Real Kafka 3.9 wire frames (shared/fixtures/kafka-wire-3.9) decode and re-encode byte for byte.

Rules:
- Every saved frame of an API we have specs for goes through `framing` (header + body) and
  re-encodes to the identical bytes, tagged fields included; its JSON rendering must not crash.
- APIs we have no spec for (Envelope itself, InitProducerId, ...) are skipped by an explicit,
  counted list, so the skip cannot grow silently.
- Skips cleanly when ../shared is absent.
"""
from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import NamedTuple

import pytest

from kraftsman.storage.protocol import codec, framing

REPO = Path(__file__).resolve().parents[3]
WIRE = REPO.parent / "shared" / "fixtures" / "kafka-wire-3.9"

# api_key -> number of saved frames (msgs/ and envelope-inner/) we cannot decode: no spec for the API.
EXPECTED_SKIPS = {22: 2}  # InitProducerId
EXPECTED_DECODED = 587

_NAME = re.compile(r"^\d+_(?P<target>\w+?)_(?P<dir>req|resp)_(?P<api>[A-Za-z]+|api\d+)_v(?P<v>\d+)_c(?P<c>\d+)\.bin$")


class Frame(NamedTuple):
    path: Path
    direction: str
    api_key: int
    version: int
    correlation_id: int
    client_id: str | None


def _from_name(path: Path, api_key: int, client_id: str | None) -> Frame:
    m = _NAME.match(path.name)
    assert m, f"unexpected fixture name {path.name}"
    return Frame(path, m["dir"], api_key, int(m["v"]), int(m["c"]), client_id)


def _msgs() -> list[Frame]:
    rows = [json.loads(line) for line in (WIRE / "index.jsonl").read_text().splitlines() if line.strip()]
    return [_from_name(WIRE / r["file"], r["api_key"], r["client_id"]) for r in rows if r["file"]]


def _envelope_inner() -> list[Frame]:
    rows = json.loads((WIRE / "envelope-inner" / "index.json").read_text())
    return [_from_name(WIRE / r["file"], r["inner_api_key"], None) for r in rows]


def _all_frames() -> list[Frame]:
    return _msgs() + _envelope_inner() if (WIRE / "index.jsonl").is_file() else []


FRAMES = _all_frames()
DECODABLE = [f for f in FRAMES if f.api_key in framing.api_registry()]


@pytest.fixture(scope="module", autouse=True)
def _need_shared():
    if not FRAMES:
        pytest.skip(f"Kafka wire fixtures not found at {WIRE} (../shared is absent)")


def test_skipped_apis_are_exactly_the_known_ones():
    skipped = Counter(f.api_key for f in FRAMES if f.api_key not in framing.api_registry())
    assert dict(skipped) == EXPECTED_SKIPS
    assert len(DECODABLE) == EXPECTED_DECODED


def test_file_names_agree_with_the_index():
    for f in DECODABLE:
        api = _NAME.match(f.path.name)["api"]
        assert api in (f"api{f.api_key}", framing.api_info(f.api_key).name), f.path.name


def _roundtrip(frame: Frame):
    data = frame.path.read_bytes()
    body_bytes = framing.strip_size(data)
    info = framing.api_info(frame.api_key)
    if frame.direction == "req":
        header, body = framing.decode_request(body_bytes)
        assert (header.request_api_key, header.request_api_version) == (frame.api_key, frame.version)
        again = framing.encode_request_frame(header, body)
        return data, again, header, body, info.request
    header, body = framing.decode_response(frame.api_key, frame.version, body_bytes)
    again = framing.encode_response_frame(frame.api_key, frame.version, header, body)
    return data, again, header, body, info.response


@pytest.mark.parametrize("frame", DECODABLE, ids=[f.path.name for f in DECODABLE])
def test_frame_decodes_and_reencodes_identically(frame: Frame):
    data, again, header, body, name = _roundtrip(frame)
    assert again == data
    assert header.correlation_id == frame.correlation_id
    if frame.direction == "req" and frame.path.parent.name == "msgs":
        assert header.client_id == frame.client_id
    json.loads(codec.to_json(name, frame.version, body))


def test_api_versions_responses_use_header_v0():
    frames = [f for f in DECODABLE if f.api_key == framing.API_VERSIONS_KEY and f.direction == "resp"]
    assert frames
    for f in frames:
        data = f.path.read_bytes()
        # size, int32 correlation id, then the body's int16 error code: no header tagged-field byte between.
        assert int.from_bytes(data[4:8], "big") == f.correlation_id
        header, body = framing.decode_response(f.api_key, f.version, data[4:])
        assert body.error_code == 0 and any(k.api_key == 18 for k in body.api_keys)


def test_client_id_is_an_int16_string_in_request_header_v2():
    frame = next(f for f in DECODABLE if f.direction == "req" and f.client_id)
    data = frame.path.read_bytes()
    assert framing.request_header_version(frame.api_key, frame.version) == 2
    raw = frame.client_id.encode()
    assert data[12:14] == len(raw).to_bytes(2, "big") and data[14:14 + len(raw)] == raw
