"""The gpt4 (cl100k), llama3 and o200k pre-tokenizers without a regex engine: chunk starts in numpy.

`regex.findall` with tiktoken's patterns took longer than tiktoken's whole encode (about
0.6 µs a chunk). Both patterns are a handful of rules over character classes, so the chunk
starts can be found for the whole text at once: look each character's class up in a table
over all code points, cut the text into runs of one kind (letters, numbers, whitespace,
other), and decide per run where its chunks start. Only the places where a rule looks at a
neighbouring run (a space or a lone punctuation mark before a word, the newlines a punctuation
chunk takes with it, contractions, case changes inside o200k words) need more than the run
boundaries.

The contract is `regex.findall(pattern, text)`, chunk for chunk, on any text
(tests/test_fastsplit.py checks it against `regex` on arbitrary Unicode). The class table is
made by `regex` itself, from its own Unicode tables, so both always agree on what a letter
is. Building the table costs 0.06-0.2 s, which is what `regex` takes over the scan on about a
megabyte: until a process has asked to split that much, `regex` splits (see `_tables_pay`).
The tables are built and kept in unicodeclasses.py; a later process reads and checks them in
about 6 ms. The few shapes these rules do not cover (in o200k: marks right after
punctuation, a `/` after the newlines a punctuation chunk takes, a contraction right after
another one's letters) are handed back to `regex`, on a stretch of text cut where every rule
agrees a chunk starts.

Short texts go straight to `regex`: the numpy passes cost tens of microseconds before the
first character.

Where numba runs, the starts come from `splitkernel.py` instead (one compiled walk over the
text, the patterns' alternatives written out; three to six times quicker), which also covers
gpt2's pattern (r50k, Whisper); without it gpt2 stays with `regex`.
"""

from collections import Counter
from functools import lru_cache

import numpy as np
import regex

from tokworkbench.core import jit
from tokworkbench.core.text.patterns import PRESETS
from tokworkbench.core.text.unicodeclasses import (
    APOS,
    CONTRACTION_LETTERS,
    LOW,
    MARK,
    NL,
    NUM,
    OTH,
    SP,
    UP,
    WS,
    P,
    exact_fold_table,
    fold_table,
    tables,
)

FAST_FROM = 2048  # characters; below this `regex` alone is quicker
FAST_PRESETS = ("gpt4", "o200k", "llama3", "tekken", "gpt2")
_NUMPY_PRESETS = ("gpt4", "o200k", "llama3", "tekken")

# Kinds of run: runs of one kind are cut into chunks by the rules below.
WORD, NUMBER, SPACE, OTHER = range(4)
TAKEN = 255  # o200k: a contraction, joined to the word before it
_KIND_GPT4 = np.array([OTHER, SPACE, SPACE, SPACE, NUMBER, WORD, WORD, WORD, OTHER, OTHER], dtype=np.uint8)
_KIND_O200K = np.array([OTHER, SPACE, SPACE, SPACE, NUMBER, WORD, WORD, WORD, WORD, OTHER], dtype=np.uint8)

_KERNEL_PRESETS = {"gpt4": 0, "llama3": 1, "gpt2": 2, "o200k": 3, "tekken": 4}  # splitkernel's GPT4 ... TEKKEN


def split_gpt2(text: str) -> list[str]:
    """`regex.findall(GPT2_PATTERN, text)`."""
    return _split_with("gpt2", text)


def split_gpt4(text: str) -> list[str]:
    """`regex.findall(GPT4_PATTERN, text)`."""
    return _split_with("gpt4", text)


def split_o200k(text: str) -> list[str]:
    """`regex.findall(O200K_PATTERN, text)`."""
    return _split_with("o200k", text)


def split_llama3(text: str) -> list[str]:
    """`regex.findall(LLAMA3_PATTERN, text)`."""
    return _split_with("llama3", text)


def split_tekken(text: str) -> list[str]:
    """`regex.findall(TEKKEN_PATTERN, text)`."""
    return _split_with("tekken", text)


def chunk_starts(name: str, text: str) -> tuple[np.ndarray, np.ndarray] | None:
    """The text's code points and the offset where each chunk starts (the first is 0), for
    the preset `name` (one of FAST_PRESETS); None for a short text, where `regex` is quicker,
    and for gpt2 without numba. Lets an encoder find its chunks without making a str of each."""
    if not max(FAST_FROM, 1) <= len(text) < 1 << 31:  # offsets are int32 in places
        return None
    if jit.available(len(text)):
        from tokworkbench.core.text import splitkernel

        table, _ = tables()
        # always UTF-32: one compiled version of each kernel, not one per width met
        cps = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
        fold = exact_fold_table() if name == "gpt2" else fold_table()  # gpt2's contractions: case as written
        return cps, splitkernel.chunk_starts(cps, table, fold, _KERNEL_PRESETS[name])
    if name not in _NUMPY_PRESETS or not _tables_pay(len(text)):
        return None
    scan = _Scan(text, _KIND_O200K if name in ("o200k", "tekken") else _KIND_GPT4)
    if name == "gpt4":
        return scan.cps, scan.gpt4()
    if name == "llama3":
        return scan.cps, _llama3_tail(text, scan.gpt4())
    if name == "tekken":
        return scan.cps, scan.o200k(PRESETS[name], contractions=False, digits=1)
    return scan.cps, scan.o200k(PRESETS[name])


class _Split:
    """Characters this process has asked the numpy scan to split while its tables were not
    built: a fact about the process, as whether the tables are built is."""

    total = 0


def _tables_pay(work: int) -> bool:
    """Whether to scan `work` more characters in numpy. Building the tables costs 0.06-0.2 s,
    what `regex` takes over the scan on about 1 MB (reading kept ones, about 6 ms: the bar
    stays, since a first run on a machine builds them); a first screen splits a few KB (0.15 s of
    Llama 3's 3.3 s went here). Same bar as numba's (`jit.worth_from`, which the tests set to 0)."""
    if tables.cache_info().currsize:
        return True
    _Split.total += work
    return _Split.total >= jit.worth_from()


class ChunkTally:
    """Chunk counts of the texts added, in order of first appearance, kept in compiled code
    (countkernel.py): a str is made for each distinct chunk once, in `counter`, and not for its
    occurrences. Only where `jit.available()`."""

    def __init__(self, name: str):
        from tokworkbench.core.text import countkernel

        self._tally = countkernel.tally
        self.name = name
        self._state = (np.zeros((1 << 12, 2), dtype=np.int64), np.empty(1 << 16, dtype=np.uint32),
                       np.zeros(1 << 10, dtype=np.int64), np.zeros(1 << 10, dtype=np.int64), 0, 0)

    def add(self, text: str) -> None:
        found = chunk_starts(self.name, text) if len(text) >= FAST_FROM else None
        if found is None:  # short: split by regex (or nothing to split), tallied the same way
            if not text:
                return
            chunks = _findall(PRESETS[self.name], text)
            cps = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
            found = cps, np.cumsum([0] + [len(c) for c in chunks[:-1]], dtype=np.int64)
        self._state = self._tally(*found, *self._state)

    def counter(self) -> Counter:
        _, arena, offsets, counts, m, used = self._state
        joined = arena[:used].tobytes().decode("utf-32-le", "surrogatepass")
        bounds = offsets[: m + 1].tolist()
        counted = Counter()
        dict.update(counted, zip([joined[a:b] for a, b in zip(bounds, bounds[1:])], counts[:m].tolist()))
        return counted


def chunk_counts(name: str, text: str) -> Counter | None:
    """`Counter(findall(text))` for the preset `name`, keys in order of first appearance, with
    a str made only for each distinct chunk; None where the compiled path cannot run, and the
    caller counts the split."""
    if not jit.available(len(text)):
        return None
    tally = ChunkTally(name)
    tally.add(text)
    return tally.counter()


_SPACES = regex.compile(r"\s+")


def _llama3_tail(text: str, starts: np.ndarray) -> np.ndarray:
    """Llama 3's pattern is cl100k's but for `\\s++$`: cl100k takes a text's trailing
    whitespace as one chunk, Llama 3 cuts it after its last newline (`\\s*[\\r\\n]+`, then
    `\\s+(?!\\S)` for the rest). Every other chunk is the same."""
    last = int(starts[-1])
    tail = text[last:]
    if not _SPACES.fullmatch(tail):
        return starts
    cut = max(tail.rfind("\r"), tail.rfind("\n")) + 1
    return np.append(starts, last + cut).astype(starts.dtype) if 0 < cut < len(tail) else starts


def _split_with(name: str, text: str) -> list[str]:
    found = chunk_starts(name, text)
    if found is None:
        return _findall(PRESETS[name], text)
    return _split(text, *found)


@lru_cache(maxsize=4)
def _compiled(pattern: str):
    return regex.compile(pattern)


def _findall(pattern: str, text: str) -> list[str]:
    return _compiled(pattern).findall(text)


def _code_points(text: str) -> np.ndarray:
    """Code points in the narrowest array that holds them: bytes for ASCII, UTF-16 units when
    no character is beyond U+FFFF and none is a surrogate (a pair of lone surrogates would
    decode back as one character), else UTF-32."""
    if text.isascii():
        return np.frombuffer(text.encode("ascii"), dtype=np.uint8)
    data = text.encode("utf-16-le", "surrogatepass")
    if len(data) == 2 * len(text):
        units = np.frombuffer(data, dtype=np.uint16)
        if not ((units >= 0xD800) & (units < 0xE000)).any():
            return units
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)


_CODECS = {np.dtype(np.uint8): "ascii", np.dtype(np.uint16): "utf-16-le", np.dtype(np.uint32): "utf-32-le"}


def _decoded(cps: np.ndarray) -> str:
    return cps.tobytes().decode(_CODECS[cps.dtype], "surrogatepass")


def _split(text: str, cps: np.ndarray, starts: np.ndarray) -> list[str]:
    """The text cut before each position in `starts` (ascending, starting with 0): a separator
    the text does not hold is put at each cut and `str.split` makes the pieces at C speed."""
    for sep in (0, 1, 2, 3, 4, 5, 6, 7, 8, 0x0E, 0x0F, 0x10, 0x11):
        if not (cps == sep).any():
            break
    else:
        return [text[a:b] for a, b in zip(starts.tolist(), starts[1:].tolist() + [len(text)])]
    return _decoded(np.insert(cps, starts[1:], sep)).split(chr(sep))


class _Scan:
    """One text's classes and runs, and the chunk starts found so far (`start`, one flag per
    character and one past the end)."""

    def __init__(self, text: str, kinds: np.ndarray):
        table, self.folds = tables()
        self.text = text
        self.n = n = len(text)
        self.cps = cps = _code_points(text)
        self.cls = cls = table[cps]
        kind = kinds[cls]
        rs = np.flatnonzero(kind[1:] != kind[:-1]) + 1
        self.rs = rs = np.concatenate(([0], rs))  # run starts
        self.re = np.append(rs[1:], n)  # run ends
        self.rk = kind[rs]  # run kinds
        self.start = np.zeros(n + 1, dtype=bool)
        self.start[rs] = True
        self.nl = np.flatnonzero(cls == NL)
        self.hard = None
        self.hard_extra: list[np.ndarray] = []

    # -- rules both patterns share ---------------------------------------------------------
    def numbers(self, most: int = 3) -> None:
        """`\\p{N}{1,3}`: a run of numbers is cut every three from its start."""
        rs, re, start = self.rs, self.re, self.start
        runs = np.flatnonzero((self.rk == NUMBER) & (re - rs > most))
        if not len(runs):
            return
        extra = (re[runs] - rs[runs] - 1) // most
        first = np.cumsum(extra) - extra
        k = np.arange(int(extra.sum())) - np.repeat(first, extra) + 1
        start[np.repeat(rs[runs], extra) + most * k] = True

    def spaces(self, whole_at_end: bool) -> np.ndarray:
        """Whitespace runs. After a punctuation chunk its leading newlines belong to it. What is
        left: up to and including its last newline is one chunk; then all but the last
        character; the last one ("free") may start the next word or punctuation chunk. A run
        at the end of the text is one chunk after the newlines (gpt4's `\\s++$`) or cut
        after its last newline (o200k). Returns the runs whose newlines went to punctuation
        and how far (for o200k's `/` rule)."""
        rs, re, rk, start, cls, n = self.rs, self.re, self.rk, self.start, self.cls, self.n
        runs = np.flatnonzero(rk == SPACE)
        e = re[runs]
        eaten = np.zeros(0, dtype=np.int64)
        nl = self.nl
        if len(nl):
            # only runs that hold a newline need more than their start and their last character
            w_runs = np.searchsorted(rs, nl, side="right") - 1  # ascending: keep the first of each
            w_runs = w_runs[np.concatenate(([True], w_runs[1:] != w_runs[:-1]))]
            ws, we = rs[w_runs], re[w_runs]
            after_p = np.zeros(len(w_runs), dtype=bool)
            after_p[w_runs > 0] = rk[w_runs[w_runs > 0] - 1] == OTHER
            a = ws.copy()
            # newline runs: where the run of newlines that starts a space run ends
            firsts = np.concatenate(([True], nl[1:] != nl[:-1] + 1))
            nl_starts = nl[firsts]
            nl_ends = np.append(nl[np.flatnonzero(firsts)[1:] - 1], nl[-1]) + 1
            eat = after_p & (cls[ws] == NL)
            a[eat] = nl_ends[np.searchsorted(nl_starts, ws[eat])]
            start[ws[eat]] = False
            start[a[eat]] = True  # a == e leaves the flag of the next run's start, already set
            # the last newline of each run, if any at or after a
            m = nl[np.searchsorted(nl, we) - 1]
            cut = (m >= a) & (m + 1 < we)
            if whole_at_end:
                cut &= we < n
            start[m[cut] + 1] = True
            eaten = w_runs[after_p & (a == we) & (we < n)]
        inner = e < n
        last_ch = e - 1
        last_cls = cls[last_ch]
        free = inner & (last_cls != NL)
        start[last_ch[free]] = True
        nxt = rk[np.minimum(runs + 1, len(rk) - 1)]
        free_space = free & (last_cls == SP)
        joins = free & ((nxt == WORD) | ((nxt == OTHER) & free_space))
        start[e[joins]] = False
        self.free_space = np.zeros(self.n + 1, dtype=bool)  # a free space before the run starting here
        self.free_space[e[free_space]] = True
        return eaten

    def lone_marks(self, contraction) -> None:
        """A punctuation run of one character before a word: it starts the word (`[^\\r\\n\\p{L}
        \\p{N}]?` before the letters), unless a space before it took it, or it is an apostrophe
        that starts a gpt4 contraction (handled by `contraction`)."""
        rs, re, rk, start = self.rs, self.re, self.rk, self.start
        runs = np.flatnonzero((rk[:-1] == OTHER) & (re[:-1] - rs[:-1] == 1) & (rk[1:] == WORD))
        a = rs[runs]
        runs, a = runs[~self.free_space[a]], a[~self.free_space[a]]
        if contraction is not None:
            k = contraction(a + 1)
            c = k > 0
            start[a[c] + 1 + k[c]] = True
            start[a[c] + 1] = False
        else:
            c = np.zeros(len(a), dtype=bool)
        start[a[~c] + 1] = False

    def contraction_length(self, at: np.ndarray) -> np.ndarray:
        """Letters of `'s 't 're 've 'm 'll 'd` (any case, as `(?i:…)` matches) at positions
        `at` (just after an apostrophe): 1, 2, or 0 for none. In gpt4's order: [sdmt], ll, ve, re."""
        cps, folds, n = self.cps, self.folds, self.n
        one = np.zeros(len(at), dtype=np.int64)
        ok = at < n
        c1 = np.zeros(len(at), dtype=np.int64)
        c1[ok] = cps[at[ok]]
        c2 = np.zeros(len(at), dtype=np.int64)
        ok2 = at + 1 < n
        c2[ok2] = cps[at[ok2] + 1]
        f = {x: np.isin(c1, folds[x]) & ok for x in CONTRACTION_LETTERS}
        g = {x: np.isin(c2, folds[x]) & ok2 for x in "le"}
        single = f["s"] | f["d"] | f["m"] | f["t"]
        double = (f["l"] & g["l"]) | (f["v"] & g["e"]) | (f["r"] & g["e"])
        one[double] = 2
        one[single] = 1
        return one

    # -- gpt4 ------------------------------------------------------------------------------
    def gpt4(self) -> np.ndarray:
        """Chunk starts of GPT4_PATTERN: `'(?i:[sdmt]|ll|ve|re)` | `[^\\r\\n\\p{L}\\p{N}]?+\\p{L}++`
        | `\\p{N}{1,3}+` | ` ?[^\\s\\p{L}\\p{N}]++[\\r\\n]*+` | `\\s++$` | `\\s*[\\r\\n]` |
        `\\s+(?!\\S)` | `\\s`."""
        self.numbers()
        self.spaces(whole_at_end=True)

        def contraction(at):
            k = self.contraction_length(at)
            k[self.cls[at - 1] != APOS] = 0
            return k

        self.lone_marks(contraction)
        return np.flatnonzero(self.start[: self.n])

    # -- o200k -----------------------------------------------------------------------------
    def o200k(self, pattern: str, contractions: bool = True, digits: int = 3) -> np.ndarray:
        """Chunk starts of O200K_PATTERN: words `[^\\r\\n\\p{L}\\p{N}]?` + upper* lower+ or
        upper+ lower* (marks, Lm and Lo count as both) + an optional contraction |
        `\\p{N}{1,3}` | ` ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*` | `\\s*[\\r\\n]+` | `\\s+(?!\\S)` | `\\s+`.
        Mistral's tekken pattern is the same with no contractions and `\\p{N}` for the numbers."""
        if contractions:
            self._o200k_contractions()
        rs, re, rk, cls = self.rs, self.re, self.rk, self.cls
        self.numbers(digits)
        slashes = self.spaces(whole_at_end=False)
        self.lone_marks(None)
        self._o200k_cases()
        # what these rules leave to regex: marks right after a punctuation chunk (they join
        # it), and `/` after the newlines a punctuation chunk took
        runs = np.flatnonzero((rk[:-1] == OTHER) & (rk[1:] == WORD))
        runs = runs[cls[re[runs]] == MARK]
        a = rs[runs]
        hard = runs[(re[runs] - a > 1) | self.free_space[a]]
        hard_at = [rs[hard]]
        if len(slashes):
            after = re[slashes]
            hard_at.append(after[(after < self.n) & (self.cps[np.minimum(after, self.n - 1)] == ord("/"))])
        self.hard = np.concatenate(hard_at + self.hard_extra)
        if len(self.hard):
            self.by_regex(pattern)
        return np.flatnonzero(self.start[: self.n])

    def _o200k_contractions(self) -> None:
        """A word followed by `'s` … takes it. The apostrophe and letters get kinds of their
        own, so that the letters after them start a fresh word and the case rules do not see
        them. When a word is nothing but an earlier contraction's letters (`x'll's`), whether
        the next apostrophe is a contraction depends on the one before: left to regex."""
        rs, re, rk, cls = self.rs, self.re, self.rk, self.cls
        runs = np.flatnonzero((rk[1:-1] == OTHER) & (re[1:-1] - rs[1:-1] == 1)
                              & (rk[:-2] == WORD) & (rk[2:] == WORD)) + 1
        runs = runs[cls[rs[runs]] == APOS]
        if not len(runs):
            return
        # o200k's order: 's 't 're 've 'm 'll 'd; the same lengths as gpt4's
        k = self.contraction_length(rs[runs] + 1)
        runs, k = runs[k > 0], k[k > 0]
        if not len(runs):
            return
        a = rs[runs]
        chained = np.zeros(len(runs), dtype=bool)
        chained[1:] = (runs[1:] - 2 == runs[:-1]) & (re[runs[:-1] + 1] - rs[runs[:-1] + 1] == k[:-1])
        self.hard_extra.append(a[chained])
        self.start[a] = False
        self.start[a + 1] = False
        tail = a + 1 + k  # the word after the contraction, if any, starts here
        self.start[tail] = True
        self.cls = cls = cls.copy()
        letters = np.repeat(a + 1, k) + (np.arange(int(k.sum())) - np.repeat(np.cumsum(k) - k, k))
        cls[letters] = P  # no longer letters for the case rules (kinds are already taken)
        # the contraction's letters become a run of their own, kind LETTERS, and the rest of
        # the word after them a run of kind WORD
        keep = tail < re[runs + 1]
        at = runs[keep] + 2  # the new runs go before the run after the word
        self.rk[runs] = TAKEN
        self.rk[runs + 1] = TAKEN
        self.rs = np.insert(rs, at, tail[keep])
        self.rk = np.insert(self.rk, at, WORD)
        self.re = np.append(self.rs[1:], self.n)

    def _o200k_cases(self) -> None:
        """Inside a run of word characters, o200k cuts (u: Lu Lt; l: Ll; b: Lm Lo and marks):
        before each u whose nearest non-b character to the left is an l; and in the last
        stretch of u/b characters of the run, when no l follows, after its last b, counting
        from its first u when an l comes before the stretch. Both are rare in most text, so
        they are found from the u positions, not from passes over every character."""
        cls, start = self.cls, self.start
        ups = np.flatnonzero(cls == UP)
        if not len(ups):
            return
        b = (cls == OTH) | (cls == MARK)
        bs = np.flatnonzero(b)
        ups1 = ups[ups > 0]
        before = cls[ups1 - 1]
        start[ups1[before == LOW]] = True
        after_b = ups1[(before == OTH) | (before == MARK)]
        if len(after_b):
            # the b run before each: where it starts, and what comes before that
            b_starts = np.flatnonzero(b & np.concatenate(([True], ~b[:-1])))
            first = b_starts[np.searchsorted(b_starts, after_b - 1, side="right") - 1]
            ok = first > 0
            ok[ok] = cls[first[ok] - 1] == LOW
            start[after_b[ok]] = True
        # word runs that end in u: the last u/b stretch, cut after its last b
        rs, re, rk = self.rs, self.re, self.rk
        runs = np.flatnonzero(rk == WORD)
        e = re[runs]
        ends_u = cls[e - 1] == UP
        if not ends_u.any() or not len(bs):
            return
        s, e = rs[runs[ends_u]], e[ends_u]
        last_b = bs[np.maximum(np.searchsorted(bs, e, side="left") - 1, 0)]
        has_b = (last_b >= s) & (bs[0] < e)
        s, e, last_b = s[has_b], e[has_b], last_b[has_b]
        if not len(s):
            return
        lows = np.flatnonzero(cls == LOW)
        if len(lows):
            at = np.searchsorted(lows, e, side="left") - 1
            last_l = np.where(at >= 0, lows[np.maximum(at, 0)], -1)
        else:
            last_l = np.full(len(s), -1)
        has_l = last_l >= s
        # with an l before the stretch, its word starts at the stretch's first u (the b's
        # before that went to the word before)
        first = np.where(has_l, last_l + 1, s)
        first_u = ups[np.searchsorted(ups, first, side="left")]
        first = np.where(has_l, first_u, first)
        cut = (last_b >= first) & (last_b + 1 < e)
        start[last_b[cut] + 1] = True

    # -- what the rules leave to regex -----------------------------------------------------
    def by_regex(self, pattern: str) -> None:
        """Replace the starts around each hard place with those `regex` finds, on a stretch
        cut where a chunk always starts: a space or tab after a non-space, a number after
        neither number nor space, or a line's first character when it is neither space nor
        `/` (no chunk crosses into any of these, and no lookahead at the stretch's end sees
        past it)."""
        cls, n = self.cls, self.n
        spaceish = (cls == WS) | (cls == SP) | (cls == NL)
        safe = np.flatnonzero(((cls[1:] == WS) | (cls[1:] == SP)) & ~spaceish[:-1]
                              | (cls[1:] == NUM) & ~spaceish[:-1] & (cls[:-1] != NUM)
                              | (cls[:-1] == NL) & ~spaceish[1:] & (self.cps[1:] != ord("/"))) + 1
        safe = np.concatenate(([0], safe, [n]))
        hard = np.unique(self.hard)
        lo = safe[np.searchsorted(safe, hard, side="right") - 1]
        hi = safe[np.minimum(np.searchsorted(safe, hard + 2, side="left"), len(safe) - 1)]  # n past the end
        compiled = _compiled(pattern)
        text, start = self.text, self.start
        done = -1
        for a, b in zip(lo.tolist(), hi.tolist()):
            if b <= done:
                continue
            a = max(a, done)
            start[a:b] = False
            pos = a
            for piece in compiled.findall(text[a:b]):
                start[pos] = True
                pos += len(piece)
            done = b
