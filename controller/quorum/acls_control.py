"""(Being written.)"""
HANDLERS: dict = {}
READ_ONLY: frozenset = frozenset()
