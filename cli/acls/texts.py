"""kafka-acls' texts, as Kafka 3.9's AclCommand prints them: resource blocks with their trailing spaces, the
removal questions, the per-principal heading.

Rules:
- A block is Kafka's `s"<head> for resource `$resource`: $nl ${acls.map("\t" + _).mkString(nl)} $nl"` then
  println: the heading line ends with ": ", the first entry line starts with " \t", the last ends with " ", and a
  blank line follows. Patterns and entries print as their Java toString() (controller.client.admin.acls).
"""
from __future__ import annotations


def block(head: str, pattern, acls) -> str:
    """Return one resource's block, newline-terminated (`head`: "Adding ACLs", "Current ACLs")."""
    joined = "\n".join(f"\t{a}" for a in acls)
    return f"{head} for resource `{pattern}`: \n {joined} \n\n"


def remove_all_question(pattern) -> str:
    """Return the question asked before deleting every ACL of a resource filter."""
    return f"Are you sure you want to delete all ACLs for resource filter `{pattern}`? (y/n)"


def remove_question(pattern, acls) -> str:
    """Return the question asked before deleting some ACLs of a resource filter."""
    joined = "\n".join(f"\t{a}" for a in acls)
    return f"Are you sure you want to remove ACLs: \n {joined} \n from resource filter `{pattern}`? (y/n)"


def principal_heading(principal: str) -> str:
    """Return the line before the ACLs of one --principal."""
    return f"ACLs for principal `{principal}`"
