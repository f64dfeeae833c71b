"""The Unigram rounds history: vocabulary size, corpus loss and the pieces each round removed;
round 0 is the seed vocabulary. Enter on a row undoes back to that round. Every round is in it,
as every merge is in the merge history."""

from textual.binding import Binding

from tokworkbench.app.labels import plural
from tokworkbench.app.messages import RewindTo
from tokworkbench.app.widgets.merges import HistoryTable
from tokworkbench.core.inspection.escape import visible
from tokworkbench.core.session.snapshot import Snapshot
from tokworkbench.core.unigram.rows import RoundRow

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


class RoundsPanel(HistoryTable):
    BINDINGS = [Binding("enter", "rewind", "Rewind here",
                        tooltip="In the rounds: undo back to the selected round, exactly")]

    def __init__(self, **kwargs):
        super().__init__(
            [("round", 5, "right"), ("vocab", 7, "right"), ("loss", 12, "right"), ("change", 10, "right"),
             ("removed", 7, "right"), ("pieces removed", 200, "left")],
            **kwargs,
        )

    def on_mount(self) -> None:
        self.border_title = "Rounds"

    def cells(self, rows: list, start: int) -> list[tuple]:
        """A page's first row has no change shown unless it is the seed's (its previous round
        is on another page)."""
        return [round_cells(r, rows[i - 1] if i else None) for i, r in enumerate(rows)]

    def subtitle(self, snap: Snapshot) -> None:
        self.border_subtitle = plural(snap.steps, "round")

    def action_rewind(self) -> None:
        if self.total:
            self.post_message(RewindTo(self.step_at(self.cursor)))
