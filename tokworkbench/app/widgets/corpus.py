"""The corpus pane: documents, corpus statistics, and a window of text with token boundaries."""

import regex
from rich.cells import cell_len, chop_cells
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.reactive import var
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from tokworkbench.app.kind_views import view_of
from tokworkbench.app.labels import plural
from tokworkbench.app.messages import CorpusClicked, DocumentSelected
from tokworkbench.app.render import palette_of
from tokworkbench.app.widgets.styledlines import StyledLines
from tokworkbench.app.widgets.tokentext import TokenText
from tokworkbench.core.inspection.segments import pair_occurrences
from tokworkbench.core.registry.kinds import kind_named
from tokworkbench.core.session.snapshot import Snapshot
from tokworkbench.core.text.corpus import CorpusStats


class CorpusPane(Vertical):
    DEFAULT_CSS = """
    CorpusPane #corpus-stats {
        height: 2;
        padding: 0 1;
    }
    CorpusPane #corpus-body {
        height: 1fr;
    }
    CorpusPane #doc-list {
        width: 32%;
        min-width: 31;
        max-width: 64;
        height: 1fr;
        border: none;
    }
    CorpusPane #corpus-text {
        width: 1fr;
        height: 1fr;
        padding: 0 1;
    }
    CorpusPane #corpus-window {
        height: 1;
        color: $text-muted;
        padding: 0 1;
    }
    """
    snapshot: var[Snapshot | None] = var(None, always_update=True)
    """The session as the core last reported it."""
    selected_pair: var[tuple[int, int] | None] = var(None)
    """The pair chosen in the pair table; its occurrences are highlighted."""
    selected_piece: var[int | None] = var(None)
    """Unigram: the piece chosen in the piece table; where the segmentation uses it is highlighted."""
    lattice_word: var[str | None] = var(None)
    """Unigram: the word the lattice tab shows; while it is shown, its occurrences are highlighted."""
    stats: var[CorpusStats | None] = var(None)
    """Counts of the whole corpus (they change only when another corpus is opened)."""
    counts_source: var[str | None] = var(None)
    """The count file the corpus came from: chunks and counts, no text to draw."""
    cursor_span: var[tuple[int, int] | None] = var(None)
    """The window's token chosen by key (< >): marked as well."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._draw_pending = False
        self._names: list[str] = []
        self._sizes: list[int] = []

    def compose(self) -> ComposeResult:
        yield StyledLines(id="corpus-stats")
        with Horizontal(id="corpus-body"):
            yield OptionList(id="doc-list")
            yield TokenText(id="corpus-text")
        yield StyledLines(id="corpus-window")

    def on_mount(self) -> None:
        self.border_title = "Corpus"

    def set_documents(self, names: list[str], sizes: list[int]) -> None:
        self._names, self._sizes = names, sizes
        self._fill_documents(keep=False)

    def _fill_documents(self, keep: bool = True) -> None:
        """Names as wide as the list allows (it follows the pane's width)."""
        docs = self.query_one("#doc-list", OptionList)
        room = max(8, (docs.size.width or 31) - 10)  # the size column and the scrollbar
        highlighted = docs.highlighted if keep else 0
        with docs.prevent(OptionList.OptionHighlighted):
            docs.clear_options()
            docs.add_options(
                Option(Text.assemble((_fit(name, room), ""), (f"{size:>8,}", "dim")))
                for name, size in zip(self._names, self._sizes)
            )
            if self._names:
                docs.highlighted = min(highlighted or 0, len(self._names) - 1)

    def on_resize(self) -> None:
        if self._names:
            self.call_after_refresh(self._fill_documents)
        self.call_after_refresh(self._schedule_draw)  # the window's line fits its new width

    def highlight_document(self, index: int) -> None:
        """Follow a document change made by key, without announcing it again."""
        docs = self.query_one("#doc-list", OptionList)
        with docs.prevent(OptionList.OptionHighlighted):
            docs.highlighted = index

    def scroll_text_home(self) -> None:
        self.query_one("#corpus-text", TokenText).scroll_home(animate=False)

    def watch_snapshot(self) -> None:
        self._schedule_draw()

    def watch_selected_pair(self) -> None:
        self._schedule_draw()

    def watch_selected_piece(self) -> None:
        self._schedule_draw()

    def watch_lattice_word(self) -> None:
        self._schedule_draw()

    def watch_cursor_span(self) -> None:
        self._schedule_draw()

    def _schedule_draw(self) -> None:
        """A step changes the snapshot and then the selection: draw once, after both."""
        if not self._draw_pending:
            self._draw_pending = True
            self.call_later(self.draw_pending)

    def draw_pending(self) -> None:
        """Draw now what the changes so far asked for. The screen calls this once a key's
        changes are all made: drawn only when this pane's turn came, the text reached the
        screen a frame (17-35 ms) after the tables did."""
        if self._draw_pending:
            self._draw()

    def _draw(self) -> None:
        self._draw_pending = False
        snap, stats = self.snapshot, self.stats
        if snap is None or stats is None:
            return
        tokens = ((f"{snap.total_tokens:,}", "bold"), " tokens · ", (f"{snap.compression:.3f}", "bold"),
                  f" {snap.units.plural}/token")
        if not snap.total_tokens:  # a loaded tokenizer (inspect mode) counts the corpus in the background
            tokens = ("counting tokens…",)
        noun = kind_named(snap.kind).step  # a kind that is not trained has no steps to count
        line = Text.assemble(  # the training line first: it is what changes on every merge
            *tokens, " · vocab ", (f"{snap.vocab_size:,}", "bold"), f"/{snap.target:,}" if noun else "",
            f" · {plural(snap.steps, noun)}\n" if noun else "\n",
            f"{plural(stats.documents, 'doc')} · {stats.chars:,} chars · {stats.bytes:,} bytes · "
            f"{stats.distinct_chars:,} distinct chars",
        )
        if self.counts_source is not None:
            self._draw_counts_only(line, snap)
            return
        window = snap.window
        what = "pair"
        pieces = view_of(snap.kind).marks_pieces
        if pieces and self.lattice_word:
            what, marks = "word (lattice)", word_occurrences(snap, self.lattice_word)
        elif pieces:
            what, piece = "piece", self.selected_piece
            marks = [(s.start, s.end) for s in window.spans if s.token == piece] if piece is not None else []
        else:
            marks = pair_occurrences(window.spans, self.selected_pair) if self.selected_pair else []
        shown = marks + [self.cursor_span] if self.cursor_span else marks
        end = window.start + len(window.text)
        span = f"chars {window.start:,}–{end:,} of {window.doc_length:,}"
        room = self.query_one("#corpus-window", StyledLines).size.width
        name = _document_item(self._names, window.doc, room - cell_len(span) if room else None)
        # whole items while they fit: the occurrences before the keys, which help lists too
        where = (f"{name}{span}" + (f"  ·  {plural(len(marks), 'occurrence')} of the {what}" if marks else "")
                 + "  ·  [ ] window  , . document")
        # only the lines that changed are repainted: the stats' first line, on a merge
        self.query_one("#corpus-stats", StyledLines).show(line)
        self.query_one("#corpus-text", TokenText).show_tokens(window.text, window.spans, shown, palette_of(self.app))
        self.query_one("#corpus-window", StyledLines).show(Text(where))

    def _draw_counts_only(self, line: Text, snap: Snapshot) -> None:
        """A count file holds chunks and counts but no running text: say so where the text goes."""
        note = [
            ("Only chunk counts are available", "bold"), (f" (from {self.counts_source}).\n\n", ""),
            ("A count file keeps each distinct pre-tokenizer chunk and how often it occurs, but not the "
             "documents' text, so there is no text to draw here. The pair table, the merges, undo, runs, "
             "saving and the encode pane work as usual, and the merges equal training on the text itself.\n\n", ""),
            ("The normalizer and the split come from the file; open the text to change them.", "dim"),
        ]
        runs = [(word, spec) for text, spec in note for word in regex.split(r"(?<= )", text) if word]
        self.query_one("#corpus-stats", StyledLines).show(line)
        self.query_one("#corpus-text", TokenText).set_runs(runs)  # words as runs: wrapped between words
        self.query_one("#corpus-window", StyledLines).show(Text(f"count file {self.counts_source}: chunk counts only"))

    def on_token_text_clicked(self, event: TokenText.Clicked) -> None:
        """A click names the span drawn there, whose token the screen selects (segments carry
        no click action of their own: a style per token cost a third of drawing a merge)."""
        event.stop()
        tokens = self.counts_source is None  # a count file's note names no token
        self.post_message(CorpusClicked(event.offset, event.item if tokens else None))

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        event.stop()
        self.post_message(DocumentSelected(event.option_index))


def word_occurrences(snap: Snapshot, word: str) -> list[tuple[int, int]]:
    """Where `word` is a whole pre-tokenizer chunk of the window (the chunks join to its text)."""
    chunks = snap.model.pre_tokenizer.split(snap.window.text)
    # metaspace puts a ▁ before a window that starts inside a word: it is not in the text
    marks, pos = [], len(snap.window.text) - sum(map(len, chunks))
    for chunk in chunks:
        if chunk == word:
            marks.append((pos, pos + len(chunk)))
        pos += len(chunk)
    return marks


def _fit(name: str, room: int) -> str:
    return name.ljust(room) if len(name) <= room else name[: room - 1] + "…"


def _document_item(names: list[str], doc: int, room: int | None) -> str:
    """The window line's first item, the document ("name (2/9)  ·  "), in `room` cells beside
    the chars shown (None: any width). The chars shown are what a window key changes, so a
    narrow pane cuts the name, then leaves it out, then the document's number: on a long
    document at 80 columns the line broke after the name, and its second row (the chars) was
    not drawn."""
    if not names:
        return ""
    number, gap = f"({doc + 1}/{len(names)})", "  ·  "
    whole = f"{names[doc]} {number}{gap}"
    if room is None or cell_len(whole) <= room:
        return whole
    keep = room - cell_len(number) - cell_len(gap) - 2  # the space and the …
    if keep >= 4:
        return f"{chop_cells(names[doc], keep)[0]}… {number}{gap}"  # in cells: a CJK name too
    return f"{number}{gap}" if cell_len(number) + cell_len(gap) <= room else ""
