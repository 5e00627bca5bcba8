"""Error responses for any request a controller or a simulated broker serves, as Kafka's
AbstractRequest.getErrorResponse builds them, and the error codes a response carries (its errorCounts keys).

Rules:
- Responses with a top-level ErrorCode carry the error there (and ErrorMessage when the version has it).
- Topic- or resource-keyed responses repeat the error for every topic or resource of the request
  (CreateAcls: every creation; DeleteAcls: every filter, with no matching ACLs).
- The body is an instance of the generated response class; the network layer encodes it at the
  request's version, so fields a version lacks are simply not written.
- SCRAM and quota responses follow their Kafka getErrorResponse: AlterUserScramCredentials one result per
  distinct user (Java-sorted), DescribeUserScramCredentials the top-level error plus one nameless result per
  listed user, AlterClientQuotas one entry per request entry with its entity parts as sent;
  DescribeTopicPartitions one empty result per requested topic, DescribeClientQuotas no entries (null).
- error_codes() walks every ErrorCode field of a response, nested ones included (what a forwarding check for
  NOT_CONTROLLER looks at, as Kafka's errorCounts().containsKey).
"""
from __future__ import annotations

from kraftsman.controller.quorum.java_hash_order import java_sorted
from kraftsman.storage.protocol import codec
from kraftsman.storage.protocol.errors import Errors, default_message

# AclApis without an authorizer: every ACL API answers SECURITY_DISABLED with these texts
NO_AUTHORIZER = {"CreateAcls": "No Authorizer is configured.", "DeleteAcls": "No Authorizer is configured.",
                 "DescribeAcls": "No Authorizer is configured on the broker"}


def security_disabled(api_name: str, request):
    """Return the SECURITY_DISABLED answer of an ACL API on a controller without an authorizer, else None."""
    message = NO_AUTHORIZER.get(api_name)
    return None if message is None else error_response(api_name, request, Errors.SECURITY_DISABLED, message)


def error_response(api_name: str, request, code: int, message: str | None = None):
    """Return the `<api>Response` that answers every part of `request` with error `code`."""
    cls = codec.message_class(f"{api_name}Response")
    builder = _PER_TOPIC.get(api_name)
    if builder is not None:
        return builder(cls, request, code, message if message is not None else default_message(code))
    body = cls()
    if hasattr(body, "error_code"):
        body.error_code = code
    if hasattr(body, "error_message"):
        body.error_message = message if message is not None else default_message(code)
    return body


def error_codes(response) -> set[int]:
    """Return every ErrorCode value in `response` and its nested structs."""
    found: set[int] = set()
    stack = [response]
    while stack:
        message = stack.pop()
        for name in getattr(message, "_fields", ()):
            value = getattr(message, name, None)
            if name == "error_code":
                found.add(value)
            elif isinstance(value, list):
                stack.extend(v for v in value if hasattr(v, "_fields"))
            elif hasattr(value, "_fields"):
                stack.append(value)
    return found


def _create_topics(cls, request, code, message):
    return cls(topics=[cls.CreatableTopicResult(name=t.name, error_code=code, error_message=message)
                       for t in request.topics])


def _delete_topics(cls, request, code, message):
    names = list(request.topic_names or [])
    out = [cls.DeletableTopicResult(name=n, error_code=code, error_message=message) for n in names]
    for t in request.topics or []:
        out.append(cls.DeletableTopicResult(name=t.name, topic_id=t.topic_id, error_code=code,
                                            error_message=message))
    return cls(responses=out)


def _create_partitions(cls, request, code, message):
    return cls(results=[cls.CreatePartitionsTopicResult(name=t.name, error_code=code, error_message=message)
                        for t in request.topics])


def _alter_configs(cls, request, code, message):
    return cls(responses=[cls.AlterConfigsResourceResponse(error_code=code, error_message=message,
                                                           resource_type=r.resource_type,
                                                           resource_name=r.resource_name)
                          for r in request.resources])


def _elect_leaders(cls, request, code, message):
    results = []
    for t in request.topic_partitions or []:
        parts = [cls.PartitionResult(partition_id=p, error_code=code, error_message=message) for p in t.partitions]
        results.append(cls.ReplicaElectionResult(topic=t.topic, partition_result=parts))
    return cls(error_code=code, replica_election_results=results)


def _create_acls(cls, request, code, message):
    return cls(results=[cls.AclCreationResult(error_code=code, error_message=message)
                        for _ in request.creations or []])


def _delete_acls(cls, request, code, message):
    return cls(filter_results=[cls.DeleteAclsFilterResult(error_code=code, error_message=message)
                               for _ in request.filters or []])


def _alter_scram(cls, request, code, message):
    users = {d.name for d in request.deletions} | {u.name for u in request.upsertions}
    return cls(results=[cls.AlterUserScramCredentialsResult(user=u, error_code=code, error_message=message)
                        for u in java_sorted(users)])


def _describe_scram(cls, request, code, message):
    results = [cls.DescribeUserScramCredentialsResult(error_code=code, error_message=message)
               for _ in request.users or ()]
    return cls(error_code=code, error_message=message, results=results)


def _alter_quotas(cls, request, code, message):
    return cls(entries=[cls.EntryData(error_code=code, error_message=message,
                                      entity=[cls.EntityData(entity_type=e.entity_type, entity_name=e.entity_name)
                                              for e in entry.entity])
                        for entry in request.entries])


def _describe_topic_partitions(cls, request, code, message):
    return cls(topics=[cls.DescribeTopicPartitionsResponseTopic(name=t.name, error_code=code, is_internal=False,
                                                               partitions=[]) for t in request.topics])


def _describe_quotas(cls, request, code, message):
    return cls(error_code=code, error_message=message, entries=None)


_PER_TOPIC = {"CreateTopics": _create_topics, "DeleteTopics": _delete_topics,
              "CreatePartitions": _create_partitions, "IncrementalAlterConfigs": _alter_configs,
              "AlterConfigs": _alter_configs, "ElectLeaders": _elect_leaders,
              "CreateAcls": _create_acls, "DeleteAcls": _delete_acls,
              "AlterUserScramCredentials": _alter_scram, "DescribeUserScramCredentials": _describe_scram,
              "AlterClientQuotas": _alter_quotas, "DescribeTopicPartitions": _describe_topic_partitions,
              "DescribeClientQuotas": _describe_quotas}
