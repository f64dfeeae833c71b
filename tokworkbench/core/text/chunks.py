"""Distinct chunks with their frequencies, and where each occurrence sits in its document.

Training never looks at the corpus again after this: every chunk string that occurs is kept
once, in order of first appearance (which is what the `first` tie-break needs), with its count.
"""

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np

from tokworkbench.core.errors import CorpusError, PatternTimeoutError
from tokworkbench.core.text.normalize import normalize
from tokworkbench.core.text.parallel import PIECE, can_parallelize, count_parallel, cut_text
from tokworkbench.core.text.pretokenize import PreTokenizer


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


MAX_TOTAL = (1 << 63) - 1
"""The most units (bytes or characters) a corpus may hold, counted with multiplicity: BPE
training keeps its token total and every pair count in int64, and no pair count exceeds the
total, so a corpus within this limit cannot overflow any of them."""


def units_total(counts: np.ndarray, lengths: np.ndarray) -> int | None:
    """Σ count × length, exactly; None when it exceeds `MAX_TOTAL` (counts and lengths are
    positive int64). numpy's dot would wrap around silently, so a float estimate decides, and
    only near the limit is the sum done in Python's integers."""
    if not len(counts):
        return 0
    rough = float(np.dot(counts.astype(np.float64), lengths.astype(np.float64)))
    if rough < 2.0 ** 62:  # far below the limit, where the float error cannot matter: int64 is exact
        return int(np.dot(counts, lengths))
    exact = sum(map(int.__mul__, counts.tolist(), lengths.tolist()))
    return exact if exact <= MAX_TOTAL else None


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
        nbytes += utf8_length(text, docs)
        if layouts is None:
            chars += len(text)
            pending.append(text)
            continue
        ends, ids, offset = [], [], 0
        for piece in _pieces(text, pre):
            found = _reported(pre.split, piece, docs, offset)
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
        layouts.append(DocumentLayout(pre.surface(text), _join(ends), _join(ids)))  # what the chunks join to
    if pending:
        if can_parallelize(pre, chars):
            counter = count_parallel(pending, pre)
        else:
            for d, text in enumerate(pending, 1):
                counter.update(_reported(pre.counts, text, d, 0))
    chunks = list(counter)
    counts = np.fromiter(counter.values(), dtype=np.int64, count=len(chunks))
    return ChunkCounts(chunks, counts, docs, chars, nbytes, layouts)


def text_sizes(texts: list[str], normalizer: str) -> tuple[int, int, int]:
    """Documents, characters and UTF-8 bytes after normalizing, as `count_chunks` counts them."""
    chars = nbytes = 0
    for doc, text in enumerate(texts, 1):
        text = normalize(text, normalizer)
        chars += len(text)
        nbytes += utf8_length(text, doc)
    return len(texts), chars, nbytes


def utf8_length(text: str, doc: int, block: int = 1 << 20) -> int:
    """Bytes of `text` in UTF-8, encoded a block at a time (a whole 100 MB document encoded at
    once was 100 MB more at the peak); a lone surrogate is an error naming where it is."""
    if text.isascii():  # a flag CPython keeps: no scan
        return len(text)
    total = 0
    for start in range(0, len(text), block):
        try:
            total += len(text[start : start + block].encode("utf-8"))
        except UnicodeEncodeError as exc:  # only from the API: decoded files never hold one
            at = start + exc.start
            raise CorpusError(f"document {doc} holds a lone surrogate (U+{ord(text[at]):04X}) at "
                              f"offset {at}: it is not a character and has no UTF-8 bytes") from None
    return total


def _reported(method, text: str, doc: int, offset: int):
    """`pre.split` or `pre.counts` of `text`, with a stuck custom pattern reported by document
    and offset."""
    try:
        return method(text)
    except PatternTimeoutError as exc:
        raise PatternTimeoutError(offset + exc.offset, exc.seconds, doc) from None


def _pieces(text: str, pre: PreTokenizer) -> list[str]:
    """Where the pattern allows it, the text in ~1M-character pieces that split to the same chunks."""
    if pre.is_preset_pattern and len(text) > PIECE:
        return cut_text(text, len(text) // PIECE)
    return [text]


def _join(parts: list[np.ndarray]) -> np.ndarray:
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
