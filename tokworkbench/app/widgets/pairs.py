"""The live pair-frequency table: the best pairs in selection order, the next merge marked."""

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.reactive import reactive
from textual.widgets import DataTable, Input

from ...core.trainer import PairRow
from ..messages import PairSelected
from ..render import cell, hex_bytes, visible

SHOWN = 60


class PairsPanel(Vertical):
    BINDINGS = [Binding("escape", "clear_filter", "Clear filter", show=False)]

    rows: reactive[list[PairRow]] = reactive(list, always_update=True)
    """The best pairs from the core, best first; the first merges next."""
    filter: reactive[str] = reactive("")
    """Show only pairs whose merged text contains this."""

    def compose(self) -> ComposeResult:
        yield Input(placeholder="filter pairs by merged text…", id="pair-filter")
        table = DataTable(id="pair-table", cursor_type="row", zebra_stripes=True)
        table.add_columns("#", "left", "right", "merged", "count", "bytes")
        yield table

    def on_mount(self) -> None:
        self.border_title = "Pair frequencies"
        self.query_one("#pair-filter").display = False

    def focus_filter(self) -> None:
        box = self.query_one("#pair-filter", Input)
        box.display = True
        box.focus()

    def action_clear_filter(self) -> None:
        box = self.query_one("#pair-filter", Input)
        box.value = ""
        box.display = False
        self.query_one("#pair-table").focus()

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        self.filter = event.value

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.query_one("#pair-table").focus()

    def watch_rows(self) -> None:
        self._fill()

    def watch_filter(self) -> None:
        self._fill()

    def _fill(self) -> None:
        table = self.query_one("#pair-table", DataTable)
        cursor = table.cursor_row
        table.clear()
        shown = 0
        for rank, row in enumerate(self.rows, 1):
            if self.filter and self.filter not in row.merged_text:
                continue
            mark = "▶" if rank == 1 else str(rank)
            table.add_row(
                cell(mark, "bold" if rank == 1 else ""), cell(visible(row.left_text)), cell(visible(row.right_text)),
                cell(visible(row.merged_text), "bold"), Text(f"{row.count:,}", justify="right"),
                cell(hex_bytes(row.merged_bytes), "dim"), key=f"{row.left},{row.right}",
            )
            shown += 1
            if shown >= SHOWN:
                break
        if shown:
            table.move_cursor(row=min(cursor, shown - 1), animate=False)
        n = len(self.rows)
        self.border_subtitle = f"{shown} of {n}{'+' if n >= 400 else ''} pairs" + (f" matching {self.filter!r}" if self.filter else "")

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        event.stop()
        key = event.row_key.value if event.row_key is not None else None
        if key:
            left, right = map(int, key.split(","))
            self.post_message(PairSelected((left, right)))
