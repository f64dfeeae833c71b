"""A window's token spans, read from the trainer's cells at once.

The corpus view's window is redrawn on every merge. Built chunk by chunk (a numpy read and a
Python loop for each of some 500 chunks) it took 2 ms of each key's frame; here the chunks'
cells are read in one gather and the offsets come from array arithmetic, so only the spans
themselves are made one at a time. `segments.corpus_spans` is the reference it is tested against.
"""

from functools import partial

import numpy as np

from tokworkbench.core.inspection import segments
from tokworkbench.core.inspection.segments import TokenSpan, chunk_spans, window_piece

_span = partial(tuple.__new__, TokenSpan)  # a span from a ready tuple, without the named tuple's Python __new__


def window_spans(trainer, doc: int, start: int, end: int, origin: int = 0) -> list[TokenSpan]:
    """The spans `segments.corpus_spans` gives, for a trainer whose `chunk_cells` reads its cells."""
    layout = trainer.layouts[doc]
    lo, hi = layout.chunk_range(start, end)
    if lo >= hi:
        return []
    cids = layout.chunk_ids[lo:hi]
    strings = trainer.chunk_strings
    texts = [strings[c] for c in cids.tolist()]
    ends = layout.ends
    at = np.empty(hi - lo, dtype=np.int64)  # each chunk's first char in the document
    at[0] = layout.chunk_start(lo)
    at[1:] = ends[lo : hi - 1]
    longest = segments.LONG_CHUNK
    spans: list[TokenSpan] = []
    run = 0  # the first chunk not drawn yet
    for k, text in enumerate(texts):
        if len(text) <= longest:
            continue
        # a long chunk is read only where the window shows it (segments.window_piece)
        spans += _run_spans(trainer, cids[run:k], texts[run:k], at[run:k] - origin, len(spans))
        a = int(at[k])
        piece = window_piece(trainer, int(cids[k]), text, a, max(start, a) - a, min(end, a + len(text)) - a, origin)
        spans += chunk_spans([piece], trainer.token, first_ordinal=len(spans))
        run = k + 1
    spans += _run_spans(trainer, cids[run:], texts[run:], at[run:] - origin, len(spans))
    return spans


def _run_spans(trainer, cids: np.ndarray, texts: list[str], shift: np.ndarray, ordinal: int) -> list[TokenSpan]:
    """Spans of whole chunks side by side; `shift`: where each chunk's first char is drawn."""
    if not len(cids):
        return []
    at, tokens, begins = trainer.chunk_cells(cids)
    if not len(at):
        return []
    total = int(begins[-1])
    after = np.empty_like(at)  # a token ends where the next one starts: chunks start with a token
    after[:-1] = at[1:]
    after[-1] = total
    chunk = np.searchsorted(begins, at, side="right") - 1
    cut = np.zeros(len(at), dtype=bool)
    joined = "".join(texts) if trainer.config.units.is_bytes else ""
    data = np.frombuffer(joined.encode("utf-8"), dtype=np.uint8)
    if len(data) == len(joined):  # char units, or ASCII: a unit is a char
        first = shift[chunk] + (at - begins[chunk])
        last = first + (after - at)
    else:
        char = np.cumsum((data & 0xC0) != 0x80) - 1  # the char each byte belongs to
        lead = char[np.minimum(begins[:-1], total - 1)][chunk]  # the chunk's first char
        head, tail = char[at], char[after - 1]
        first = shift[chunk] + head - lead
        last = shift[chunk] + tail + 1 - lead
        # a token that starts or ends inside a character (chunks start and end on characters)
        cut = ((at > 0) & (char[np.maximum(at - 1, 0)] == head)) | (
            (after < total) & (char[np.minimum(after, total - 1)] == tail))
    ordinals = range(ordinal, ordinal + len(at))
    return list(map(_span, zip(first.tolist(), last.tolist(), tokens.tolist(), ordinals, cut.tolist())))
