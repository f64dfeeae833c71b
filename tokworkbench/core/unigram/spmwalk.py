"""Where each piece occurs in a set of strings (spmtrain.edges, compiled by spmkernel.py): a
64-bit polynomial hash of the code points (hashing.py), grown a character at a time while it is
some piece's prefix, looked up in an open-addressing table."""

import numpy as np


def walk(codes, lens, offs, max_len, base, prefix, p_hash):
    """Every occurrence of a piece in the strings (spmtrain.edges: `codes` their code points + 1
    end to end; `prefix` the hashes of every piece's prefixes, `p_hash` each piece's): by string,
    start and length, with each string's offsets."""
    keys, values, bits = _table(prefix, p_hash)
    cap = len(codes) + 16  # about one edge a character in text; more grows the arrays
    start = np.empty(cap, np.int32)
    size = np.empty(cap, np.int32)
    which = np.empty(cap, np.int32)
    off = np.zeros(len(lens) + 1, np.int64)
    n = 0
    for s in range(len(lens)):
        for p in range(lens[s]):
            h = np.uint64(0)
            for length in range(1, min(max_len, lens[s] - p) + 1):
                h = h * base + codes[offs[s] + p + length - 1]
                k = values[_slot(keys, values, bits, h)]
                if k == -1:
                    break
                if k >= 0:
                    if n == cap:
                        cap *= 2
                        start = _grown(start, cap)
                        size = _grown(size, cap)
                        which = _grown(which, cap)
                    start[n] = p
                    size[n] = length
                    which[n] = k
                    n += 1
        off[s + 1] = n
    return off, start[:n].copy(), size[:n].copy(), which[:n].copy()


def _table(prefix, p_hash):
    """An open-addressing table: each prefix's hash -> -2, each piece's -> its index; -1 empty."""
    bits = 4
    while (1 << bits) < 2 * len(prefix) + 2:
        bits += 1
    keys = np.zeros(1 << bits, np.uint64)
    values = np.full(1 << bits, -1, np.int64)
    for h in prefix:
        i = _slot(keys, values, bits, h)
        keys[i] = h
        values[i] = -2
    for k in range(len(p_hash)):
        values[_slot(keys, values, bits, p_hash[k])] = k
    return keys, values, bits


def _slot(keys, values, bits, h):
    """Where `h` is, or the empty slot it would take (linear probing from a Fibonacci hash)."""
    mixed = (h ^ (h >> np.uint64(31))) * np.uint64(0x9E3779B97F4A7C15)
    i = np.int64(mixed >> np.uint64(64 - bits))
    mask = (1 << bits) - 1
    while values[i] != -1 and keys[i] != h:
        i = (i + 1) & mask
    return i


def _grown(values, cap):
    out = np.empty(cap, values.dtype)
    out[: len(values)] = values
    return out
