"""SentencePiece BPE's merges for many words at once, in numpy rounds, with a guard that sends
every word the rounds could get wrong to the exact one-word path.

The rule (bpe_model.cc): while some adjacent pair of symbols concatenates to a piece, the pair
whose piece scores highest merges, the leftmost among equal scores. Unlike our byte-level BPE
(core/bpe/batchbpe.py), any split of a piece into two symbols is a pair, and a merge may make a
pair that scores *higher* than itself; pieces may share a score.

A round takes each open word's best score s* and merges every pair scoring s*, left to right,
skipping a pair whose left symbol the pair before it has just taken (in a run of overlapping
pairs: the 1st, 3rd, ...). **Claim**: when every pair the round evaluates scores below s*, the
round makes exactly the merges the agenda makes next. The pairs the agenda evaluates while
doing those merges are each merged symbol with its final left neighbour, with its final right
neighbour, and, where the next merge of the round starts right after it, with that merge's
left symbol as it was (`_rounds` looks all three up). **Proof**: the agenda pops the leftmost
pair of score s*; merging it spends the pair after it (the next one of an overlapping run) and
adds only pairs of the merged symbol, which are the pairs above. Scoring below s*, they are not
popped while a pair of score s* is left, and none of the unspent pairs of score s* changed, so
the next pop is the leftmost of them, to the right of the last: by induction the round's
merges, in order. Its stale entries are skipped, and after the round the agenda holds every
pair of the new symbols that makes a piece, as the next round's lookups do. ∎ In a word where
the guard fails (some such pair scores s* or more: pieces that tie, or outscore their parts)
the round merges only the leftmost pair of score s*, which is the agenda's next pop whatever
follows. So every round of every word is the agenda's, and a word leaves the rounds only for
what the pieces cannot name (model.py's `_resolve` then: a final piece that maps to unk, a
surrogate); a character that is no piece becomes its byte pieces, or one fused unk, here.
"""

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from tokworkbench.core import jit
from tokworkbench.core.slots import open_slots

_NEVER = np.iinfo(np.int32).max  # the rank of a pair that makes no piece


@dataclass(frozen=True, eq=False)
class PairTable:
    """Symbols are the characters of the pieces and the multi-character pieces; a pair key is
    left * count + right, sorted, with the symbol it makes and that piece's rank (0: the best
    score; equal scores share a rank)."""

    keys: np.ndarray
    made: np.ndarray
    rank: np.ndarray
    count: int  # symbols, the foreign one (a character no piece holds) last
    char_symbol: np.ndarray  # code point -> symbol
    out_id: np.ndarray  # symbol -> its id; -1: a character that is none (unknown), -2: left to the exact path
    texts: tuple[str, ...]

    @staticmethod
    def of(scores: dict[str, float], ids: dict[str, int], unk: int) -> "PairTable":
        chars = sorted({c for piece in scores for c in piece})
        texts = chars + [p for p in scores if len(p) > 1]
        index = {t: i for i, t in enumerate(texts)}
        count = len(texts) + 1
        distinct = sorted(set(scores.values()), reverse=True)
        order = {s: r for r, s in enumerate(distinct)}
        left, right, made = [], [], []
        for piece in texts[len(chars):]:
            for k in range(1, len(piece)):
                a, b = index.get(piece[:k]), index.get(piece[k:])
                if a is not None and b is not None:
                    left.append(a)
                    right.append(b)
                    made.append(index[piece])
        keys = np.array(left, dtype=np.int64) * count + np.array(right, dtype=np.int64)
        made_arr = np.array(made, dtype=np.int32)
        sort = np.argsort(keys, kind="stable")
        rank = np.array([order[scores[texts[m]]] for m in made], dtype=np.int32)
        top = max(map(ord, chars), default=0)
        char_symbol = np.full(top + 1, count - 1, dtype=np.int32)
        char_symbol[[ord(c) for c in chars]] = np.arange(len(chars), dtype=np.int32)
        out = [ids.get(t, unk) for t in texts]
        out_id = np.array([(-1 if len(t) == 1 else -2) if i == unk else i for t, i in zip(texts, out)] + [-1],
                          dtype=np.int64)
        return PairTable(keys[sort], made_arr[sort], rank[sort], count, char_symbol, out_id, tuple(texts))

    @cached_property
    def slots(self) -> tuple[np.ndarray, np.ndarray, int]:
        """The keys in open addressing (the slot table, each slot's index into `keys`, bits),
        for the compiled path's one-pair lookups."""
        slot_keys, where, bits = open_slots(self.keys)
        slot_index = np.full(len(slot_keys), -1, dtype=np.int64)
        slot_index[where] = np.arange(len(self.keys))
        return slot_keys, slot_index, bits

    @cached_property
    def packed(self) -> np.ndarray:
        """The tables in one int64 array for the compiled kernels (wordkernel.py): count, bits,
        the lengths of char_symbol and out_id, those two, then two int64 a slot: its key (-1:
        empty) and what the pair makes, made << 32 | rank."""
        slot_keys, slot_index, bits = self.slots
        record = np.empty((len(slot_keys), 2), dtype=np.int64)
        record[:, 0] = slot_keys
        record[:, 1] = -1
        hit = slot_index >= 0
        record[hit, 1] = (self.made[slot_index[hit]].astype(np.int64) << 32) | self.rank[slot_index[hit]]
        head = np.array([self.count, bits, len(self.char_symbol), len(self.out_id)], dtype=np.int64)
        return np.concatenate((head, self.char_symbol, self.out_id, record.ravel()))

    def lookup(self, left: np.ndarray, right: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(made, rank) of each pair; rank `_NEVER` where it makes no piece."""
        key = left.astype(np.int64) * self.count + right
        at = np.minimum(np.searchsorted(self.keys, key), max(len(self.keys) - 1, 0))
        if not len(self.keys):
            return np.zeros(len(key), dtype=np.int32), np.full(len(key), _NEVER, dtype=np.int32)
        hit = self.keys[at] == key
        return np.where(hit, self.made[at], 0), np.where(hit, self.rank[at], _NEVER)

    def symbols(self, words: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """Each character's symbol and code point, word after word."""
        cps = np.frombuffer("".join(words).encode("utf-32-le", "surrogatepass"), dtype=np.uint32).astype(np.int32)
        table = self.char_symbol
        inside = cps < len(table)
        return np.where(inside, table[np.where(inside, cps, 0)], self.count - 1).astype(np.int32), cps


def merge_many(words: list[str], table: PairTable, unk: int, byte_ids: np.ndarray | None) -> list[list[int] | None]:
    """Each word's ids as model.py's `_resolve` gives them (a character no piece is: its bytes'
    pieces with `byte_ids`, else unk, a run fused), or None where the exact path must do it:
    the guard failed, a final piece maps to unk, a surrogate."""
    sizes = np.fromiter(map(len, words), dtype=np.int64, count=len(words))
    units, cps = table.symbols(words)
    result: list[list[int] | None] = [None] * len(words)
    if jit.available(int(sizes.sum())):
        from tokworkbench.core.spbpe import wordkernel

        syms, cps, owner = wordkernel.merge_words(units, cps, sizes, table.packed)
    else:
        syms, cps, owner = _rounds(units, cps, sizes, table)
        order = np.argsort(owner, kind="stable")
        syms, cps, owner = syms[order], cps[order], owner[order]
    if not len(owner):
        return result
    ids = table.out_id[syms]
    alone = ids == -1  # one character that is no piece
    exact = np.zeros(len(words), dtype=bool)
    exact[owner[(ids == -2) | (alone & (cps >= 0xD800) & (cps < 0xE000))]] = True
    if byte_ids is None:
        ids[alone] = unk
        fused = alone[1:] & alone[:-1] & (owner[1:] == owner[:-1])
        keep = np.concatenate(([True], ~fused))
        ids, owner = ids[keep], owner[keep]
    elif alone.any():
        chars = cps[alone & ~exact[owner]]
        raw = np.frombuffer("".join(map(chr, chars.tolist())).encode("utf-8"), dtype=np.uint8)
        widths = np.ones(len(ids), dtype=np.int64)
        widths[alone & ~exact[owner]] = 1 + (chars >= 0x80) + (chars >= 0x800) + (chars >= 0x10000)
        is_byte = np.repeat(alone & ~exact[owner], widths)
        ids, owner = np.repeat(ids, widths), np.repeat(owner, widths)
        ids[is_byte] = byte_ids[raw]
    counts = np.bincount(owner, minlength=len(words))
    bounds = np.concatenate(([0], np.cumsum(counts))).tolist()
    flat = ids.tolist()
    for w in np.flatnonzero((counts > 0) & ~exact).tolist():
        result[w] = flat[bounds[w]:bounds[w + 1]]
    return result


def _rounds(units: np.ndarray, cps: np.ndarray, sizes: np.ndarray, table: PairTable):
    """(final symbols, their first code points, their word): words side by side in compacted flat arrays; a
    round merges each open word's best-ranked pairs and looks up the pairs that changed."""
    owner = np.flatnonzero(sizes > 0)
    sizes = sizes[owner]
    starts = np.cumsum(sizes) - sizes
    sym = units
    last = np.zeros(len(sym), dtype=bool)
    last[starts + sizes - 1] = True
    made, rank = _pairs(sym, last, table)
    out_syms, out_cps, out_owner = [], [], []
    while len(sym):
        best = np.minimum.reduceat(rank, starts)
        done = best == _NEVER
        if done.any():
            leaving = np.repeat(done, sizes)
            out_syms.append(sym[leaving])
            out_cps.append(cps[leaving])
            out_owner.append(np.repeat(owner[done], sizes[done]))
            sym, cps, made, rank, last = sym[~leaving], cps[~leaving], made[~leaving], rank[~leaving], last[~leaving]
            owner, sizes, best = owner[~done], sizes[~done], best[~done]
            starts = np.cumsum(sizes) - sizes
            if not len(sym):
                break
        word_best = np.repeat(best, sizes)
        at = np.flatnonzero(rank == word_best)
        linked = np.concatenate(([False], at[1:] == at[:-1] + 1))
        if linked.any():  # overlapping pairs: the 1st, 3rd... of each run
            index = np.arange(len(at))
            at = at[(index - np.maximum.accumulate(np.where(linked, 0, index))) % 2 == 0]
        at = _guarded(at, sym, made, last, starts, sizes, word_best, table)
        sym[at] = made[at]
        keep = np.ones(len(sym), dtype=bool)
        keep[at + 1] = False
        last[at] = last[at + 1]
        word_of = np.repeat(np.arange(len(sizes)), sizes)
        sizes = sizes - np.bincount(word_of[at], minlength=len(sizes))
        position = np.cumsum(keep) - 1
        sym, cps, made, rank, last = sym[keep], cps[keep], made[keep], rank[keep], last[keep]
        starts = np.cumsum(sizes) - sizes
        merged = position[at]
        first = np.zeros(len(sym), dtype=bool)
        first[starts] = True
        mark = np.zeros(len(sym), dtype=bool)
        mark[merged[~first[merged]] - 1] = True  # the merged symbols' left neighbours in their words
        mark[merged] = True
        changed = np.flatnonzero(mark & ~last)
        made[changed], rank[changed] = table.lookup(sym[changed], sym[changed + 1])
        rank[merged[last[merged]]] = _NEVER
    if not out_syms:
        return np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.int64)
    return np.concatenate(out_syms), np.concatenate(out_cps), np.concatenate(out_owner)


def _guarded(at: np.ndarray, sym: np.ndarray, made: np.ndarray, last: np.ndarray, starts: np.ndarray,
             sizes: np.ndarray, word_best: np.ndarray, table: PairTable) -> np.ndarray:
    """The round's merges `at`, but only the first of each word where the guard fails: one of
    its merges would be scored, by the agenda, with a neighbour into a pair of rank at or above
    the word's best (the module docstring's three pairs). One merge, the leftmost best, is
    the agenda's next pop whatever follows."""
    n = len(sym)
    is_at = np.zeros(n + 2, dtype=bool)
    is_at[at] = True
    first = np.zeros(n, dtype=bool)
    first[starts] = True
    best, merged = word_best[at], made[at]
    bad = np.zeros(len(at), dtype=bool)
    has_left = ~first[at]
    if has_left.any():
        lp = at[has_left]
        left = np.where(is_at[np.maximum(lp - 2, 0)] & (lp >= 2), made[np.maximum(lp - 2, 0)], sym[lp - 1])
        bad[has_left] |= table.lookup(left, merged[has_left])[1] <= best[has_left]
    has_right = ~last[at + 1]
    if has_right.any():
        rp = at[has_right] + 2
        then = is_at[rp]
        right = np.where(then, made[np.minimum(rp, n - 1)], sym[np.minimum(rp, n - 1)])
        over = table.lookup(merged[has_right], right)[1] <= best[has_right]
        over |= then & (table.lookup(merged[has_right], sym[np.minimum(rp, n - 1)])[1] <= best[has_right])
        bad[has_right] |= over
    if not bad.any():
        return at
    word = np.repeat(np.arange(len(sizes)), sizes)[at]
    failed = np.zeros(len(sizes), dtype=bool)
    failed[word[bad]] = True
    lead = np.concatenate(([True], word[1:] != word[:-1]))
    return at[~failed[word] | lead]


def _pairs(sym: np.ndarray, last: np.ndarray, table: PairTable) -> tuple[np.ndarray, np.ndarray]:
    made = np.zeros(len(sym), dtype=np.int32)
    rank = np.full(len(sym), _NEVER, dtype=np.int32)
    pos = np.flatnonzero(~last)
    made[pos], rank[pos] = table.lookup(sym[pos], sym[pos + 1])
    return made, rank
