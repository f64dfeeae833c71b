"""The Viterbi lattice of one word: every vocabulary piece over its span, the best path on top.

The word comes from the encode box when it holds text, else from the corpus window (where it is
highlighted); `<` and `>` step through the words, and moving the piece table's cursor to a piece
takes the view to the first word that contains it. Drawn only while its tab is shown.
"""

from dataclasses import replace

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.geometry import Size
from textual.reactive import var
from textual.strip import Strip
from textual.widgets import Static

from tokworkbench.app.labels import plural
from tokworkbench.app.latticedraw import LatticeDrawing, cost_label, draw_lattice
from tokworkbench.app.messages import LatticeWordShown
from tokworkbench.app.render import palette_of
from tokworkbench.app.widgets.laidout import WhenLaidOut
from tokworkbench.app.widgets.lineview import LineView
from tokworkbench.core.errors import TokWorkbenchError
from tokworkbench.core.inspection.escape import visible
from tokworkbench.core.models.protocol import HasLattice
from tokworkbench.core.session.snapshot import Snapshot
from tokworkbench.core.unigram.rows import Lattice

GUTTER = 6  # the row labels on the left, which stay while the lattice scrolls sideways
MAX_WORD = 500  # characters of one word drawn; a longer chunk is cut (and says so)
MAX_WORDS = 5000  # words of the window offered
ENCODE, CORPUS = "encode", "corpus"  # where the words come from


def lattice_of(snap: Snapshot, word: str) -> Lattice | None:
    """The model's lattice for `word` (None for a kind that has none, BPE), costed as training
    costs it: in course mode every path starts at the course's cost 1. A constant start cost
    moves every path alike, so the path is the model's own."""
    if not isinstance(snap.model, HasLattice):
        return None
    lattice = snap.model.lattice(word)
    start = snap.model.start_cost
    if start and lattice.start_cost != start:
        shift = start - lattice.start_cost
        lattice = replace(lattice, best=tuple(b + shift for b in lattice.best), start_cost=start)
    return lattice


def encode_words(snap: Snapshot, text: str) -> list[str]:
    """The words a lattice is drawn for in typed text: its pre-tokenizer chunks, normalized."""
    return _distinct(chunk for chunk, _ in snap.model.encode_chunks(text))


def window_words(snap: Snapshot) -> list[str]:
    """The words of the corpus window (its text is already normalized and, for metaspace,
    rewritten); a window that starts inside a word leaves that partial word out."""
    window = snap.window
    chunks = snap.model.pre_tokenizer.split(window.text)
    if window.start > 0 and chunks:
        chunks = chunks[1:]
    return _distinct(chunks)


def word_at(snap: Snapshot, offset: int) -> str | None:
    """The pre-tokenizer chunk of the corpus window that holds character `offset`."""
    chunks = snap.model.pre_tokenizer.split(snap.window.text)
    pos = len(snap.window.text) - sum(map(len, chunks))  # metaspace's ▁ before a partial first word
    for chunk in chunks:
        if pos <= offset < pos + len(chunk):
            return chunk
        pos += len(chunk)
    return None


def _distinct(chunks) -> list[str]:
    seen: dict[str, None] = {}
    for chunk in chunks:
        if chunk and chunk not in seen:
            seen[chunk] = None
            if len(seen) >= MAX_WORDS:
                break
    return list(seen)


class LatticeView(LineView, can_focus=True):
    """The drawing, through the line API: the two head rows stay at the top, the lanes scroll
    under them, and the row labels stay at the left."""

    DEFAULT_CSS = """
    LatticeView {
        height: 1fr;
    }
    """

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.drawing: LatticeDrawing | None = None
        self._styles: dict[str, Style] = {}

    def show(self, drawing: LatticeDrawing | None) -> None:
        self.drawing = drawing
        if drawing is None:
            self.set_virtual_size(Size(0, 0))
        else:
            self.set_virtual_size(Size(GUTTER + drawing.width, len(drawing.head) + len(drawing.lanes)))
        self.refresh()

    def lines_text(self) -> list[str]:
        """Every row as plain text, labels included (what a test or a screen reader reads)."""
        d = self.drawing
        if d is None:
            return []
        return [f"{label:<{GUTTER}}" + "".join(t for t, _ in line)
                for label, line in zip(d.head_labels + d.lane_labels, d.head + d.lanes)]

    def _style(self, spec: str) -> Style:
        style = self._styles.get(spec)
        if style is None:
            style = self._styles[spec] = Style.parse(spec) if spec else Style()
        return style

    def render_line(self, y: int) -> Strip:
        width, base = self.size.width, self.base_style
        d = self.drawing
        if d is None:
            return Strip.blank(width, base)
        head = len(d.head)
        if y < head:
            label, line = d.head_labels[y], d.head[y]
        else:
            index = y - head + self.scroll_offset.y
            if index >= len(d.lanes):
                return Strip.blank(width, base)
            label, line = d.lane_labels[index], d.lanes[index]
        body = Strip([Segment(text, self._style(spec)) for text, spec in line])
        x = self.scroll_offset.x
        body = body.crop(x, x + max(0, width - GUTTER))
        gutter = Strip([Segment(f"{label:<{GUTTER}}"[:GUTTER], self._style("dim"))])
        return Strip.join([gutter, body]).extend_cell_length(width, base).crop(0, width).apply_style(base)


class LatticePanel(Vertical):
    DEFAULT_CSS = """
    LatticePanel {
        height: 1fr;
    }
    LatticePanel #lattice-info {
        height: 1;
        padding: 0 1;
    }
    LatticePanel #lattice-view {
        padding: 0 1;
    }
    """
    BINDINGS = [
        Binding("less_than_sign", "word(-1)", "Prev word", tooltip="Lattice: the previous word"),
        Binding("greater_than_sign", "word(1)", "Next word", tooltip="Lattice: the next word"),
    ]

    snapshot: var[Snapshot | None] = var(None, always_update=True)
    """The session as the core last reported it: its model draws the lattice."""
    encode_text: var[str] = var("")
    """The encode box's text: its words are shown instead of the corpus's when not empty."""
    selected_piece: var[int | None] = var(None)
    """The piece under the piece table's cursor: marked wherever it is in the lattice."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.words: list[str] = []
        self.index = 0
        self.source = ""
        self._stale = True
        self._laid_out = WhenLaidOut(self, self.on_show)
        self._drawn_key: tuple | None = None
        self._go_to_piece: int | None = None  # a piece the user chose: show its first word
        self._announced: str | None = None
        self._corpus_first = False  # a corpus word was clicked: it wins over the encode box's

    def compose(self) -> ComposeResult:
        yield Static("", id="lattice-info")
        yield LatticeView(id="lattice-view")

    def watch_snapshot(self) -> None:
        self._changed()

    def watch_encode_text(self) -> None:
        self.index = 0
        self._corpus_first = False
        self._changed()

    def watch_selected_piece(self) -> None:
        self._changed()

    def show_corpus_word(self, offset: int) -> bool:
        """Show the word at `offset` of the corpus window (a click there); False when the
        offset falls in no word (past the text)."""
        snap = self.snapshot
        if snap is None:
            return False
        word = word_at(snap, offset)
        words = window_words(snap)
        if word not in words:  # past the text, or the partial word a window starts inside
            return False
        self._corpus_first = True
        self.index = words.index(word)
        self._changed()
        return True

    def show_piece(self, piece: int | None) -> None:
        """The user chose this piece in the table: show the first word that holds it."""
        self._go_to_piece = piece
        self._changed()

    def on_show(self) -> None:
        if self._stale:
            self.rebuild()
        else:
            self._announce(self.word if self.source == CORPUS else None)

    def on_hide(self) -> None:
        self._announce(None)  # the corpus stops marking the word when the lattice is not shown

    def _announce(self, word: str | None) -> None:
        if word != self._announced:
            self._announced = word
            self.post_message(LatticeWordShown(word))

    def _changed(self) -> None:
        self._stale = True
        if self.region.area:
            self.rebuild()
        else:
            self._laid_out.wait()

    def on_resize(self) -> None:
        if self.region.area and self.snapshot is not None:
            self.call_after_refresh(self.rebuild)  # a short word spreads over the new width

    def action_word(self, delta: int) -> None:
        index = self.index + delta
        if not 0 <= index < len(self.words):
            self.notify(f"this is the {'first' if delta < 0 else 'last'} word of the {self.source}", timeout=3)
            return
        self.index = index
        self.rebuild()

    @property
    def word(self) -> str | None:
        return self.words[self.index] if self.words else None

    def rebuild(self) -> None:
        snap = self.snapshot
        if snap is None:
            return
        self._stale = False
        info = self.query_one("#lattice-info", Static)
        view = self.query_one("#lattice-view", LatticeView)
        if not isinstance(snap.model, HasLattice):
            info.update(Text("The lattice is a Unigram view: choose model unigram in settings (c).", "dim"))
            view.show(None)
            return
        try:
            if self.encode_text and not self._corpus_first:
                self.source, self.words = ENCODE, encode_words(snap, self.encode_text)
            else:
                self.source, self.words = CORPUS, window_words(snap)
        except TokWorkbenchError as exc:
            info.update(Text(f"✗ {exc}", "bold red"))
            view.show(None)
            return
        piece, self._go_to_piece = self._go_to_piece, None
        if piece is not None and self.source == CORPUS:
            self._jump_to(snap, piece)
        self.index = max(0, min(self.index, len(self.words) - 1))
        word = self.word
        self._announce(word if self.source == CORPUS else None)
        if word is None:
            info.update(Text(f"{self.source}: no words to draw. Type in the encode box, or open a corpus.", "dim"))
            view.show(None)
            return
        cut = len(word) > MAX_WORD
        lattice = lattice_of(snap, word[:MAX_WORD])
        # the width inside the padding, less a vertical scrollbar's: a short word fills it and
        # never needs a horizontal scrollbar
        room = max(0, view.scrollable_content_region.width - GUTTER - 2)
        key = (lattice, self.selected_piece, id(palette_of(self.app)), room)
        if key != self._drawn_key:
            if self._drawn_key is None or self._drawn_key[0].text != lattice.text:
                view.scroll_home(animate=False)  # another word starts at its beginning
            self._drawn_key = key
            view.show(draw_lattice(lattice, palette_of(self.app), self.selected_piece, room))
        info.update(describe(lattice, self.source, self.index, len(self.words), cut, view.drawing.hidden))

    def _jump_to(self, snap: Snapshot, piece: int) -> None:
        """Show the first word that holds the piece (a word of its own text, at least)."""
        try:
            text = snap.model.token_text(piece)
        except (TokWorkbenchError, IndexError, KeyError):
            return
        for k, w in enumerate(self.words):
            if text and text in w:
                self.index = k
                return

    def text_lines(self) -> list[str]:
        return self.query_one("#lattice-view", LatticeView).lines_text()


def describe(lattice: Lattice, source: str, index: int, count: int, cut: bool, hidden: int = 0) -> Text:
    """The line above the lattice: which word, its best cost, and the course's start cost."""
    n = len(lattice.text)
    out = Text(no_wrap=True, overflow="ellipsis")
    out.append(f"{source} {index + 1}/{count} ", "dim")
    out.append(visible(lattice.text[:40]) + ("…" if n > 40 else ""), "bold")
    total = lattice.best[-1] if lattice.best else float("inf")
    out.append(f" · best {cost_label(total)} in {plural(len(lattice.path), 'piece')}")
    if lattice.start_cost:
        out.append(f" · starts at {lattice.start_cost:g} (course)", "italic")
    out.append(f" · {plural(len(lattice.edges), 'candidate piece')} over {plural(n, 'char')}", "dim")
    if cut:
        out.append(f" · first {MAX_WORD:,} chars", "dim")
    if hidden:
        out.append(f" · {hidden:,} not drawn (lanes full)", "dim")
    out.append(" · < > word", "dim")
    return out
