"""Which topics a kafka-topics command names, and the lines every action shares.

Rules:
- --topic is a regular expression matched in full against every topic's name (TopicFilter: ',' means '|', spaces
  and surrounding quotes dropped; an invalid one is Kafka's "<regex> is an invalid regex."); without it, every
  topic; --exclude-internal leaves out Kafka 3.9's internal topics (Topic.isInternal). Names come sorted.
- A --topic that matches nothing is Kafka's "Topic 'Optional[<topic>]' does not exist as expected" unless
  --if-exists is given; then there is nothing to do (`unchanged`: exit 0 in text, EXIT_UNCHANGED in json/yaml).
"""
from __future__ import annotations

import re

from ..common import jopt
from ..common.status import ExitStatus

REPORTS = ["under_replicated_partitions", "under_min_isr_partitions", "at_min_isr_partitions",
           "unavailable_partitions"]
INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state", "__share_group_state"})


def say(r: jopt.Run, line: str) -> None:
    """Print a line of Kafka's text (nothing in json/yaml mode, where the object tells)."""
    if not r.structured:
        r.env.stdout.write(line + "\n")


def matching_topics(r: jopt.Run) -> list[str]:
    """Return the topics --topic matches (all without it), sorted, internal ones left out with
    --exclude-internal (TopicService.getTopics)."""
    admin = r.admin()
    names = [t.name for t in r.call(admin.list_topics)]
    exclude = r.has("exclude_internal")
    if r.args.topic is None:
        return [n for n in names if not (exclude and n in INTERNAL_TOPICS)]
    pattern = _topic_filter(r.args.topic)
    return [n for n in names if pattern.fullmatch(n) and not (exclude and n in INTERNAL_TOPICS)]


def _topic_filter(raw: str) -> re.Pattern:
    regex = raw.strip().replace(",", "|").replace(" ", "")
    regex = re.sub(r"[\"']+$", "", re.sub(r"^[\"']+", "", regex))
    try:
        return re.compile(regex)
    except re.error:
        raise jopt.KafkaError(f"{regex} is an invalid regex.", "java.lang.RuntimeException") from None


def ensure_exists(r: jopt.Run, found: list) -> None:
    """Raise Kafka's 'does not exist as expected' when --topic matched nothing and --if-exists is not given."""
    if r.args.topic and not found and not r.has("if_exists"):
        raise jopt.KafkaError(f"Topic 'Optional[{r.args.topic}]' does not exist as expected")


def unchanged(r: jopt.Run, **fields) -> int:
    """Report that there was nothing to do: exit 0 in text mode (Kafka's), EXIT_UNCHANGED in json/yaml."""
    status = jopt.EXIT_UNCHANGED if r.structured else ExitStatus.OK
    r.emit("", status, changed=False, **fields)
    return status
