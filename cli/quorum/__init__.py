"""kafka-metadata-quorum: describe the quorum, add and remove controllers."""
