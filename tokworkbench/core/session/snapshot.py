"""A read of a session taken between two steps: everything the views draw, as one typed value.

Taken in whichever thread or process owns the learner at that moment (the UI thread when idle,
the training child while it runs), so a view never touches the learner while a step is under
way. It carries data, not UI text: the app decides how to write it.
"""

from dataclasses import dataclass, field

from tokworkbench.core.inspection.segments import TokenSpan, pair_occurrences, whole_run
from tokworkbench.core.models.protocol import Learner, Model
from tokworkbench.core.models.roles import NO_ROLES, Roles, with_roles
from tokworkbench.core.units import Units

NEXT_ROWS = 400
HISTORY_ROWS = 160  # the newest rows a snapshot carries (a tall screen's and a page more); the history
# table asks for others (history_page). 400 cost 2 ms of every merge's frame to make and to lay out
CURVE_POINTS = 512


@dataclass(frozen=True)
class View:
    """What the user is looking at: which document and which window of it."""

    doc: int = 0
    start: int = 0
    size: int = 2400
    row_filter: str = ""  # only next-step rows that match this (the pair table's filter)
    rows: int = NEXT_ROWS  # next-step rows wanted: as many as the screen shows (ranking more costs each key)


@dataclass(frozen=True)
class CorpusWindow:
    doc: int
    start: int
    doc_length: int
    text: str  # the window's normalized text
    spans: list[TokenSpan]  # offsets relative to `text`


@dataclass(frozen=True)
class Snapshot:
    kind: str
    units: Units
    vocab_size: int
    base_size: int
    steps: int  # merges (BPE) or rounds (Unigram) made so far
    total_tokens: int
    initial_tokens: int
    compression: float
    target: int
    next_rows: list  # what the next step does, best first (PairRow for BPE), filtered by the view
    rows_in_all: int  # how many such rows exist (or match the filter), of which next_rows are the best
    next_step: object | None  # what the next step does: the pair it merges (BPE)
    next_text: str  # what the next merge makes, for when it is not among `next_rows` (replay)
    replaying: int  # replayed merges still to come
    replay_total: int  # merges in the replay: the first this many steps are (or will be) its merges
    history: list  # the newest steps, oldest first (MergeRow for BPE): rows history_start… of the table
    history_length: int  # rows in the whole history table (Unigram: the seed's row too); `history` ends it
    window: CorpusWindow
    curve: list[float]  # base units per token after each step, thinned (for a plot)
    token_lengths: list[int]  # vocabulary tokens of each length in base units
    model: Model = field(repr=False)  # for the encode views (no training history)

    @property
    def can_step(self) -> bool:
        return self.next_step is not None

    @property
    def history_start(self) -> int:
        """The history table's index of `history[0]`: the rows before it are asked for when shown."""
        return self.history_length - len(self.history)


def take_snapshot(learner: Learner, view: View, target: int, replaying: int = 0,
                  replay_total: int = 0, roles: Roles = NO_ROLES) -> Snapshot:
    """What the views draw. The model carries `roles` (the session's settings: the learner knows
    none, they change no training), so the encode, batch and compare views see them."""
    nxt = learner.next_step()
    start, text, spans, length = learner.window(view.doc, view.start, view.start + view.size)
    model = with_roles(learner.model(with_history=False), roles)
    rows, rows_in_all = learner.next_rows(view.rows, view.row_filter)
    history, history_length = learner.history_page(-HISTORY_ROWS, None)
    return Snapshot(
        kind=learner.kind,
        units=model.units,
        vocab_size=learner.vocab_size,
        base_size=learner.base_size,
        steps=len(learner.history),
        total_tokens=learner.total_tokens,
        initial_tokens=learner.initial_tokens,
        compression=learner.compression,
        target=target,
        next_rows=rows,
        rows_in_all=rows_in_all,
        next_step=nxt,
        next_text=learner.step_text(nxt) if nxt is not None else "",
        replaying=replaying,
        replay_total=replay_total,
        history=history,
        history_length=history_length,
        window=CorpusWindow(view.doc, start, length, text, spans),
        curve=learner.compression_curve(CURVE_POINTS),
        token_lengths=learner.token_lengths(),
        model=model,
    )


def selected_line(snap: Snapshot, pair: tuple[int, int] | None) -> tuple[str, list[int], str]:
    """For the byte view: the line holding the selected pair's first occurrence in the window,
    else the window's first line, as (text, its token ids, a description)."""
    window = snap.window
    marks = pair_occurrences(window.spans, pair) if pair else []
    at = marks[0][0] if marks else 0
    lo = window.text.rfind("\n", 0, at) + 1
    hi = window.text.find("\n", at)
    hi = len(window.text) if hi < 0 else hi + 1
    lo, hi = max(lo, at - 120), min(hi, at + 120)
    run = whole_run(window.spans, lo, hi)
    where = "the selected pair's first occurrence in the window" if marks else "the window's first line"
    if not run:
        return "", [], f"corpus: {where}"
    return window.text[run[0].start : run[-1].end], [s.token for s in run], f"corpus: {where}"
