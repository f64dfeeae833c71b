"""The merge history: newest at the bottom, followed as training runs."""

from .rowsview import RowsView


class MergesPanel(RowsView):
    def __init__(self, **kwargs):
        super().__init__(
            [("step", 6, "right"), ("pair", 13, "left"), ("id", 6, "right"), ("merged", 18, "left"),
             ("count", 9, "right"), ("repl.", 9, "right"), ("tokens", 11, "right"), ("ratio", 6, "right")],
            **kwargs,
        )

    def on_mount(self) -> None:
        self.border_title = "Merges"

    def show(self, rows: list[tuple], total: int) -> None:
        """`rows` are the newest merges, oldest first (rendered by the snapshot)."""
        cells = [
            (str(step), pair, str(new_id), (text, "bold"), f"{count:,}", f"{reps:,}", f"{length:,}", f"{ratio:.3f}")
            for step, pair, new_id, text, count, reps, length, ratio in rows
        ]
        self.set_rows(cells, follow=True)
        self.border_subtitle = f"{total:,} merges"

    @property
    def row_count(self) -> int:
        return len(self.rows)
