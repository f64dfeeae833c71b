"""The workbench app: one screen of panes over one training session.

The app owns the session (corpus, settings, trainer, lock) and renders snapshots of it. While a
run is going, a forked child process trains (runner.py) and snapshots come up as messages; the UI
does not touch the trainer until the child's state is back.
"""

import threading
from collections.abc import Iterable
from pathlib import Path

from rich.text import Text
from textual import work
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Footer, Header, Label, ProgressBar, Static, TabbedContent, TabPane

from ..core.text.corpus import Corpus
from ..core.text.samples import sample_paths
from ..core.errors import TokWorkbenchError
from ..core.inspection.hexview import char_rows
from ..core.inspection.roundtrip import DecodeReport, decode_report, parse_ids, round_trip
from ..core.inspection.segments import pair_occurrences
from ..core.session import Settings
from ..core.bpe.trainer import Trainer
from . import messages as msg
from .dialogs import DialogActions
from .render import style_runs
from .runner import train_in_child
from .screens import HelpScreen
from .snapshot import Snapshot, View, selected_line, take_snapshot
from .widgets.bytes_view import BytesPanel
from .widgets.corpus import CorpusPane
from .widgets.encode import EncodePanel
from .widgets.merges import MergesPanel
from .widgets.pairs import PairsPanel
from .workers import build_session, load_session, loads_quickly

MIN_SIZE = (80, 24)
IDLE_ONLY = {"step", "step_ten", "run", "undo", "reset", "set_target", "settings", "open", "save", "export",
             "replay"}


class WorkbenchApp(DialogActions, App):
    CSS_PATH = "workbench.tcss"
    TITLE = "tokworkbench"
    BINDINGS = [
        Binding("n,space", "step", "Merge", tooltip="Merge the best pair (one step)"),
        Binding("N", "step_ten", "×10", tooltip="Ten merges"),
        Binding("r", "run", "Run", tooltip="Run to the target vocabulary in the background"),
        Binding("escape", "cancel", "Cancel", tooltip="Stop a running training between two steps"),
        Binding("u,backspace", "undo", "Undo", tooltip="Undo the last merge exactly"),
        Binding("R", "reset", "Reset", tooltip="Back to the base vocabulary"),
        Binding("t", "set_target", "Target", tooltip="Set the target vocabulary size"),
        Binding("c", "settings", "Settings", tooltip="Units, normalizer, pre-tokenizer, tie-break"),
        Binding("o", "open", "Open", tooltip="Open corpus files or folders"),
        Binding("s", "save", "Save", tooltip="Save the model (atomic; asks before overwriting)"),
        Binding("e", "export", "Export", tooltip="Export to HF tokenizer.json, tiktoken or minbpe"),
        Binding("l", "replay", "Replay", tooltip="Load a tokenizer and replay its merges on this corpus"),
        Binding("slash", "filter_pairs", "Filter", tooltip="Filter the pair table"),
        Binding("question_mark", "help", "Help", tooltip="All keys"),
        Binding("q", "quit_app", "Quit", tooltip="Quit (asks if the model is unsaved)"),
    ]

    def __init__(self, paths: Iterable[str] | None = None, settings: Settings | None = None):
        super().__init__()
        self.paths = [str(p) for p in paths] if paths else None
        self.settings = settings or Settings()
        self.corpus: Corpus | None = None
        self.corpus_stats = None
        self.trainer: Trainer | None = None
        self.lock = threading.Lock()
        self.view = View()
        self.snapshot: Snapshot | None = None
        self.running = False
        self.loading = False
        self.saved_merges: tuple | None = ()
        self.selected_pair: tuple[int, int] | None = None
        self.encode_text = ""
        self.decode_text = ""
        self._binding_state: tuple = ()
        self._styled_key: tuple | None = None  # what the corpus window's runs were drawn from
        self._styled: list = []

    # -- layout ----------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical(id="main"):
            with Horizontal(id="top"):
                yield CorpusPane(id="corpus")
                with Vertical(id="right"):
                    yield PairsPanel(id="pairs")
                    yield MergesPanel(id="merges")
            with TabbedContent(id="bottom"):
                with TabPane("Encode / decode", id="tab-encode"):
                    yield EncodePanel(id="encode")
                with TabPane("UTF-8 bytes", id="tab-bytes"):
                    yield BytesPanel(id="bytes")
            with Horizontal(id="progress"):
                yield Label("", id="progress-label")
                yield ProgressBar(id="progress-bar", show_eta=False)
        yield Static("", id="too-small")
        yield Footer()

    def on_mount(self) -> None:
        # kept, not queried: app.query_one looks at the active screen, which may be a dialog
        self.corpus_pane = self.query_one(CorpusPane)
        self.pairs_panel = self.query_one(PairsPanel)
        self.merges_panel = self.query_one(MergesPanel)
        self.encode_panel = self.query_one(EncodePanel)
        self.bytes_panel = self.query_one(BytesPanel)
        self.progress_row = self.query_one("#progress")
        self.progress_label = self.query_one("#progress-label", Label)
        self.progress_bar = self.query_one("#progress-bar", ProgressBar)
        self.too_small = self.query_one("#too-small", Static)
        self.bottom_tabs = self.query_one("#bottom", TabbedContent)
        self.progress_row.display = False
        self._check_size(self.size.width, self.size.height)
        self.start_load(self.paths, None, self.settings)

    def on_resize(self, event) -> None:
        if hasattr(self, "too_small"):  # resize can arrive before mount
            self._check_size(event.size.width, event.size.height)

    def _check_size(self, width: int, height: int) -> None:
        small = width < MIN_SIZE[0] or height < MIN_SIZE[1]
        screen = self.screen_stack[0] if self.screen_stack else self.screen
        screen.set_class(small, "too-small")
        screen.set_class(width < 130, "-narrow")
        screen.set_class(height < 40, "-short")
        self.too_small.update(
            f"The terminal is {width}×{height}; tokworkbench needs at least {MIN_SIZE[0]}×{MIN_SIZE[1]}.\n"
            "Make the window larger (nothing is lost), or press q to quit."
        )

    # -- loading ---------------------------------------------------------------------------
    def start_load(self, paths: list[str] | None, corpus: Corpus | None, settings: Settings) -> None:
        if corpus is None and not paths:
            paths = [str(p) for p in sample_paths()]
        if self.trainer is None and corpus is None and loads_quickly(paths):
            # the first screen: a small corpus loads in a few ms, so build it before the first
            # frame rather than draw empty panes and then everything again
            result = build_session(paths, None, settings)
            if isinstance(result, msg.SessionReady):
                self.on_session_ready(result)
            else:
                self.on_load_failed(result)
            return
        self.loading = True
        self._progress(True, "loading corpus…", None, None)
        self.refresh_bindings()
        self._load_worker(paths, corpus, settings)

    @work(thread=True, exclusive=True, exit_on_error=False, group="load", description="load corpus")
    def _load_worker(self, paths, corpus, settings) -> None:
        load_session(self, paths, corpus, settings)

    def on_load_progress(self, message: msg.LoadProgress) -> None:
        self._progress(True, message.what, message.done, message.total)

    def on_session_ready(self, message: msg.SessionReady) -> None:
        self.loading = False
        self.corpus, self.settings, self.trainer = message.corpus, message.settings, message.trainer
        self.corpus_stats = message.stats
        self.saved_merges = ()
        self.view = View()
        self.selected_pair = None
        self._progress(False)
        pane = self.corpus_pane
        pane.set_documents([Path(d.name).name for d in self.corpus.documents],
                           [len(d.text) for d in self.corpus.documents])
        for path in self.corpus.skipped:
            self.notify(f"skipped binary file {path}", severity="warning")
        self.sub_title = self.settings.describe()
        self.refresh_from_core()
        self.refresh_bindings()
        self.notify(f"{len(self.corpus.documents)} documents ready", timeout=3)

    def on_load_failed(self, message: msg.LoadFailed) -> None:
        self.loading = False
        self._progress(False)
        self.refresh_bindings()
        kept = " (the previous corpus and training are kept)" if self.trainer else ""
        self.notify(message.error + kept, title="Cannot load", severity="error", timeout=10)

    # -- rendering -------------------------------------------------------------------------
    def refresh_from_core(self) -> None:
        """Take a snapshot on the UI thread; only when no worker owns the trainer."""
        if self.trainer is None or self.running:
            return
        with self.lock:
            snap = take_snapshot(self.trainer, self.view)
        self.apply_snapshot(snap)

    def apply_snapshot(self, snap: Snapshot) -> None:
        self.snapshot = snap
        self.pairs_panel.next_pair = snap.next_pair
        self.pairs_panel.note = (f"replay: next {snap.next_text!r}, {snap.replaying:,} to go · "
                                 if snap.replaying else "")
        self.pairs_panel.rows = snap.pairs
        self.selected_pair = self.pairs_panel.selected_pair
        self._draw_corpus()
        self.merges_panel.show(snap.history, snap.merges)
        self._refresh_encode()

    def _draw_corpus(self) -> None:
        snap, stats = self.snapshot, self.corpus_stats
        unit = "bytes" if self.settings.units == "byte" else "chars"
        line = Text.assemble(  # the training line first: it is what changes on every merge
            (f"{snap.total_tokens:,}", "bold"), " tokens · ", (f"{snap.compression:.3f}", "bold"),
            f" {unit}/token · vocab ", (f"{snap.vocab_size:,}", "bold"), f"/{self.settings.target:,}",
            f" · {snap.merges:,} merges\n",
            f"{stats.documents} docs · {stats.chars:,} chars · {stats.bytes:,} bytes · "
            f"{stats.distinct_chars:,} distinct chars",
        )
        marks = pair_occurrences(snap.spans, self.selected_pair) if self.selected_pair else []
        key = (snap.text, snap.spans, marks)
        if key != self._styled_key:  # most merges leave the window's tokens as they were
            self._styled_key, self._styled = key, style_runs(snap.text, snap.spans, marks=marks)
        text = self._styled
        end = snap.view.start + len(snap.text)
        window = (f"chars {snap.view.start:,}–{end:,} of {snap.doc_length:,}  ·  [ and ] move the window"
                  + (f"  ·  {len(marks)} occurrences of the selected pair" if marks else ""))
        self.corpus_pane.show(line, text, window)

    def _refresh_encode(self) -> None:
        if self.snapshot is None:
            return
        tok = self.snapshot.tokenizer
        encode = self.encode_panel
        rt = round_trip(tok, self.encode_text) if self.encode_text else None
        encode.show_round_trip(rt, [])
        report = None
        if self.decode_text.strip():
            try:
                report = decode_report(tok, parse_ids(self.decode_text))
            except TokWorkbenchError as exc:
                report = DecodeReport([], None, None, str(exc), None)
        encode.show_decode(report)
        self._refresh_bytes(rt)

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        self._refresh_encode()

    def _refresh_bytes(self, rt) -> None:
        if self.bottom_tabs.active != "tab-bytes":
            return  # rebuilt when its tab is shown
        snap = self.snapshot
        tok = snap.tokenizer
        if rt is not None and rt.error is None:
            text, ids, source = rt.normalized, rt.ids, "encode input"
        else:
            text, ids, source = selected_line(snap, self.selected_pair)
        lengths = [len(tok.token_bytes(i)) for i in ids]
        self.bytes_panel.show(char_rows(text, lengths), [tok.token_text(i) for i in ids], source)

    def _progress(self, shown: bool, label: str = "", done=None, total=None) -> None:
        self.progress_row.display = shown
        if shown:
            self.progress_label.update(label)
            self.progress_bar.update(total=total, progress=done or 0)

    # -- panel messages --------------------------------------------------------------------
    def on_pair_selected(self, message: msg.PairSelected) -> None:
        if message.pair != self.selected_pair:
            self.selected_pair = message.pair
            if self.snapshot is not None:
                self._draw_corpus()
                if not self.encode_text:
                    self._refresh_bytes(None)  # the byte view follows the selection

    def on_document_selected(self, message: msg.DocumentSelected) -> None:
        if message.index != self.view.doc:
            self.view = View(doc=message.index, start=0, size=self.view.size)
            self.corpus_pane.scroll_text_home()
            self.refresh_from_core()

    def on_window_move(self, message: msg.WindowMove) -> None:
        if self.snapshot is None:
            return
        length = self.snapshot.doc_length
        start = max(0, min(self.view.start + message.delta * self.view.size, max(0, length - 1)))
        if start != self.view.start:
            self.view = View(self.view.doc, start, self.view.size)
            self.corpus_pane.scroll_text_home()
            self.refresh_from_core()

    def on_encode_changed(self, message: msg.EncodeChanged) -> None:
        self.encode_text = message.text
        self._refresh_encode()

    def on_decode_changed(self, message: msg.DecodeChanged) -> None:
        self.decode_text = message.text
        self._refresh_encode()

    # -- actions ---------------------------------------------------------------------------
    def check_action(self, action: str, parameters) -> bool | None:
        if action == "cancel":
            return True if self.running else False
        if action in IDLE_ONLY and (self.running or self.loading or self.trainer is None):
            return None
        if action == "undo" and not self.trainer.history:
            return None
        if action in ("step", "step_ten", "run") and self.snapshot is not None and not self.snapshot.pairs:
            return None
        return True

    def _after_change(self) -> None:
        self.refresh_from_core()
        self._refresh_bindings_if_changed()

    def _refresh_bindings_if_changed(self) -> None:
        """The footer rebuilds itself on refresh_bindings; do it only when a key's state changed."""
        state = tuple(self.check_action(b.action, ()) for b in self.BINDINGS)
        if state != self._binding_state:
            self._binding_state = state
            self.refresh_bindings()

    def action_step(self) -> None:
        with self.lock:
            record = self.trainer.step()
        if record is None:
            self.notify("no pair is left to merge: every chunk is a single token")
        self._after_change()

    def action_step_ten(self) -> None:
        with self.lock:
            done = sum(1 for _ in self.trainer.run(merges=10))
        if done < 10:
            self.notify(f"merged {done}: no pair is left")
        self._after_change()

    def action_undo(self) -> None:
        with self.lock:
            self.trainer.undo()
        self._after_change()

    def action_run(self) -> None:
        target = self.settings.target
        if self.trainer.vocab_size >= target:
            self.notify(f"the vocabulary is already {self.trainer.vocab_size:,} ≥ target {target:,}; press t to raise the target")
            return
        self.running = True
        self.refresh_bindings()
        total = target - self.trainer.vocab_size
        self._progress(True, f"training to {target:,}… (escape cancels)", 0, total)
        self._train_worker(target)

    @work(thread=True, exclusive=True, exit_on_error=False, group="train", description="train to target")
    def _train_worker(self, target: int) -> None:
        train_in_child(self, self.trainer, self.lock, target, lambda: self.view)

    def on_train_progress(self, message: msg.TrainProgress) -> None:
        self._progress(True, f"training… {message.done:,}/{message.total:,} merges · {message.rate:,.0f} merges/s · escape cancels",
                       message.done, message.total)
        self.apply_snapshot(message.snapshot)

    def on_train_finished(self, message: msg.TrainFinished) -> None:
        self.running = False
        self._progress(False)
        self.apply_snapshot(message.snapshot)
        self.refresh_bindings()
        said = {"target": "reached the target", "cancelled": "cancelled", "exhausted": "no pair left to merge"}
        if message.reason not in said:
            self.notify(message.reason, title="Training stopped", severity="error")
            return
        self.notify(f"{said[message.reason]}: {message.done:,} merges, vocabulary {message.snapshot.vocab_size:,}")

    def action_cancel(self) -> None:
        for worker in self.workers:
            if worker.group == "train":
                worker.cancel()

    def action_filter_pairs(self) -> None:
        self.pairs_panel.focus_filter()

    def action_help(self) -> None:
        sections = [("Workbench", [(b.key_display or b.key, b.tooltip or b.description) for b in self.BINDINGS]),
                    ("Corpus pane", [(b.key.replace("left_square_bracket", "[").replace("right_square_bracket", "]"),
                                      b.tooltip or b.description) for b in CorpusPane.BINDINGS]),
                    ("Everywhere", [("tab / shift+tab", "move between panes"), ("ctrl+p", "command palette"),
                                    ("escape", "close a dialog; clear the pair filter")])]
        self.push_screen(HelpScreen(sections))

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        for b in self.BINDINGS:
            action = b.action
            if self.check_action(action, ()) is True:
                yield SystemCommand(f"{b.description} ({b.key})", b.tooltip or b.description,
                                    lambda a=action: self.run_action(a))


def run_app(paths: list[str] | None = None) -> int:
    WorkbenchApp(paths or None).run()
    return 0
