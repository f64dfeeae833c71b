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
from collections.abc import Callable

INF = math.inf
UNK_PENALTY = 10.0  # HF's K_UNK_PENALTY


def best_costs(word: str, cost: Callable[[str], float | None], max_len: int, start_cost: float = 0.0,
               unk_cost: float | None = None, lo: int = 0, best: list[float] | None = None,
               back: list[int] | None = None) -> tuple[list[float], list[int]]:
    """Best cost to reach each position 0..len(word), and where the best last piece starts
    (-1 where unreachable). `cost(piece)` is None for a piece not in the vocabulary.

    With `lo` > 0, `best` and `back` hold a previous run's values up to `lo`, which are kept:
    the positions up to `lo` cannot change when only pieces starting at `lo` or later change.
    """
    n = len(word)
    if best is None or back is None or lo == 0:
        best = [INF] * (n + 1)
        back = [-1] * (n + 1)
        best[0] = start_cost
        lo = 0
    else:
        best = best[: lo + 1] + [INF] * (n - lo)
        back = back[: lo + 1] + [-1] * (n - lo)
    for end in range(lo + 1, n + 1):
        top, at = INF, -1
        for start in range(max(0, end - max_len), end):
            here = best[start]
            if here == INF:
                continue
            c = cost(word[start:end])
            if c is None:
                if unk_cost is None or end - start != 1:
                    continue
                c = unk_cost
            cand = c + here
            if at < 0 or cand < top:
                top, at = cand, start
        best[end], back[end] = top, at
    return best, back


def segment(word: str, back: list[int]) -> list[tuple[int, int]]:
    """The best path's pieces as (start, end), left to right."""
    out = []
    end = len(word)
    while end > 0:
        start = back[end]
        out.append((start, end))
        end = start
    out.reverse()
    return out


def viterbi(word: str, cost: Callable[[str], float | None], max_len: int, start_cost: float = 0.0,
            unk_cost: float | None = None) -> tuple[list[tuple[int, int]], float]:
    """The best segmentation of `word` as (start, end) spans, and its cost."""
    if not word:
        return [], start_cost
    best, back = best_costs(word, cost, max_len, start_cost, unk_cost)
    if back[len(word)] < 0:
        return [], INF
    return segment(word, back), best[len(word)]
