"""kafka-metadata-shell's front end: sources (files, directories, a live quorum) and sessions."""
