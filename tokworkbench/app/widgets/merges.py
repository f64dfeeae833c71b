"""The merge history: newest at the bottom, followed as training runs. Every step is in it: the
snapshot brings the newest rows, and the others are asked for when they come on screen."""

from textual.binding import Binding
from textual.reactive import var

from tokworkbench.app.kind_views import view_of
from tokworkbench.app.labels import plural
from tokworkbench.app.messages import HistoryWanted, RewindTo
from tokworkbench.app.widgets.rowsview import RowsView
from tokworkbench.core.inspection.escape import visible
from tokworkbench.core.session.snapshot import Snapshot


class HistoryTable(RowsView):
    """What the merge history and the Unigram rounds share: a virtual list over the whole
    history, filled from the snapshot's newest rows and from the pages the screen sends."""

    snapshot: var[Snapshot | None] = var(None, always_update=True)
    """The session as the core last reported it: its `history` holds the newest steps."""


    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._drawn: tuple | None = None  # what the held rows are the history of

    def watch_snapshot(self, snap: Snapshot | None) -> None:
        if snap is None or view_of(snap.kind).history_pane != self.id:
            return  # another kind's history: this pane is hidden then
        # the same history as before (a filter typed, a window moved): the rows scrolled to stay
        drawn = (snap.history_length, snap.replay_total, snap.history[-1:])
        if drawn == self._drawn:
            self.subtitle(snap)
            return
        self._drawn = drawn
        self._hold(snap.history, snap.history_start, snap.history_length, follow=True)
        self.subtitle(snap)

    def show_page(self, rows: list, start: int, total: int) -> None:
        """Rows of the history the screen read for what is on screen (answering `Wanted`)."""
        if self.snapshot is None or total != self.snapshot.history_length:
            return  # the history has changed since it was asked for: it asks again
        self._hold(rows, start, total, follow=False)

    def _hold(self, rows: list, start: int, total: int, follow: bool) -> None:
        self.set_rows(self.cells(rows, start), first=start, total=total, follow=follow)

    def on_rows_view_wanted(self, event: RowsView.Wanted) -> None:
        event.stop()
        self.post_message(HistoryWanted(event.start, event.end))

    def cells(self, rows: list, start: int) -> list[tuple]:
        raise NotImplementedError

    def subtitle(self, snap: Snapshot) -> None:
        raise NotImplementedError

    def step_at(self, index: int) -> int:
        """The step (round) of table row `index`."""
        return index


class MergesPanel(HistoryTable):
    BINDINGS = [Binding("enter", "rewind", "Rewind here",
                        tooltip="In the history: undo back to the selected step, exactly")]

    def __init__(self, **kwargs):
        super().__init__(
            [("step", 6, "right"), ("merged", 18, "left"), ("count", 9, "right"), ("repl.", 9, "right"),
             ("tokens", 11, "right"), ("ratio", 6, "right"), ("pair", 13, "left"), ("id", 6, "right")],
            fit=(1, 6, 2), **kwargs,  # merged gives up width so the count stays in view
        )
        self._held: dict[int, tuple] = {}  # step -> (record, replay mark, text, compression, cells)

    def on_mount(self) -> None:
        self.border_title = "Merges"

    def cells(self, rows: list, start: int) -> list[tuple]:
        """The rows' cells, those of the rows held before reused: a merge shows 400 rows of
        which one is new, and formatting them all took a millisecond a key."""
        cells, held, kept = [], self._held, {}
        replayed = self.snapshot.replay_total
        for row in rows:
            r = row.record
            mark = 0 if r.step > replayed else 1 if r.step < replayed else 2
            made = held.get(r.step)
            if made is None or not (made[0] is r or made[0] == r) or made[1:4] != (mark, row.text, row.compression):
                step = str(r.step) if not mark else (f"↺{r.step}", "italic" if mark == 1 else "bold italic underline")
                counted = (f"{r.count:,}", f"{r.replacements:,}", f"{r.length:,}", f"{row.compression:.3f}")
                if not r.length:  # a loaded model's merges (inspect mode): no training run counted them
                    counted = ("–", "–", "–", "–")
                made = (r, mark, row.text, row.compression,
                        (step, (visible(row.text), "bold"), *counted, f"{r.pair[0]}+{r.pair[1]}", str(r.new_id)))
            kept[r.step] = made
            cells.append(made[4])
        self._held = kept  # only the rows held now: a long run would keep every row otherwise
        return cells

    def subtitle(self, snap: Snapshot) -> None:
        replayed = snap.replay_total
        replay = f" · ↺ first {min(snap.steps, replayed):,} of {replayed:,} replayed" if replayed else ""
        self.border_subtitle = plural(snap.steps, "merge") + replay

    @property
    def row_count(self) -> int:
        return self.total

    def step_at(self, index: int) -> int:
        return index + 1  # row 0 is step 1

    def action_rewind(self) -> None:
        """Ask to go back to the step under the cursor (click a row, or move to it)."""
        if self.total and self.snapshot is not None:
            self.post_message(RewindTo(self.step_at(self.cursor)))
