"""Shared machinery of the fuzz targets: settings, corpus loading, mutations, and the crash oracle.

Rules:
- A target passes when the parser returns or raises one of its documented error types; any other
  exception, a run longer than HANG_SECONDS, or a huge allocation is a crash.
- Seeds are the committed corpus and regression inputs (always) plus real fixture files from
  ../shared (only when present; they are read, never copied).
- The example count comes from KRAFTSMAN_FUZZ_EXAMPLES when set (a long random run by hand);
  otherwise each target uses its small CI budget with a fixed seed (derandomized, reproducible).
"""
from __future__ import annotations

import os
import signal
import struct
import tracemalloc
from contextlib import contextmanager
from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "corpus"
REGRESSIONS = HERE / "regressions"
SHARED = HERE.parents[2] / "shared" / "fixtures"
KRAFT_REAL = SHARED / "kraft-real" / "data"
WIRE = SHARED / "kafka-wire-3.9" / "msgs"
HANG_SECONDS = 5.0
SMALL_ALLOCATION = 8 << 20  # bytes: what a parser may allocate for any input here (its read buffers)
_LONG_RUN = os.environ.get("KRAFTSMAN_FUZZ_EXAMPLES")


def fuzz_settings(ci_examples: int) -> settings:
    """Return hypothesis settings: `ci_examples` derandomized, or KRAFTSMAN_FUZZ_EXAMPLES random ones."""
    examples = int(_LONG_RUN) if _LONG_RUN else ci_examples
    return settings(max_examples=examples, deadline=None, database=None, derandomize=not _LONG_RUN,
                    suppress_health_check=list(HealthCheck), print_blob=True)


# ---------------------------------------------------------------- seeds


def corpus(target: str) -> list[bytes]:
    """Return the committed corpus and regression inputs of `target` (sorted by file name)."""
    files = sorted((CORPUS / target).glob("*.bin")) + sorted((REGRESSIONS / target).glob("*.bin"))
    return [p.read_bytes() for p in files]


def regressions(target: str) -> list[tuple[str, bytes]]:
    """Return (file name, bytes) of every committed regression input of `target`."""
    return [(p.name, p.read_bytes()) for p in sorted((REGRESSIONS / target).glob("*.bin"))]


def real_files(*patterns: str, root: Path = KRAFT_REAL, limit: int = 40, max_size: int = 1 << 16) -> list[bytes]:
    """Return up to `limit` real fixture files matching the glob patterns (empty when ../shared is absent)."""
    if not root.is_dir():
        return []
    paths = sorted({p for pattern in patterns for p in root.rglob(pattern) if p.is_file()})
    return [p.read_bytes() for p in paths if p.stat().st_size <= max_size][:limit]


# ---------------------------------------------------------------- mutations

INTERESTING_BYTES = (0x00, 0x01, 0x7F, 0x80, 0xFF)
INTERESTING_INT32 = (0, 1, -1, 13, 14, 48, 49, 61, 0x7FFF, 0x8000, 0x7FFFFFFF, -0x80000000)


def _mutate_once(draw, data: bytearray, seeds) -> bytearray:
    op = draw(st.integers(0, 8))
    at = draw(st.integers(0, max(len(data) - 1, 0)))
    if op == 0 and data:
        data[at] ^= 1 << draw(st.integers(0, 7))
    elif op == 1 and data:
        data[at] = draw(st.sampled_from(INTERESTING_BYTES) | st.integers(0, 255))
    elif op == 2 and len(data) >= 4:
        at = min(at, len(data) - 4)
        struct.pack_into(">i", data, at, draw(st.sampled_from(INTERESTING_INT32)))
    elif op == 3:
        del data[at:]
    elif op == 4:
        del data[at:at + draw(st.integers(1, 16))]
    elif op == 5:
        data[at:at] = draw(st.binary(min_size=1, max_size=16))
    elif op == 6:
        data[at:at] = data[at:at + draw(st.integers(1, 64))]
    elif op == 7:
        other = draw(st.sampled_from(seeds))
        cut = draw(st.integers(0, len(other)))
        data = data[:at] + bytearray(other[cut:])
    else:
        data[at:at] = draw(st.sampled_from(INTERESTING_BYTES)).to_bytes(1, "big") * draw(st.integers(1, 8))
    return data


@st.composite
def mutated(draw, seeds, max_mutations: int = 4):
    """Draw one seed and apply 1..max_mutations random mutations (flip, set, int32, cut, insert, splice)."""
    data = bytearray(draw(st.sampled_from(seeds)))
    for _ in range(draw(st.integers(1, max_mutations))):
        data = _mutate_once(draw, data, seeds)
    return bytes(data)


def fuzz_inputs(seeds, max_size: int = 256):
    """Return a strategy mixing mutated seeds (mostly) with unstructured random bytes."""
    return st.one_of(mutated(seeds), mutated(seeds), mutated(seeds), st.binary(max_size=max_size))


def single_mutations(data: bytes, max_positions: int = 160):
    """Yield every prefix and every one-byte substitution by an interesting value (sampled on big inputs)."""
    step = max(1, len(data) // max_positions)
    for cut in range(0, len(data), step):
        yield data[:cut]
    for at in range(0, len(data), step):
        for value in (0x00, 0xFF, 0x80, 0x7F, data[at] ^ 0x01):
            if value != data[at]:
                yield data[:at] + bytes((value,)) + data[at + 1:]


# ---------------------------------------------------------------- oracle


class Hang(BaseException):
    """A parser ran longer than HANG_SECONDS on one input (BaseException: no parser may swallow it)."""


@contextmanager
def time_limit(seconds: float = HANG_SECONDS):
    """Raise Hang in the main thread when the block runs longer than `seconds`."""
    def on_alarm(signum, frame):
        raise Hang(f"no answer after {seconds} s")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    outer_delay, _ = signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:  # nested limits: the outer one is re-armed (with its whole remaining delay at entry)
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if outer_delay:
            signal.setitimer(signal.ITIMER_REAL, outer_delay)


def check(parse, data: bytes, allowed: tuple[type, ...]):
    """Run parse(data): return its result, or None when it raised an allowed error; fail on anything else."""
    with time_limit():
        try:
            return parse(data)
        except allowed:
            return None
        except Exception as e:
            raise AssertionError(f"{type(e).__name__}: {e} -- input ({len(data)} bytes): {data.hex()}") from e


def peak_bytes(fn) -> int:
    """Run fn() and return the peak of Python memory it allocated (tracemalloc)."""
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


# ---------------------------------------------------------------- seeds keyed by schema


def codec_cases() -> list[tuple[str, int, bytes]]:
    """Return (message, version, bytes) for every spec and version: the committed seed, else a fresh one.

    Specs added after the corpus was made get a filled seed at run time (make_corpus.py commits them).
    """
    from make_corpus import filled

    from kraftsman.storage.protocol import codec, schema

    files = {p.stem: p for p in (CORPUS / "codec").glob("*.bin")}
    cases = []
    for name in schema.names():
        for version in schema.load(name).versions:
            path = files.get(f"{name}-v{version}")
            data = path.read_bytes() if path else codec.encode(name, version, filled(name, version))
            cases.append((name, version, data))
    return cases


def frame_cases(target: str) -> list[tuple[int, int, bytes]]:
    """Return (api key, version, sized frame) per API at its lowest and highest version ('request'/'response')."""
    from make_corpus import filled

    from kraftsman.storage.protocol import framing

    cases = []
    for key, info in framing.api_registry().items():
        for version in sorted({info.valid_versions.lo, info.valid_versions.hi}):
            path = CORPUS / target / f"{key}-{info.name}-v{version}.bin"
            if path.is_file():
                cases.append((key, version, path.read_bytes()))
            elif target == "request":
                cases.append((key, version, framing.encode_request(key, version, 7, "fuzz",
                                                                   filled(info.request, version))))
            else:
                cases.append((key, version, framing.encode_response(key, version, 7, filled(info.response, version))))
    return cases
