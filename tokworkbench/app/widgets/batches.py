"""Batches: the corpus as a language model is fed it, by the model being trained here.

The documents are encoded with their boundaries into one stream; windows of T ids become the
B×T inputs, the same shifted by one the targets; in padded mode each document is a row, filled
with PAD, with -100 targets the loss ignores. One row's allowed matrix (causal ∧ padding) is
drawn beside the grid. The keys change T, B, the seed and the mode, and write the batch.

The documents here are the corpus files' non-empty lines, as a text dataset loader reads a file
(one example a line): the first LINES of each file, each cut to DOC_CHARS characters. So
boundaries and padded rows of different lengths are there to see, and the stream stays small: a
batch is a handful of windows, and encoding the whole corpus on every merge would cost more
than the merge.
"""

import time
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
from rich.cells import cell_len
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, ScrollableContainer, Vertical
from textual.reactive import var
from textual.widgets import Static

from tokworkbench.app.batchdraw import (
    BOUNDARY,
    IGNORE,
    LABEL,
    draw_allowed,
    draw_grid,
    draw_stream,
    grid_layout,
    row_lines,
)
from tokworkbench.app.dialogs.export import folder_problem
from tokworkbench.app.dialogs.prompt import PromptDialog
from tokworkbench.app.labels import plural
from tokworkbench.app.messages import BatchExport
from tokworkbench.app.render import palette_of
from tokworkbench.app.widgets.laidout import WhenLaidOut
from tokworkbench.core.batching import Batch, BatchSpec, document_ids, make_batch
from tokworkbench.core.errors import TokWorkbenchError
from tokworkbench.core.models.roles import role_ids
from tokworkbench.core.session.snapshot import Snapshot

LINES = 8  # documents (non-empty lines) taken from each corpus file
DOC_CHARS = 200  # characters of each document the stream is cut from
MODES = ("stride", "random", "pad")  # what m cycles through; "starts" comes from the p prompt
CATCH_UP = 0.5  # seconds between cuts while snapshots stream in (a run)
MAX_T, MAX_B = 64, 32  # what the view draws; the CLI takes any size


def line_documents(texts: Iterable[str]) -> tuple[str, ...]:
    """The first LINES non-empty lines of each text, each cut to DOC_CHARS characters."""
    docs: list[str] = []
    for text in texts:
        lines = (line for line in text.splitlines() if line.strip())
        docs.extend(line[:DOC_CHARS] for line, _ in zip(lines, range(LINES)))
    return tuple(docs)


@dataclass(frozen=True)
class BatchChoice:
    """What the user picked: the spec without the texts, and which row's matrix is drawn."""

    context: int = 8
    batch: int = 4
    mode: str = "stride"
    stride: int | None = None  # None: T, windows side by side
    seed: int = 0
    starts: tuple[int, ...] = ()
    row: int = 0

    def spec(self) -> BatchSpec:
        return BatchSpec(context=self.context, mode=self.mode, starts=self.starts, stride=self.stride,
                         batch=None if self.mode == "starts" else self.batch, seed=self.seed)

    def words(self) -> str:
        """The choice as the p prompt takes it back."""
        words = [f"T={self.context}", f"B={self.batch}", f"mode={self.mode}", f"seed={self.seed}"]
        if self.stride:
            words.append(f"stride={self.stride}")
        if self.starts:
            words.append("starts=" + ",".join(map(str, self.starts)))
        return " ".join(words)

    def describe(self) -> str:
        how = {"stride": f"stride {self.stride or self.context}", "random": f"random starts, seed {self.seed}",
               "pad": "one padded row per document", "starts": "starts " + ",".join(map(str, self.starts))}
        return f"T {self.context} · B {self.batch} · {how[self.mode]}"


def parse_choice(value: str, base: BatchChoice) -> BatchChoice:
    """`T=8 B=4 mode=random seed=3 stride=4 starts=0,5` (any of them, any order) over `base`;
    a ValueError says what is wrong in words."""
    names = {"t": "context", "context": "context", "b": "batch", "batch": "batch", "seed": "seed",
             "stride": "stride", "mode": "mode", "starts": "starts"}
    changes: dict = {}
    for word in value.split():
        key, eq, raw = word.partition("=")
        field = names.get(key.lower())
        if not eq or field is None:
            raise ValueError(f"{word!r}: write key=value, with key one of T, B, mode, seed, stride, starts")
        if field == "mode":
            if raw not in (*MODES, "starts"):
                raise ValueError(f"mode {raw!r}: one of {', '.join((*MODES, 'starts'))}")
            changes["mode"] = raw
        elif field == "starts":
            try:
                changes["starts"] = tuple(int(s) for s in raw.split(",") if s)
            except ValueError:
                raise ValueError(f"starts {raw!r}: whole numbers separated by commas") from None
            changes.setdefault("mode", "starts")
        else:
            try:
                changes[field] = int(raw)
            except ValueError:
                raise ValueError(f"{key} {raw!r}: a whole number, please") from None
    choice = replace(base, **changes)
    if choice.mode == "starts" and not choice.starts:
        raise ValueError("mode starts needs starts=LIST, e.g. starts=0,5")
    if choice.mode == "starts":
        choice = replace(choice, batch=len(choice.starts))
    if not 1 <= choice.context <= MAX_T or not 1 <= choice.batch <= MAX_B:
        raise ValueError(f"the view draws T from 1 to {MAX_T} and B from 1 to {MAX_B} "
                         "(the batches command takes any size)")
    if choice.stride is not None and choice.stride <= 0:
        raise ValueError("stride must be at least 1")
    return replace(choice, row=min(choice.row, choice.batch - 1))


@dataclass(frozen=True)
class BatchResult:
    """What the panel draws: the stream with each document's first position, and the batch
    (or why there is none)."""

    stream: np.ndarray
    boundaries: tuple[int, ...]
    documents: int
    batch: Batch | None
    error: str | None


def cut_batch(model, texts: tuple[str, ...], choice: BatchChoice) -> BatchResult:
    """Everything drawn, from the core: the stream, where each document starts, the batch."""
    try:
        docs = document_ids(model, texts)
    except TokWorkbenchError as exc:
        return BatchResult(np.zeros(0, np.int64), (), len(texts), None, str(exc))
    lengths = [len(d) for d in docs]
    stream = np.fromiter((i for d in docs for i in d), np.int64, sum(lengths))
    bounds = tuple(np.cumsum([0, *lengths[:-1]]).tolist())
    try:
        batch = make_batch(model, texts, choice.spec())
    except TokWorkbenchError as exc:
        return BatchResult(stream, bounds, len(texts), None, str(exc))
    return BatchResult(stream, bounds, len(texts), batch, None)


class BatchesPanel(Vertical, can_focus=True):
    """Focusable itself (tab, or b from anywhere), so its keys are in the footer; its scroll
    areas are not, so up and down choose the row whose matrix is drawn."""

    DEFAULT_CSS = """
    BatchesPanel {
        height: 1fr;
    }
    BatchesPanel:focus {
        background: $boost;
    }
    BatchesPanel #batch-summary {
        height: 1;
        padding: 0 1;
    }
    BatchesPanel #batch-stream {
        height: auto;
        max-height: 2;
        padding: 0 1;
    }
    BatchesPanel #batch-body {
        height: 1fr;
    }
    BatchesPanel #batch-grid-box {
        width: 1fr;
        padding: 0 1;
        scrollbar-size-vertical: 1;
    }
    BatchesPanel #batch-grid {
        width: auto;
    }
    BatchesPanel #batch-notes {
        width: 100%;
        margin-top: 1;
    }
    BatchesPanel #batch-matrix-box {
        width: auto;
        max-width: 40%;
        padding: 0 1;
        border-left: vkey $primary-darken-1;
        scrollbar-size-vertical: 1;
    }
    BatchesPanel #batch-matrix {
        width: auto;
    }
    """
    # every key is a priority binding: the app runs it as the key arrives, so keys in a burst keep
    # their order (a plain binding waits in the pane's queue, and w right behind − overtook it)
    BINDINGS = [
        Binding("plus,equals_sign", "context(1)", "T+", tooltip="Batches: a longer context T", priority=True),
        Binding("minus", "context(-1)", "T−", tooltip="Batches: a shorter context T", priority=True),
        Binding("greater_than_sign", "rows(1)", "B+", tooltip="Batches: one more row B", priority=True),
        Binding("less_than_sign", "rows(-1)", "B−", tooltip="Batches: one row fewer", priority=True),
        Binding("m", "mode", "Mode", priority=True,
                tooltip="Batches: next mode (stride, random starts, one padded row per document)"),
        Binding("g", "reseed", "Seed", tooltip="Batches: the next seed (random starts)", priority=True),
        Binding("p", "params", "Params", tooltip="Batches: type T, B, mode, seed, stride or starts", priority=True),
        Binding("w", "write", "Write .npz", tooltip="Batches: write this batch as .npz (atomic)", priority=True),
        Binding("down", "row(1)", "Next row", show=False, priority=True,
                tooltip="Batches: the next row (its allowed matrix is drawn)"),
        Binding("up", "row(-1)", "Prev row", show=False, tooltip="Batches: the previous row", priority=True),
    ]

    snapshot: var[Snapshot | None] = var(None, always_update=True)
    """The session as the core last reported it: its model cuts the batch."""
    texts: var[tuple[str, ...]] = var(())
    """The documents batches are cut from (`line_documents` of the corpus, set by the screen)."""
    folder: Path | None = None
    """Where the write prompt proposes the file (the screen keeps it current)."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.choice = BatchChoice()
        self.result: BatchResult | None = None
        self._stale = True
        self._laid_out = WhenLaidOut(self, self.on_show)
        self._drawn_width = 0  # the grid's bands were cut for this width
        self._last_cut = 0.0  # time.monotonic() of the last cut
        self._catching_up = False  # a timer will cut the newest model

    def compose(self) -> ComposeResult:
        yield Static(id="batch-summary")
        yield Static(id="batch-stream")
        with Horizontal(id="batch-body"):
            with ScrollableContainer(id="batch-grid-box"):
                yield Static(id="batch-grid")
                yield Static(id="batch-notes")
            with ScrollableContainer(id="batch-matrix-box"):
                yield Static(id="batch-matrix")

    def on_mount(self) -> None:
        for box in self.query(ScrollableContainer):
            box.can_focus = False

    # -- state -----------------------------------------------------------------------------
    def watch_snapshot(self) -> None:
        self._changed()

    def watch_texts(self) -> None:
        self._changed()

    def on_show(self) -> None:
        if self._stale:
            self._rebuild()

    def on_resize(self) -> None:
        if self.result is not None and self.result.batch is not None and self._grid_width() != self._drawn_width:
            self._draw()

    def _grid_width(self, matrix: Text | None = None) -> int:
        """The grid's room: the pane less the matrix beside it (its text's width, its padding and
        border, at most 40%), the grid's padding and a scrollbar. Worked out, not read from the
        layout, which is known only a frame after the matrix has grown with T.
        (Both boxes: padding 1 each side, a one-cell scrollbar; the matrix's border one more.)"""
        total = self.size.width or self.app.size.width
        if matrix is None:
            return self._drawn_width or total
        drawn = max((cell_len(line) for line in matrix.plain.splitlines()), default=0)
        return max(LABEL + 6, total - min(drawn + 4, int(total * 0.4)) - 3)

    def _changed(self) -> None:
        """A new model or new texts: cut again now if on screen (else when shown), but at most
        every CATCH_UP seconds: a run sends five snapshots a second, and a cut encodes every
        document (tens of ms). The last one is always drawn."""
        self._stale = True
        if not self.region.area:
            return self._laid_out.wait()
        wait = self._last_cut + CATCH_UP - time.monotonic()
        if wait <= 0:
            self._rebuild()
        elif not self._catching_up:
            self._catching_up = True
            self.set_timer(wait, self._catch_up)

    def _catch_up(self) -> None:
        self._catching_up = False
        if self._stale and self.region.area:
            self._rebuild()

    def choose(self, choice: BatchChoice) -> None:
        self.choice = choice
        self._rebuild()

    def _rebuild(self) -> None:
        if self.snapshot is None or not self.texts:
            return
        self._stale = False
        self._last_cut = time.monotonic()
        self.result = cut_batch(self.snapshot.model, self.texts, self.choice)
        self._draw()

    # -- drawing ---------------------------------------------------------------------------
    def _draw(self) -> None:
        r, choice, model = self.result, self.choice, self.snapshot.model
        palette = palette_of(self.app)
        roles = {tid: role for role, tid in role_ids(model).items()}
        batch = r.batch
        summary = Text(no_wrap=True, overflow="ellipsis")
        summary.append(choice.describe(), "bold")
        if batch is not None:
            summary.append(f" · {batch.valid_targets:,}/{batch.targets.size:,} targets valid", "bold")
            if batch.uniform_loss is not None:
                summary.append(f" · ln V {batch.uniform_loss:.3f}", "dim")
        summary.append(f" · {plural(len(r.stream), 'id')} in {plural(r.documents, 'doc')}", "dim")
        if batch is not None:
            summary.append(f" · fp {batch.fingerprint[:8]}", "dim")
        self.query_one("#batch-summary", Static).update(summary)

        start = int(batch.starts[choice.row]) if batch is not None else None
        if start is None:
            window = None
        elif choice.mode == "pad":  # the row's document, as far as the row holds it
            window = (start, start + int(batch.attention_mask[choice.row].sum()))
        else:  # the inputs and the one target past them
            window = (start, start + choice.context + 1)
        lo = max(0, (start or 0) - 4)
        shown = max(3 * choice.context, self.size.width // 2)
        # no label in front: the stream has no spaces to wrap at (␣ is drawn), so a label's
        # space was where it wrapped, and the first of its two lines was lost to the label
        self.query_one("#batch-stream", Static).update(
            draw_stream(r.stream, r.boundaries, model.token_text, roles, palette, window, lo, lo + shown))

        grid = self.query_one("#batch-grid", Static)
        matrix = self.query_one("#batch-matrix", Static)
        notes = Text()  # under the grid, wrapped to the pane
        if r.error:
            notes.append("✗ ", palette.ignored)
            notes.append(r.error + "\n")
        if not roles:
            notes.append(f"No BOS/EOS/PAD roles: {BOUNDARY} marks where a document starts; give special tokens "
                         "roles in settings (c).\n", "dim")
        notes.append(f"Documents: the first {LINES} non-empty lines of each corpus file, each cut to {DOC_CHARS} "
                     "characters. Keys: + − T · < > B · m mode · g seed · p type them · ↑↓ row · "
                     "w write .npz", "dim")
        self.query_one("#batch-notes", Static).update(notes)
        if batch is None:
            grid.update("")
            matrix.update("")
            return
        drawn = draw_allowed(batch.allowed(choice.row), choice.row, start,
                             int((batch.targets[choice.row] != IGNORE).sum()))
        matrix.update(drawn)
        self._drawn_width = width = self._grid_width(drawn)
        grid.update(draw_grid(batch.inputs, batch.targets, model.token_text, roles, batch.attention_mask, palette,
                              choice.row, width))
        per_band = grid_layout(batch.inputs, batch.targets, roles, width)[1]
        box = self.query_one("#batch-grid-box", ScrollableContainer)
        row_top = 1 + choice.row * row_lines(choice.context, per_band)  # under the t header
        box.scroll_to(y=row_top if choice.row else 0, animate=False)

    # -- keys ------------------------------------------------------------------------------
    def action_context(self, delta: int) -> None:
        self.choose(replace(self.choice, context=max(1, min(MAX_T, self.choice.context + delta))))

    def action_rows(self, delta: int) -> None:
        if self.choice.mode == "starts":
            self.notify("with given starts, B is how many there are: p changes them, m leaves this mode",
                        title="B follows the starts")
            return
        batch = max(1, min(MAX_B, self.choice.batch + delta))
        self.choose(replace(self.choice, batch=batch, row=min(self.choice.row, batch - 1)))

    def action_mode(self) -> None:
        at = MODES.index(self.choice.mode) if self.choice.mode in MODES else -1
        self.choose(replace(self.choice, mode=MODES[(at + 1) % len(MODES)], row=0))

    def action_reseed(self) -> None:
        mode = "random" if self.choice.mode != "pad" else self.choice.mode
        self.choose(replace(self.choice, seed=self.choice.seed + 1, mode=mode))

    def action_row(self, delta: int) -> None:
        rows = len(self.result.batch.inputs) if self.result and self.result.batch is not None else 1
        self.choose(replace(self.choice, row=max(0, min(rows - 1, self.choice.row + delta))))

    def action_params(self) -> None:
        def validate(value: str) -> str | None:
            """The view's limits, then the core's checks (starts in range, a long enough stream)."""
            try:
                choice = parse_choice(value, self.choice)
            except ValueError as exc:
                return str(exc)
            if self.snapshot is not None and self.texts:
                return cut_batch(self.snapshot.model, self.texts, choice).error
            return None

        def done(value: str | None) -> None:
            if value is not None:
                self.choose(parse_choice(value, self.choice))

        self.app.push_screen(PromptDialog("Batch: T, B, mode (stride, random, pad, starts), seed, stride, starts",
                                          self.choice.words(), validate,
                                          "e.g. T=8 B=4 mode=random seed=3  ·  starts=0,5 cuts windows there"), done)

    def action_write(self) -> None:
        """Ask where, here and now (keys typed behind w land in the box); the screen writes."""
        if self._stale or self.result is None:
            self._rebuild()  # its tab was just shown: what is written is what is drawn
        batch = self.result.batch if self.result is not None else None
        if batch is None:
            self.notify(self.result.error if self.result and self.result.error else "no batch to write",
                        title="Nothing written", severity="warning")
            return

        def chosen(path: str | None) -> None:
            if path:
                self.post_message(BatchExport(batch, str(Path(path.strip()).expanduser())))

        self.app.push_screen(PromptDialog("Write the batch as .npz (inputs, targets, starts, mask, fingerprint)",
                                          str((self.folder or Path.cwd()) / "batch.npz"), folder_problem), chosen)
