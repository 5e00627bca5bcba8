"""Benchmark: `kafka-dump-log --cluster-metadata-decoder` text and `--output jsonl` against the JVM decode of the
same 1,010,000 records (issue 32).

Run: python tests/bench/bench_dump_log_jvm.py [--topics 10000 --partitions 100] [--rounds 3] [--log PATH]

In one run, interleaved: the JVM anchor (tests/bench/jvm/MetadataDecode.java decoding every record), the text
dump, the jsonl dump, the anchor again, ... Each dump runs as a child with stdout to /dev/null; its CPU (user +
system) and peak RSS come from os.wait4. Prints each text run's CPU as a ratio to the anchor runs around it
(target <= 5x) and each jsonl run's CPU as a ratio to the text run of its round (target <= 1.5x), with the load
average. Not a timed assertion.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import anchor  # noqa: E402  (sibling benchmark module)
from gen_metadata_log import generate  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--topics", type=int, default=10_000)
    parser.add_argument("--partitions", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--log", type=Path, help="reuse this generated log (named like a segment)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-dump-log-jvm-") as tmp:
        log = args.log or generate(Path(tmp) / "00000000000000000000.log", args.topics, args.partitions)
        tool = anchor.console_script("kafka-dump-log", "kraftsman.cli.dump_log.tool")
        text = tool + ["--cluster-metadata-decoder", "--files", log.name]
        jsonl = text + ["--output", "jsonl"]
        print(f"log: {log} ({log.stat().st_size / anchor.MB:.0f} MiB); load average {anchor.load():.2f}")
        anchors, texts, jsonls = [anchor.jvm_decode([log])], [], []
        for _ in range(args.rounds):
            texts.append(anchor.run(text, cwd=log.parent))
            jsonls.append(anchor.run(jsonl, cwd=log.parent))
            anchors.append(anchor.jvm_decode([log]))
        report(anchors, texts, jsonls)


def report(anchors, texts, jsonls) -> None:
    """Print every run and the ratios of each round."""
    for a in anchors:
        print(f"  JVM decode (anchor): {a}  [load {a.load:.2f}]")
    text_ratios = anchor.cpu_ratios(anchors, texts)
    jsonl_ratios = [j.cpu / t.cpu for j, t in zip(jsonls, texts)]
    for t, j, tr, jr in zip(texts, jsonls, text_ratios, jsonl_ratios):
        print(f"  text:  {t}; CPU {tr:.2f}x the anchor [load {t.load:.2f}]")
        print(f"  jsonl: {j}; CPU {jr:.2f}x the text [load {j.load:.2f}]")
    print(f"text: median CPU {anchor.median(text_ratios):.2f}x the JVM decode (target <= 5x); "
          f"jsonl: median CPU {anchor.median(jsonl_ratios):.2f}x the text (target <= 1.5x); peak RSS text "
          f"{max(t.rss for t in texts) / anchor.MB:.0f} MiB, jsonl {max(j.rss for j in jsonls) / anchor.MB:.0f} MiB")


if __name__ == "__main__":
    main()
