"""The Unigram piece table: each piece's score, frequency and what removing it would cost; the
pieces the next round removes are marked, as the next merge is in the pair table."""

from dataclasses import replace

from textual.app import ComposeResult
from textual.reactive import var
from textual.widgets import Input

from tokworkbench.app.kind_views import view_of
from tokworkbench.app.labels import plural
from tokworkbench.app.messages import PairFilterChanged, PieceSelected
from tokworkbench.app.widgets.panel import Panel
from tokworkbench.app.widgets.rowsview import RowsView
from tokworkbench.app.widgets.steady_input import SteadyInput
from tokworkbench.core.inspection.escape import visible
from tokworkbench.core.inspection.vocab import TokenCounts
from tokworkbench.core.session.snapshot import NEXT_ROWS, Snapshot
from tokworkbench.core.unigram.rows import PieceRow

SHOWN = NEXT_ROWS  # the kind view's rows_shown: every row the snapshot ranks
REMOVED = "✗"  # the mark of a piece the next round removes (a mark, not only a colour)


def piece_cells(rank: int, row: PieceRow) -> tuple:
    """One table row: a removed piece is marked ✗ and struck through; a single character,
    which is never removed, has no loss increase."""
    gone = row.removed_next
    loss = "—" if row.loss_increase is None else f"{row.loss_increase:,.2f}"
    return (
        (REMOVED, "bold") if gone else str(rank),
        (visible(row.piece), "bold strike" if gone else "bold"),
        (loss, "bold" if gone else ("dim" if row.loss_increase is None else "")),
        f"{row.score:.3f}",
        f"{row.freq:,.1f}" if row.freq != int(row.freq) else f"{int(row.freq):,}",
        (str(row.id), "dim"),
    )


class PiecesPanel(Panel):
    DEFAULT_CSS = """
    PiecesPanel #piece-filter {
        height: 1;
        border: none;
        padding: 0 1;
        background: $boost;
    }
    PiecesPanel #piece-table {
        height: 1fr;
    }
    """
    snapshot: var[Snapshot | None] = var(None, always_update=True)
    """The session as the core last reported it: its `next_rows` are the pieces."""
    token_counts: var[TokenCounts | None] = var(None)
    """Tokens per id over the corpus: an inspected model's pieces have no training frequency, so
    their freq column shows how often each occurs in the corpus's segmentation instead."""
    inspected = False

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._shown: list[PieceRow] = []
        self._selected: int | None = None

    def compose(self) -> ComposeResult:
        yield SteadyInput(placeholder="filter pieces by text…", id="piece-filter", hands_back=True)
        yield RowsView(  # most telling first: a narrow pane still shows what removing would cost
            [("#", 3, "right"), ("piece", 12, "left"), ("Δloss", 10, "right"), ("score", 8, "right"),
             ("freq", 9, "right"), ("id", 6, "right")],
            fit=(1, 6, 2), id="piece-table",  # the piece gives up width so Δloss stays in view
        )

    def on_mount(self) -> None:
        self.border_title = "Pieces"
        self.query_one("#piece-filter").display = False

    @property
    def selected_piece(self) -> int | None:
        if not self._shown:
            return None
        return self._shown[self.query_one("#piece-table", RowsView).cursor].id

    @property
    def table(self) -> RowsView:
        return self.query_one("#piece-table", RowsView)

    def focus_filter(self) -> None:
        box = self.query_one("#piece-filter", Input)
        box.display = True
        self.screen.set_focus(box)

    def clear_filter(self) -> None:
        box = self.query_one("#piece-filter", Input)
        box.value = ""
        box.display = False
        self.screen.set_focus(self.table)

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        self.post_message(PairFilterChanged(event.value))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        event.input.hand_back(self.table)  # the keys typed behind the enter follow

    def watch_snapshot(self, snap: Snapshot | None) -> None:
        if snap is None or view_of(snap.kind).next_pane != self.id:
            return
        rows = [r for r in snap.next_rows if isinstance(r, PieceRow)][:SHOWN]
        counts = self.token_counts
        if self.inspected and counts is not None and counts.steps == snap.steps:
            rows = [replace(r, freq=int(counts.counts[r.id])) if 0 <= r.id < len(counts.counts) else r for r in rows]
        self._shown = rows
        self.table.set_rows([piece_cells(rank, row) for rank, row in enumerate(rows, 1)])
        # the round's whole list (the table holds the first few hundred rows, or those matching)
        removed = len(snap.next_step) if isinstance(snap.next_step, tuple) else sum(r.removed_next for r in rows)
        query = self.query_one("#piece-filter", Input).value
        matching = f" matching {query}" if query else ""
        nxt = f" · {REMOVED} {removed:,} removed next" if removed else (
            " · nothing left to remove" if not snap.can_step else "")
        self.set_subtitle(f"{len(rows):,} of {plural(snap.rows_in_all, 'piece')}{matching}{nxt}")
        self._announce()

    def watch_token_counts(self) -> None:
        if self.inspected:
            self.watch_snapshot(self.snapshot)

    def _announce(self, moved: bool = False) -> None:
        piece = self.selected_piece
        if piece != self._selected:
            self._selected = piece
            self.post_message(PieceSelected(piece, moved))

    def on_rows_view_highlighted(self, event: RowsView.Highlighted) -> None:
        event.stop()
        self._announce(moved=True)
