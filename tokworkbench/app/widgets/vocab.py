"""The vocabulary browser: every token of the current model, searched by text, id or hex bytes and
sorted by id, length or count. The core (core/inspection/vocab.py) searches and sorts; this pane
only draws the rows it returns and says which token is under the cursor."""

from time import monotonic

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.reactive import var
from textual.widgets import Input

from tokworkbench.app.labels import plural
from tokworkbench.app.messages import CountTokens, TokenSelected
from tokworkbench.app.widgets.rowsview import RowsView
from tokworkbench.app.widgets.steady_input import SteadyInput
from tokworkbench.core.inspection.escape import hex_bytes, visible
from tokworkbench.core.inspection.vocab import ORDERS, TokenCounts, VocabPage, search, vocab_of
from tokworkbench.core.session.snapshot import Snapshot

SHOWN = 500  # rows drawn; the subtitle says how many match in all
FILL_EVERY = 0.5  # seconds: while training runs, the vocabulary (a new model each frame) is rebuilt this often
ORDER_WORDS = {"id": "id", "length": "length (longest first)", "count": "count in the corpus (most first)"}


class VocabPanel(Vertical):
    DEFAULT_CSS = """
    VocabPanel #vocab-search {
        height: 1;
        border: none;
        padding: 0 1;
        background: $boost;
    }
    VocabPanel #vocab-table {
        height: 1fr;
    }
    """
    BINDINGS = [Binding("ctrl+r", "cycle_order", "Sort", tooltip="In the vocabulary: sort by id, length, or count")]

    snapshot: var[Snapshot | None] = var(None, always_update=True)
    """The session as the core last reported it: its `model` is the vocabulary shown."""
    token_counts: var[TokenCounts | None] = var(None)
    """Tokens per id over the whole corpus, once counted (sorting by count asks for them)."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.order = "id"
        self.page: VocabPage | None = None
        self._drawn_key: tuple | None = None
        self._stale = True
        self._announced: int | None = None
        self._filled_at = 0.0
        self._waiting = False

    def compose(self) -> ComposeResult:
        yield SteadyInput(placeholder="search: text · #id or #from-to · hex x:e6 97", id="vocab-search",
                          hands_back=True)
        yield RowsView([("id", 7, "right"), ("token", 20, "left"), ("len", 4, "right"), ("merge", 7, "right"),
                        ("from", 22, "left"), ("count", 9, "right"), ("bytes", 24, "left")], id="vocab-table")

    @property
    def query(self) -> str:
        return self.query_one("#vocab-search", Input).value

    def focus_search(self) -> None:
        self.screen.set_focus(self.query_one("#vocab-search", Input))

    def watch_snapshot(self) -> None:
        if not self.region.area:  # off screen (another tab), it catches up when shown
            self._stale = True
        elif monotonic() - self._filled_at >= FILL_EVERY:
            self._fill()
        elif not self._waiting:  # a run sends snapshots faster: rebuild at most every FILL_EVERY
            self._waiting = True
            self.set_timer(FILL_EVERY, self._catch_up)

    def _catch_up(self) -> None:
        self._waiting = False
        if self.region.area:
            self._fill()
        else:
            self._stale = True

    def watch_token_counts(self) -> None:
        if self.order == "count" or self.region.area:
            self._fill(force=True)

    def on_show(self) -> None:
        if self._stale:
            self._fill()

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        self._fill()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        event.input.hand_back(self.query_one("#vocab-table"))  # the keys typed behind the enter follow

    def action_cycle_order(self) -> None:
        self.order = ORDERS[(ORDERS.index(self.order) + 1) % len(ORDERS)]
        self._fill(force=True)

    def set_order(self, order: str) -> None:
        self.order = order
        self._fill(force=True)

    def _counts(self) -> TokenCounts | None:
        """Counts for the model shown; asks for a count when there are none, or when training
        has moved on since and the order needs them."""
        counts, snap = self.token_counts, self.snapshot
        if self.order == "count" and (counts is None or counts.steps != snap.steps):
            self.post_message(CountTokens())
        return counts

    def _fill(self, force: bool = False) -> None:
        snap = self.snapshot
        if snap is None:
            return
        self._stale = False
        self._filled_at = monotonic()
        counts = self._counts()
        key = (id(snap.model), snap.steps, self.query, self.order, id(counts))
        if key == self._drawn_key and not force:
            return
        self._drawn_key = key
        vocab = vocab_of(snap.model)
        order = self.order if self.order != "count" or counts is not None else "id"
        self.page = page = search(vocab, self.query, order, counts.counts if counts is not None else None, SHOWN)
        cells = []
        for info in page.rows:
            made = "special" if info.special else (f"{info.step:,}" if info.step else "base")
            parents = (f"{visible(info.parent_texts[0])} + {visible(info.parent_texts[1])}"
                       if info.parents else "")
            cells.append((str(info.id), (visible(info.text), "bold"), str(len(info.data)), made, parents,
                          f"{info.count:,}" if info.count is not None else "–", (hex_bytes(info.data), "dim")))
        self.query_one("#vocab-table", RowsView).set_rows(cells, cursor=0)
        self.border_subtitle = self._subtitle(page, counts, snap)
        self._announce()

    def _subtitle(self, page: VocabPage, counts: TokenCounts | None, snap: Snapshot) -> str:
        what = f"{min(len(page.rows), page.matched):,} of {plural(page.matched, 'token')}"
        if self.query:
            what += " matching"
        if self.order == "count" and counts is None:
            return f"{what} · sorted by id while counting the corpus… · ctrl+r sort"
        where = ""
        if counts is not None:
            where = " · counts: whole corpus" + (" (before the latest merges)" if counts.steps != snap.steps else "")
        return f"{what} · sorted by {ORDER_WORDS[page.order]}{where} · ctrl+r sort"

    def on_rows_view_highlighted(self, event: RowsView.Highlighted) -> None:
        event.stop()
        self._announce()

    def selected(self) -> int | None:
        """The id under the table's cursor."""
        if not self.page or not self.page.rows:
            return None
        table = self.query_one("#vocab-table", RowsView)
        return self.page.rows[min(table.cursor, len(self.page.rows) - 1)].id

    def _announce(self) -> None:
        tid = self.selected()
        if tid is not None and tid != self._announced and self.query_one("#vocab-table").has_focus:
            self._announced = tid
            self.post_message(TokenSelected(tid))

    def on_descendant_focus(self) -> None:
        self._announced = None
        self._announce()
