"""How kafka-configs reports a failure that is not a plain refusal, as Kafka 3.9's ConfigCommand does: "Error while
executing config command with args '<args>'" on stderr, then the Java exception's printStackTrace.

Rules:
- A server error reached through an Admin future is a java.util.concurrent.ExecutionException whose message is
  the Kafka exception's toString(), with a "Caused by:" line for that exception; a client timeout is a bare
  java.util.concurrent.TimeoutException; JavaThrowable is any other Java exception Kafka throws directly
  (an invalid topic name, an unreadable --add-config-file).
- Kafka's ApiExceptions (org.apache.kafka.common.errors) carry no stack frames; other exceptions show frames:
  kraftsman is not a JVM, so one frame names kraftsman's tool (recorded frames are compared loosely).
- exception_class(code) is the class Kafka's client raises for an error code (Errors.exception()).
"""
from __future__ import annotations

API_ERRORS = "org.apache.kafka.common.errors."
FRAME = "\tat kraftsman.cli.configs(kafka-configs)"
# the classes whose name is not the error's name in CamelCase plus "Exception" (Kafka 3.9's Errors)
_IRREGULAR = {
    -1: "UnknownServerException", 2: "CorruptRecordException", 7: "TimeoutException", 10: "RecordTooLargeException",
    11: "ControllerMovedException", 12: "OffsetMetadataTooLarge", 18: "RecordBatchTooLargeException",
    29: "TopicAuthorizationException", 30: "GroupAuthorizationException", 31: "ClusterAuthorizationException",
    36: "TopicExistsException", 40: "InvalidConfigurationException", 45: "OutOfOrderSequenceException",
    46: "DuplicateSequenceException", 49: "InvalidPidMappingException", 50: "InvalidTxnTimeoutException",
    53: "TransactionalIdAuthorizationException", 56: "KafkaStorageException", 58: "SaslAuthenticationException",
    61: "DelegationTokenDisabledException", 64: "UnsupportedByAuthenticationException",
    65: "DelegationTokenAuthorizationException", 68: "GroupNotEmptyException",
    97: "PrincipalDeserializationException", 106: "FetchSessionTopicIdException"}


class JavaThrowable(Exception):
    """A Java exception Kafka's tool throws: its class, its message (None: Java's null) and its cause."""

    def __init__(self, java_class: str, message: str | None = None, cause: JavaThrowable | None = None):
        super().__init__(message or "")
        self.java_class, self.message, self.cause = java_class, message, cause

    def to_string(self) -> str:
        """Return Throwable.toString(): the class, then ": message" unless the message is null."""
        return self.java_class if self.message is None else f"{self.java_class}: {self.message}"


def exception_class(code: int) -> str:
    """Return the fully qualified class of the exception Kafka's client raises for error `code`."""
    from kraftsman.storage.protocol.errors import error_name

    name = error_name(code, unknown="UNKNOWN_SERVER_ERROR")
    if code in _IRREGULAR:
        simple = _IRREGULAR[code]
    else:
        camel = "".join(word.capitalize() for word in name.split("_"))
        simple = camel if camel.endswith("Exception") else camel + "Exception"
    return API_ERRORS + simple


def from_server_error(error) -> JavaThrowable:
    """Return the ExecutionException an Admin future fails with for a ServerError (code, message)."""
    cause = JavaThrowable(exception_class(error.code), error.message)
    return JavaThrowable("java.util.concurrent.ExecutionException", cause.to_string(), cause)


def timed_out() -> JavaThrowable:
    """Return the TimeoutException a KafkaFuture.get(timeout) throws."""
    return JavaThrowable("java.util.concurrent.TimeoutException")


def stack_trace(e: JavaThrowable) -> list[str]:
    """Return printStackTrace's lines for `e`: its toString, its frames, then each cause's."""
    lines, caused = [], ""
    while e is not None:
        lines.append(caused + e.to_string())
        if not e.java_class.startswith(API_ERRORS):
            lines.append(FRAME)
        e, caused = e.cause, "Caused by: "
    return lines


def command_error(argv: list[str], e: JavaThrowable) -> str:
    """Return ConfigCommand's text for a failure other than a refusal (stderr), newline-terminated."""
    lines = [f"Error while executing config command with args '{' '.join(argv)}'", *stack_trace(e)]
    return "".join(line + "\n" for line in lines)
