"""Every key, built from the bindings that the screen and its panes declare."""

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Static

from .base import Dialog


class HelpDialog(Dialog):
    DEFAULT_CSS = """
    HelpDialog #help-box {
        width: 90;
        max-width: 100%;
        height: 80%;
        border: thick $accent;
        background: $surface;
        padding: 1 2;
    }
    """
    BINDINGS = [Binding("escape,q,question_mark", "dismiss", "Close help")]

    def __init__(self, sections: list[tuple[str, list[tuple[str, str]]]], notes: str = ""):
        super().__init__()
        self.sections, self.notes = sections, notes

    def compose(self) -> ComposeResult:
        text = Text()
        text.append("tokworkbench", "bold")
        text.append(" — watch byte-pair encoding learn one merge at a time, or Unigram prune one round at a time.\n\n")
        for title, keys in self.sections:
            text.append(f"{title}\n", "bold")
            for key, desc in keys:
                text.append("  ")
                text.append(f" {key} ", "reverse")
                text.append(f"  {desc}\n")
            text.append("\n")
        text.append(self.notes)
        with VerticalScroll(id="help-box"):
            yield Static(text)
