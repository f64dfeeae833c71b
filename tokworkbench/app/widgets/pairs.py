"""The live pair-frequency table: the best pairs in selection order, the next merge marked."""

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.reactive import reactive
from textual.widgets import Input

from ...core.bpe.trainer import PairRow
from ..messages import PairSelected
from ...core.inspection.escape import hex_bytes
from ..render import visible
from .rowsview import RowsView

SHOWN = 60


class PairsPanel(Vertical):
    BINDINGS = [Binding("escape", "clear_filter", "Clear filter", show=False)]

    rows: reactive[list[PairRow]] = reactive(list, always_update=True)
    """The best pairs from the core, best first; the first merges next."""
    filter: reactive[str] = reactive("")
    """Show only pairs whose merged text contains this."""
    next_pair: tuple[int, int] | None = None
    """The pair the next step merges (marked ▶); set before `rows`."""
    note: str = ""
    """Said under the table, e.g. which replayed merge comes next."""

    def compose(self) -> ComposeResult:
        yield Input(placeholder="filter pairs by merged text…", id="pair-filter")
        yield RowsView(
            [("#", 4, "left"), ("left", 14, "left"), ("right", 14, "left"), ("merged", 18, "left"),
             ("count", 9, "right"), ("bytes", 24, "left")],
            id="pair-table",
        )

    def on_mount(self) -> None:
        self.border_title = "Pair frequencies"
        self.query_one("#pair-filter").display = False
        self._shown: list[PairRow] = []

    @property
    def selected_pair(self) -> tuple[int, int] | None:
        table = self.query_one("#pair-table", RowsView)
        if not self._shown:
            return None
        row = self._shown[table.cursor]
        return row.left, row.right

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
        """Rebuild the rows; the cursor keeps its place without announcing a new selection
        (the app reads `selected_pair` after setting rows)."""
        shown, cells = [], []
        for rank, row in enumerate(self.rows, 1):
            if self.filter and self.filter not in row.merged_text:
                continue
            shown.append(row)
            is_next = (row.left, row.right) == self.next_pair
            cells.append((
                ("▶", "bold") if is_next else str(rank), visible(row.left_text), visible(row.right_text),
                (visible(row.merged_text), "bold"), f"{row.count:,}", (hex_bytes(row.merged_bytes), "dim"),
            ))
            if len(shown) >= SHOWN:
                break
        self._shown = shown
        self.query_one("#pair-table", RowsView).set_rows(cells)
        n = len(self.rows)
        self.border_subtitle = self.note + f"{len(shown)} of {n}{'+' if n >= 400 else ''} pairs" + (
            f" matching {self.filter!r}" if self.filter else "")

    def on_rows_view_highlighted(self, event: RowsView.Highlighted) -> None:
        event.stop()
        self.post_message(PairSelected(self.selected_pair))
