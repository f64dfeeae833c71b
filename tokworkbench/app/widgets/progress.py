"""One line under the panes while a load or a run goes: what is happening, and how far."""

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
        width: 50;
    }
    """

    def compose(self) -> ComposeResult:
        yield Label("", id="progress-label")
        yield ProgressBar(id="progress-bar", show_eta=False)

    def show(self, label: str, done: int | None = None, total: int | None = None) -> None:
        self.display = True
        # one line of fixed size: a new text needs no layout pass of the screen, which on a
        # large window took longer than the frame it updates and held keys (escape) behind it
        self.query_one("#progress-label", Label).update(label, layout=False)
        self.query_one("#progress-bar", ProgressBar).update(total=total, progress=done or 0)

    def hide(self) -> None:
        self.display = False
