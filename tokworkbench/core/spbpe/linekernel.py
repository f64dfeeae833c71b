"""SentencePiece BPE line by line in one compiled call: a line's words cut, looked up in a cache
of word ids, the new ones merged and stored, and the ids gathered.

For a model whose normalizer returns the text as it is and whose words never merge across a
space (fastencode.py's plain lines: Mistral's and Llama 2's files). A line cost about 3 us of
Python when all its words were known (split, a dict lookup a word, the ids joined) and some
8 us more when one was new (the new parts found, a compiled call, the cache filled); here it is
one call with three arguments (the text's UTF-32 bytes, the model's packed table, the cache)
and one `tolist`.

The cache is one int64 array (`new_cache`): a header, open-addressed slots, then an arena of
records, one a word: its hash, its length, its number of ids, its code points (▁ form) and its
ids, side by side. It only grows by whole records, so a call that stops half way leaves it
whole. The kernels keep the GIL (no `nogil`): the cache is written in place, and two threads
must not write it at once.

A call that cannot finish returns -1 - why (never an id): the cache is full (the caller makes a
bigger one, `regrow`, and calls again), some words need the exact path (their places follow:
the caller works them out, stores them with `store`, and calls again), or the text holds a ▁
of its own (the caller's word-by-word path). The answer is in what the call returns, not in the
cache, so a thread that runs between the call and its caller's next step cannot change it.

Words are cut as model.py cuts the normalized text, before each ▁ that follows another
character: a word starts at a space that follows a non-space (the first at the text's start,
with the dummy ▁), and its spaces are ▁. An unknown
that starts a word fuses with one that ends the word before, as model.py's paths fuse them.
Import this module only after `jit.available()`: it imports numba.
"""

import numba
import numpy as np

from tokworkbench.core.spbpe.wordkernel import merged_ids, unpack

# the header of a cache
ENTRIES, USED, BITS, CAP_ENTRIES, CAP_ARENA, UNK, FUSE = range(7)
HEAD = 7
# what `encode_line` returns in place of ids, as -1 - reason (ids are never negative)
FULL, EXACT, META_IN_TEXT = 1, 2, 3
_META = 0x2581  # ▁
_MULT = np.uint64(0x9E3779B97F4A7C15)
_MIX = np.uint64(0xBF58476D1CE4E5B9)
_BASE = np.uint64(0x100000001B3)
_PER_WORD = 20  # arena int64 a word, to begin with: hash, length, ids, 12 characters, 5 ids


def new_cache(entries: int, unk: int, fuse: bool) -> np.ndarray:
    """An empty cache for about `entries` words (at most half its slots used)."""
    bits = max(4, (2 * entries - 1).bit_length())
    cache = np.zeros(HEAD + (1 << bits) + _PER_WORD * entries, dtype=np.int64)
    cache[BITS], cache[CAP_ENTRIES], cache[CAP_ARENA] = bits, entries, _PER_WORD * entries
    cache[UNK], cache[FUSE] = unk, fuse
    cache[HEAD:HEAD + (1 << bits)] = -1  # a slot's word: none
    return cache


@numba.njit(cache=True, inline="always")
def _regions(cache):
    """(slots, arena) of a cache: views. A slot holds where its word's record starts in the
    arena; a record is the word's hash, its length m, its number of ids r, its m code points
    (its ▁ form), its r ids: one place in memory, so a lookup touches the slot and the record."""
    s = HEAD + (np.int64(1) << cache[BITS])
    return cache[HEAD:s], cache[s:s + cache[CAP_ARENA]]


@numba.njit(cache=True, inline="always")
def _hash(word, m):
    h = np.uint64(0)
    p = np.uint64(1)
    for j in range(m):
        h += np.uint64(word[j]) * p
        p *= _BASE
    h ^= np.uint64(m) * _MIX
    h ^= h >> np.uint64(31)
    h *= _MULT
    h ^= h >> np.uint64(29)
    return np.int64(h)


@numba.njit(cache=True, inline="always")
def _find(cache, word, m, h):
    """Where the word's record starts (its first m code points, hash h), or -1 - the free slot
    where it would go."""
    slots, arena = _regions(cache)
    mask = (np.int64(1) << cache[BITS]) - 1
    at = np.int64((np.uint64(h) * _MULT) >> np.uint64(64 - cache[BITS]))
    while True:
        e = slots[at]
        if e < 0:
            return -1 - at
        if arena[e] == h and arena[e + 1] == m:
            same = True
            for j in range(m):
                if arena[e + 3 + j] != word[j]:
                    same = False
                    break
            if same:
                return e
        at = (at + 1) & mask


@numba.njit(cache=True, inline="always")
def _put(cache, slot, word, m, h, ids, r):
    """Stores the word (m code points) and its r ids at the free slot; -1 where it does not fit."""
    slots, arena = _regions(cache)
    e = cache[USED]
    if cache[ENTRIES] >= cache[CAP_ENTRIES] or e + 3 + m + r > cache[CAP_ARENA]:
        return -1
    arena[e], arena[e + 1], arena[e + 2] = h, m, r
    arena[e + 3:e + 3 + m] = word[:m]
    arena[e + 3 + m:e + 3 + m + r] = ids[:r]
    slots[slot] = e
    cache[ENTRIES] += 1
    cache[USED] = e + 3 + m + r
    return e


@numba.njit(cache=True, inline="always")
def _code_point(buf, j):
    return (np.int64(buf[4 * j]) | (np.int64(buf[4 * j + 1]) << 8) | (np.int64(buf[4 * j + 2]) << 16)
            | (np.int64(buf[4 * j + 3]) << 24))


@numba.njit(cache=True)
def encode_line(buf, table, limit, cache):
    """The ids of a nonempty text (`buf`: its UTF-32-LE bytes), or -1 - the reason it stopped
    (module docstring), for EXACT followed by each such word's start and end. A new word is
    merged here when it is under `limit` characters and every symbol it ends with is a piece;
    else it is left to the exact path."""
    count, bits, char_symbol, out_id, pairs = unpack(table)
    n = len(buf) // 4
    size = len(char_symbol)
    k = n + 1
    scratch = np.empty(8 * k, dtype=np.int64)  # one allocation: each array a call needs
    word, found, sym, cp, pr, ids = (scratch[:k], scratch[k:2 * k], scratch[2 * k:3 * k], scratch[3 * k:4 * k],
                                     scratch[4 * k:5 * k], scratch[5 * k:6 * k])
    bad = scratch[6 * k:]  # -1 - EXACT, then each exact word's start and end
    bad[0] = -1 - EXACT
    exacts = 0
    words = 0
    total = 0
    a = 0
    while a < n:
        m = 0
        b = a
        if a == 0:
            word[0] = _META  # the dummy prefix
            m = 1
        while b < n:
            c = _code_point(buf, b)
            if c == 0x20:
                if b > a and _code_point(buf, b - 1) != 0x20:
                    break  # a space after a character starts the next word
                c = _META
            elif c == _META:
                return np.full(1, -1 - META_IN_TEXT, dtype=np.int64)
            word[m] = c
            m += 1
            b += 1
        h = _hash(word, m)
        e = _find(cache, word, m, h)
        if e < 0:
            exact = m >= limit
            for j in range(m if not exact else 0):
                c = word[j]
                if 0xD800 <= c < 0xE000:
                    exact = True
                    break
                cp[j] = c
                sym[j] = char_symbol[c] if c < size else count - 1
            r = 0
            if not exact:
                r = merged_ids(sym, cp, pr, m, count, pairs, bits, out_id, ids, 0)
                exact = r < 0
            if exact:  # the others are still looked up and stored: one answer names all
                bad[1 + 2 * exacts], bad[2 + 2 * exacts] = a, b
                exacts += 1
                a = b
                continue
            e = _put(cache, -1 - e, word, m, h, ids, r)
            if e < 0:
                return np.full(1, -1 - FULL, dtype=np.int64)
        found[words] = e
        words += 1
        a = b
    if exacts:
        return bad[:1 + 2 * exacts].copy()
    _, arena = _regions(cache)
    for k in range(words):
        total += arena[found[k] + 2]
    out = np.empty(total, dtype=np.int64)
    unk, fuse = cache[UNK], cache[FUSE]
    w = 0
    for k in range(words):
        e = found[k]
        i, r = e + 3 + arena[e + 1], arena[e + 2]
        if fuse and w and out[w - 1] == unk and arena[i] == unk:
            i, r = i + 1, r - 1  # a run of unknowns across words is one
        out[w:w + r] = arena[i:i + r]
        w += r
    return out[:w]


@numba.njit(cache=True)
def store(cache, buf, ids):
    """Stores a word (`buf`: the UTF-32-LE bytes of its ▁ form) with its ids, worked out by the
    exact path; False where the cache is full."""
    m = len(buf) // 4
    word = np.empty(m, dtype=np.int64)
    for j in range(m):
        word[j] = _code_point(buf, j)
    h = _hash(word, m)
    e = _find(cache, word, m, h)
    return e >= 0 or _put(cache, -1 - e, word, m, h, ids, len(ids)) >= 0


@numba.njit(cache=True)
def regrow(old, new):
    """Puts every word of `old` in `new` (a larger cache): the arena as it is, the slots anew."""
    _, arena = _regions(old)
    slots, into = _regions(new)
    used = old[USED]
    into[:used] = arena[:used]
    mask = (np.int64(1) << new[BITS]) - 1
    e = 0
    while e < used:
        at = np.int64((np.uint64(arena[e]) * _MULT) >> np.uint64(64 - new[BITS]))
        while slots[at] >= 0:
            at = (at + 1) & mask
        slots[at] = e
        e += 3 + arena[e + 1] + arena[e + 2]
    new[ENTRIES], new[USED] = old[ENTRIES], used
