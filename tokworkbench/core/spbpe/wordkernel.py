"""SentencePiece BPE's merges for many words compiled (numba): the agenda's rule word by word.

The numpy rounds (`batchmerge._rounds`) advance every open word one best score a round, with a
guard that falls back to one merge where pieces tie or outscore their parts: 0.45 s of the new
words in 2 MB of English lines, where sentencepiece encodes all of it in 0.44 s. In compiled
code the plain rule is quickest and needs no guard: while some adjacent pair makes a piece, the
pair whose piece ranks best (rank 0: the highest score; equal scores share a rank) merges, the
leftmost among equals, and the two pairs beside it are looked up again: bpe_model.cc's agenda,
step for step, as fastencode.py's list loop does it. Its loop is quadratic too: words of
`_COMPILED_UP_TO` characters or more (fastencode.py) are not given here.

The model's tables travel as one int64 array (`PairTable.packed`), since numba types and
unboxes each argument at every call (a line's new words are one call: nine arguments were
half a microsecond of it), and a pair's slot holds its key and what it makes side by side, so
a lookup touches one cache line, not three (the slots, their index, the rank).
Import this module only after `jit.available()`: it imports numba.
"""

import numba
import numpy as np

from tokworkbench.core.slots import MULT

NEVER = np.iinfo(np.int32).max
HEAD = 4  # the packed table: count, bits, len(char_symbol), len(out_id), then those two, then the slots
SEPARATOR = 0xFFFF  # between the words of `words_ids`' buffer: a noncharacter, and counted
_META = 0x2581  # ▁


@numba.njit(cache=True, nogil=True, inline="always")
def unpack(table):
    """(count, bits, char_symbol, out_id, slots) of a packed table: views, nothing copied."""
    chars, outs = table[2], table[3]
    return (table[0], table[1], table[HEAD:HEAD + chars], table[HEAD + chars:HEAD + chars + outs],
            table[HEAD + chars + outs:])


@numba.njit(cache=True, nogil=True, inline="always")
def _pair(a, b, count, slots, bits):
    """What pair (a, b) makes, as made << 32 | rank, or -1 where it makes no piece."""
    key = np.int64(a) * count + np.int64(b)
    mask = (np.int64(1) << bits) - 1
    at = np.int64((np.uint64(key) * MULT) >> np.uint64(64 - bits))
    while True:
        k = slots[2 * at]
        if k == key:
            return slots[2 * at + 1]
        if k == -1:
            return np.int64(-1)
        at = (at + 1) & mask


@numba.njit(cache=True, nogil=True, inline="always")
def merge_word(sym, cp, pr, m, count, slots, bits):
    """The agenda's rule over the word's first m symbols (and their code points) in place;
    returns how many symbols are left."""
    for j in range(m - 1):
        pr[j] = _pair(sym[j], sym[j + 1], count, slots, bits)
    while m > 1:
        best = NEVER
        i = -1
        for j in range(m - 1):
            p = pr[j]
            if p >= 0 and (p & 0xFFFFFFFF) < best:
                best = p & 0xFFFFFFFF
                i = j
        if i < 0:
            break
        sym[i] = pr[i] >> 32
        for j in range(i + 1, m - 1):
            sym[j] = sym[j + 1]
            cp[j] = cp[j + 1]
        for j in range(i, m - 2):
            pr[j] = pr[j + 1]
        m -= 1
        if i > 0:
            pr[i - 1] = _pair(sym[i - 1], sym[i], count, slots, bits)
        if i < m - 1:
            pr[i] = _pair(sym[i], sym[i + 1], count, slots, bits)
    return m


@numba.njit(cache=True, nogil=True, inline="always")
def merged_ids(sym, cp, pr, m, count, slots, bits, out_id, dest, at):
    """`merge_word`, then each symbol's id into dest[at:]: how many, or -1 where a symbol has
    none (the caller takes the exact path)."""
    m = merge_word(sym, cp, pr, m, count, slots, bits)
    for j in range(m):
        tid = out_id[sym[j]]
        if tid < 0:
            return -1
        dest[at + j] = tid
    return m


@numba.njit(cache=True, nogil=True)
def words_ids(buf, k, lead, limit, table):
    """The ids of k words in one call (a line's new words: one dispatch, not one a word): `buf`
    is their UTF-32-LE bytes (a `bytes`: numba reads it where it lies), U+FFFF between two; with
    `lead` each gets a ▁ in front and its spaces become ▁ (a line's parts after their space).
    Returns 2k offsets, then the ids word after word: word i's ids are bytes start_i to end_i
    of the result's own bytes (int64), nothing (start = end) where the exact path must do the
    word: a surrogate, a final symbol that is no piece (-1) or left to it (-2), `limit`
    characters or more. Empty when the separators are not k - 1 (one was inside a word)."""
    count, bits, char_symbol, out_id, slots = unpack(table)
    n = len(buf) // 4
    cps = np.empty(n, dtype=np.int64)
    seps = 0
    longest = 0
    run = 0
    for j in range(n):
        c = (np.int64(buf[4 * j]) | (np.int64(buf[4 * j + 1]) << 8) | (np.int64(buf[4 * j + 2]) << 16)
             | (np.int64(buf[4 * j + 3]) << 24))
        cps[j] = c
        if c == SEPARATOR:
            seps += 1
            longest = max(longest, run)
            run = 0
        else:
            run += 1
    if seps != k - 1:
        return np.empty(0, dtype=np.int64)
    longest = max(longest, run) + 1
    sym = np.empty(longest, dtype=np.int64)
    cp = np.empty(longest, dtype=np.int64)
    pr = np.empty(longest, dtype=np.int64)
    out = np.empty(3 * k + n, dtype=np.int64)
    size = len(char_symbol)
    w = 2 * k
    a = 0
    for word in range(k):
        b = a
        while b < n and cps[b] != SEPARATOR:
            b += 1
        m = 0
        if lead:
            cp[0] = _META
            sym[0] = char_symbol[_META] if _META < size else count - 1
            m = 1
        exact = b - a + m >= limit
        if not exact:
            for j in range(a, b):
                c = cps[j]
                if c == 0x20 and lead:
                    c = _META
                if 0xD800 <= c < 0xE000:
                    exact = True
                    break
                cp[m] = c
                sym[m] = char_symbol[c] if c < size else count - 1
                m += 1
        if not exact:
            m = merged_ids(sym, cp, pr, m, count, slots, bits, out_id, out, w)
            exact = m < 0
        if exact:
            out[word] = out[k + word] = 0
        else:
            out[word] = 8 * w
            w += m
            out[k + word] = 8 * w
        a = b + 1
    return out[:w]


@numba.njit(cache=True, nogil=True)
def merge_words(units, cps, sizes, table):
    """Final symbols of each word (its units `units[...]`, `sizes` of them), the first code
    point of each, and the word it is in, word after word."""
    count, bits, _, _, slots = unpack(table)
    total = len(units)
    out_sym = np.empty(total, dtype=np.int32)
    out_cp = np.empty(total, dtype=np.int32)
    out_owner = np.empty(total, dtype=np.int64)
    longest = 0
    for s in sizes:
        longest = max(longest, s)
    sym = np.empty(longest, dtype=np.int64)
    cp = np.empty(longest, dtype=np.int64)
    pr = np.empty(longest, dtype=np.int64)  # what each adjacent pair makes (`_pair`), or -1
    w = 0
    start = 0
    for word in range(len(sizes)):
        m = sizes[word]
        for j in range(m):
            sym[j] = units[start + j]
            cp[j] = cps[start + j]
        start += m
        m = merge_word(sym, cp, pr, m, count, slots, bits)
        for j in range(m):
            out_sym[w] = sym[j]
            out_cp[w] = cp[j]
            out_owner[w] = word
            w += 1
    return out_sym[:w], out_cp[:w], out_owner[:w]
