"""Distinct chunks with their frequencies, and the initial pair statistics, built with numpy.

Training never looks at the corpus again after this: every chunk string that occurs is kept
once, in order of first appearance (which is what the `first` tie-break needs), with its count.
"""

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np

from .normalize import normalize
from .parallel import PIECE, can_parallelize, count_parallel, cut_text
from .pretokenize import PreTokenizer


@dataclass
class DocumentLayout:
    """One normalized document as training saw it: where each chunk occurrence ends, and which
    distinct chunk it is. This is what lets a view draw current token boundaries exactly."""

    text: str
    ends: np.ndarray  # int64 char offset of each chunk occurrence's end
    chunk_ids: np.ndarray  # int64 index into ChunkCounts.chunks

    def chunk_range(self, start: int, end: int) -> tuple[int, int]:
        """Occurrences that overlap the char window [start, end)."""
        lo = int(np.searchsorted(self.ends, start, side="right"))
        hi = int(np.searchsorted(self.ends, end, side="left")) + 1
        return lo, min(hi, len(self.ends))

    def chunk_start(self, k: int) -> int:
        return int(self.ends[k - 1]) if k > 0 else 0


@dataclass
class ChunkCounts:
    chunks: list[str]
    counts: np.ndarray  # int64, one per chunk
    documents: int
    chars: int
    bytes: int
    layouts: list[DocumentLayout] | None = None


def count_chunks(
    texts: Iterable[str],
    normalizer: str,
    pre: PreTokenizer,
    keep_layout: bool = False,
    progress: Callable[[int], None] | None = None,
) -> ChunkCounts:
    """Distinct chunks in order of first appearance, with counts; `progress(chars)` follows
    the layout pass, which works a piece at a time so its memory stays small."""
    counter: Counter[str] = Counter()
    docs = chars = nbytes = 0
    layouts: list[DocumentLayout] | None = [] if keep_layout else None
    index: dict[str, int] = {}
    pending: list[str] = []  # normalized documents not counted yet (for the parallel path)
    for text in texts:
        text = normalize(text, normalizer)
        docs += 1
        nbytes += len(text.encode("utf-8"))
        if layouts is None:
            chars += len(text)
            pending.append(text)
            continue
        ends, ids, offset = [], [], 0
        for piece in _pieces(text, pre):
            found = pre.split(piece)
            counter.update(found)
            for chunk in dict.fromkeys(found):
                if chunk not in index:
                    index[chunk] = len(index)
            lengths = np.fromiter(map(len, found), dtype=np.int64, count=len(found))
            ends.append(offset + np.cumsum(lengths))
            ids.append(np.fromiter(map(index.__getitem__, found), dtype=np.int64, count=len(found)))
            offset += len(piece)
            chars += len(piece)
            if progress is not None:
                progress(chars)
        layouts.append(DocumentLayout(text, _join(ends), _join(ids)))
    if pending:
        if can_parallelize(pre, chars):
            counter = count_parallel(pending, pre)
        else:
            for text in pending:
                counter.update(pre.split(text))
    chunks = list(counter)
    counts = np.fromiter(counter.values(), dtype=np.int64, count=len(chunks))
    return ChunkCounts(chunks, counts, docs, chars, nbytes, layouts)


def _pieces(text: str, pre: PreTokenizer) -> list[str]:
    """Where the pattern allows it, the text in ~1M-character pieces that split to the same chunks."""
    if pre.is_preset_pattern and len(text) > PIECE:
        return cut_text(text, len(text) // PIECE)
    return [text]


def _join(parts: list[np.ndarray]) -> np.ndarray:
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)


@dataclass
class PairStats:
    """Initial pair counts, the chunks each pair occurs in, and each pair's first occurrence."""

    counts: dict[tuple[int, int], int]
    where: dict[tuple[int, int], set[int]]
    first: dict[tuple[int, int], tuple[int, int]]


def initial_pair_stats(words: list[list[int]], weights: np.ndarray, want_first: bool) -> PairStats:
    """Vectorized count of adjacent pairs over all chunks, weighted by chunk frequency.

    Requires every token to be a base symbol (length 1), so positions are base offsets.
    """
    lens = np.fromiter((len(w) for w in words), dtype=np.int64, count=len(words))
    total = int(lens.sum())
    if total < 2:
        return PairStats({}, {}, {})
    flat = np.fromiter((t for w in words for t in w), dtype=np.int64, count=total)
    chunk_of = np.repeat(np.arange(len(words), dtype=np.int64), lens)
    starts = np.cumsum(lens) - lens
    ok = chunk_of[:-1] == chunk_of[1:]
    pos = np.nonzero(ok)[0]
    if len(pos) == 0:
        return PairStats({}, {}, {})
    keys = (flat[pos] << 32) | flat[pos + 1]
    order = np.argsort(keys, kind="stable")  # stable keeps corpus order inside each pair
    keys = keys[order]
    pos = pos[order]
    chunk = chunk_of[pos]
    bounds = np.flatnonzero(np.diff(keys)) + 1
    group_starts = np.concatenate(([0], bounds))
    sums = np.add.reduceat(weights[chunk], group_starts)
    uniq = keys[group_starts]
    lefts = (uniq >> 32).tolist()
    rights = (uniq & 0xFFFFFFFF).tolist()
    pairs = list(zip(lefts, rights))
    counts = dict(zip(pairs, sums.tolist()))
    where = {}
    for p, part in zip(pairs, np.split(chunk, bounds)):
        where[p] = set(part.tolist())
    first = {}
    if want_first:
        fchunk = chunk[group_starts]
        foff = pos[group_starts] - starts[fchunk]
        first = dict(zip(pairs, zip(fchunk.tolist(), foff.tolist())))
    return PairStats(counts, where, first)
