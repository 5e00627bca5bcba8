"""Chaos harness for a real kraftsman controller quorum (issue 10): fault proxy, workload, fault injector, checker."""
