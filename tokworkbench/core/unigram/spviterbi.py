"""SentencePiece's Viterbi arithmetic (unigram_model.cc `Model::EncodeOptimized`), exactly.

SentencePiece runs one Viterbi over the whole normalized sentence and keeps, per end position,
a float32 best score: a candidate is the stored score at its start plus the piece's score,
rounded to float32, and only a strictly better one replaces the one stored at its end, so among
equal scores the earliest start (the longest last piece) wins. (unigram_model.cc reads as if a
piece candidate were a double compared unrounded; the library as built and installed agrees
with float32 candidates on every botchan line, the double reading differs on 4 of 4,288: the
library is the judge.) Costs here are negated scores: negation is exact, so every comparison
and rounding is SentencePiece's mirrored.

Every path passes through each ▁ (no piece holds ▁ after its start), so the sentence is solved
chunk by chunk, each chunk starting from the float32 score the path before it reached. A chunk's
path can depend on that start only through rounding, that is only where two candidates come
within the rounding error of each other; from the smallest gap between the winner and the
runner-up at any end on the path, `Solved.reach` says from how large a start a path solved from
0 is still the path, so a cached chunk is re-solved only near a tie.
"""

from dataclasses import dataclass

import numpy as np

from tokworkbench.core.unigram.viterbi import INF, Edges, segment, to_f32

_UNIT = 2.0 ** -24  # float32's relative rounding error (half an ulp)


@dataclass(frozen=True)
class Solved:
    """One chunk's best path from a given start score."""

    spans: tuple[tuple[int, int], ...]
    costs: tuple[np.float32, ...]  # each span's edge cost, in path order
    reach: float
    """The largest |start score| from which this path is still the best (INF: any start)."""

    def end_score(self, start: np.float32) -> np.float32:
        """The float32 score SentencePiece has stored at the chunk's end, this path taken from
        `start`: each step a float32 addition (which is `best_costs_sp`'s double sum rounded
        once: 53 bits are enough for that rounding to be exact)."""
        for c in self.costs:
            start = start + c
        return start


def _reach(margin: float, length: int, max_cost: float) -> float:
    """How large a start score leaves a path solved from 0 the path: every decision on it was
    won by `margin` or more, and a run of `length` steps whose values stay within |start| +
    length·max_cost moves each candidate by at most (length + 2)·2⁻²⁴ of that, in the run from
    0 and in the run from the start alike (the 1% covers the double sums)."""
    if margin == INF:
        return INF
    return margin / (2.02 * (length + 2) * _UNIT) - 2 * length * max_cost


def best_costs_sp(ends: Edges, start: float = 0.0) -> tuple[list[float], list[int], list[float]]:
    """Stored best cost at each position, where its last piece starts, and the gap to the
    runner-up there (INF where only one candidate reached it), in SentencePiece's arithmetic."""
    n = len(ends) - 1
    best = [INF] * (n + 1)
    back = [-1] * (n + 1)
    gap = [INF] * (n + 1)
    best[0] = start
    f32 = to_f32
    for end in range(1, n + 1):
        top = second = INF
        at = -1
        for s, _, c in ends[end]:
            here = best[s]
            if here == INF:
                continue
            cand = f32(c + here)
            if at < 0 or cand < top:
                second = min(second, top) if at >= 0 else second
                top, at = cand, s
            elif cand < second:
                second = cand
        best[end], back[end], gap[end] = top, at, second - top
    return best, back, gap


def solve(ends: Edges, start: float = 0.0) -> Solved:
    """The best path through one chunk's edges from `start`, with its edge costs and margin."""
    n = len(ends) - 1
    if n <= 0:
        return Solved((), (), INF)
    _, back, gap = best_costs_sp(ends, start)
    spans = tuple(segment(n, back))
    costs = tuple(np.float32(next(c for s, _, c in ends[b] if s == a)) for a, b in spans)
    max_cost = max(abs(c) for at in ends for _, _, c in at)
    return Solved(spans, costs, _reach(min(gap[b] for _, b in spans), n, max_cost))
