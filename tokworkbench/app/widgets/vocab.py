"""The vocabulary browser: every token of the current model, searched by text, id or hex bytes and
sorted by id, length or count, each with its kind (byte piece, continuation, whole chunk only…),
filtered by kind (`is:KIND` in the search, or ctrl+o) and by health flag (ctrl+y: the tokens that
do not come back, cannot be reached, are partial UTF-8…). The core (core/inspection/vocab.py,
health.py) searches, sorts and checks; the health check runs in a worker, never on the UI's
thread; this pane only draws the rows it returns and says which token is under the cursor."""

from time import monotonic

import numpy as np
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.reactive import var
from textual.widgets import Input, Static

from tokworkbench.app.labels import plural
from tokworkbench.app.messages import CountTokens, TokenSelected
from tokworkbench.app.widgets.laidout import WhenLaidOut
from tokworkbench.app.widgets.panel import Panel
from tokworkbench.app.widgets.rowsview import RowsView
from tokworkbench.app.widgets.steady_input import SteadyInput
from tokworkbench.core.errors import QueryError
from tokworkbench.core.inspection.escape import hex_bytes, visible
from tokworkbench.core.inspection.health import FLAGS, HealthReport, health
from tokworkbench.core.inspection.vocab import (
    KIND_CODES,
    ORDERS,
    TokenCounts,
    Vocab,
    VocabPage,
    kinds_present,
    query_note,
    search,
    vocab_of,
)
from tokworkbench.core.models.tokenkinds import TokenKind
from tokworkbench.core.session.snapshot import Snapshot

SHOWN = 500  # rows drawn; the subtitle says how many match in all
FILL_EVERY = 0.5  # seconds: while training runs, the vocabulary (a new model each frame) is rebuilt this often
ORDER_WORDS = {"id": "id", "length": "length (longest first)", "count": "count in the corpus (most first)"}


class VocabPanel(Panel):
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
    VocabPanel #vocab-status {
        height: 1;
        padding: 0 1;
        color: $text-muted;
    }
    """
    BINDINGS = [
        Binding("ctrl+r", "cycle_order", "Sort", tooltip="In the vocabulary: sort by id, length, or count"),
        Binding("ctrl+o", "cycle_kind", "Kind", tooltip="In the vocabulary: only tokens of one kind"),
        Binding("ctrl+y", "cycle_health", "Health", tooltip="In the vocabulary: only the tokens one health check flags"),
    ]

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
        self._laid_out = WhenLaidOut(self, self.on_show)
        self._announced: int | None = None
        self._filled_at = 0.0
        self._waiting = False
        self.kind_filter: TokenKind | None = None
        self.health_flag: str | None = None
        self.report: tuple[object, HealthReport] | None = None  # (the model it checked, its report)
        self._checking: object | None = None  # the model a health worker is checking
        self._query_error: str | None = None

    def compose(self) -> ComposeResult:
        yield SteadyInput(placeholder="search: text · #id or #from-to · hex x:e6 97", id="vocab-search",
                          hands_back=True)
        yield RowsView([("id", 7, "right"), ("token", 20, "left"), ("len", 4, "right"), ("kind", 12, "left"),
                        ("merge", 7, "right"),
                        ("from", 22, "left"), ("count", 9, "right"), ("bytes", 24, "left")], id="vocab-table")
        yield Static(id="vocab-status")  # the panel has no border: its subtitle is drawn here

    @property
    def query(self) -> str:
        return self.query_one("#vocab-search", Input).value

    def focus_search(self) -> None:
        self.screen.set_focus(self.query_one("#vocab-search", Input))

    def watch_snapshot(self) -> None:
        if not self.region.area:  # off screen (another tab), it catches up when shown
            self._stale = True
            self._laid_out.wait()
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
            self._laid_out.wait()

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

    def action_cycle_kind(self) -> None:
        """None, then each kind this vocabulary has, then None again."""
        snap = self.snapshot
        kinds: list[TokenKind | None] = [None] + (kinds_present(vocab_of(snap.model)) if snap else [])
        at = kinds.index(self.kind_filter) if self.kind_filter in kinds else 0
        self.kind_filter = kinds[(at + 1) % len(kinds)]
        self._fill(force=True)

    def action_cycle_health(self) -> None:
        flags: list[str | None] = [None, *FLAGS]
        self.health_flag = flags[(flags.index(self.health_flag) + 1) % len(flags)]
        self._fill(force=True)

    def set_filters(self, kind: TokenKind | None = None, flag: str | None = None) -> None:
        self.kind_filter, self.health_flag = kind, flag
        self._fill(force=True)

    def _report(self, model) -> HealthReport | None:
        """The health of `model` once checked; starts the check (a worker) when it is not."""
        if self.report is not None and self.report[0] is model:
            return self.report[1]
        if self._checking is not model:
            self._checking = model
            self._check(model)
        return None

    @work(thread=True, exclusive=True, exit_on_error=False, group="health", description="Checking the vocabulary")
    def _check(self, model) -> None:
        report = health(model)
        self.app.call_from_thread(self._checked, model, report)

    def _checked(self, model, report: HealthReport) -> None:
        self.report = (model, report)
        if self._checking is model:
            self._checking = None
        if self.health_flag is not None:
            self._fill(force=True)

    def _keep(self, vocab: Vocab, counts: TokenCounts | None) -> tuple[np.ndarray | None, str]:
        """The rows the kind and health filters keep (None: all), and what the subtitle says of them."""
        keep, said = None, []
        if self.kind_filter is not None:
            keep = vocab.kinds == KIND_CODES.index(self.kind_filter)
            said.append(f"kind {self.kind_filter.label}")
        flag = self.health_flag
        if flag == "unseen":
            if counts is None:
                self.post_message(CountTokens())
                return keep, " · ".join(said + ["unseen: counting the corpus…"])
            padded = np.zeros(int(vocab.ids.max()) + 1, dtype=np.int64)
            padded[: min(len(counts.counts), len(padded))] = counts.counts[: len(padded)]
            flagged = (padded[vocab.ids] == 0) & ~vocab.special
            keep = flagged if keep is None else keep & flagged
            said.append("health: unseen in the corpus")
        elif flag is not None:
            report = self._report(self.snapshot.model)
            if report is None:
                return keep, " · ".join(said + [f"health {flag}: checking…"])
            flagged = np.isin(vocab.ids, np.fromiter(report.flagged(flag), dtype=np.int64))
            keep = flagged if keep is None else keep & flagged
            said.append(f"health: {flag}")
        return keep, " · ".join(said)

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
        key = (id(snap.model), snap.steps, self.query, self.order, id(counts), self.kind_filter, self.health_flag)
        if key == self._drawn_key and not force:
            return
        self._drawn_key = key
        vocab = vocab_of(snap.model)
        order = self.order if self.order != "count" or counts is not None else "id"
        keep, filtered = self._keep(vocab, counts if self.health_flag == "unseen" else None)
        try:
            page = search(vocab, self.query, order, counts.counts if counts is not None else None, SHOWN, keep)
            self._query_error = None
        except QueryError as exc:  # is:bogus while typing: said, and nothing matches
            page = VocabPage([], 0, order)
            self._query_error = str(exc)
        self.page = page
        cells = []
        for info in page.rows:
            made = "special" if info.special else (f"{info.step:,}" if info.step else "base")
            parents = (f"{visible(info.parent_texts[0])} + {visible(info.parent_texts[1])}"
                       if info.parents else "")
            cells.append((str(info.id), (visible(info.text), "bold"), str(len(info.data)), (info.kind.label, "italic"),
                          made, parents,
                          f"{info.count:,}" if info.count is not None else "–", (hex_bytes(info.data), "dim")))
        self.query_one("#vocab-table", RowsView).set_rows(cells, cursor=0)
        self.set_subtitle(self._subtitle(page, counts, snap, filtered))
        self.query_one("#vocab-status", Static).update(Text(self.subtitle_text))
        self._announce()

    def _subtitle(self, page: VocabPage, counts: TokenCounts | None, snap: Snapshot, filtered: str = "") -> str:
        if self._query_error:
            return self._query_error
        what = f"{min(len(page.rows), page.matched):,} of {plural(page.matched, 'token')}"
        if self.query:
            what += " matching"
            note = query_note(self.query)
            if note:
                what += f" ({self.query.strip()}: {note})"
        if filtered:
            what += f" · {filtered}"
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
