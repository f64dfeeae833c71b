"""The live pair-frequency table: the best pairs in selection order, the next merge marked."""

from textual.app import ComposeResult
from textual.reactive import var
from textual.widgets import Input

from tokworkbench.app.kind_views import BPE_VIEW, view_of
from tokworkbench.app.labels import plural
from tokworkbench.app.messages import PairFilterChanged, PairSelected
from tokworkbench.app.widgets.panel import Panel
from tokworkbench.app.widgets.rowsview import RowsView
from tokworkbench.app.widgets.steady_input import SteadyInput
from tokworkbench.core.inspection.escape import hex_bytes, visible
from tokworkbench.core.models.rows import PairRow
from tokworkbench.core.session.snapshot import Snapshot

SHOWN = BPE_VIEW.rows_shown


class PairsPanel(Panel):
    DEFAULT_CSS = """
    PairsPanel #pair-filter {
        height: 1;  /* one line: on a short screen the table keeps its rows */
        border: none;
        padding: 0 1;
        background: $boost;
    }
    PairsPanel #pair-table {
        height: 1fr;
    }
    """
    snapshot: var[Snapshot | None] = var(None, always_update=True)
    """The session as the core last reported it: its `next_rows` are the best pairs."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._shown: list[PairRow] = []
        self._selected: tuple[int, int] | None = None
        self._held: dict[tuple, tuple] = {}  # a shown row's values -> its cells after the rank

    def compose(self) -> ComposeResult:
        yield SteadyInput(placeholder="filter pairs by merged text…", id="pair-filter", hands_back=True)
        yield RowsView(
            [("#", 4, "left"), ("merged", 18, "left"), ("count", 9, "right"), ("left", 14, "left"),
             ("right", 14, "left"), ("bytes", 24, "left")],  # most telling first: a narrow pane still shows them
            fit=(1, 6, 2), id="pair-table",  # merged gives up width so the count stays in view
        )

    def on_mount(self) -> None:
        self.border_title = "Pair frequencies"
        self.query_one("#pair-filter").display = False

    @property
    def selected_pair(self) -> tuple[int, int] | None:
        if not self._shown:
            return None
        row = self._shown[self.query_one("#pair-table", RowsView).cursor]
        return row.left, row.right

    def focus_filter(self) -> None:
        box = self.query_one("#pair-filter", Input)
        box.display = True
        self.screen.set_focus(box)  # now, not later: keys typed right after / must land in the box

    def clear_filter(self) -> None:
        box = self.query_one("#pair-filter", Input)
        box.value = ""
        box.display = False
        self.screen.set_focus(self.query_one("#pair-table"))

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        self.post_message(PairFilterChanged(event.value))  # the core searches the whole table

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        event.input.hand_back(self.query_one("#pair-table"))  # the keys typed behind the enter follow

    def watch_snapshot(self) -> None:
        self._fill()

    def _fill(self) -> None:
        """Rebuild the rows; the cursor keeps its place, and the selection is announced only
        when the pair under it changed."""
        snap = self.snapshot
        if snap is None or view_of(snap.kind).next_pane != self.id:
            return  # another kind's rows: this pane is hidden then
        query = self.query_one("#pair-filter", Input).value
        shown, cells, held, kept = [], [], self._held, {}
        for rank, row in enumerate(snap.next_rows, 1):
            shown.append(row)
            # a merge moves most rows a rank: their other cells are kept (held by the row's values)
            key = (row.left, row.right, row.count, row.merged_bytes, row.left_text, row.right_text)
            rest = held.get(key)
            if rest is None:
                rest = ((visible(row.merged_text), "bold"), f"{row.count:,}", visible(row.left_text),
                        visible(row.right_text), (hex_bytes(row.merged_bytes), "dim"))
            kept[key] = rest
            is_next = (row.left, row.right) == snap.next_step
            cells.append((("▶", "bold") if is_next else str(rank), *rest))
            if len(shown) >= SHOWN:
                break
        self._held = kept
        self._shown = shown
        self.query_one("#pair-table", RowsView).set_rows(cells)
        note = (f"replay: next {visible(snap.next_text)}, {snap.replaying:,} to go · " if snap.replaying else "")
        matching = f" matching {query} (text or hex bytes)" if query else ""
        self.set_subtitle(note + f"{len(shown)} of {plural(snap.rows_in_all, 'pair')}{matching}")
        self._announce()

    def _announce(self) -> None:
        pair = self.selected_pair
        if pair != self._selected:
            self._selected = pair
            self.post_message(PairSelected(pair))

    def on_rows_view_highlighted(self, event: RowsView.Highlighted) -> None:
        event.stop()
        self._announce()
