"""The workbench's one screen: it owns the session, the keys, the workers and the dialogs.

A key press runs an action here; the action calls a session verb and takes a new snapshot;
the panes are bound to `snapshot` (and to the selection and the encode text) and redraw
themselves. Workers load corpora in a thread and train in a forked child; they post messages,
never touch a widget.
"""

from dataclasses import replace
from pathlib import Path

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.reactive import var
from textual.screen import Screen
from textual.widgets import Header, Input, Static, TabbedContent, TabPane
from textual.worker import Worker, WorkerState, get_current_worker

from tokworkbench.app import messages as msg
from tokworkbench.app.actions import ACTIONS, Need, Situation, lookup
from tokworkbench.app.afterrun import KeysAfterRun
from tokworkbench.app.dialogs import HelpDialog, PromptDialog
from tokworkbench.app.flows.changes import ChangeFlows
from tokworkbench.app.flows.copying import copied_note, copied_text, what_to_copy
from tokworkbench.app.flows.reads import ReadFlows
from tokworkbench.app.flows.run import TrainingRun
from tokworkbench.app.flows.ui import Folders, Ui
from tokworkbench.app.flows.writes import WriteFlows
from tokworkbench.app.keyhelp import help_sections
from tokworkbench.app.kind_views import RIGHT_PANES, view_of
from tokworkbench.app.labels import HELP_NOTES, describe_inspection, describe_settings, nothing_left, plural, step_noun
from tokworkbench.app.loading import ModelLoader, build_inspection, build_session, loads_quickly, throttled
from tokworkbench.app.widgets.arena import ArenaPanel, parse_names
from tokworkbench.app.widgets.batches import BatchesPanel, line_documents
from tokworkbench.app.widgets.bytes_view import BytesPanel
from tokworkbench.app.widgets.charts import ChartsPanel
from tokworkbench.app.widgets.compare import ComparePanel
from tokworkbench.app.widgets.corpus import CorpusPane
from tokworkbench.app.widgets.encode import EncodePanel
from tokworkbench.app.widgets.keys_footer import KeysFooter
from tokworkbench.app.widgets.lattice import LatticePanel, LatticeView
from tokworkbench.app.widgets.merges import HistoryTable, MergesPanel
from tokworkbench.app.widgets.mergetree import MergeTreeDialog, tree_for
from tokworkbench.app.widgets.pairs import PairsPanel
from tokworkbench.app.widgets.pieces import PiecesPanel
from tokworkbench.app.widgets.progress import ProgressRow
from tokworkbench.app.widgets.rounds import RoundsPanel
from tokworkbench.app.widgets.token_details import TokenDetails
from tokworkbench.app.widgets.vocab import VocabPanel
from tokworkbench.core.errors import TokWorkbenchError
from tokworkbench.core.heap import settle
from tokworkbench.core.inspection.escape import printable
from tokworkbench.core.inspection.vocab import TokenCounts, count_tokens, vocab_of
from tokworkbench.core.models.protocol import Model
from tokworkbench.core.registry.kinds import kind_named
from tokworkbench.core.session.session import RunFinished, Session
from tokworkbench.core.session.settings import Settings
from tokworkbench.core.session.snapshot import Snapshot, View
from tokworkbench.core.text.samples import sample_paths

MIN_SIZE = (80, 24)
KEY_PANES = (BatchesPanel, LatticeView)  # panes that take the keys when focused (b, L); escape gives them back
ROOMY_TABS = {"tab-batches", "tab-compare", "tab-arena"}  # tabs that take more of the screen while shown


class MainScreen(Screen):
    """Keys that open a dialog or move focus are priority bindings: the app runs them as the key
    arrives, before it routes the next one, so keys typed right behind them (a burst over SSH)
    reach the dialog or box they opened. check_action turns them off while a box has focus."""

    AUTO_FOCUS = "#pair-table"
    BINDINGS = [action.binding() for action in ACTIONS]  # the keys as data: app/actions.py

    # vars, not reactives: a reactive on a screen repaints the whole screen when it is set, which
    # cost more than the merge; each pane repaints what it changed
    snapshot: var[Snapshot | None] = var(None, always_update=True)
    """The session as the core last reported it; every pane is bound to it."""
    selected_pair: var[tuple[int, int] | None] = var(None)
    """The pair under the pair table's cursor (marked in the corpus, shown in the byte view)."""
    encode_text: var[str] = var("")
    """The text in the encode box (the byte view shows it when there is one)."""
    batch_texts: var[tuple[str, ...]] = var(())
    """What batches are cut from: the corpus's first lines, each a document (`line_documents`)."""
    selected_token: var[int | None] = var(None)
    """The token chosen last in the corpus, the encode pane or the vocabulary (an outside id)."""
    token_counts: var[TokenCounts | None] = var(None)
    """Tokens per id over the whole corpus, counted in a worker when a view asks."""
    selected_piece: var[int | None] = var(None)
    """Unigram: the piece under the piece table's cursor (marked in the corpus and the lattice)."""
    lattice_word: var[str | None] = var(None)
    """Unigram: the corpus word the lattice tab shows (marked in the corpus while it is shown)."""
    cursor_span: var[tuple[int, int] | None] = var(None)
    """The chars of the corpus window's token chosen by key (< >), marked in the corpus pane."""

    def __init__(self, paths: list[str] | None, settings: Settings, inspect: tuple[Model | ModelLoader, str] | None = None):
        super().__init__()
        self.paths = paths
        self.inspect = inspect  # (model, name): every session shows this model instead of training
        self.settings = settings  # what the next load uses; the session keeps its own
        self.session: Session | None = None
        self.after_run = KeysAfterRun(self)  # keys typed while a run stops, for when its state is back
        self.view = View()
        self.loading_corpus = False  # a load worker is reading files (not `loading`: Textual's own reactive,
        # which covered the whole screen, progress line included, with its spinner)
        self.folders = Folders()  # where the user last saved or exported, and the name saved to
        self._binding_state: tuple = ()
        self._counting: Worker | None = None
        self._kind_shown: str | None = None
        self._token_cursor: tuple = (None, None)  # (the window's spans, the index of the chosen one)
        # the dialog flows (app/flows/), each told what it needs of this screen
        self.ui = Ui(lambda dialog, then: self.app.push_screen(dialog, then), self.notify,
                     lambda text: self.log.error(text))
        session = lambda: self.session  # noqa: E731  (the session of the moment: a load replaces it)
        self.writes = WriteFlows(self.ui, session, self.folders, inspecting=lambda: self.inspect is not None)
        self.reads = ReadFlows(self.ui, session, self.folders, self.refresh_snapshot, self.start_load,
                               lambda: self.settings)
        self.changes = ChangeFlows(self.ui, session, self.refresh_snapshot, self.start_load,
                                   title=lambda text: setattr(self.app, "sub_title", text),
                                   snapshot=lambda: self.snapshot)
        self.run = TrainingRun(self.ui, session, lambda: self.progress_row, self._show_run, self.refresh_bindings,
                               self.call_after_refresh, self.run_worker, self.post_message)

    # -- layout ----------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical(id="main"):
            with Horizontal(id="top"):
                yield CorpusPane(id="corpus").data_bind(MainScreen.snapshot, MainScreen.selected_pair,
                                                        MainScreen.selected_piece, MainScreen.lattice_word,
                                                        MainScreen.cursor_span)
                with Vertical(id="right"):
                    yield PairsPanel(id="pairs").data_bind(MainScreen.snapshot)
                    yield MergesPanel(id="merges").data_bind(MainScreen.snapshot)
                    yield PiecesPanel(id="pieces").data_bind(MainScreen.snapshot, MainScreen.token_counts)
                    yield RoundsPanel(id="rounds").data_bind(MainScreen.snapshot)
            with TabbedContent(id="bottom"):
                with TabPane("Encode / decode", id="tab-encode"):
                    yield EncodePanel(id="encode").data_bind(MainScreen.snapshot)
                with TabPane("UTF-8 bytes", id="tab-bytes"):
                    yield BytesPanel(id="bytes").data_bind(MainScreen.snapshot, MainScreen.selected_pair,
                                                           MainScreen.encode_text)
                with TabPane("Lattice", id="tab-lattice"):
                    yield LatticePanel(id="lattice").data_bind(MainScreen.snapshot, MainScreen.encode_text,
                                                               MainScreen.selected_piece)
                with TabPane("Compression", id="tab-charts"):
                    yield ChartsPanel(id="charts").data_bind(MainScreen.snapshot)
                with TabPane("Batches", id="tab-batches"):
                    yield BatchesPanel(id="batches").data_bind(MainScreen.snapshot, texts=MainScreen.batch_texts)
                with TabPane("Compare", id="tab-compare"):
                    yield ComparePanel(id="compare").data_bind(MainScreen.snapshot, MainScreen.encode_text)
                with TabPane("Vocabulary", id="tab-vocab"):
                    yield VocabPanel(id="vocab").data_bind(MainScreen.snapshot, MainScreen.token_counts)
                with TabPane("Arena", id="tab-arena"):
                    yield ArenaPanel(lambda: self.session.corpus if self.session else None,
                                     id="arena").data_bind(MainScreen.snapshot)
            yield TokenDetails(id="token-details").data_bind(MainScreen.snapshot, MainScreen.selected_token,
                                                             MainScreen.token_counts)
            yield ProgressRow(stand_in_for="KeysFooter", id="progress")  # the panes keep their size
        yield Static("", id="too-small")
        yield KeysFooter()  # the most used keys first, as many as fit; ? lists them all

    @property
    def corpus_pane(self) -> CorpusPane:
        return self.query_one(CorpusPane)

    @property
    def progress_row(self) -> ProgressRow:
        return self.query_one(ProgressRow)

    @property
    def kind(self) -> str:
        """The model kind on screen: the session's, else the kind being loaded."""
        return self.session.learner.kind if self.session is not None else self.settings.kind

    def on_mount(self) -> None:
        self._check_size(self.app.size.width, self.app.size.height)
        self._show_kind(self.settings.kind)
        self.start_load(self.paths, None, self.settings)

    def _show_kind(self, kind: str) -> None:
        """Show the panes of this model kind and hide the other's (app/kind_views.py: Unigram's
        pieces and rounds take the places of the pair table and the merge history); the lattice
        tab is Unigram's."""
        if kind == self._kind_shown:
            return
        self._kind_shown = kind
        view = view_of(kind)
        for pane in RIGHT_PANES:
            self.query_one(f"#{pane}").display = pane in view.panes
        tabs = self.query_one("#bottom", TabbedContent)
        tabs.get_tab("tab-charts").label = view.chart
        if view.lattice:
            tabs.show_tab("tab-lattice")
        else:
            if tabs.active == "tab-lattice":
                tabs.active = "tab-encode"
            tabs.hide_tab("tab-lattice")
        # the kind's own table has the keys, as the pair table has them when the app opens
        self.set_focus(self.query_one(f"#{view.table}"))

    def on_resize(self, event) -> None:
        self._check_size(event.size.width, event.size.height)

    def _check_size(self, width: int, height: int) -> None:
        cramped = width < MIN_SIZE[0] or height < MIN_SIZE[1]
        if cramped != self.has_class("too-small"):
            self.set_class(cramped, "too-small")
            self.refresh_bindings()  # the keys that act there are few
        self.set_class(width < 130, "-narrow")
        self.set_class(height < 40, "-short")
        self.query_one("#too-small", Static).update(
            f"The terminal is {width}×{height}; tokworkbench needs at least {MIN_SIZE[0]}×{MIN_SIZE[1]}.\n"
            "Make the window larger (nothing is lost), or press q to quit."
        )

    # -- errors ----------------------------------------------------------------------------
    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.state is WorkerState.ERROR:
            error = event.worker.error
            self.loading_corpus = self.running = self.run_stopped = False
            self.progress_row.hide()
            self.notify(f"{type(error).__name__}: {error}", title=f"{event.worker.description} failed "
                        "(your work is kept)", severity="error", timeout=15)
            self.refresh_snapshot()
            self.after_run.release()

    # -- loading ---------------------------------------------------------------------------
    def start_load(self, paths: list[str] | None, base: Session | None, settings: Settings) -> None:
        """A new session: on `paths` (default: the sample texts), or on `base`'s corpus."""
        if base is None and not paths:
            paths = [str(p) for p in sample_paths()]
        if self.session is None and base is None and loads_quickly(paths) and not self.model_pending:
            # the first screen: a small corpus loads in a few ms, so build it before the first
            # frame rather than draw empty panes and then everything again
            result = self._build(paths, None, settings)
            if isinstance(result, msg.SessionReady):
                self.on_session_ready(result, quietly=True)  # the screen itself shows it is ready
            else:
                self.on_load_failed(result)
            return
        self.loading_corpus = True
        if self.model_pending:  # a determinate bar: the indeterminate one's animation slowed the parse
            self.progress_row.show(f"reading {self.inspect[1]}…", 0, 1)
        else:
            self.progress_row.show("loading corpus…")
        self.refresh_bindings()
        self._load_worker(paths, base, settings)

    @work(thread=True, exclusive=True, exit_on_error=False, group="load", description="Loading the corpus")
    def _load_worker(self, paths: list[str] | None, base: Session | None, settings: Settings) -> None:
        worker = get_current_worker()
        result = self._build(paths, base, settings, throttled(self.post_message))
        if not worker.is_cancelled:
            self.post_message(result)

    @property
    def model_pending(self) -> bool:
        """-m NAME whose model is read in the load worker, after the first frame."""
        return self.inspect is not None and not isinstance(self.inspect[0], Model)

    def _build(self, paths: list[str] | None, base: Session | None, settings: Settings, post=None):
        """A training session, or with -m one that inspects that model."""
        if self.inspect is not None and base is None:
            return build_inspection(paths, *self.inspect, post)
        return build_session(paths, base, settings, post)

    def on_load_progress(self, message: msg.LoadProgress) -> None:
        self.progress_row.show(message.what, message.done, message.total)

    def on_session_ready(self, message: msg.SessionReady, quietly: bool = False) -> None:
        self.loading_corpus = False
        self.session = session = message.session
        self.settings = session.settings
        self.view = View(rows=view_of(self.kind).rows_shown)
        self.progress_row.hide()
        pane = self.corpus_pane
        pane.stats = session.stats
        pane.counts_source = session.counts_source
        pane.set_documents([Path(d.name).name for d in session.corpus.documents],
                           [len(d.text) for d in session.corpus.documents])
        self.batch_texts = line_documents(d.text for d in session.corpus.documents)
        self.query_one(BatchesPanel).folder = self.proposed_folder()
        for line in session.corpus.passed_over.lines():  # binary, hidden, special, unreadable…
            self.notify(line, severity="warning", timeout=8)
        self.app.sub_title = describe_settings(session.settings)
        self.token_counts = None
        self.selected_piece = self.selected_pair = None
        self._show_kind(session.learner.kind)
        if session.inspected is not None:
            self.inspect = (session.learner.model(), session.inspected)  # read once: the next corpus reuses it
            # an inspected model has no pairs to merge: no "0 of 0 pairs" box keeping its room, the
            # history below takes the whole column (issue 22 item 9). A Unigram model's piece table
            # stays: its scores are the model's own
            self.query_one("#pairs").display = False
            self.query_one(ChartsPanel).inspected = True  # no curve to draw, its bytes/token instead
            self.query_one(PiecesPanel).inspected = True  # pieces counted over the corpus, not trained
            self.refresh_snapshot()
            self.refresh_bindings()
            if not quietly:
                self.notify(f"{plural(session.stats.documents, 'document')} ready", timeout=3)
            self.app.sub_title = describe_inspection(session.inspected, session.model())
            self.call_after_refresh(self._measure, session)  # after the first frame: it holds the GIL a while
            return
        try:  # before the first snapshot: a Unigram learner takes the target from here (em stops at it)
            session.learner.steps_for_vocab(session.settings.target)
        except TokWorkbenchError as exc:
            self.notify(f"{exc}; press t to set a target that r can reach", title="Target too small",
                        severity="warning", timeout=10)
        self.refresh_snapshot()
        self.refresh_bindings()
        if not quietly:
            self.notify(f"{plural(session.stats.documents, 'document')} ready", timeout=3)
        self.call_after_refresh(settle, True)  # after the first frame; the old session's cycles go

    def on_load_failed(self, message: msg.LoadFailed) -> None:
        if self.model_pending:  # -m NAME did not load: one line and status 1, as before the screen
            # printed after the screen is gone, past the line filter: escaped, and not markup
            self.app.exit(return_code=1, message=Text(printable(f"tokworkbench: error: {message.error}")))
            return
        self.loading_corpus = False
        self.progress_row.hide()
        self.refresh_bindings()
        kept = " (the previous corpus and training are kept)" if self.session else ""
        self.notify(message.error + kept, title="Cannot load", severity="error", timeout=10)

    # -- state down ------------------------------------------------------------------------
    def refresh_snapshot(self) -> None:
        """Read the session on this thread; only when no worker owns the learner."""
        if self.session is not None and not self.running:
            self.snapshot = self.session.snapshot(self.view)  # its model carries the settings' roles
            self._take_pair_selection()
            if self.cursor_span is not None and self.snapshot.window.spans != self._token_cursor[0]:
                self.cursor_span = None  # another window, or its tokens changed: the mark would lie
            self.corpus_pane.draw_pending()  # in the frame that shows the tables
        self._refresh_bindings_if_changed()

    def _show_run(self, snap: Snapshot) -> None:
        self.snapshot = snap
        self._take_pair_selection()

    def _take_pair_selection(self) -> None:
        """The pair under the table's cursor, taken as the snapshot lands rather than when the
        table's PairSelected message comes round: the corpus then draws a merge once, not once
        for the snapshot and again for its new pair (half the work of a key, measured at 160x48).
        The message still comes and finds the pair already set."""
        if view_of(self.kind).next_pane == "pairs":
            self.selected_pair = self.query_one(PairsPanel).selected_pair

    def _refresh_bindings_if_changed(self) -> None:
        """The footer rebuilds itself on refresh_bindings; do it only when a key's state changed."""
        situation = self.situation()
        state = tuple(action.state(situation) for action in ACTIONS)
        if state != self._binding_state:
            self._binding_state = state
            self.refresh_bindings()

    # -- events up -------------------------------------------------------------------------
    def on_pair_selected(self, message: msg.PairSelected) -> None:
        self.selected_pair = message.pair

    def on_token_selected(self, message: msg.TokenSelected) -> None:
        self.selected_token = message.token

    def action_select_token(self, token: int, at: int | None = None) -> None:
        """A click on a token (corpus, encode pane): the details line shows it. A corpus token
        (`at`: its index among the window's spans) is where < and > go on from."""
        self.selected_token = token
        self.cursor_span = None  # the key cursor's mark would name another token
        if at is not None and self.snapshot is not None:
            self._token_cursor = (self.snapshot.window.spans, at)

    def _measure(self, session: Session) -> None:
        if session is self.session:
            self._counting = self._count_worker(session, measure=True)

    def on_count_tokens(self, message: msg.CountTokens) -> None:
        session, snap = self.session, self.snapshot
        counting = self._counting
        if session is None or snap is None or (counting is not None and counting.is_running):
            return
        if self.token_counts is None or self.token_counts.steps != snap.steps:
            self._counting = self._count_worker(session, snapshot=snap)

    @work(thread=True, exit_on_error=False, group="count", description="Counting tokens")
    def _count_worker(self, session: Session, snapshot: Snapshot | None = None, measure: bool = False) -> None:
        """Tokens per id over the whole corpus: for the model of `snapshot`, or (inspecting) the
        frozen model's totals as well, which the corpus line and the compression then show."""
        if measure:
            counts = session.learner.measure()
            vocab_of(session.model())  # built here rather than on the first look at the vocabulary
            steps = session.steps
        else:
            counts = count_tokens(snapshot.model, [d.text for d in session.corpus.documents])
            steps = snapshot.steps
        self.post_message(msg.TokensCounted(TokenCounts(counts, steps, int(counts.sum())), session, measure))

    def on_tokens_counted(self, message: msg.TokensCounted) -> None:
        if message.session is not self.session:
            return  # another corpus was opened meanwhile
        self.token_counts = message.counts
        if message.measured:
            self.refresh_snapshot()  # the totals are known now

    def on_piece_selected(self, message: msg.PieceSelected) -> None:
        self.selected_piece = message.piece
        if message.moved:
            self.query_one(LatticePanel).show_piece(message.piece)

    def on_corpus_clicked(self, message: msg.CorpusClicked) -> None:
        """A click in the corpus selects the token there; Unigram's also shows its word's lattice."""
        if self.snapshot is None:
            return
        spans = self.snapshot.window.spans
        if message.span is not None and message.span < len(spans):
            self.action_select_token(spans[message.span].token, message.span)
        if view_of(self.kind).lattice:
            if self.query_one(LatticePanel).show_corpus_word(message.offset):
                self.query_one("#bottom", TabbedContent).active = "tab-lattice"

    def on_lattice_word_shown(self, message: msg.LatticeWordShown) -> None:
        self.lattice_word = message.word

    def on_rewind_to(self, message: msg.RewindTo) -> None:
        session = self.session
        if self.inspect is not None:
            self.notify(Need.TRAINING.why(self.situation()))
            return
        if session is None or self.running or message.step >= session.steps:
            self.notify("that is the newest step: nothing to undo" if session and not self.running
                        else "wait for the run to end")
            return
        self.changes.rewind(message.step)

    def on_history_wanted(self, message: msg.HistoryWanted) -> None:
        """The history table's rows on screen, read from the session (not while a run owns the
        learner: they come when it ends, as the table asks again)."""
        if self.session is None or self.running:
            return
        rows, total = self.session.history_page(message.start, message.end)
        self.query_one(f"#{view_of(self.kind).history_pane}", HistoryTable).show_page(rows, message.start, total)

    def on_pair_filter_changed(self, message: msg.PairFilterChanged) -> None:
        self.view = replace(self.view, row_filter=message.query)
        self.refresh_snapshot()

    def on_encode_changed(self, message: msg.EncodeChanged) -> None:
        self.encode_text = message.text

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        """The batch grid and the two sides of a comparison need rows: their tabs take more
        of the screen while shown (at 80×24 the bottom is otherwise 7 lines)."""
        self.set_class(event.pane.id in ROOMY_TABS, "-roomy-tab")

    def on_document_selected(self, message: msg.DocumentSelected) -> None:
        if message.index != self.view.doc:
            self._move_view(replace(self.view, doc=message.index, start=0))

    def action_document(self, delta: int) -> None:
        """Documents by key, for screens too narrow for the document list."""
        if self.session is None:
            return
        count = len(self.session.corpus.documents)
        doc = self.view.doc + delta
        if not 0 <= doc < count:
            self.notify(f"this is the {'first' if delta < 0 else 'last'} of {plural(count, 'document')}")
            return
        self.corpus_pane.highlight_document(doc)
        self._move_view(replace(self.view, doc=doc, start=0))

    def action_window(self, delta: int) -> None:
        if self.snapshot is None:
            return
        length = self.snapshot.window.doc_length
        start = max(0, min(self.view.start + delta * self.view.size, max(0, length - 1)))
        if start == self.view.start:
            self.notify("this is the document's " + ("first" if delta < 0 else "last") + " window")
        else:
            self._move_view(replace(self.view, start=start))

    def action_token(self, delta: int) -> None:
        """A token cursor in the corpus window, by key: the token after (before) the one chosen
        last there, its details in the line below, as a click would show them."""
        if self.snapshot is None or not self.snapshot.window.spans:
            return
        spans = self.snapshot.window.spans
        at = self._token_cursor[1] if self._token_cursor[0] == spans else None
        at = (0 if delta > 0 else len(spans) - 1) if at is None else max(0, min(len(spans) - 1, at + delta))
        self._token_cursor = (spans, at)
        span = spans[at]
        self.cursor_span = (max(0, span.start), span.end)
        self.selected_token = span.token

    def _move_view(self, view: View) -> None:
        self.view = view
        self.corpus_pane.scroll_text_home()
        self.refresh_snapshot()

    # -- keys ------------------------------------------------------------------------------
    def on_descendant_focus(self) -> None:
        self.refresh_bindings()  # typing in a box hides the keys it takes

    def on_descendant_blur(self) -> None:
        self.refresh_bindings()

    def situation(self) -> Situation:
        """What the keys' rules (app/actions.py) are read against, now."""
        session, snap = self.session, self.snapshot
        return Situation(kind=self.kind, has_session=session is not None, loading=self.loading_corpus,
                         running=self.running, run_stopped=self.run_stopped, inspecting=self.inspect is not None,
                         typing=isinstance(self.focused, Input), grabbed=isinstance(self.focused, KEY_PANES),
                         steps=session.steps if session is not None else 0,
                         can_step=snap.can_step if snap is not None else True, cramped=self.has_class("too-small"),
                         exhausted=self._nothing_left(), noun=step_noun(self.kind))

    def check_action(self, action: str, parameters) -> bool | None:
        known = lookup(action, parameters)
        if known is None:
            return True  # not a key of this table (a click: select_token)
        return known.state(self.situation())

    async def on_key(self, event) -> None:
        """A key whose binding is dimmed reaches here unhandled: say why it cannot act now.
        A priority key that could not act as it arrived but can now (the corpus finished
        loading while it went round the widgets) acts here: Textual checks a priority binding
        only on arrival, and the key was lost."""
        situation = self.situation()
        for action in ACTIONS:
            if event.key not in action.key_list:
                continue
            state = action.state(situation)
            if state is None:
                event.stop()
                waits = self.run.stopping and self.after_run.waits
                if waits and action.unmet(situation) in (Need.IDLE, Need.FREE):
                    self.after_run.keep(event)  # escape's course ends with the run's state back: it acts then
                    return
                self.notify(action.why(situation), title=f"{action.label} can't act now", timeout=4)
                return
            if state and action.priority:
                event.stop()
                await self.run_action(action.action)
                return

    def _nothing_left(self) -> str:
        """Why no step is left: Unigram's N and r stop at the target (em's n too), with pieces
        still to prune."""
        snap = self.snapshot
        if kind_named(self.kind).stops_at_target and snap is not None and snap.base_size < snap.vocab_size <= snap.target:
            stops = "where em stops" if self.settings.algorithm == "em" else "where N and r stop"
            return f"the vocabulary ({snap.vocab_size:,}) is at the target, {stops}: t sets a smaller one"
        return nothing_left(self.kind)

    def action_step(self) -> None:
        if self.session.step() is None:
            self.notify(self._nothing_left())
        self.refresh_snapshot()

    def action_round(self) -> None:
        """Unigram's step: one pruning round (course) or one EM and pruning round (em)."""
        self.action_step()

    def action_step_ten(self) -> None:
        done = self.session.step_many(10)
        self.refresh_snapshot()  # first: why it stopped short is read from where it stopped
        if done < 10:
            self.notify(f"made {plural(done, step_noun(self.kind))}: {self._nothing_left()}")

    def action_undo(self) -> None:
        self.session.undo()
        self.refresh_snapshot()

    # -- a run (app/flows/run.py) -----------------------------------------------------------
    def action_run(self) -> None:
        self.run.start(self.view, self.snapshot.vocab_size)

    def on_train_progress(self, message: msg.TrainProgress) -> None:
        self.run.on_progress(message)

    def on_train_stopped(self, message: msg.TrainStopped) -> None:
        self.run.on_stopped(message)

    def on_train_finished(self, message: msg.TrainFinished) -> None:
        self.run.on_finished(message)
        self.after_run.run_ended()

    def action_cancel(self) -> None:
        self.run.cancel()

    @property
    def running(self) -> bool:
        return self.run.running

    @running.setter
    def running(self, value: bool) -> None:
        self.run.running = value

    @property
    def run_stopped(self) -> bool:
        """The run's child has stopped; its state is still coming back."""
        return self.run.stopped

    @run_stopped.setter
    def run_stopped(self, value: bool) -> None:
        self.run.stopped = value

    @property
    def last_run(self) -> RunFinished | None:
        return self.run.last

    @property
    def stop_painted_at(self) -> float | None:
        return self.run.stop_painted_at

    def action_escape(self) -> None:
        """Leave a text box (the pair filter clears itself), else cancel the run. A priority
        binding, so the box is left before the next key is routed."""
        if isinstance(self.focused, KEY_PANES) and not self.running:
            self.set_focus(None)  # its keys (the batches' + − < > m g p w, the lattice's < >) go back to the screen
            return
        if isinstance(self.focused, Input):
            if self.focused.id == "pair-filter":
                self.query_one(PairsPanel).clear_filter()
            elif self.focused.id == "piece-filter":
                self.query_one(PiecesPanel).clear_filter()
            else:
                self.set_focus(None)
            return
        self.action_cancel()

    def action_filter_pairs(self) -> None:
        self.query_one(f"#{view_of(self.kind).next_pane or 'pairs'}").focus_filter()

    def action_lattice(self) -> None:
        """Show the lattice tab and give it the keys (< > choose the word, arrows scroll)."""
        self.query_one("#bottom", TabbedContent).active = "tab-lattice"
        self.set_focus(self.query_one("#lattice-view"))

    def action_batches(self) -> None:
        self.query_one("#bottom", TabbedContent).active = "tab-batches"
        self.set_focus(self.query_one(BatchesPanel))  # now: keys typed right behind b are the pane's

    def action_vocabulary(self) -> None:
        """The vocabulary tab, with its search box focused at once (keys typed behind v land there)."""
        self.query_one("#bottom", TabbedContent).active = "tab-vocab"
        self.query_one(VocabPanel).focus_search()

    def action_toggle_ids(self) -> None:
        """Show the encode tab with the ids toggled. Focus left in another tab's pane would pull
        that tab back to the front, so it is let go first."""
        encode = self.query_one(EncodePanel)
        tabs = self.query_one("#bottom", TabbedContent)
        if self.focused is not None and tabs in self.focused.ancestors and encode not in self.focused.ancestors:
            self.set_focus(None)
        tabs.active = "tab-encode"
        encode.action_toggle_ids()

    def action_toggle_pipeline(self) -> None:
        """Show the encode tab with its pipeline view toggled (as `action_toggle_ids`); with the
        box empty there is nothing to show, so the box takes the keys that follow."""
        encode = self.query_one(EncodePanel)
        tabs = self.query_one("#bottom", TabbedContent)
        if self.focused is not None and tabs in self.focused.ancestors and encode not in self.focused.ancestors:
            self.set_focus(None)
        tabs.active = "tab-encode"
        encode.action_toggle_pipeline()
        if encode.show_pipeline and not encode.text:
            encode.focus_input()  # nothing to show yet: the keys behind p are the text (escape leaves)

    def action_merge_tree(self) -> None:
        """The selected token's merge tree, with the trainer's counts where it kept them."""
        if self.snapshot is None or self.selected_token is None:
            self.notify("select a token first: click one in the corpus, the encode pane or the vocabulary",
                        title="No token selected", timeout=4)
            return
        with self.ui.reporting("No merge tree"):
            history = self.session.learner.history if self.session is not None else ()
            tree, source = tree_for(self.snapshot.model, self.selected_token, history, self.inspect is None,
                                    self.running)
            self.app.push_screen(MergeTreeDialog(tree, source))

    def action_copy(self, what: str) -> None:
        """Copy ids or tokens through the terminal (OSC 52, which works over SSH): those of the
        encode box's text, else the selected token's."""
        model = self.snapshot.model if self.snapshot is not None else None
        if model is None:
            return
        chosen = what_to_copy(model, self.encode_text, self.selected_token)
        if chosen is None:
            self.notify("nothing to copy: type text in the encode box, or select a token")
            return
        ids, where = chosen
        with self.ui.reporting("Not copied"):
            self.app.copy_to_clipboard(copied_text(model, ids, what))
            self.notify(copied_note(ids, what, where), timeout=3)

    def action_show_tab(self, tab: str) -> None:
        """A bottom tab by its number. Focus left in another tab's pane would pull that tab
        back to the front, so it is let go first."""
        tabs = self.query_one("#bottom", TabbedContent)
        if self.focused is not None and tabs in self.focused.ancestors:
            self.set_focus(None)
        tabs.active = tab

    def action_help(self) -> None:
        self.app.push_screen(HelpDialog(help_sections(self.situation().kind, self.app.get_key_display), HELP_NOTES))

    # -- the dialog flows (app/flows/) ------------------------------------------------------
    def action_save(self) -> None:
        self.writes.save()

    def action_export(self) -> None:
        self.writes.export()

    def on_batch_export(self, message: msg.BatchExport) -> None:
        self.writes.batch(message, wrote=lambda folder: setattr(self.query_one(BatchesPanel), "folder", folder))

    def action_open(self) -> None:
        self.reads.open()

    def action_replay(self) -> None:
        self.reads.replay()

    def action_compare(self) -> None:
        def show(model: Model, name: str) -> None:
            texts = [d.text for d in self.session.corpus.documents] if self.session is not None else []
            self.query_one(ComparePanel).set_other(model, name, texts)
            self.query_one("#bottom", TabbedContent).active = "tab-compare"

        self.reads.compare(show)

    def action_arena(self) -> None:
        """Ask for the tokenizers the Arena tab scores beside this one, then show it."""
        panel = self.query_one(ArenaPanel)

        def chosen(raw: str | None) -> None:
            if raw is None:
                return
            panel.set_others(parse_names(raw))
            self.action_show_tab("tab-arena")

        self.action_show_tab("tab-arena")
        self.app.push_screen(PromptDialog("Tokenizers for the arena beside this one, separated by spaces: presets "
                                          "(cl100k_base, o200k_base, gpt2) or model files", " ".join(panel.others),
                                          hint="empty: this model alone"), chosen)

    def action_settings(self) -> None:
        self.changes.settings()

    def action_set_target(self) -> None:
        self.changes.set_target()

    def action_reset(self) -> None:
        self.changes.reset()

    def proposed_folder(self) -> Path:
        """Where files are proposed (the app saves screenshots there too)."""
        return self.folders.proposed(self.session)

    def action_quit_app(self) -> None:
        if self.session is not None and self.session.unsaved:
            self.ui.ask("Quit without saving the trained model?", "Quit", self.app.exit)
        else:
            self.app.exit()
