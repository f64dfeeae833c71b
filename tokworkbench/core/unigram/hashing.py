"""The substring hashing both Unigram EM seeds share (em.py's, spseed.py's): code points end to
end, a 64-bit polynomial hash per position (arithmetic wraps at 2^64), and grouping them: by one
sort in numpy, or compiled (spmkernel.py) by one pass through a hash table."""

import numpy as np

from tokworkbench.core.unigram.spmwalk import _slot

BASE = np.uint64(0x100000001B3)  # odd multiplier of the polynomial hash


def code_points(strings: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Code points + 1 (so no character hashes like an empty one) of all strings end to end,
    each string's length and offset."""
    codes = np.frombuffer("".join(strings).encode("utf-32-le"), dtype=np.uint32).astype(np.uint64) + np.uint64(1)
    lens = np.fromiter(map(len, strings), dtype=np.int64, count=len(strings))
    offs = np.cumsum(lens) - lens
    return codes, lens, offs


def first_and_inverse(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where a group of equal values is found and each value's group, by one sort: like
    np.unique(values, return_index=True, return_inverse=True), but with any one index of each
    value, not the first: the seed only reads its substring there, the same at every occurrence
    (an unstable sort is twice as fast on these hashes)."""
    order = np.argsort(values)
    starts = _run_starts(values[order])
    inverse = np.empty(len(values), dtype=np.int64)
    inverse[order] = np.cumsum(starts) - 1
    return order[starts], inverse


def _run_starts(values: np.ndarray) -> np.ndarray:
    """True where a run of equal values starts."""
    out = np.empty(len(values), bool)
    if len(values):
        out[0] = True
        np.not_equal(values[1:], values[:-1], out=out[1:])
    return out


def group_hashes(values):
    """`first_and_inverse` compiled (spmkernel.py): groups numbered as they first appear, each
    found at its first index. A level of the seed has many positions and few distinct substrings,
    so a table that grows with the groups stays in cache where a sort of every position did not."""
    n = len(values)
    bits = 10
    keys = np.zeros(1 << bits, np.uint64)
    ids = np.full(1 << bits, -1, np.int64)
    first = np.empty(n, np.int64)
    inverse = np.empty(n, np.int64)
    groups = 0
    for i in range(n):
        h = values[i]
        s = _slot(keys, ids, bits, h)
        if ids[s] == -1:
            if 2 * (groups + 1) > (1 << bits):
                bits += 1
                keys, ids = _rehashed(keys, ids, bits)
                s = _slot(keys, ids, bits, h)
            keys[s] = h
            ids[s] = groups
            first[groups] = i
            groups += 1
        inverse[i] = ids[s]
    return first[:groups].copy(), inverse


def _rehashed(keys, ids, bits):
    """The table's entries in one of 2**bits slots."""
    new_keys = np.zeros(1 << bits, np.uint64)
    new_ids = np.full(1 << bits, -1, np.int64)
    for s in range(len(keys)):
        if ids[s] != -1:
            t = _slot(new_keys, new_ids, bits, keys[s])
            new_keys[t] = keys[s]
            new_ids[t] = ids[s]
    return new_keys, new_ids
