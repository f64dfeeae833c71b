"""The Unigram rounds history: vocabulary size, corpus loss and the pieces each round removed;
round 0 is the seed vocabulary. Enter on a row undoes back to that round."""

from textual.binding import Binding
from textual.reactive import var

from ...core.inspection.escape import visible
from ...core.snapshot import Snapshot
from ...core.unigram.rows import RoundRow
from ..labels import plural
from ..messages import RewindTo
from .rowsview import RowsView

REMOVED_SHOWN = 12  # pieces named in a row; the rest are counted


def round_cells(row: RoundRow, previous: RoundRow | None) -> tuple:
    change = "" if previous is None else f"{row.loss - previous.loss:+,.1f}"
    names = " ".join(visible(p) for p in row.removed[:REMOVED_SHOWN])
    if len(row.removed) > REMOVED_SHOWN:
        names += f" … +{len(row.removed) - REMOVED_SHOWN:,}"
    return (
        ("seed", "italic") if row.round == 0 else str(row.round),
        f"{row.vocab_size:,}",
        (f"{row.loss:,.2f}", "bold"),
        (change, "dim"),
        f"{len(row.removed):,}" if row.round else "",
        names,
    )


class RoundsPanel(RowsView):
    BINDINGS = [Binding("enter", "rewind", "Rewind here",
                        tooltip="In the rounds: undo back to the selected round, exactly")]

    snapshot: var[Snapshot | None] = var(None, always_update=True)
    """The session as the core last reported it: its `history` holds the newest rounds."""

    def __init__(self, **kwargs):
        super().__init__(
            [("round", 5, "right"), ("vocab", 7, "right"), ("loss", 12, "right"), ("change", 10, "right"),
             ("removed", 7, "right"), ("pieces removed", 200, "left")],
            **kwargs,
        )
        self.history: list[RoundRow] = []

    def on_mount(self) -> None:
        self.border_title = "Rounds"

    def watch_snapshot(self, snap: Snapshot | None) -> None:
        if snap is None or snap.kind != "unigram":
            return
        self.history = [r for r in snap.history if isinstance(r, RoundRow)]
        cells = [round_cells(r, self.history[i - 1] if i else None) for i, r in enumerate(self.history)]
        self.set_rows(cells, follow=True)
        self.border_subtitle = plural(snap.steps, "round")

    def action_rewind(self) -> None:
        if self.history:
            self.post_message(RewindTo(self.history[min(self.cursor, len(self.history) - 1)].round))
