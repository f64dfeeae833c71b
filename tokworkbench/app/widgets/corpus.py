"""The corpus pane: documents, corpus statistics, and a window of text with token boundaries."""

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from ..messages import DocumentSelected, WindowMove
from .tokentext import TokenText


class CorpusPane(Vertical):
    """Shows; never computes. The app hands it rendered text and statistics."""

    BINDINGS = [
        Binding("left_square_bracket", "window(-1)", "Prev window", tooltip="Show the previous window of this document"),
        Binding("right_square_bracket", "window(1)", "Next window", tooltip="Show the next window of this document"),
    ]

    def compose(self) -> ComposeResult:
        yield Static(id="corpus-stats")
        with Horizontal(id="corpus-body"):
            yield OptionList(id="doc-list")
            yield TokenText(id="corpus-text")
        yield Static(id="corpus-window")

    def on_mount(self) -> None:
        self.border_title = "Corpus"

    def set_documents(self, names: list[str], sizes: list[int]) -> None:
        docs = self.query_one("#doc-list", OptionList)
        docs.clear_options()
        docs.add_options(
            Option(Text.assemble((name[:21].ljust(21), ""), (f"{size:>8,}", "dim"))) for name, size in zip(names, sizes)
        )
        if names:
            docs.highlighted = 0

    def show(self, stats: Text, runs: list[tuple[str, str]], window: str) -> None:
        # fixed-height lines: no layout pass, only a repaint of these widgets
        self.query_one("#corpus-stats", Static).update(stats, layout=False)
        self.query_one("#corpus-text", TokenText).set_runs(runs)
        self.query_one("#corpus-window", Static).update(Text(window), layout=False)

    def scroll_text_home(self) -> None:
        self.query_one("#corpus-text", TokenText).scroll_home(animate=False)

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        event.stop()
        self.post_message(DocumentSelected(event.option_index))

    def action_window(self, delta: int) -> None:
        self.post_message(WindowMove(delta))
