"""The preset patterns' chunk starts compiled (numba): each pattern's alternatives, tried in order
at each chunk's first character, as the regex engine tries them.

fastsplit.py finds chunk starts in numpy passes over the whole text (0.6 s of 10 MB, half of a
first Llama 3 encode, where tiktoken's whole encode is 1.3 s); here one pass walks the text
chunk by chunk, each alternative a few comparisons of character classes, with the
backtracking o200k's words need written out. The classes are fastsplit's table, made by `regex`
from its own Unicode tables, so both read one definition of a letter; tests/test_fastsplit.py
holds every pattern to `regex.findall` on arbitrary Unicode.
Import this module only after `jit.available()`: it imports numba.
"""

import numba
import numpy as np

# fastsplit's classes: P, WS, SP, NL, NUM, UP, LOW, OTH, MARK, APOS
_P, _WS, _SP, _NL, _NUM, _UP, _LOW, _OTH, _MARK, _APOS = range(10)
#                      P  WS SP NL NUM UP LOW OTH MARK APOS
_LETTER = np.array([0, 0, 0, 0, 0, 1, 1, 1, 0, 0], dtype=np.bool_)  # \p{L}
_SPACE = np.array([0, 1, 1, 1, 0, 0, 0, 0, 0, 0], dtype=np.bool_)  # \s
_OTHER = np.array([1, 0, 0, 0, 0, 0, 0, 0, 1, 1], dtype=np.bool_)  # [^\s\p{L}\p{N}]
_LEAD = np.array([1, 1, 1, 0, 0, 0, 0, 0, 1, 1], dtype=np.bool_)  # [^\r\n\p{L}\p{N}]
_UPPERISH = np.array([0, 0, 0, 0, 0, 1, 0, 1, 1, 0], dtype=np.bool_)  # [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]
_LOWERISH = np.array([0, 0, 0, 0, 0, 0, 1, 1, 1, 0], dtype=np.bool_)  # [\p{Ll}\p{Lm}\p{Lo}\p{M}]
_WORDISH = _UPPERISH | _LOWERISH
_NL_ONLY = np.array([0, 0, 0, 1, 0, 0, 0, 0, 0, 0], dtype=np.bool_)  # [\r\n]
_NUMBER = np.array([0, 0, 0, 0, 1, 0, 0, 0, 0, 0], dtype=np.bool_)  # \p{N}

GPT4, LLAMA3, GPT2, O200K, TEKKEN = range(5)


@numba.njit(cache=True, nogil=True, inline="always")
def _run(table, cps, i, n, member):
    """Where the run of characters of the classes `member` marks, from i, ends."""
    while i < n and member[table[cps[i]]]:
        i += 1
    return i


@numba.njit(cache=True, nogil=True)
def _contraction(cps, fold, i, n):
    """Letters of `'s 't 're 've 'm 'll 'd` after an apostrophe at i: 1, 2, or 0 for none.
    `fold` is the letter each code point matches: under `(?i:)` any case, for gpt2 as written."""
    if i + 1 >= n or cps[i] != 39:
        return 0
    a = fold[cps[i + 1]]
    if a == 115 or a == 116 or a == 109 or a == 100:  # s t m d
        return 1
    if i + 2 < n:
        b = fold[cps[i + 2]]
        if (a == 108 and b == 108) or (a == 118 and b == 101) or (a == 114 and b == 101):  # ll ve re
            return 2
    return 0


@numba.njit(cache=True, nogil=True, inline="always")
def _digits(table, cps, i, n, most):
    """`\\p{N}{1,most}` from i."""
    j = i + 1
    while j < n and j < i + most and table[cps[j]] == _NUM:
        j += 1
    return j


@numba.njit(cache=True, nogil=True)
def _spaces(table, cps, i, n, whole_at_end, newlines):
    """The whitespace alternatives the presets share: `\\s++$` (when `whole_at_end`), then
    through the run's last newline (when `newlines`: `\\s*[\\r\\n]`), then all but the run's
    last character (`\\s+(?!\\S)`), then one."""
    j = _run(table, cps, i, n, _SPACE)
    if j == n and whole_at_end:
        return n
    if newlines:
        p = j - 1
        while p >= i and table[cps[p]] != _NL:
            p -= 1
        if p >= i:
            return p + 1
    if j == n:
        return n
    return j - 1 if j - i >= 2 else i + 1


@numba.njit(cache=True, nogil=True)
def _gpt4_end(table, cps, fold, i, n, whole_at_end):
    c = table[cps[i]]
    if c == _APOS:
        k = _contraction(cps, fold, i, n)
        if k:
            return i + 1 + k
    if _LETTER[c]:
        return _run(table, cps, i, n, _LETTER)
    if _LEAD[c] and i + 1 < n and _LETTER[table[cps[i + 1]]]:
        return _run(table, cps, i + 1, n, _LETTER)
    if c == _NUM:
        return _digits(table, cps, i, n, 3)
    s = i + 1 if c == _SP else i
    if s < n and _OTHER[table[cps[s]]]:
        return _run(table, cps, _run(table, cps, s, n, _OTHER), n, _NL_ONLY)
    return _spaces(table, cps, i, n, whole_at_end, True)


@numba.njit(cache=True, nogil=True)
def _gpt2_end(table, cps, fold, i, n):
    c = table[cps[i]]
    if c == _APOS:
        k = _contraction(cps, fold, i, n)
        if k:
            return i + 1 + k
    s = i + 1 if c == _SP and i + 1 < n else i
    d = table[cps[s]]
    if _LETTER[d]:
        return _run(table, cps, s, n, _LETTER)
    if d == _NUM:
        return _run(table, cps, s, n, _NUMBER)
    if _OTHER[d]:
        return _run(table, cps, s, n, _OTHER)
    return _spaces(table, cps, i, n, True, False)


@numba.njit(cache=True, nogil=True)
def _o200k_word(table, cps, fold, s, n, contractions):
    """`[ULB]*[LB]+` then a contraction, from s (u: Lu Lt; l: Ll; b: Lm Lo and marks, in
    both classes), with regex's backtracking: the greedy upper run gives back characters until
    one can start the lower run. Where it ends, or -1."""
    u = _run(table, cps, s, n, _UPPERISH)
    q = u
    if not (q < n and _LOWERISH[table[cps[q]]]):
        q = u - 1
        while q >= s and not _LOWERISH[table[cps[q]]]:
            q -= 1
        if q < s:
            return -1
    end = _run(table, cps, q, n, _LOWERISH)
    if contractions:
        end += _apostrophe_tail(cps, fold, end, n)
    return end


@numba.njit(cache=True, nogil=True)
def _apostrophe_tail(cps, fold, i, n):
    k = _contraction(cps, fold, i, n)
    return 1 + k if k else 0


@numba.njit(cache=True, nogil=True)
def _o200k_upper_word(table, cps, fold, s, n, contractions):
    """`[ULB]+[LB]*` then a contraction, from s; or -1."""
    u = _run(table, cps, s, n, _UPPERISH)
    if u == s:
        return -1
    end = _run(table, cps, u, n, _LOWERISH)
    if contractions:
        end += _apostrophe_tail(cps, fold, end, n)
    return end


@numba.njit(cache=True, nogil=True)
def _o200k_end(table, cps, fold, i, n, contractions, digits):
    c = table[cps[i]]
    # the word alternatives, each with its lead character and then without (only tried where
    # a word character stands: the rest of the text skips them)
    lead = _LEAD[c] and i + 1 < n and _WORDISH[table[cps[i + 1]]]
    here = _WORDISH[c]
    if lead:
        e = _o200k_word(table, cps, fold, i + 1, n, contractions)
        if e >= 0:
            return e
    if here:
        e = _o200k_word(table, cps, fold, i, n, contractions)
        if e >= 0:
            return e
    if lead:
        e = _o200k_upper_word(table, cps, fold, i + 1, n, contractions)
        if e >= 0:
            return e
    if here:
        e = _o200k_upper_word(table, cps, fold, i, n, contractions)
        if e >= 0:
            return e
    if c == _NUM:
        return _digits(table, cps, i, n, digits)
    s = i + 1 if c == _SP else i
    if s < n and _OTHER[table[cps[s]]]:
        j = _run(table, cps, s, n, _OTHER)
        while j < n and (table[cps[j]] == _NL or cps[j] == 47):  # [\r\n/]*
            j += 1
        return j
    return _spaces(table, cps, i, n, False, True)


@numba.njit(cache=True, nogil=True)
def chunk_starts(cps, table, fold, preset):
    """Where each chunk of `cps` starts under the preset (GPT4, LLAMA3, GPT2, O200K, TEKKEN);
    `fold` as `_contraction` reads it, the case-sensitive one for GPT2."""
    n = len(cps)
    starts = np.empty(n, dtype=np.int32)  # at most a start a character; offsets are below 2**31
    k = 0
    i = 0
    while i < n:
        starts[k] = i
        k += 1
        if preset == GPT4 or preset == LLAMA3:
            i = _gpt4_end(table, cps, fold, i, n, preset == GPT4)
        elif preset == GPT2:
            i = _gpt2_end(table, cps, fold, i, n)
        else:
            i = _o200k_end(table, cps, fold, i, n, preset == O200K, 3 if preset == O200K else 1)
    return starts[:k].astype(np.int64)
