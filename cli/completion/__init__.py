"""Shell completion: the 'kraftsman completion' command and the run-time candidates behind it."""
