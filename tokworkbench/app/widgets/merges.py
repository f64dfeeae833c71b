"""The merge history: newest at the bottom, followed as training runs."""

from textual.widgets import DataTable

from ..render import cell


class MergesPanel(DataTable):
    def on_mount(self) -> None:
        self.border_title = "Merges"
        self.cursor_type = "row"
        self.zebra_stripes = True
        self.add_columns("step", "pair", "id", "merged", "count", "repl.", "tokens", "ratio")
        self._steps: list[int] = []

    def show(self, rows: list[tuple], total: int) -> None:
        """`rows` are the newest merges, oldest first; keep only those, adding and removing rows."""
        wanted = [r[0] for r in rows]
        keep = set(wanted)
        for step in [s for s in self._steps if s not in keep]:
            self.remove_row(str(step))
        have = set(self._steps) & keep
        self._steps = [s for s in self._steps if s in keep]
        for row in rows:
            if row[0] in have:
                continue
            step, pair, new_id, text, count, reps, length, ratio = row
            self.add_row(str(step), pair, str(new_id), cell(text, "bold"), f"{count:,}", f"{reps:,}",
                         f"{length:,}", f"{ratio:.3f}", key=str(step))
            self._steps.append(step)
        if self._steps:
            self.move_cursor(row=len(self._steps) - 1, animate=False)
        self.border_subtitle = f"{total:,} merges"
