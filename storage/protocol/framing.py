"""Kafka request/response framing: size prefix, request and response headers, API registry.

Wire layout (both directions):

    int32  size                  number of bytes that follow (big-endian)
    ...    header                RequestHeader v1/v2 or ResponseHeader v0/v1
    ...    body                  the API's request or response message at the request's version

Rules:
- The registry is data: it is built from the request/response specs (`type`, `apiKey`), never by hand.
- Request header v2 when the API version is flexible, else v1. ClientId stays an int16-length string
  in v2 (its field-level flexibleVersions is "none"). Header v0 (ControlledShutdown v0 only) is out
  of scope: ControlledShutdown is not in the registry.
- Response header v1 when flexible, else v0; an ApiVersions response ALWAYS uses v0 (KIP-511).
- An ApiVersions request at a version we do not support gets a v0 body with error 35
  (UNSUPPORTED_VERSION) listing only the ApiVersions key; a client reading an ApiVersions response
  that does not parse at its version retries at v0 (Kafka's ApiVersionsResponse.parse).
- Decoders take a frame WITHOUT its size prefix; encoders return bytes WITH it.
- Every malformed frame raises FramingError with a one-line message; nothing else escapes.
- The hot paths (encode_request, encode_response, decode_request, decode_response) take their header and
  body functions from one cached plan per (api key, version) and write the headers' bytes directly; a
  frame they cannot handle goes through the general path, which says what is wrong. Both give the same bytes
  and the same messages (tests/storage/protocol/test_framing_plans.py).
- An ApiVersions request v3+ names its client software with Kafka's pattern, else a server answers
  INVALID_REQUEST (api_versions_request_error, for the controller's listener and the simulated broker's).
"""
from __future__ import annotations

import functools
import re
import struct
from dataclasses import dataclass

from . import codec
from .errors import Errors
from .schema import Versions, load, names

API_VERSIONS_KEY = 18
MAX_FRAME_SIZE = 104857600  # Kafka's socket.request.max.bytes default (100 MiB)

_SIZE = struct.Struct(">i")
_KEY_VERSION = struct.Struct(">hh")


class FramingError(ValueError):
    """A frame is malformed: bad size, unknown api key, unsupported version or bad header/body."""

    def __init__(self, message: str, position: int | None = None):
        super().__init__(message)
        self.position = position


class UnsupportedVersionError(FramingError):
    """A request names a version the API does not have; `header` is set for ApiVersions (KIP-511)."""

    def __init__(self, message: str, api_key: int, api_version: int, header=None):
        super().__init__(message, 2)
        self.api_key, self.api_version, self.header = api_key, api_version, header


@dataclass(frozen=True)
class ApiInfo:
    """Describe one API: its key, spec names, valid and flexible versions (from the request spec)."""

    api_key: int
    name: str
    request: str
    response: str
    valid_versions: Versions
    flexible_versions: Versions

    @property
    def versions(self) -> range:
        """Return every valid version as a range."""
        return range(self.valid_versions.lo, self.valid_versions.hi + 1)

    def is_flexible(self, api_version: int) -> bool:
        """Tell whether `api_version` uses the flexible (compact + tagged fields) encoding."""
        return api_version in self.flexible_versions


# ---------------------------------------------------------------- registry


@functools.lru_cache(maxsize=None)
def api_registry() -> dict[int, ApiInfo]:
    """Return api_key -> ApiInfo for every request spec that has a matching response spec."""
    known = set(names())
    registry: dict[int, ApiInfo] = {}
    for name in sorted(known):
        spec = load(name)
        if spec.type != "request" or spec.api_key is None:
            continue
        base = name[: -len("Request")]
        if base + "Response" not in known:
            continue
        registry[spec.api_key] = ApiInfo(spec.api_key, base, name, base + "Response",
                                         spec.valid_versions, spec.flexible_versions)
    return dict(sorted(registry.items()))


def api_info(api_key: int) -> ApiInfo:
    """Return the ApiInfo of `api_key`, or raise FramingError for an unknown key."""
    try:
        return api_registry()[api_key]
    except KeyError:
        raise FramingError(f"unknown api key {api_key}", 0) from None


def _unsupported(info: ApiInfo, api_version: int, header=None) -> UnsupportedVersionError:
    return UnsupportedVersionError(f"{info.name} v{api_version} is not supported (valid: {info.valid_versions})",
                                   info.api_key, api_version, header)


def _checked(api_key: int, api_version: int) -> ApiInfo:
    info = api_info(api_key)
    if api_version not in info.valid_versions:
        raise _unsupported(info, api_version)
    return info


def request_header_version(api_key: int, api_version: int) -> int:
    """Return the RequestHeader version for this API version: 2 if flexible, else 1."""
    info = api_info(api_key)
    return 2 if info.is_flexible(api_version) else 1


def response_header_version(api_key: int, api_version: int) -> int:
    """Return the ResponseHeader version: 1 if flexible, else 0; always 0 for ApiVersions (KIP-511)."""
    info = api_info(api_key)
    if api_key == API_VERSIONS_KEY:
        return 0
    return 1 if info.is_flexible(api_version) else 0


# ---------------------------------------------------------------- size prefix


def with_size(payload: bytes | bytearray) -> bytes:
    """Prepend the int32 size to `payload`."""
    return _SIZE.pack(len(payload)) + bytes(payload)


def read_frame(buf, pos: int = 0, max_size: int = MAX_FRAME_SIZE) -> tuple[bytes | None, int]:
    """Return (frame without size, next position), or (None, pos) when the frame is not complete yet."""
    if len(buf) - pos < 4:
        return None, pos
    size = _SIZE.unpack_from(buf, pos)[0]
    if size < 0:
        raise FramingError(f"Invalid receive (size = {size})", pos)
    if size > max_size:
        raise FramingError(f"Invalid receive (size = {size} larger than {max_size})", pos)
    end = pos + 4 + size
    if end > len(buf):
        return None, pos
    return bytes(buf[pos + 4:end]), end


def strip_size(data: bytes) -> bytes:
    """Return the frame of `data` (one whole sized frame), checking the size prefix matches."""
    if len(data) < 4:
        raise FramingError(f"frame of {len(data)} byte(s) is too short for its 4-byte size", 0)
    size = _SIZE.unpack_from(data, 0)[0]
    if size != len(data) - 4:
        raise FramingError(f"frame size {size} does not match the {len(data) - 4} byte(s) that follow", 0)
    return data[4:]


# ---------------------------------------------------------------- codec glue


def _decode_part(name: str, version: int, frame: bytes, pos: int):
    try:
        return codec.decoder(name, version)(frame, pos)
    except codec.CodecError as e:
        raise FramingError(f"cannot decode {name} v{version}: {e}", e.position) from None


def _decode_body(name: str, version: int, frame: bytes, pos: int):
    body, end = _decode_part(name, version, frame, pos)
    if end != len(frame):
        raise FramingError(f"Found {len(frame) - end} byte(s) of garbage after {name} v{version}", end)
    return body


def _encode_part(name: str, version: int, message, out: bytearray) -> None:
    try:
        codec.encoder(name, version)(message, out)
    except codec.CodecError as e:
        raise FramingError(f"cannot encode {name} v{version}: {e}") from None
    except (AttributeError, TypeError, struct.error, ValueError) as e:
        raise FramingError(f"cannot encode {name} v{version}: {type(e).__name__}: {e}") from None


def _frame(parts) -> bytes:
    out = bytearray(4)
    for name, version, message in parts:
        _encode_part(name, version, message, out)
    _SIZE.pack_into(out, 0, len(out) - 4)
    return bytes(out)


# ---------------------------------------------------------------- plans (the hot paths' cache)

_CID = struct.Struct(">i")
_PLANS: dict = {}  # (api key, version) and the request frame's first 4 bytes -> _Plan
_CLIENT_IDS: dict = {}  # client id -> its int16-length bytes (a handful per process)


class _Plan:
    """What framing one (api key, version) needs: header versions, the header bytes that never change, and the
    generated functions of both headers and both bodies."""

    __slots__ = ("request_header_version", "request_prefix", "response_prefix", "encode_request",
                 "decode_request", "encode_response", "decode_response", "decode_request_header",
                 "decode_response_header")

    def __init__(self, info: ApiInfo, version: int):
        self.request_header_version = request_header_version(info.api_key, version)
        response_version = response_header_version(info.api_key, version)
        self.request_prefix = _SIZE.pack(0) + _KEY_VERSION.pack(info.api_key, version)
        self.response_prefix = bytes(8 + response_version)  # size, correlation id, [no tagged fields]
        self.encode_request = codec.encoder(info.request, version)
        self.encode_response = codec.encoder(info.response, version)
        self.decode_request = codec.raw_decoder(info.request, version)
        self.decode_response = codec.raw_decoder(info.response, version)
        self.decode_request_header = codec.raw_decoder("RequestHeader", self.request_header_version)
        self.decode_response_header = codec.raw_decoder("ResponseHeader", response_version)


def _plan(api_key: int, api_version: int) -> _Plan:
    """Return the cached plan of a known (api key, version); raise FramingError for any other."""
    info = _checked(api_key, api_version)
    plan = _PLANS[(api_key, api_version)] = _PLANS[_KEY_VERSION.pack(api_key, api_version)] = _Plan(info, api_version)
    return plan


def _client_id_bytes(client_id: str | None) -> bytes | None:
    """Return a request header's ClientId: an int16-length string, -1 for null (every header version); None when
    it does not fit (the general path says so)."""
    if client_id is not None and type(client_id) is not str:
        return None
    data = _CLIENT_IDS.get(client_id)
    if data is None:
        if client_id is None:
            data = b"\xff\xff"
        else:
            raw = client_id.encode("utf-8")
            if len(raw) > 0x7FFF:
                return None
            data = struct.pack(">h", len(raw)) + raw
        if len(_CLIENT_IDS) < 256:
            _CLIENT_IDS[client_id] = data
    return data


# ---------------------------------------------------------------- requests


def request_header(api_key: int, api_version: int, correlation_id: int, client_id: str | None):
    """Build a RequestHeader message."""
    return codec.message_class("RequestHeader")(request_api_key=api_key, request_api_version=api_version,
                                                correlation_id=correlation_id, client_id=client_id)


def encode_request(api_key: int, api_version: int, correlation_id: int, client_id: str | None, body) -> bytes:
    """Return the sized frame of a request: header (v1/v2) then `body` at `api_version`."""
    plan = _PLANS.get((api_key, api_version)) or _plan(api_key, api_version)
    name = _client_id_bytes(client_id)
    if name is not None:
        out = bytearray(plan.request_prefix)
        out += _CID.pack(correlation_id)
        out += name
        if plan.request_header_version == 2:
            out.append(0)  # no tagged fields
        try:
            plan.encode_request(body, out)
        except Exception:  # noqa: BLE001 - the general path below says what is wrong
            pass
        else:
            _SIZE.pack_into(out, 0, len(out) - 4)
            return bytes(out)
    return encode_request_frame(request_header(api_key, api_version, correlation_id, client_id), body)


def encode_request_frame(header, body) -> bytes:
    """Return the sized frame of a request from a RequestHeader message (its tagged fields kept) and a body."""
    info = _checked(header.request_api_key, header.request_api_version)
    version = header.request_api_version
    hv = request_header_version(info.api_key, version)
    return _frame((("RequestHeader", hv, header), (info.request, version, body)))


def _peek_key_version(frame: bytes) -> tuple[int, int]:
    if len(frame) < 8:
        raise FramingError(f"request frame of {len(frame)} byte(s) is shorter than a request header (8)", 0)
    return _KEY_VERSION.unpack_from(frame, 0)


def decode_request(frame: bytes, *, trailing_ok: bool = False):
    """Decode a request frame (without size) into (RequestHeader message, body message); bytes after the body
    are an error unless `trailing_ok` (a Kafka server's request parser does not look for them)."""
    plan = _PLANS.get(bytes(frame[:4])) if len(frame) >= 8 else None
    if plan is not None:
        end = len(frame)
        try:
            header, pos = plan.decode_request_header(frame, 0, end)
            body, stop = plan.decode_request(frame, pos, end)
        except Exception:  # noqa: BLE001 - the general path below says what is wrong
            pass
        else:
            if pos <= end and (stop == end or (trailing_ok and stop < end)):
                return header, body
    header, body = _decode_request_slowly(frame, trailing_ok)
    if plan is None:
        _plan(header.request_api_key, header.request_api_version)  # the next one takes the hot path
    return header, body


def _decode_request_slowly(frame: bytes, trailing_ok: bool):
    api_key, version = _peek_key_version(frame)
    info = api_info(api_key)
    if version not in info.valid_versions:
        raise _unsupported_request(info, version, frame)
    header, pos = _decode_part("RequestHeader", request_header_version(api_key, version), frame, 0)
    if trailing_ok:
        return header, _decode_part(info.request, version, frame, pos)[0]
    return header, _decode_body(info.request, version, frame, pos)


def _unsupported_request(info: ApiInfo, version: int, frame: bytes) -> UnsupportedVersionError:
    """Build the error for an unsupported version; for ApiVersions its header is parsed (KIP-511)."""
    header = None
    if info.api_key == API_VERSIONS_KEY and version >= 0:
        header, _ = _decode_part("RequestHeader", request_header_version(info.api_key, version), frame, 0)
    return _unsupported(info, version, header)


# ---------------------------------------------------------------- responses


def response_header(correlation_id: int):
    """Build a ResponseHeader message."""
    return codec.message_class("ResponseHeader")(correlation_id=correlation_id)


def encode_response(api_key: int, api_version: int, correlation_id: int, body) -> bytes:
    """Return the sized frame of a response: header (v0/v1) then `body` at `api_version`."""
    plan = _PLANS.get((api_key, api_version)) or _plan(api_key, api_version)
    out = bytearray(plan.response_prefix)
    _CID.pack_into(out, 4, correlation_id)
    try:
        plan.encode_response(body, out)
    except Exception:  # the general path says what is wrong
        return encode_response_frame(api_key, api_version, response_header(correlation_id), body)
    _SIZE.pack_into(out, 0, len(out) - 4)
    return bytes(out)


def encode_response_frame(api_key: int, api_version: int, header, body) -> bytes:
    """Return the sized frame of a response from a ResponseHeader message (its tagged fields kept)."""
    info = _checked(api_key, api_version)
    hv = response_header_version(api_key, api_version)
    return _frame((("ResponseHeader", hv, header), (info.response, api_version, body)))


def decode_response(api_key: int, api_version: int, frame: bytes):
    """Decode a response frame (without size) to a request of `api_version` into (header, body)."""
    plan = _PLANS.get((api_key, api_version))
    if plan is not None:
        end = len(frame)
        try:
            header, pos = plan.decode_response_header(frame, 0, end)
            body, stop = plan.decode_response(frame, pos, end)
        except Exception:  # noqa: BLE001 - the general path below says what is wrong (or reads ApiVersions v0)
            pass
        else:
            if pos <= end and stop == end:
                return header, body
    else:
        _plan(api_key, api_version)
    return _decode_response_slowly(api_key, api_version, frame)


def _decode_response_slowly(api_key: int, api_version: int, frame: bytes):
    info = _checked(api_key, api_version)
    header, pos = _decode_part("ResponseHeader", response_header_version(api_key, api_version), frame, 0)
    try:
        return header, _decode_body(info.response, api_version, frame, pos)
    except FramingError:
        if api_key != API_VERSIONS_KEY or api_version == 0:
            raise
    return header, _decode_body(info.response, 0, frame, pos)


def unsupported_api_versions_response(correlation_id: int) -> bytes:
    """Return the sized v0 ApiVersions response (error 35, only key 18) for an unsupported version."""
    info = api_info(API_VERSIONS_KEY)
    cls = codec.message_class(info.response)
    entry = cls.ApiVersion(api_key=API_VERSIONS_KEY, min_version=info.valid_versions.lo,
                           max_version=info.valid_versions.hi)
    body = cls(error_code=Errors.UNSUPPORTED_VERSION, api_keys=[entry])
    return _frame((("ResponseHeader", 0, response_header(correlation_id)), (info.response, 0, body)))


_SOFTWARE = re.compile(r"[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?")


def api_versions_request_error(body, api_version: int) -> int:
    """Return the error code a server answers an ApiVersions request with: INVALID_REQUEST when a v3+ request's
    client software name or version does not match Kafka's pattern (KIP-511), else 0."""
    if api_version >= 3:
        for value in (body.client_software_name, body.client_software_version):
            if not value or not _SOFTWARE.fullmatch(value):
                return Errors.INVALID_REQUEST
    return 0
