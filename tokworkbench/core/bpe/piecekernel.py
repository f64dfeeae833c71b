"""BPE of many short pieces compiled (numba): `encode._merge_short`'s loop, one piece after another.

A first encode meets every distinct chunk of the text once (about 100,000 in 10 MB of English);
the numpy rounds (`batchbpe._rounds`) advance all of them one merge a round, a dozen array
passes each, which took 0.25 s of the 1.3 s tiktoken's whole encode takes. In compiled code
the plain per-piece loop is the fastest: pieces are a few bytes, and the rescans it pays for
cost less than any bookkeeping. Pairs are looked up in the `MergeTable`'s own arrays (the dense
table of small ids, then its open-addressing hash), so both paths read one table.
Import this module only after `jit.available()`: it imports numba.
"""

import numba
import numpy as np

from tokworkbench.core.slotkernel import probe


@numba.njit(cache=True, nogil=True, inline="always")
def _rank(a, b, dense, side, slot_keys, slot_ranks, bits, never):
    if a < side and b < side:
        return np.int64(dense[a * side + b])
    at = probe(slot_keys, (np.int64(a) << 32) | np.int64(b), bits)
    return slot_ranks[at] if at >= 0 else never


@numba.njit(cache=True, nogil=True)
def merge_pieces(data, bounds, dense, side, slot_keys, slot_ranks, bits, never, base):
    """Inside ids of each piece `data[bounds[i]:bounds[i + 1]]` (bytes), flat, and how many
    each has. Merge r makes `base + r`; of equal ranks the leftmost goes first, and the rest
    of that rank to its right follow, as `_merge_short` takes them."""
    k = len(bounds) - 1
    out = np.empty(len(data), dtype=np.int64)
    lens = np.empty(k, dtype=np.int64)
    longest = 0
    for p in range(k):
        longest = max(longest, bounds[p + 1] - bounds[p])
    ids = np.empty(longest, dtype=np.int64)
    ranks = np.empty(longest, dtype=np.int64)
    w = 0
    for p in range(k):
        a0 = bounds[p]
        m = bounds[p + 1] - a0
        for j in range(m):
            ids[j] = data[a0 + j]
        for j in range(m - 1):
            ranks[j] = _rank(ids[j], ids[j + 1], dense, side, slot_keys, slot_ranks, bits, never)
        while m > 1:
            r = never
            i = -1
            for j in range(m - 1):
                if ranks[j] < r:
                    r = ranks[j]
                    i = j
            if i < 0:
                break
            z = base + r
            while True:
                ids[i] = z
                for j in range(i + 1, m - 1):
                    ids[j] = ids[j + 1]
                for j in range(i, m - 2):
                    ranks[j] = ranks[j + 1]
                m -= 1
                if i > 0:
                    ranks[i - 1] = _rank(ids[i - 1], z, dense, side, slot_keys, slot_ranks, bits, never)
                if i < m - 1:
                    ranks[i] = _rank(z, ids[i + 1], dense, side, slot_keys, slot_ranks, bits, never)
                nxt = -1
                for j in range(i + 1, m - 1):
                    if ranks[j] == r:
                        nxt = j
                        break
                if nxt < 0:
                    break
                i = nxt
        for j in range(m):
            out[w + j] = ids[j]
        lens[p] = m
        w += m
    return out[:w], lens
