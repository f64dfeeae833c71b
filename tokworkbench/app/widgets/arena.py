"""Arena: this session's model beside other tokenizers (presets by default) on the corpus's texts.

A row per tokenizer (its totals over the corpus: bytes per token, tokens per word, vocabulary
used, unknown and byte-fallback rates, the round trip), then bytes per token on each text, a bar
per tokenizer. The scores are computed in a thread worker, never in the UI thread: the other
tokenizers once per corpus, this model again when it changes, debounced (a run's stream of
snapshots recomputes it at most every few seconds). Only while the tab is shown: a hidden tab
marks itself stale and catches up when shown.
"""

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from rich.table import Table
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.message import Message
from textual.reactive import var
from textual.timer import Timer
from textual.widgets import Static
from textual.worker import get_current_worker

from tokworkbench.app.widgets.laidout import WhenLaidOut
from tokworkbench.core.errors import TokWorkbenchError
from tokworkbench.core.inspection.arena import COLUMNS, Score, TokenizerScores, score_tokenizer
from tokworkbench.core.registry.load import open_model
from tokworkbench.core.session.snapshot import Snapshot
from tokworkbench.core.text.corpus import Corpus

DEFAULT_OTHERS = ("cl100k_base", "o200k_base")
THIS = "this model"  # the session's model's row
DEBOUNCE = 0.6  # seconds of quiet after a change before this model is scored again
MOST_STALE = 5.0  # a run's steady stream of changes is scored at least this often
COLOURS = ("bold magenta", "cyan", "green", "yellow", "blue", "red", "bright_magenta", "bright_cyan")
SHOWN = {c.key: c for c in COLUMNS}
TABLE = (("tokens", "tokens"), ("bytes_per_token", "B/tok"), ("tokens_per_word", "tok/word"),
         ("vocab_share", "used"), ("unknown_rate", "unk"), ("byte_rate", "byte fb"), ("exact", "round trip"))
LABEL = 22  # characters of a text's name in the chart
NAME_ROOM = 28  # columns of a tokenizer's name in the table (half under 100 columns) and after a bar


class _Cancelled(Exception):
    """A newer request replaced this computation (raised from its progress callback)."""


def parse_names(raw: str) -> tuple[str, ...]:
    """Tokenizer names as typed: separated by commas or spaces, each once, in order."""
    names = [n for part in raw.replace(",", " ").split() if (n := part.strip())]
    return tuple(dict.fromkeys(names))


def model_key(snap: Snapshot, corpus: Corpus | None) -> tuple:
    """Equal keys: the same model on the same corpus (a view move or a filter changes neither)."""
    model = snap.model
    pre = model.pre_tokenizer
    return (id(corpus), snap.kind, model.units, model.normalizer, pre.name, pre.pattern, snap.vocab_size,
            snap.steps, snap.history_length, snap.replay_total, model.roles)


def corpus_texts(corpus: Corpus) -> list[tuple[str, str]]:
    """(name, text) per document: its file name, or its path where two share one."""
    names = [Path(d.name).name for d in corpus.documents]
    return [(n if names.count(n) == 1 else d.name, d.text) for n, d in zip(names, corpus.documents)]


def shown_name(name: str, room: int) -> str:
    """A tokenizer's name within `room` columns: a path keeps its end (the file's name and its
    folder say which model it is: …/llama3/tokenizer.model), other names their start."""
    if len(name) <= room:
        return name
    return "…" + name[len(name) - room + 1:] if "/" in name or "\\" in name else name[:room - 1] + "…"


def describe_table(rows: list[TokenizerScores], colours: dict[str, str], width: int = 160) -> Table:
    """A row per tokenizer, its totals over the corpus; under 100 columns the vocabulary size and
    the words of the round-trip verdict go (✓, or ✗ and the characters changed)."""
    wide = width >= 100
    table = Table(box=None, pad_edge=False, padding=(0, 1), show_edge=False, header_style="bold")
    room = NAME_ROOM if wide else NAME_ROOM // 2
    table.add_column("tokenizer", no_wrap=True, overflow="ellipsis", max_width=room)
    if wide:
        table.add_column("vocab", justify="right", no_wrap=True)
    for _, title in TABLE:
        table.add_column(title if wide or title != "round trip" else "trip", justify="right", no_wrap=True)
    for t in rows:
        total = t.total.row()
        cells = [SHOWN[key].shown(total[key]) for key, _ in TABLE]
        if t.total.error:
            cells = ["–"] * (len(TABLE) - 1) + ["✗"]
        elif t.total.left_out:
            cells[-1] = "✗ fails" if wide else "✗"  # a text it cannot encode: the chart names it
        elif t.total.exact is False:
            cells[-1] = f"✗ {t.total.differing:,}" + (" chars" if wide else "")
        else:
            cells[-1] = "✓ exact" if wide else "✓"
        table.add_row(Text(shown_name(t.name, room), colours.get(t.name, "")), *([f"{t.vocab_size:,}"] if wide else []), *cells)
    return table


def describe_chart(rows: list[TokenizerScores], texts: list[str], colours: dict[str, str], width: int) -> Text:
    """Bytes per token on each text: a bar per tokenizer, all on one scale."""
    values = [s.bytes_per_token for t in rows for s in t.scores if s.bytes_per_token is not None]
    top = max(values, default=1.0) or 1.0
    bar_room = max(8, width - LABEL - 20 - max((len(shown_name(t.name, NAME_ROOM)) for t in rows), default=0))
    out = Text()
    for k, text in enumerate(texts):
        for j, t in enumerate(rows):
            score: Score = t.scores[k]
            label = (text if len(text) <= LABEL else text[: LABEL - 1] + "…") if j == 0 else ""
            out.append(f"{label:<{LABEL}} ", "bold" if j == 0 else "")
            value = score.bytes_per_token
            if value is None:
                out.append("✗ " + (score.error or "no tokens"), "red")
            else:
                out.append("█" * max(1, round(value / top * bar_room)), colours.get(t.name, ""))
                out.append(f" {value:.2f}")
                if score.premium is not None:
                    out.append(f" ×{score.premium:.2f}", "dim")
                if score.exact is False:
                    out.append(" lossy", "yellow")
                out.append(f"  {shown_name(t.name, NAME_ROOM)}", "dim")
            out.append("\n")
    out.rstrip()
    return out


class ArenaPanel(Vertical):
    DEFAULT_CSS = """
    ArenaPanel {
        height: 1fr;
    }
    ArenaPanel #arena-status {
        height: auto;
        max-height: 4;
        padding: 0 1;
    }
    ArenaPanel #arena-table {
        height: auto;
        max-height: 10;
        padding: 0 1;
    }
    ArenaPanel #arena-chart-box {
        height: 1fr;
        min-height: 2;
        padding: 0 1;
    }
    """

    snapshot: var[Snapshot | None] = var(None, always_update=True)
    """The session as the core last reported it: its model is the first row."""

    @dataclass
    class Progress(Message):
        done: int
        total: int
        what: str

        def can_replace(self, message: Message) -> bool:
            return isinstance(message, ArenaPanel.Progress)

    @dataclass
    class Scored(Message):
        key: tuple
        own: TokenizerScores
        others: list[TokenizerScores]
        failed: list[str]  # "name: why" for each other tokenizer that could not be read
        texts: list[str]

    def __init__(self, corpus: Callable[[], Corpus | None], **kwargs):
        """`corpus`: the session's corpus of the moment (a load replaces it)."""
        super().__init__(**kwargs)
        self.corpus = corpus
        self.others: tuple[str, ...] = DEFAULT_OTHERS
        self._models: dict[str, object] = {}  # other tokenizers read so far, by name
        self._failed: dict[str, str] = {}  # why each other tokenizer that could not be read was not
        self._other_scores: dict[str, TokenizerScores] = {}  # on `_scored_corpus`, by name
        self._scored_corpus: Corpus | None = None  # held, so that no other corpus takes its id() in a key
        self.scored: ArenaPanel.Scored | None = None
        self._wanted: tuple | None = None  # the key of the last request
        self._timer: Timer | None = None
        self._last_start = 0.0
        self._stale = True
        self._laid_out = WhenLaidOut(self, self.on_show)

    def compose(self) -> ComposeResult:
        yield Static(id="arena-status")
        yield Static(id="arena-table")
        with VerticalScroll(id="arena-chart-box"):
            yield Static(id="arena-chart")

    def on_mount(self) -> None:
        self.query_one("#arena-chart-box").can_focus = False  # keys stay with the screen; the mouse scrolls
        self._status(Text("The arena scores this model and others on the corpus when its tab is shown.", "dim"))

    def set_others(self, names: tuple[str, ...]) -> None:
        """The other tokenizers (presets or files), read in the worker when next scored."""
        self.others = names
        self._failed.clear()  # a file may have been fixed since
        self._wanted = None
        self._changed(now=True)

    def watch_snapshot(self) -> None:
        self._changed()

    def on_show(self) -> None:
        if self._stale:  # after the layout: until then the tab has no size and reads as hidden
            self.call_after_refresh(self._changed, True)

    def _key(self) -> tuple | None:
        if self.snapshot is None:
            return None
        return (*model_key(self.snapshot, self.corpus()), self.others)

    def _changed(self, now: bool = False) -> None:
        key = self._key()
        if key is None or key == self._wanted:
            return
        if not self.region.area:
            self._stale = True
            return self._laid_out.wait()
        if self._timer is not None:
            self._timer.stop()
        overdue = time.monotonic() - self._last_start > MOST_STALE and self.scored is not None
        if now or overdue:
            self._timer = None
            self.call_later(self._start)
        else:
            self._timer = self.set_timer(DEBOUNCE, self._start)

    def _start(self) -> None:
        self._timer = None
        key, corpus, snap = self._key(), self.corpus(), self.snapshot
        if key is None or corpus is None or snap is None or key == self._wanted:
            return
        self._wanted, self._stale, self._last_start = key, False, time.monotonic()
        if corpus is not self._scored_corpus:
            self._scored_corpus, self._other_scores = corpus, {}
        self._status(Text("scoring…", "dim"))
        self._score(key, snap.model, corpus, self.others, self._other_scores)

    @work(thread=True, exclusive=True, exit_on_error=False, group="arena", description="Scoring the arena")
    def _score(self, key: tuple, model, corpus: Corpus, others: tuple[str, ...],
               cache: dict[str, TokenizerScores]) -> None:
        worker = get_current_worker()
        texts = corpus_texts(corpus)
        reference = texts[0][0] if texts else None
        missing = [n for n in others if n not in cache and n not in self._failed]
        total, done = len(texts) * (1 + len(missing)), [0]

        def progress(what: str) -> Callable[[int, int], None]:
            def tick(_k: int, _n: int) -> None:
                if worker.is_cancelled:
                    raise _Cancelled
                done[0] += 1
                self.post_message(self.Progress(done[0], total, what))
            return tick

        try:
            own = score_tokenizer(THIS, model, texts, reference, progress(THIS))
            for name in missing:
                try:
                    if name not in self._models:
                        self.post_message(self.Progress(done[0], total, f"reading {name}"))
                        self._models[name] = open_model(name)
                    scored = score_tokenizer(name, self._models[name], texts, reference, progress(name))
                except TokWorkbenchError as exc:
                    self._failed[name] = str(exc)
                    continue
                cache[name] = scored
        except _Cancelled:
            return
        rows = [cache[n] for n in others if n in cache]
        failed = [f"{n}: {self._failed[n]}" for n in others if n in self._failed]
        self.post_message(self.Scored(key, own, rows, failed, [n for n, _ in texts]))

    def on_arena_panel_progress(self, message: Progress) -> None:
        if self._wanted is None or self.scored is not None and self.scored.key == self._wanted:
            return
        filled = round(20 * message.done / max(1, message.total))
        self._status(Text.assemble(("scoring ", "dim"), ("█" * filled + "░" * (20 - filled), "cyan"),
                                   (f" {message.done}/{message.total} {message.what}", "dim")))

    def on_arena_panel_scored(self, message: Scored) -> None:
        if message.key != self._wanted:
            return  # an older request's answer
        self.scored = message
        self._draw()

    def on_resize(self, event) -> None:
        """Redraw to the new width. The tab's size can also come after its Show (a busy
        machine): a change that waited for it goes then, or it would wait for the next merge."""
        if self._stale and event.size.area:
            self.call_after_refresh(self._changed, True)
        if self.scored is not None:
            self._draw()

    def _status(self, text: Text) -> None:
        self.query_one("#arena-status", Static).update(text)

    def _draw(self) -> None:
        s = self.scored
        rows = [s.own, *s.others]
        colours = {t.name: COLOURS[k % len(COLOURS)] for k, t in enumerate(rows)}
        status = Text()
        status.append(f"{len(s.texts)} texts", "bold")
        status.append(f" · bytes per token on each (longer: fewer tokens) · ×premium: tokens against {s.texts[0]}'s"
                      " · A: other tokenizers", "dim")
        for why in s.failed:
            status.append(f"\n✗ {why}", "red")
        self._status(status)
        width = self.query_one("#arena-chart-box").size.width or self.size.width
        self.query_one("#arena-table", Static).update(describe_table(rows, colours, width))
        self.query_one("#arena-chart", Static).update(describe_chart(rows, s.texts, colours, width))
