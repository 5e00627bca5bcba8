"""Golden: kafka-storage with KRAFTSMAN_KAFKA_VERSION=4.2 replays ../shared/fixtures/kafka-4.2/storage/ and prints,
exits and writes what Kafka 4.2.0's kafka-storage did.

Each case runs its setup-* steps, its main step and its follow-up steps in a fresh scratch root, with the case's
*.properties and before/ files in place (the fixture README's layout). Compared per step: exit code, stdout and
stderr; then the data directories: file listing, bootstrap.checkpoint records (and bytes but the batch times),
meta.properties keys, and the --standalone/--initial-controllers bootstrap snapshot's control records.

Masked, as the README names them varying between runs: directory.id, the voterDirectoryId of --standalone, the
checkpoints' times, SCRAM salt/storedKey/serverKey, random-uuid values. Besides (one rule each):
- Kafka's stack traces (`Exception in thread "main" <class>: <message>` + frames) are kraftsman's one line
  `<message>`; argparse4j's usage errors are compared by exit code and their error sentence (kraftsman's help is
  click's, not argparse4j's); help screens by exit code and the release-dependent sentences.
- Several `Formatting ...` lines compare as a set: Kafka prints them in a Java HashMap's order of the absolute
  paths, which the SCRATCH substitution hides; kraftsman prints them sorted.
- kraftsman's own warning lines (`kafka-storage: warning: ...` on stderr) are additions and are set aside.
"""
from __future__ import annotations

import io
import re
import shlex
import shutil
from pathlib import Path

import pytest

from kraftsman.cli.common.boundary import run_command
from kraftsman.cli.common.environment import Environment
from kraftsman.cli.storage import tool as storage_tool
from kraftsman.storage.log.snapshot import SnapshotReader, read_snapshot_records
from kraftsman.storage.records import control

REPO = Path(__file__).resolve().parents[3]
FIXTURES = REPO.parent / "shared" / "fixtures" / "kafka-4.2" / "storage"
CASES = sorted(d for d in FIXTURES.iterdir() if (d / "cmd.txt").is_file()) if FIXTURES.is_dir() else []
RELEASE = {"KRAFTSMAN_KAFKA_VERSION": "4.2"}
STACK = re.compile(r'^Exception in thread "main" [\w.$]+: (.*)$')
DIRECTORY_ID = re.compile(r"directory\.id=[A-Za-z0-9_-]{22}")


def _steps(case: Path) -> list[Path]:
    setups = sorted(p for p in case.iterdir() if p.name.startswith("setup-") and (p / "cmd.txt").is_file())
    follow = sorted(p for p in case.iterdir() if p.is_dir() and not p.name.startswith("setup-")
                    and (p / "cmd.txt").is_file())
    return setups + [case] + follow


def _prepare(case: Path, scratch: Path) -> None:
    own = scratch / case.name
    own.mkdir(parents=True)
    for props in case.glob("*.properties"):
        (own / props.name).write_text(props.read_text().replace("SCRATCH", str(scratch)))
    before = case / "before"
    if before.is_dir():
        first = _first_log_dir(own / "server.properties")
        first.mkdir(parents=True, exist_ok=True)
        for f in before.iterdir():
            if not f.name.startswith("."):
                shutil.copy(f, first / f.name)


def _first_log_dir(config: Path) -> Path:
    for line in config.read_text().splitlines():
        if line.startswith(("log.dirs=", "log.dir=")):
            return Path(line.split("=", 1)[1].split(",")[0].strip())
    raise AssertionError(f"no log.dirs in {config}")


def _run(step: Path, scratch: Path) -> tuple[int, str, str]:
    argv = shlex.split(step.joinpath("cmd.txt").read_text().replace("SCRATCH", str(scratch)))[1:]
    _config_in_place(step, argv)
    for listed in _listed_dirs(step, scratch):
        listed.mkdir(parents=True, exist_ok=True)        # the dirs an info step finds, as the recording had them
    env = Environment(stdout=io.StringIO(), stderr=io.StringIO(), env=dict(RELEASE), cwd=str(scratch))
    status = run_command(storage_tool.run, argv, env, prog="kafka-storage")
    return status, env.stdout.getvalue(), env.stderr.getvalue()


def _config_in_place(step: Path, argv: list[str]) -> None:
    """Write the case's config where the command names it when that is another case's folder (paired cases of the
    3.9 set share a config: info-no-process-roles-legacy-config reads format-no-process-roles-legacy-config's)."""
    if "-c" in argv:
        config = Path(argv[argv.index("-c") + 1])
        case = step if (step / "server.properties").is_file() else step.parent
        if not config.exists() and (case / config.name).is_file():
            config.parent.mkdir(parents=True, exist_ok=True)
            config.write_text((case / config.name).read_text().replace("SCRATCH", str(config.parent.parent)))


def _listed_dirs(step: Path, scratch: Path) -> list[Path]:
    text = step.joinpath("stdout.txt").read_text()
    found = re.search(r"Found log director(?:y|ies):\n((?:  .*\n)+)", text)
    return [Path(line.strip().replace("SCRATCH", str(scratch))) for line in found.group(1).splitlines()] if found \
        else []


def _expected(step: Path, name: str) -> str:
    path = step / name
    return path.read_text() if path.is_file() else ""


def _mask(text: str) -> str:
    text = DIRECTORY_ID.sub("directory.id=X", text)
    return re.sub(r"(salt|storedKey|serverKey)=\[[-0-9, ]*\]", r"\1=[X]", text)


def _one_line(stderr: str) -> str:
    """Kafka's stack trace as kraftsman prints it: the exception's message alone."""
    match = STACK.match(stderr.splitlines()[0]) if stderr else None
    return match.group(1) + "\n" if match else stderr


def _check_stream(expected: str, actual: str, scratch: Path, what: str) -> None:
    expected = _mask(expected.replace("SCRATCH", str(scratch)))
    actual = _mask(actual)
    formatting = [line for line in expected.splitlines() if line.startswith("Formatting ")]
    if len(formatting) > 1:
        assert sorted(actual.splitlines()) == sorted(expected.splitlines()), what
    else:
        assert actual == expected, what


def _check_step(step: Path, scratch: Path, result: tuple[int, str, str]) -> None:
    status, out, err = result
    name = step.name
    expected_err = _expected(step, "stderr.txt")
    err = "".join(line for line in err.splitlines(keepends=True) if not line.startswith("kafka-storage: warning:"))
    assert status == int(_expected(step, "rc.txt")), (name, out, err)
    if expected_err.startswith("usage:"):      # argparse4j's words are not click's: the arguments it names
        named = re.findall(r"--[a-z-]+/-\w|'\w+'", expected_err.split("error:", 1)[1])
        assert err.startswith("usage:") and all(n in err for n in named), (name, err)
        return
    if "-h" in shlex.split(_expected(step, "cmd.txt")):
        _check_help(_expected(step, "stdout.txt"), out)
        return
    if name.startswith("random-uuid"):
        assert all(re.fullmatch(r"[A-Za-z0-9_-]{22}", line) for line in out.splitlines()) and out.count("\n") == 1
        return
    _check_stream(_one_line(expected_err), err, scratch, f"{name} stderr")
    _check_stream(_expected(step, "stdout.txt"), out, scratch, f"{name} stdout")


def _check_help(expected: str, actual: str) -> None:
    """Help screens: the options Kafka lists are there, and so are its release-dependent sentences."""
    for flag in re.findall(r"(--[a-z-]+)", expected):
        assert flag in actual, flag
    flat, ours = " ".join(expected.split()), " ".join(actual.split())
    for sentence in re.findall(r"The minimum is \S+; the default is \S+", flat):
        assert sentence in ours, sentence


# ---------------------------------------------------------------- files written

def _data_dirs(case: Path, scratch: Path) -> list[tuple[Path, Path]]:
    """Pair each recorded data dir (after/, after-<d>/, d1/...) with the scratch dir it recorded."""
    own = scratch / case.name
    pairs = []
    for recorded in sorted(p for p in case.iterdir() if p.is_dir() and (p / ".listing.txt").is_file()
                           or (p / ".absent.txt").is_file()):
        if recorded.name == "before":
            continue
        if recorded.name == "after":
            pairs.append((recorded, _first_log_dir(own / "server.properties")))
        else:
            pairs.append((recorded, own / recorded.name.removeprefix("after-")))
    return pairs


def _listing(directory: Path) -> list[str]:
    return sorted(["."] + [f"./{p.relative_to(directory)}" for p in directory.rglob("*")])


def _check_dir(recorded: Path, ours: Path) -> None:
    if (recorded / ".absent.txt").is_file():
        assert not ours.exists(), ours
        return
    assert _listing(ours) == (recorded / ".listing.txt").read_text().split(), ours
    meta = recorded / "meta.properties"
    if meta.is_file():
        assert _meta(ours / "meta.properties") == _meta(meta)
    for checkpoint in recorded.rglob("*.checkpoint"):
        mine = ours / checkpoint.relative_to(recorded)
        assert _records(mine) == _records(checkpoint), mine
        if checkpoint.name == "bootstrap.checkpoint" and not _has_scram(checkpoint):
            assert _timeless(mine) == _timeless(checkpoint), mine


def _meta(path: Path) -> dict:
    lines = [line for line in path.read_text().splitlines() if not line.startswith("#")]
    return {k: v for k, _, v in (line.partition("=") for line in lines) if k != "directory.id"}


def _records(path: Path) -> list:
    """The data records (SCRAM secrets masked) and the control records (voter directory ids and times masked)."""
    out = []
    for batch in SnapshotReader(path).batches():
        for rec in batch.records():
            if batch.is_control:
                kind = control.parse_control_type(rec.key)
                out.append((control.NAMES[kind], _control_fields(control.decode_control(kind, rec.value))))
    for r in read_snapshot_records(path):
        fields = {k: getattr(r.message, k) for k in r.message._fields
                  if k not in ("salt", "stored_key", "server_key")}
        out.append((r.message.spec.name, r.version, sorted(fields.items())))
    return out


def _control_fields(message) -> str:
    text = repr(message)
    text = re.sub(r"voter_directory_id=.*?, endpoints=", "voter_directory_id=X, endpoints=", text)   # random bytes
    return re.sub(r"last_contained_log_timestamp=\d+", "last_contained_log_timestamp=X", text)


def _has_scram(path: Path) -> bool:
    return any(r.message.spec.name == "UserScramCredentialRecord" for r in read_snapshot_records(path))


def _timeless(path: Path) -> bytes:
    """The file's bytes with each batch's CRC and timestamps zeroed (the random SCRAM salt is not comparable)."""
    data, out, i = path.read_bytes(), bytearray(), 0
    while i < len(data):
        length = int.from_bytes(data[i + 8:i + 12], "big")
        batch = bytearray(data[i:i + 12 + length])
        batch[17:21], batch[27:43] = b"\0" * 4, b"\0" * 16
        out += batch
        i += 12 + length
    return bytes(out)


@pytest.mark.skipif(not CASES, reason=f"Kafka 4.2 storage recordings not found under {FIXTURES} (../shared absent)")
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_storage_case_matches_kafka_4_2(case: Path, tmp_path: Path):
    scratch = tmp_path / "scratch"
    _prepare(case, scratch)
    for step in _steps(case):
        _check_step(step, scratch, _run(step, scratch))
    for recorded, ours in _data_dirs(case, scratch):
        _check_dir(recorded, ours)


def test_every_case_is_replayed():
    if not CASES:
        pytest.skip(f"Kafka 4.2 storage recordings not found under {FIXTURES}")
    assert len(CASES) >= 70 and any(c.name.startswith("x4-") for c in CASES)
