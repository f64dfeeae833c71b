"""Every key, built from the bindings that the screen and its panes declare."""

import textwrap

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Static

from tokworkbench.app.dialogs.base import Dialog


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
        # the box's text width (90 columns or the screen, less border, padding and scrollbar):
        # a long description wraps under itself, not under its key
        width = max(30, min(90, self.app.size.width) - 10)
        key_width = max((len(key) for _, keys in self.sections for key, _ in keys), default=0) + 4
        text = Text()
        text.append("tokworkbench", "bold")
        text.append(" — watch byte-pair encoding learn one merge at a time, or Unigram prune one round at a time.\n\n")
        for title, keys in self.sections:
            text.append(f"{title}\n", "bold")
            for key, desc in keys:
                text.append("  ")
                text.append(f" {key} ", "reverse")
                lines = textwrap.wrap(desc, max(10, width - key_width - 2)) or [""]
                text.append(" " * (key_width - len(key) - 2) + lines[0] + "\n")
                for line in lines[1:]:
                    text.append(" " * (key_width + 2) + line + "\n")
            text.append("\n")
        text.append(self.notes)
        with VerticalScroll(id="help-box"):
            yield Static(text)
