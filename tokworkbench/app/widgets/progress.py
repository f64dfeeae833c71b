"""One line under the panes while a load or a run goes: what is happening, and how far."""

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Label, ProgressBar


class ProgressRow(Horizontal):
    DEFAULT_CSS = """
    ProgressRow {
        height: 1;
        padding: 0 1;
        background: $boost;
        display: none;
    }
    ProgressRow #progress-label {
        width: 1fr;
    }
    ProgressRow #progress-bar {
        width: 32;
    }
    """

    def __init__(self, stand_in_for: str | None = None, **kwargs):
        """`stand_in_for`: a one-line widget of the screen (the footer) that this row replaces
        while it shows, so the panes keep their size: a run's start and end then lay out no pane
        again (the corpus text rewrapped for a line less, and the keys waited behind it)."""
        super().__init__(**kwargs)
        self.stand_in_for = stand_in_for

    def _swap(self, showing: bool) -> None:
        self.display = showing
        if self.stand_in_for is not None:
            self.screen.query_one(self.stand_in_for).display = not showing

    def compose(self) -> ComposeResult:
        yield Label("", id="progress-label")
        yield ProgressBar(id="progress-bar", show_eta=False)

    def show(self, label: str, done: int | None = None, total: int | None = None) -> None:
        if not self.display:
            self._swap(True)
        # one line of fixed size: a new text needs no layout pass of the screen, which on a
        # large window took longer than the frame it updates and held keys (escape) behind it
        self.query_one("#progress-label", Label).update(Text(label), layout=False)
        self.query_one("#progress-bar", ProgressBar).update(total=total, progress=done or 0)

    def hide(self) -> None:
        if self.display:
            self._swap(False)
