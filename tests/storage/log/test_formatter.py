"""Formatter: planning checks, file layout, byte compatibility with real Kafka files, crash safety."""
from pathlib import Path

import pytest

from kraftsman.storage.dynamic_voters import parse_voters
from kraftsman.storage.log import formatter as fmt
from kraftsman.storage.log import meta_properties as mp
from kraftsman.storage.log.atomic import FileSystem
from kraftsman.storage.log.snapshot import SnapshotReader, read_snapshot_records
from kraftsman.storage.metadata_versions import TABLES
from kraftsman.storage.protocol.uuids import Uuid
from kraftsman.storage.records import control

REPO = Path(__file__).resolve().parents[3]
REAL = REPO.parent / "shared" / "fixtures" / "kraft-real" / "data"
T39 = TABLES["3.9"]
DIR_ID = "JEXY6aqzQY-32P5TStzaFg"


def spec(tmp_path, names=("data",), meta="data", **kw):
    dirs = [str(tmp_path / n) for n in names]
    return fmt.FormatSpec(kw.pop("cluster_id", "MkU3OEVBNTcwNTJENDM2Qg"), kw.pop("node_id", 1), dirs,
                          str(tmp_path / meta) if meta else None, kw.pop("listener_name", "CONTROLLER"), **kw)


def run(s, **kw):
    lines = []
    fmt.format_directories(s, lines.append, clock=lambda: 1700000000.0, **kw)
    return lines


def features_of(path):
    return [(r.message.name, r.message.feature_level, r.version, r.message.api_key)
            for r in read_snapshot_records(path)]


def test_single_directory(tmp_path):
    lines = run(spec(tmp_path))
    assert lines == [f"Formatting metadata directory {tmp_path}/data with metadata.version 3.9-IV0."]
    meta = mp.read(tmp_path / "data")
    assert (meta.version, meta.cluster_id, meta.node_id) == (1, "MkU3OEVBNTcwNTJENDM2Qg", 1)
    assert features_of(tmp_path / "data" / "bootstrap.checkpoint") == [("metadata.version", 21, 0, 12)]
    assert sorted(p.name for p in (tmp_path / "data").iterdir()) == ["bootstrap.checkpoint", "meta.properties"]


def test_several_directories_distinct_ids(tmp_path):
    lines = run(spec(tmp_path, ("a", "b", "c"), meta="b", release_version=T39.parse("3.7")))
    assert lines == [f"Formatting data directory {tmp_path}/a with metadata.version 3.7-IV4.",
                     f"Formatting metadata directory {tmp_path}/b with metadata.version 3.7-IV4.",
                     f"Formatting data directory {tmp_path}/c with metadata.version 3.7-IV4."]
    ids = {mp.read(tmp_path / n).directory_id for n in "abc"}
    assert len(ids) == 3


@pytest.mark.parametrize("kw,message", [
    (dict(node_id=-1), "You must specify a valid non-negative node ID."),
    (dict(cluster_id=None), "You must specify the cluster id."),
    (dict(listener_name=None), "You must specify the name of the initial controller listener."),
    (dict(meta=None), "You must specify the metadata log directory."),
    (dict(release_version=T39.parse("2.8")), "metadata.version 2.8-IV1 is too old to be supported."),
    (dict(release_version=T39.parse("4.0")), "metadata.version 4.0-IV3 is not yet stable."),
    (dict(feature_levels={"metadata.version": 20}, release_version=T39.latest_production),
     "Use --release-version instead of --feature metadata.version=X to avoid ambiguity."),
    (dict(feature_levels={"foo.version": 1}),
     "Unsupported feature: foo.version. Supported features are: group.version, kraft.version, transaction.version"),
    (dict(feature_levels={"kraft.version": 1}),
     "Cannot set kraft.version to 1 unless KIP-853 configuration is present. Try removing the --feature flag for kraft.version."),
    (dict(feature_levels={"kraft.version": 0}, initial_controllers=parse_voters(f"1@h:9093:{DIR_ID}")),
     "Cannot set kraft.version to 0 if KIP-853 configuration is present. Try removing the --feature flag for kraft.version."),
    (dict(release_version=T39.parse("3.5-IV1"), scram_arguments=["SCRAM-SHA-256=[name=a,password=b]"]),
     "SCRAM is only supported in metadata.version 3.5-IV2 or later."),
    (dict(scram_arguments=["SCRAM-SHA-256=[password=b]"]), "You must supply 'name' to add-scram"),
])
def test_plan_errors(tmp_path, kw, message):
    with pytest.raises(fmt.FormatterError) as e:
        run(spec(tmp_path, **kw))
    assert str(e.value) == message
    assert not (tmp_path / "data").exists()


def test_metadata_dir_not_listed(tmp_path):
    s = spec(tmp_path, ("a", "b"), meta="a")
    s.metadata_log_dir = str(tmp_path / "z")
    with pytest.raises(fmt.FormatterError, match=r"^The specified metadata log directory, .*/z was not one of the "
                                                  r"given directories: \[.*/a, .*/b\]$"):
        run(s)


def test_already_formatted(tmp_path):
    run(spec(tmp_path, ("a",), meta="a"))
    with pytest.raises(fmt.FormatterError, match=f"^Log directory {tmp_path}/a is already formatted. Use "
                                                  "--ignore-formatted to ignore this directory and format the others.$"):
        run(spec(tmp_path, ("a", "b"), meta="a"))
    assert run(spec(tmp_path, ("a", "b"), meta="a", ignore_formatted=True)) == [
        f"Formatting data directory {tmp_path}/b with metadata.version 3.9-IV0."]
    assert run(spec(tmp_path, ("a", "b"), meta="a", ignore_formatted=True)) == [
        "All of the log directories are already formatted."]


def test_other_cluster_or_node_is_refused(tmp_path):
    run(spec(tmp_path))
    with pytest.raises(fmt.FormatterError, match="^Invalid cluster.id in: .*/data/meta.properties. Expected other"):
        run(spec(tmp_path, cluster_id="other", ignore_formatted=True))
    with pytest.raises(fmt.FormatterError, match="^Stored node id 1 doesn't match previous node id 2"):
        run(spec(tmp_path, node_id=2, ignore_formatted=True))


def test_features_and_scram_records(tmp_path):
    salt = "c2FsdHk="
    s = spec(tmp_path, unstable_enabled=True, release_version=T39.parse("4.0-IV3"),
             initial_controllers=parse_voters(f"1@h:9093:{DIR_ID}"),
             scram_arguments=[f"SCRAM-SHA-512=[name=bob,password=pw,salt={salt}]",
                              "SCRAM-SHA-256=[name=alice,password=alice-secret]"])
    run(s)
    records = read_snapshot_records(tmp_path / "data" / "bootstrap.checkpoint")
    names = [(r.message.api_key, getattr(r.message, "feature_level", None), r.message.name) for r in records]
    assert names == [(12, 25, "metadata.version"), (12, 1, "group.version"), (12, 2, "transaction.version"),
                     (11, None, "bob"), (11, None, "alice")]


def control_records(path):
    out = []
    for batch in SnapshotReader(path).batches():
        if batch.is_control:
            for rec in batch.records():
                kind = control.parse_control_type(rec.key)
                out.append((control.NAMES[kind], control.decode_control(kind, rec.value)))
    return out


@pytest.mark.parametrize("node_id,kind", [(1, "dynamic metadata voter directory"), (5, "dynamic metadata directory")])
def test_dynamic_quorum_snapshot(tmp_path, node_id, kind):
    voters = parse_voters(f"1@[::1]:9093:{DIR_ID},2@b:9094:MvDxzVmcRsaTz33bUuRU6A")
    lines = run(spec(tmp_path, ("logs", "meta"), meta="meta", node_id=node_id, initial_controllers=voters))
    assert lines[1] == f"Formatting {kind} {tmp_path}/meta with metadata.version 3.9-IV0."
    snap = tmp_path / "meta" / "__cluster_metadata-0" / "00000000000000000000-0000000000.checkpoint"
    recs = control_records(snap)
    assert [n for n, _ in recs] == ["SNAPSHOT_HEADER", "KRAFT_VERSION", "KRAFT_VOTERS", "SNAPSHOT_FOOTER"]
    assert recs[0][1].last_contained_log_timestamp == 1700000000000
    assert recs[1][1].kraft_version == 1
    assert [(v.voter_id, str(Uuid(v.voter_directory_id)), [(e.name, e.host, e.port) for e in v.endpoints])
            for v in recs[2][1].voters] == [(1, DIR_ID, [("CONTROLLER", "::1", 9093)]),
                                            (2, "MvDxzVmcRsaTz33bUuRU6A", [("CONTROLLER", "b", 9094)])]
    assert not (tmp_path / "logs" / "__cluster_metadata-0").exists()
    meta_id = str(mp.read(tmp_path / "meta").directory_id)
    assert (meta_id == DIR_ID) == (node_id == 1)
    assert features_of(tmp_path / "meta" / "bootstrap.checkpoint") == [("metadata.version", 21, 0, 12)]


def real_bootstraps():
    if not REAL.is_dir():
        return []
    return sorted(REAL.glob("**/bootstrap.checkpoint"))


@pytest.mark.parametrize("release", ["3.6-IV2", "3.7-IV4", "3.8-IV0", "3.9-IV0"])
def test_bootstrap_matches_real_kafka(tmp_path, release):
    mv = T39.parse(release)
    real = [p for p in real_bootstraps() if features_of(p)[0][1] == mv.level]
    if not real:
        pytest.skip(f"no real bootstrap.checkpoint for {release} under {REAL}")
    run(spec(tmp_path, release_version=mv))
    ours = tmp_path / "data" / "bootstrap.checkpoint"
    for path in real:
        assert features_of(ours) == features_of(path), path
        theirs = [(b.base_offset, b.last_offset, b.is_control) for b in SnapshotReader(path).batches()]
        assert [(b.base_offset, b.last_offset, b.is_control) for b in SnapshotReader(ours).batches()] == theirs


# ---------------------------------------------------------------- crash safety

class Boom(OSError):
    pass


class FailingFS(FileSystem):
    """Fail the n-th open/write/fsync/rename/fsync_dir call (removes always succeed)."""

    def __init__(self, fail_at):
        self.calls, self.fail_at = 0, fail_at

    def _step(self):
        self.calls += 1
        if self.calls == self.fail_at:
            raise Boom(5, "injected failure")

    def open_write(self, path):
        self._step()
        return super().open_write(path)

    def write(self, handle, data):
        self._step()
        super().write(handle, data)

    def fsync(self, handle):
        self._step()
        super().fsync(handle)

    def rename(self, src, dst):
        self._step()
        super().rename(src, dst)

    def fsync_dir(self, directory):
        self._step()
        super().fsync_dir(directory)


def crash_spec(tmp_path):
    return spec(tmp_path, ("logs", "meta"), meta="meta", node_id=1,
                initial_controllers=parse_voters(f"1@h:9093:{DIR_ID}"))


def complete(directory: Path) -> bool:
    """Tell whether a formatted directory holds every file format writes, each readable."""
    read_snapshot_records(directory / "bootstrap.checkpoint")
    if directory.name == "meta":
        control_records(directory / "__cluster_metadata-0" / "00000000000000000000-0000000000.checkpoint")
    return True


def test_crash_at_every_step(tmp_path):
    counter = FailingFS(0)
    run(crash_spec(tmp_path / "count"), fs=counter)
    total = counter.calls
    assert total >= 15
    for n in range(1, total + 1):
        root = tmp_path / f"crash{n}"
        with pytest.raises(fmt.FormatterError, match=r"^Error while writing meta.properties file .*injected failure"):
            run(crash_spec(root), fs=FailingFS(n))
        for d in (root / "logs", root / "meta"):
            leftovers = [p.name for p in d.rglob("*") if p.name.endswith((".tmp", ".part"))] if d.exists() else []
            assert leftovers == [], (n, leftovers)
            state = mp.inspect_directory(d).state
            assert state in (mp.DirectoryState.MISSING, mp.DirectoryState.EMPTY, mp.DirectoryState.FORMATTED)
            if state is mp.DirectoryState.FORMATTED:
                assert complete(d), n
        # a second run finishes the job
        _info_never_calls_it_formatted_unless_complete(root)
        second = crash_spec(root)
        second.ignore_formatted = True
        run(second)
        assert complete(root / "logs") and complete(root / "meta")
        assert mp.inspect_directory(root / "meta").state is mp.DirectoryState.FORMATTED


def test_unreadable_directory_is_reported_and_skipped(tmp_path):
    (tmp_path / "bad" / "meta.properties").mkdir(parents=True)   # reading it fails with an OS error
    lines = run(spec(tmp_path, ("bad", "good"), meta="good"))
    assert lines == [f"I/O error trying to read log directory {tmp_path}/bad. Ignoring...",
                     f"Formatting metadata directory {tmp_path}/good with metadata.version 3.9-IV0."]
    with pytest.raises(fmt.FormatterError, match="^No available log directories to format.$"):
        run(spec(tmp_path, ("bad",), meta="bad"))


def test_stale_temp_files_from_a_killed_run_do_not_block(tmp_path):
    s = crash_spec(tmp_path)
    for d in ("logs", "meta/__cluster_metadata-0"):
        (tmp_path / d).mkdir(parents=True)
    (tmp_path / "logs" / "bootstrap.checkpoint.tmp").write_bytes(b"half")
    (tmp_path / "meta" / "meta.properties.tmp").write_bytes(b"half")
    (tmp_path / "meta" / "__cluster_metadata-0" / "00000000000000000000-0000000000.checkpoint.part").write_bytes(b"x")
    run(s)
    assert complete(tmp_path / "logs") and complete(tmp_path / "meta")
    assert not [p for p in tmp_path.rglob("*") if p.name.endswith((".tmp", ".part"))]


@pytest.mark.parametrize("release", ["3.6-IV2", "3.7-IV4", "3.8-IV0", "3.9-IV0"])
def test_bootstrap_bytes_equal_real_kafka_given_its_timestamps(tmp_path, release):
    from kraftsman.storage.log.snapshot import snapshot_bytes

    mv = T39.parse(release)
    real = [p for p in real_bootstraps() if features_of(p)[0][1] == mv.level]
    if not real:
        pytest.skip(f"no real bootstrap.checkpoint for {release} under {REAL}")
    records = fmt.plan(spec(tmp_path, release_version=mv)).bootstrap_records
    for path in real:
        header, data, footer = [b.max_timestamp for b in SnapshotReader(path).batches()]
        ours = snapshot_bytes(records, append_time=header, data_append_time=data, footer_append_time=footer)
        assert ours == path.read_bytes(), path


def _info_never_calls_it_formatted_unless_complete(root):
    """After a crash, `kafka-storage info` either reports a problem or every dir is complete."""
    from kraftsman.cli.storage.tool import info_text

    text, status = info_text([str(root / "logs"), str(root / "meta")], True)
    if status == 0:
        assert complete(root / "logs") and complete(root / "meta")
    else:
        problems = text.split("Found problem")[1].splitlines()[1:]
        assert all(p.endswith(("is not formatted.", "does not exist")) for p in problems if p), text


# ---------------------------------------------------------------- Kafka 4.x's Formatter

REAL_4X = [("yacht-tracker/kafka-data", "4.0", "4.0-IV3"), ("Systems@f962029/kafka/data", "4.1", "4.1-IV1"),
           ("local-test-rig/kafka-data", "4.2", "4.2-IV1")]


@pytest.mark.parametrize("folder,release,version", REAL_4X, ids=[r[1] for r in REAL_4X])
def test_4x_bootstrap_is_the_real_files_bytes(tmp_path, folder, release, version):
    """A 4.x format writes what Kafka 4.0 / 4.1 / 4.2 wrote: the same bytes, given each batch's append time."""
    from kraftsman.storage.log.snapshot import snapshot_bytes

    real = REAL / folder / "bootstrap.checkpoint"
    if not real.is_file():
        pytest.skip(f"{real} not found (../shared absent)")
    s = spec(tmp_path, release=release, release_version=TABLES[release].parse(version))
    fplan = fmt.plan(s)
    times = [b.max_timestamp for b in SnapshotReader(real).batches()]
    data = snapshot_bytes(fplan.bootstrap_records, append_time=times[0], data_append_time=times[1],
                          footer_append_time=times[2])
    assert data == real.read_bytes()
    run(s)      # and the default clock writes the same records
    assert features_of(tmp_path / "data" / "bootstrap.checkpoint") == features_of(real)


def test_4x_defaults_and_bootstrap_line(tmp_path):
    lines = run(spec(tmp_path, release="4.2"))
    assert lines == [
        "Bootstrap metadata: BootstrapMetadata(records=[ApiMessageAndVersion(FeatureLevelRecord(name='metadata.version'"
        ", featureLevel=29) at version 0), ApiMessageAndVersion(FeatureLevelRecord(name='eligible.leader.replicas."
        "version', featureLevel=1) at version 0), ApiMessageAndVersion(FeatureLevelRecord(name='group.version', "
        "featureLevel=1) at version 0), ApiMessageAndVersion(FeatureLevelRecord(name='share.version', featureLevel=1) "
        "at version 0), ApiMessageAndVersion(FeatureLevelRecord(name='streams.version', featureLevel=1) at version 0), "
        "ApiMessageAndVersion(FeatureLevelRecord(name='transaction.version', featureLevel=2) at version 0)], "
        "metadataVersionLevel=29, source=format command)",
        f"Formatting metadata directory {tmp_path}/data with metadata.version 4.2-IV1."]
    assert run(spec(tmp_path / "b", release="4.1")) == [
        f"Formatting metadata directory {tmp_path}/b/data with metadata.version 4.1-IV1."]
    assert [n for n, *_ in features_of(tmp_path / "b" / "data" / "bootstrap.checkpoint")] == [
        "metadata.version", "eligible.leader.replicas.version", "group.version", "transaction.version"]


@pytest.mark.parametrize("release,kw,dynamic", [
    ("3.9", dict(no_initial_controllers=True), False), ("4.0", dict(no_initial_controllers=True), True),
    ("4.1", dict(no_initial_controllers=True), False), ("4.1", dict(static_voters_empty=True), True),
    ("4.2", dict(initial_controllers=parse_voters(f"1@h:9093:{DIR_ID}")), False)])
def test_which_quorum_is_dynamic_by_release(release, kw, dynamic):
    assert fmt.FormatSpec("c", 1, ["/d"], "/d", "C", release=release, **kw).has_dynamic_quorum is dynamic


@pytest.mark.parametrize("kw,message", [
    (dict(release="4.2", feature_levels={"kraft.version": 1}),
     "Cannot set kraft.version to 1 unless controller.quorum.voters is empty and one of the flags --standalone, "
     "--initial-controllers, or --no-initial-controllers is used. For dynamic controllers support, try using one of "
     "--standalone, --initial-controllers, or --no-initial-controllers and removing controller.quorum.voters."),
    (dict(release="4.2", static_voters_empty=True, feature_levels={"kraft.version": 0}),
     "Cannot set kraft.version to 0 if controller.quorum.voters is empty and one of the flags --standalone, "
     "--initial-controllers, or --no-initial-controllers is used. For dynamic controllers support, try removing the "
     "--feature flag for kraft.version."),
    (dict(release="4.2", release_version=TABLES["4.2"].parse("4.0-IV0"),
          feature_levels={"eligible.leader.replicas.version": 1}),
     "eligible.leader.replicas.version could not be set to 1 because it depends on metadata.version level 23"),
    (dict(release="4.2", feature_levels={"share.version": 2}), "No feature:share.version with feature level 2"),
    (dict(release="4.0", feature_levels={"share.version": 1}),
     "Unsupported feature: share.version. Supported features are: eligible.leader.replicas.version, group.version, "
     "kraft.version, transaction.version"),
    (dict(release="4.0", static_voters_empty=True, no_initial_controllers=True,
          release_version=TABLES["4.0"].parse("3.8-IV0")),
     "kraft.version could not be set to 1 because it depends on metadata.version level 21"),
    (dict(release="4.1", release_version=TABLES["4.1"].parse("4.2-IV1")), "metadata.version 4.2-IV1 is not yet stable."),
    (dict(release="4.2", feature_levels={"metadata.version": 31}),
     "No MetadataVersion with feature level 31. Valid feature levels are from 7 to 30."),
])
def test_4x_plan_errors(tmp_path, kw, message):
    with pytest.raises(fmt.FormatterError) as e:
        run(spec(tmp_path, **kw))
    assert str(e.value) == message


def test_4x_accepts_what_3_9_refused(tmp_path):
    """4.2 takes share/streams/group/transaction levels at 3.9-IV0 (no dependency) and writes them."""
    s = spec(tmp_path, release="4.2", release_version=TABLES["4.2"].parse("3.9-IV0"),
             feature_levels={"share.version": 1, "streams.version": 1, "transaction.version": 2})
    run(s)
    assert features_of(tmp_path / "data" / "bootstrap.checkpoint") == [
        ("metadata.version", 21, 0, 12), ("share.version", 1, 0, 12), ("streams.version", 1, 0, 12),
        ("transaction.version", 2, 0, 12)]
