"""The Java exception class Kafka's clients raise for each error code (Errors.exception()), for texts that print it
as Kafka's tools do (`org.apache.kafka.common.errors.PreferredLeaderNotAvailableException: The preferred ...`).

Rules:
- Facts from Kafka 3.9's Errors enum. Most classes are the error's name in CamelCase plus "Exception" (or the name
  alone when it already ends in EXCEPTION); the others are listed in IRREGULAR. Every class is in
  org.apache.kafka.common.errors except INVALID_RECORD's (org.apache.kafka.common).
- A code outside the table is UNKNOWN_SERVER_ERROR's class, as Errors.forCode maps it.
"""
from __future__ import annotations

from .errors import Errors

PACKAGE = "org.apache.kafka.common.errors"
IRREGULAR = {
    -1: "UnknownServerException", 2: "CorruptRecordException", 7: "TimeoutException", 10: "RecordTooLargeException",
    11: "ControllerMovedException", 12: "OffsetMetadataTooLarge", 18: "RecordBatchTooLargeException",
    29: "TopicAuthorizationException", 30: "GroupAuthorizationException", 31: "ClusterAuthorizationException",
    36: "TopicExistsException", 40: "InvalidConfigurationException", 45: "OutOfOrderSequenceException",
    46: "DuplicateSequenceException", 49: "InvalidPidMappingException", 50: "InvalidTxnTimeoutException",
    53: "TransactionalIdAuthorizationException", 56: "KafkaStorageException", 58: "SaslAuthenticationException",
    61: "DelegationTokenDisabledException", 64: "UnsupportedByAuthenticationException",
    65: "DelegationTokenAuthorizationException", 68: "GroupNotEmptyException",
    97: "PrincipalDeserializationException", 98: "PositionOutOfRangeException", 106: "FetchSessionTopicIdException",
}
OTHER_PACKAGES = {87: "org.apache.kafka.common"}


def exception_class(code: int) -> str:
    """Return the fully qualified Java class of the exception Kafka's client raises for error `code`."""
    try:
        name = Errors(code).name
    except ValueError:
        code, name = -1, Errors.UNKNOWN_SERVER_ERROR.name
    simple = IRREGULAR.get(code)
    if simple is None:
        camel = "".join(word.capitalize() for word in name.split("_"))
        simple = camel if camel.endswith("Exception") else camel + "Exception"
    return f"{OTHER_PACKAGES.get(code, PACKAGE)}.{simple}"
