"""The merge history: newest at the bottom, followed as training runs."""

from textual.binding import Binding
from textual.reactive import var

from ...core.snapshot import Snapshot
from ..labels import plural
from ..messages import RewindTo
from ...core.inspection.escape import visible
from .rowsview import RowsView


class MergesPanel(RowsView):
    BINDINGS = [Binding("enter", "rewind", "Rewind here",
                        tooltip="In the history: undo back to the selected step, exactly")]

    snapshot: var[Snapshot | None] = var(None, always_update=True)
    """The session as the core last reported it: its `history` holds the newest merges."""

    def __init__(self, **kwargs):
        super().__init__(
            [("step", 6, "right"), ("merged", 18, "left"), ("count", 9, "right"), ("repl.", 9, "right"),
             ("tokens", 11, "right"), ("ratio", 6, "right"), ("pair", 13, "left"), ("id", 6, "right")],
            fit=(1, 6, 2), **kwargs,  # merged gives up width so the count stays in view
        )

    def on_mount(self) -> None:
        self.border_title = "Merges"

    def watch_snapshot(self, snap: Snapshot | None) -> None:
        if snap is None or snap.kind != "bpe":
            return  # another kind's history: this pane is hidden then
        cells = []
        replayed = snap.replay_total
        for row in snap.history:
            r = row.record
            step = (f"↺{r.step}", "italic") if r.step <= replayed else str(r.step)
            if r.step == replayed:
                step = (f"↺{r.step}", "bold italic underline")  # where the replay ends
            counted = (f"{r.count:,}", f"{r.replacements:,}", f"{r.length:,}", f"{row.compression:.3f}")
            if not r.length:  # a loaded model's merges (inspect mode): no training run counted them
                counted = ("–", "–", "–", "–")
            cells.append((step, (visible(row.text), "bold"), *counted, f"{r.pair[0]}+{r.pair[1]}", str(r.new_id)))
        self.set_rows(cells, follow=True)
        replay = f" · ↺ first {min(snap.steps, replayed):,} of {replayed:,} replayed" if replayed else ""
        self.border_subtitle = plural(snap.steps, "merge") + replay

    @property
    def row_count(self) -> int:
        return len(self.rows)

    def action_rewind(self) -> None:
        """Ask to go back to the step under the cursor (click a row, or move to it)."""
        if self.rows and self.snapshot is not None:
            record = self.snapshot.history[self.cursor].record
            self.post_message(RewindTo(record.step))
