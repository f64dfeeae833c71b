"""Which tokenizer to replay on this corpus, and the pattern a bare ranks file needs."""

from pathlib import Path

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Input, Label, Select

from ...core.text.pretokenize import PRESETS
from .base import Dialog
from ..widgets.steady_input import SteadyInput

FROM_FILE = "from the file"


class ReplayDialog(Dialog):
    """Answers (path, split or None); split matters only for a .tiktoken file without its
    companion JSON."""

    BINDINGS = [Binding("escape", "dismiss(None)", "Cancel")]

    def __init__(self, question: str = "Tokenizer to replay: a tokworkbench model, HF tokenizer.json, "
                 "minbpe .model or .tiktoken"):
        super().__init__()
        self.question = question  # the compare key asks for a tokenizer the same way

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(self.question, classes="question")
            yield SteadyInput(placeholder="path/to/tokenizer.json", id="replay-path")
            yield Label("pattern for a bare .tiktoken file (others carry their own)", classes="hint")
            yield Select([(FROM_FILE, FROM_FILE)] + [(name, name) for name in PRESETS if name != "none"],
                         value=FROM_FILE, allow_blank=False, id="replay-split")
            yield Label("", id="replay-error", classes="hint")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        path = Path(event.value.strip()).expanduser()
        if not event.value.strip() or not path.is_file():
            return self.show_error("#replay-error", f"no such file: {path}" if event.value.strip() else "name a file")
        split = self.query_one("#replay-split", Select).value
        self.dismiss((str(path), None if split == FROM_FILE else split))
