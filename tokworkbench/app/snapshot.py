"""A read of the core taken between two training steps, for the UI to render.

Built in whichever thread owns the trainer at that moment (the UI thread when idle, the
training worker while it runs), so the UI never touches the trainer while a worker does.
"""

from dataclasses import dataclass

from ..core.inspection.segments import TokenSpan, corpus_spans, pair_occurrences, whole_run
from ..core.models.tokenizer import Tokenizer
from ..core.bpe.trainer import PairRow, Trainer
from .render import visible

PAIR_ROWS = 400
HISTORY_ROWS = 400


@dataclass(frozen=True)
class View:
    """What the user is looking at: which document and which window of it."""

    doc: int = 0
    start: int = 0
    size: int = 2400


@dataclass(frozen=True)
class Snapshot:
    vocab_size: int
    base_size: int
    merges: int
    total_tokens: int
    initial_tokens: int
    compression: float
    pairs: list[PairRow]
    next_pair: tuple[int, int] | None
    next_text: str  # what the next merge makes, for when it is not among `pairs` (replay)
    replaying: int  # replayed merges still to come
    history: list[tuple]  # rendered rows of the newest merges, oldest first
    view: View
    doc_length: int
    text: str  # the window's normalized text
    spans: list[TokenSpan]  # offsets relative to `text`
    tokenizer: Tokenizer


def take_snapshot(trainer: Trainer, view: View) -> Snapshot:
    nxt = trainer.next_pair()
    history = []
    for rec in trainer.history[-HISTORY_ROWS:]:
        a, b = rec.pair
        history.append((
            rec.step, f"{a}+{b}", rec.new_id, visible(trainer.token_text(rec.new_id)), rec.count,
            rec.replacements, rec.length, trainer.initial_tokens / rec.length if rec.length else 0.0,
        ))
    text, spans, length = "", [], 0
    if trainer.layouts:
        doc = min(view.doc, len(trainer.layouts) - 1)
        full = trainer.layouts[doc].text
        length = len(full)
        start = max(0, min(view.start, max(0, length - 1)))
        end = min(length, start + view.size)
        text = full[start:end]
        spans = corpus_spans(trainer, doc, start, end, origin=start)
    return Snapshot(
        vocab_size=trainer.vocab_size,
        base_size=trainer.base_size,
        merges=len(trainer.merges),
        total_tokens=trainer.total_tokens,
        initial_tokens=trainer.initial_tokens,
        compression=trainer.compression,
        pairs=trainer.top_pairs(PAIR_ROWS),
        next_pair=nxt,
        next_text=visible(trainer.token_text(nxt[0]) + trainer.token_text(nxt[1])) if nxt else "",
        replaying=trainer.replaying,
        history=history,
        view=view,
        doc_length=length,
        text=text,
        spans=spans,
        tokenizer=trainer.tokenizer(with_history=False),  # for the encode views only
    )


def selected_line(snap: Snapshot, pair: tuple[int, int] | None) -> tuple[str, list[int], str]:
    """For the byte view: the line holding the selected pair's first occurrence in the window,
    else the window's first line, as (text, its token ids, a description)."""
    marks = pair_occurrences(snap.spans, pair) if pair else []
    at = marks[0][0] if marks else 0
    lo = snap.text.rfind("\n", 0, at) + 1
    hi = snap.text.find("\n", at)
    hi = len(snap.text) if hi < 0 else hi + 1
    lo, hi = max(lo, at - 120), min(hi, at + 120)
    run = whole_run(snap.spans, lo, hi)
    where = "the selected pair's first occurrence in the window" if marks else "the window's first line"
    if not run:
        return "", [], f"corpus: {where}"
    return snap.text[run[0].start : run[-1].end], [s.token for s in run], f"corpus: {where}"
