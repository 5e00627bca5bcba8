"""Sans-I/O KRaft consensus core (KIP-595, KIP-996 pre-vote, KIP-853 dynamic voters).

Entry point: `core.RaftNode(config, log, rng, quorum_state)` driven by tick / step / propose /
ready / advance; see `config.Ready` for the driver contract and `state` for the role table.
"""
