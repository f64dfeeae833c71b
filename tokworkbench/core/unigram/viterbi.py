"""Viterbi over a word's lattice of pieces: the one search that training, encoding and the
lattice view share, so they can never disagree about a segmentation.

Costs are minimized (cost = -log p). For each end position the candidates are taken in
ascending start order and only a strictly better one replaces the current best: among equal
costs the earliest start, that is the longest last piece, wins. This is the course's
`encode_word` and Hugging Face's `Unigram::encode_optimized` alike (HF maximizes score = -cost;
a sum of negated floats is the negated sum, so the two agree bit for bit).

A character no piece covers gets HF's unknown edge: one character long, costing 10 more than the
costliest piece (HF's `min_score - K_UNK_PENALTY`), only where no single-character piece starts.
"""

import math
import struct
from dataclasses import dataclass
from functools import cached_property

INF = math.inf
UNK_PENALTY = 10.0  # HF's K_UNK_PENALTY

Edges = list[list[tuple[int, str | None, float]]]  # per end position: (start, piece or None for unknown, cost)


@dataclass(frozen=True)
class Vocab:
    """Piece costs, and every prefix of every piece (so a scan along a word stops as soon as no
    piece can start with what it has read)."""

    cost: dict[str, float]

    @cached_property
    def prefixes(self) -> frozenset[str]:
        return frozenset(p[:k] for p in self.cost for k in range(1, len(p) + 1))

    @cached_property
    def max_len(self) -> int:
        return max(map(len, self.cost), default=1)

    def edges(self, word: str, unk_cost: float | None = None) -> Edges:
        """Every piece over its span of `word`, grouped by end, in ascending start order; with
        `unk_cost`, an unknown edge where no single-character piece starts."""
        n = len(word)
        ends: Edges = [[] for _ in range(n + 1)]
        prefixes, cost, longest = self.prefixes, self.cost, self.max_len
        for start in range(n):
            single = False
            for end in range(start + 1, min(n, start + longest) + 1):
                piece = word[start:end]
                if piece not in prefixes:
                    break
                c = cost.get(piece)
                if c is not None:
                    ends[end].append((start, piece, c))
                    single = single or end == start + 1
            if not single and unk_cost is not None:
                ends[start + 1].append((start, None, unk_cost))
        return ends


def _fresh_tables(n: int, start_cost: float, lo: int, best, back) -> tuple[list[float], list[int], int]:
    """The tables a run fills: a previous run's up to `lo` (nothing there changes), else new."""
    if best is None or back is None or lo == 0:
        best = [INF] * (n + 1)
        back = [-1] * (n + 1)
        best[0] = start_cost
        return best, back, 0
    return best[: lo + 1] + [INF] * (n - lo), back[: lo + 1] + [-1] * (n - lo), lo


def best_costs(ends: Edges, start_cost: float = 0.0, skip: str | None = None, lo: int = 0,
               best: list[float] | None = None, back: list[int] | None = None) -> tuple[list[float], list[int]]:
    """Best cost to reach each position 0..n, and where the best last piece starts (-1 where
    unreachable), leaving out edges of the piece `skip`.

    With `lo` > 0, `best` and `back` hold a previous run's values, of which those up to `lo` are
    kept: nothing there changes when only edges starting at `lo` or later are left out.
    """
    n = len(ends) - 1
    best, back, lo = _fresh_tables(n, start_cost, lo, best, back)
    for end in range(lo + 1, n + 1):
        top, at = INF, -1
        for start, piece, c in ends[end]:
            here = best[start]
            if here == INF or piece == skip and skip is not None:
                continue
            cand = c + here
            if at < 0 or cand < top:
                top, at = cand, start
        best[end], back[end] = top, at
    return best, back


_F32 = struct.Struct("<f")


def to_f32(x: float) -> float:
    """`x` rounded to the nearest float32 (as a Python float)."""
    return _F32.unpack(_F32.pack(x))[0]


def best_costs_f32(ends: Edges) -> tuple[list[float], list[int]]:
    """`best_costs` as SentencePiece sums a path: in float32, each sum rounded to float32.

    On a word where two segmentations tie exactly in real arithmetic (fifteen '━' as one piece
    and five as five pieces, in either order), the roundings decide which wins, and float32
    roundings are not float64's: a model read from a SentencePiece file is encoded this way
    so that its ids are SentencePiece's. (The float64 sum of two float32 numbers rounded once to
    float32 is their float32 sum except in rare double-rounding halfway cases.)"""
    n = len(ends) - 1
    best = [INF] * (n + 1)
    back = [-1] * (n + 1)
    best[0] = 0.0
    f32 = to_f32
    for end in range(1, n + 1):
        top, at = INF, -1
        for start, _, c in ends[end]:
            here = best[start]
            if here == INF:
                continue
            cand = f32(c + here)
            if at < 0 or cand < top:
                top, at = cand, start
        best[end], back[end] = top, at
    return best, back


def best_costs_indexed(ends: list[list[tuple[int, int]]], costs: list, start_cost: float, skip: int = -1,
                       lo: int = 0, best: list[float] | None = None,
                       back: list[int] | None = None) -> tuple[list[float], list[int]]:
    """`best_costs` over edges (start, piece index) with the costs in a list, None for a piece
    no longer in the vocabulary: the edges of a shrinking vocabulary never need rebuilding.
    The same additions in the same order, so the same floats."""
    n = len(ends) - 1
    best, back, lo = _fresh_tables(n, start_cost, lo, best, back)
    for end in range(lo + 1, n + 1):
        top, at = INF, -1
        for start, k in ends[end]:
            c = costs[k]
            if c is None or k == skip:
                continue
            here = best[start]
            if here == INF:
                continue
            cand = c + here
            if at < 0 or cand < top:
                top, at = cand, start
        best[end], back[end] = top, at
    return best, back


def segment(n: int, back: list[int]) -> list[tuple[int, int]]:
    """The best path's pieces as (start, end), left to right."""
    out = []
    end = n
    while end > 0:
        start = back[end]
        out.append((start, end))
        end = start
    out.reverse()
    return out


def viterbi(word: str, vocab: Vocab, start_cost: float = 0.0,
            unk_cost: float | None = None) -> tuple[list[tuple[int, int]], float]:
    """The best segmentation of `word` as (start, end) spans, and its cost."""
    if not word:
        return [], start_cost
    best, back = best_costs(vocab.edges(word, unk_cost), start_cost)
    if back[len(word)] < 0:
        return [], INF
    return segment(len(word), back), best[len(word)]
