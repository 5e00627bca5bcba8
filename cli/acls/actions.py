"""kafka-acls --list, --add and --remove: Kafka 3.9's AclCommand.AdminClientService, over the Admin calls.

Rules:
- --list: one DescribeAcls for every ACL when no resource is named, else one per resource filter (its entries
  ANY); bindings grouped by resource pattern in the order found, each entry once; with --principal, a heading per
  principal and only that principal's entries.
- --add: per resource pattern, its block ("Adding ACLs ..."), then one CreateAcls for its entries; the first
  failed binding stops the command (Kafka's all().get()).
- --remove: per resource filter, the question (skipped with --force; an answer other than y/Y skips that filter;
  no answer at all, stdin at its end, is NoAnswer), then one DeleteAcls: every ACL of the filter when no entry
  is named, else one filter per entry; the first failed filter or binding stops the command.
- Each action returns what --output json/yaml reports: the bindings listed, whether an --add changed something
  (it asks, in that mode only, which of its ACLs existed before), the bindings a --remove deleted.
"""
from __future__ import annotations

from kraftsman.controller.client.admin.acls import ANY_ENTRY, AclBinding

from . import texts
from .bindings import filter_entries, patterns_to_add, principals, resource_filters


class NoAnswer(Exception):
    """--remove asked its question and stdin ended before an answer."""


def list_acls(opts, admin, out) -> list[AclBinding]:
    """Print the ACLs the command line asks for; return the bindings shown."""
    from kraftsman.controller.client.admin.acls import ANY_PATTERN, ANY_TYPE, ResourcePattern

    filters = resource_filters(opts, die_if_none=False) or [ResourcePattern(ANY_TYPE, None, ANY_PATTERN)]
    wanted = principals(opts, "principal")
    grouped: dict = {}
    for pattern_filter in filters:
        for binding in admin.describe_acls(pattern_filter, ANY_ENTRY):
            grouped.setdefault(binding.pattern, {})[binding.entry] = None
    shown = []
    for who in wanted or [None]:
        if who is not None:
            out(texts.principal_heading(who) + "\n")
        for pattern, acls in grouped.items():
            mine = [a for a in acls if who is None or a.principal == who]
            if mine:
                out(texts.block("Current ACLs", pattern, mine))
                shown += [AclBinding(pattern, a) for a in mine if AclBinding(pattern, a) not in shown]
    return shown


def add_acls(opts, admin, out, ask_existing: bool = False) -> bool:
    """Create the ACLs the command line names; return whether one of them did not exist before."""
    changed = False
    for pattern, acls in patterns_to_add(opts).items():
        out(texts.block("Adding ACLs", pattern, acls))
        bindings = [AclBinding(pattern, a) for a in acls]
        if ask_existing:
            existing = set(admin.describe_acls(pattern, ANY_ENTRY))
            changed = changed or any(b not in existing for b in bindings)
        for error in admin.create_acls(bindings):
            if error is not None:
                raise error
    return changed if ask_existing else True


def remove_acls(opts, admin, ask, read_answer, force: bool) -> list[AclBinding]:
    """Delete the ACLs the command line names, after asking (ask(text)) unless `force`; return those deleted."""
    removed: list[AclBinding] = []
    for pattern_filter, acls in filter_entries(opts).items():
        if not force:
            ask((texts.remove_question(pattern_filter, acls) if acls else texts.remove_all_question(pattern_filter))
                + "\n")
            answer = read_answer()
            if answer is None:
                raise NoAnswer("no answer on stdin: nothing removed (--force removes without asking)")
            if answer.strip("\r\n").lower() != "y":
                continue
        filters = [AclBinding(pattern_filter, a) for a in acls] or [AclBinding(pattern_filter, ANY_ENTRY)]
        for outcome in admin.delete_acls(filters):
            if outcome.error is not None:
                raise outcome.error
            for binding, error in outcome.matched:
                if error is not None:
                    raise error
                if binding not in removed:
                    removed.append(binding)
    return removed
