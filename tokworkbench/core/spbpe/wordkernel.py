"""SentencePiece BPE's merges for many words compiled (numba): the agenda's rule word by word.

The numpy rounds (`batchmerge._rounds`) advance every open word one best score a round, with a
guard that falls back to one merge where pieces tie or outscore their parts: 0.45 s of the new
words in 2 MB of English lines, where sentencepiece encodes all of it in 0.44 s. In compiled
code the plain rule is quickest and needs no guard: while some adjacent pair makes a piece, the
pair whose piece ranks best (rank 0: the highest score; equal scores share a rank) merges, the
leftmost among equals, and the two pairs beside it are looked up again: bpe_model.cc's agenda,
step for step, as fastencode.py's list loop does it. Its loop is quadratic too: words of
`_COMPILED_UP_TO` characters or more (fastencode.py) are not given here.
Import this module only after `jit.available()`: it imports numba.
"""

import numba
import numpy as np

from tokworkbench.core.slotkernel import probe

NEVER = np.iinfo(np.int32).max


@numba.njit(cache=True, nogil=True, inline="always")
def _pair(a, b, count, slot_keys, slot_index, bits):
    """The index of pair (a, b) in the table, or -1."""
    at = probe(slot_keys, np.int64(a) * count + np.int64(b), bits)
    return slot_index[at] if at >= 0 else -1


@numba.njit(cache=True, nogil=True, inline="always")
def _merge(sym, cp, pr, m, count, slot_keys, slot_index, bits, made, rank):
    """The agenda's rule over the word's first m symbols (and their code points) in place;
    returns how many symbols are left."""
    for j in range(m - 1):
        pr[j] = _pair(sym[j], sym[j + 1], count, slot_keys, slot_index, bits)
    while m > 1:
        best = NEVER
        i = -1
        for j in range(m - 1):
            p = pr[j]
            if p >= 0 and rank[p] < best:
                best = rank[p]
                i = j
        if i < 0:
            break
        sym[i] = made[pr[i]]
        for j in range(i + 1, m - 1):
            sym[j] = sym[j + 1]
            cp[j] = cp[j + 1]
        for j in range(i, m - 2):
            pr[j] = pr[j + 1]
        m -= 1
        if i > 0:
            pr[i - 1] = _pair(sym[i - 1], sym[i], count, slot_keys, slot_index, bits)
        if i < m - 1:
            pr[i] = _pair(sym[i], sym[i + 1], count, slot_keys, slot_index, bits)
    return m


@numba.njit(cache=True, nogil=True)
def word_ids(word, char_symbol, count, slot_keys, slot_index, bits, made, rank, out_id):
    """One word's ids from its code points (UTF-32: numba types an array at C speed, a str in
    Python), for a line's few new words: `merge_words` is for many, and its arrays cost more to
    make than one word takes. Empty where the exact path must do it: a surrogate, or a final
    symbol that is no piece (-1) or left to it (-2)."""
    m = len(word)
    sym = np.empty(m, dtype=np.int32)
    cp = np.empty(m, dtype=np.int32)
    pr = np.empty(max(m, 1), dtype=np.int64)
    for j in range(m):
        c = np.int64(word[j])
        if 0xD800 <= c < 0xE000:
            return np.empty(0, dtype=np.int64)
        cp[j] = c
        sym[j] = char_symbol[c] if c < len(char_symbol) else count - 1
    m = _merge(sym, cp, pr, m, count, slot_keys, slot_index, bits, made, rank)
    out = np.empty(m, dtype=np.int64)
    for j in range(m):
        tid = out_id[sym[j]]
        if tid < 0:
            return np.empty(0, dtype=np.int64)
        out[j] = tid
    return out


@numba.njit(cache=True, nogil=True)
def merge_words(units, cps, sizes, count, slot_keys, slot_index, bits, made, rank):
    """Final symbols of each word (its units `units[...]`, `sizes` of them), the first code
    point of each, and the word it is in, word after word."""
    total = len(units)
    out_sym = np.empty(total, dtype=np.int32)
    out_cp = np.empty(total, dtype=np.int32)
    out_owner = np.empty(total, dtype=np.int64)
    longest = 0
    for s in sizes:
        longest = max(longest, s)
    sym = np.empty(longest, dtype=np.int32)
    cp = np.empty(longest, dtype=np.int32)
    pr = np.empty(longest, dtype=np.int64)  # the table index of each adjacent pair, or -1
    w = 0
    start = 0
    for word in range(len(sizes)):
        m = sizes[word]
        for j in range(m):
            sym[j] = units[start + j]
            cp[j] = cps[start + j]
        start += m
        m = _merge(sym, cp, pr, m, count, slot_keys, slot_index, bits, made, rank)
        for j in range(m):
            out_sym[w] = sym[j]
            out_cp[w] = cp[j]
            out_owner[w] = word
            w += 1
    return out_sym[:w], out_cp[:w], out_owner[:w]
