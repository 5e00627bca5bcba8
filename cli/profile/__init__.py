"""kraftsman profile: manage connection profiles."""
