"""Open addressing for sorted-or-not int64 keys, built in numpy, probed from compiled code.

The merge tables (byte BPE's pairs, SentencePiece BPE's pairs) are looked up one pair at a time
in compiled loops, where a binary search over 100,000 keys costs a dozen cache misses and a
hash one or two. Keys sit at their Fibonacci hash or the first free slot after it (linear
probing), at most a quarter full; -1 marks an empty slot (keys are never negative).
"""

import numpy as np

MULT = np.uint64(0x9E3779B97F4A7C15)


def home(keys: np.ndarray, bits: int) -> np.ndarray:
    return ((keys.astype(np.uint64) * MULT) >> np.uint64(64 - bits)).astype(np.int64)


def open_slots(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """The slot table (each slot's key or -1), the slot each key landed in, and the table's bits.
    Keys must be distinct."""
    bits = max(4, (4 * len(keys)).bit_length())
    slot_keys = np.full(1 << bits, -1, dtype=np.int64)
    where = np.empty(len(keys), dtype=np.int64)
    mask = (1 << bits) - 1
    todo = np.arange(len(keys))
    at = home(keys, bits)
    while len(todo):
        free = slot_keys[at] == -1
        # of the keys that want one free slot, the first takes it; the rest probe on
        _, first = np.unique(at[free], return_index=True)
        take = np.flatnonzero(free)[first]
        slot_keys[at[take]] = keys[todo[take]]
        where[todo[take]] = at[take]
        left = np.ones(len(todo), dtype=bool)
        left[take] = False
        todo, at = todo[left], (at[left] + 1) & mask
    return slot_keys, where, bits
