"""The chunk store's lookups compiled (numba): hash, probe, check and gather in one pass a chunk.

In numpy a lookup over a whole text is a dozen passes over arrays as long as the text (the
hash terms, each character's place in its chunk, the repeated starts for the character check,
the grouping of new chunks): 1.4 s of Llama 3's 2.5 s on 10 MB of English, where tiktoken's
whole encode takes 1.3 s. Here each chunk is hashed, found and checked in one loop over its
own characters. The hash is `ChunkStore._hashes`' to the bit, so entries stored by either path
are found by the other; a chunk whose hash is stored under other characters keeps probing.
Import this module only after `jit.available()`: it imports numba.
"""

import numba
import numpy as np

_MULT = np.uint64(0x9E3779B97F4A7C15)
_MIX = np.uint64(0xBF58476D1CE4E5B9)
_BASE = np.uint64(0x100000001B3)


@numba.njit(cache=True, nogil=True, inline="always")
def _hash(cps, a, b):
    h = np.uint64(0)
    p = np.uint64(1)
    for j in range(a, b):
        h += np.uint64(cps[j]) * p
        p *= _BASE
    h ^= np.uint64(b - a) * _MIX
    h ^= h >> np.uint64(31)
    h *= _MULT
    h ^= h >> np.uint64(29)
    return h


@numba.njit(cache=True, nogil=True, inline="always")
def _slot(h, bits):
    return np.int64((h * _MULT) >> np.uint64(64 - bits))


@numba.njit(cache=True, nogil=True)
def find_tiling(cps, starts, slot_hash, slot_entry, bits, chars, char_start, char_len):
    """`ChunkStore.find_tiling`: entries (a chunk not stored: -1 - its stand-in's place), hashes
    and the stand-ins, the first chunk of each new set of characters."""
    k = len(starts)
    n = len(cps)
    entries = np.empty(k, dtype=np.int64)
    hashes = np.empty(k, dtype=np.uint64)
    mask = (1 << bits) - 1
    missing = 0
    for i in range(k):
        a = starts[i]
        b = starts[i + 1] if i + 1 < k else n
        h = _hash(cps, a, b)
        hashes[i] = h
        found = -1
        at = _slot(h, bits)
        while True:
            e = slot_entry[at]
            if e < 0:
                break
            if slot_hash[at] == h and char_len[e] == b - a:
                c = char_start[e]
                same = True
                for j in range(b - a):
                    if chars[c + j] != cps[a + j]:
                        same = False
                        break
                if same:
                    found = e
                    break
            at = (at + 1) & mask
        entries[i] = found
        if found < 0:
            missing += 1
    if not missing:
        return entries, hashes, np.zeros(0, dtype=np.int64)
    return entries, hashes, _group_missing(cps, starts, entries, hashes, missing)


@numba.njit(cache=True, nogil=True)
def _group_missing(cps, starts, entries, hashes, missing):
    """Code the chunks not found as -1 - place of their stand-in, through a table of the
    stand-ins; the stand-ins, ascending."""
    k = len(starts)
    n = len(cps)
    bits = 4
    while (1 << bits) < 2 * missing:
        bits += 1
    mask = (1 << bits) - 1
    owner = np.full(1 << bits, -1, dtype=np.int64)
    stand_in = np.empty(missing, dtype=np.int64)
    count = 0
    for i in range(k):
        if entries[i] >= 0:
            continue
        a = starts[i]
        size = (starts[i + 1] if i + 1 < k else n) - a
        h = hashes[i]
        at = _slot(h, bits)
        while True:
            o = owner[at]
            if o < 0:
                owner[at] = i
                stand_in[count] = i
                entries[i] = -1 - count
                count += 1
                break
            if hashes[o] == h:
                oa = starts[o]
                if (starts[o + 1] if o + 1 < k else n) - oa == size:
                    same = True
                    for j in range(size):
                        if cps[oa + j] != cps[a + j]:
                            same = False
                            break
                    if same:
                        entries[i] = entries[o]
                        break
            at = (at + 1) & mask
    return stand_in[:count].copy()


@numba.njit(cache=True, nogil=True)
def gather(entries, made, id_start, id_len, ids):
    """The ids of these entries, one after another (an entry -1 - j is `made[j]`)."""
    total = 0
    for e in entries:
        total += id_len[e if e >= 0 else made[-1 - e]]
    out = np.empty(total, dtype=np.int64)
    w = 0
    for e in entries:
        if e < 0:
            e = made[-1 - e]
        s = id_start[e]
        for j in range(id_len[e]):
            out[w] = ids[s + j]
            w += 1
    return out
