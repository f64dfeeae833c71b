"""Unigram's other segmentations of a whole text: the k best, and a sampled one.

Chunks are segmented independently, so the k best segmentations of a text combine the k best of
each chunk: a running list of the best k partial texts is crossed with each chunk's list and cut
back to k. Sampling draws each chunk's path from p(path)^alpha (subword regularization, as
SentencePiece's `SampleEncode`).
"""

import heapq
import math
import random

from tokworkbench.core.errors import SettingError
from tokworkbench.core.unigram.model import UnigramModel

MAX_ALPHA = 1e6  # beyond it a path's weight -alpha × cost leaves the floats (1e308 gave NaN weights)


def check_alpha(alpha: float) -> None:
    """A smoothing the sampler can compute: positive and at most MAX_ALPHA (where p^alpha is
    already the best path but for exact ties)."""
    if not (isinstance(alpha, (int, float)) and math.isfinite(alpha) and 0 < alpha <= MAX_ALPHA):
        raise SettingError("alpha", alpha, f"must be a positive number of at most {MAX_ALPHA:g} (larger ones "
                           "overflow; the best path is the plain encoding, not a sample)")


def unigram_nbest(model: UnigramModel, text: str, k: int) -> list[tuple[list[int], float]]:
    """The k best segmentations of `text` (ordinary text) with their scores, best first."""
    best: list[tuple[float, tuple[int, ...]]] = [(0.0, ())]
    for chunk, ids in model.chunk_paths(text):
        options = model.nbest(chunk, k, first=ids)
        crossed = [(score + s, ids + tuple(more)) for score, ids in best for more, s in options]
        best = heapq.nlargest(k, crossed, key=lambda p: p[0])
    return [(_across(model, list(ids)), score) for score, ids in best]


def _across(model: UnigramModel, ids: list[int]) -> list[int]:
    """SentencePiece fuses a run of unknowns across chunks too (HF only within a word)."""
    return model.fuse_unknowns(ids) if model.fuses_across_chunks else ids


def unigram_sample(model: UnigramModel, text: str, alpha: float = 0.1, seed: int | None = None) -> list[int]:
    check_alpha(alpha)
    rng = random.Random(seed)
    out: list[int] = []
    for chunk in model.chunks_of(text):
        out += model.sample(chunk, alpha, rng)
    return _across(model, out)
