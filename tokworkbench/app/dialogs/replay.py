"""Which tokenizer to replay on this corpus, and the pattern a bare ranks file needs."""

from pathlib import Path

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Input, Label, Select

from tokworkbench.app.dialogs.base import Dialog
from tokworkbench.app.widgets.steady_input import SteadyInput
from tokworkbench.core.formats.presets import ALIASES, is_preset
from tokworkbench.core.formats.presets import PRESETS as ENCODINGS
from tokworkbench.core.text.patterns import PRESETS

FROM_FILE = "from the file"
PRESET_NAMES = ", ".join(n for n in (*ENCODINGS, *ALIASES) if n != "r50k_base")  # gpt2 is r50k_base


class ReplayDialog(Dialog):
    """Answers (path, split or None); split matters only for a .tiktoken file without its
    companion JSON."""

    BINDINGS = [Binding("escape", "dismiss(None)", "Cancel")]

    def __init__(self, question: str = "Tokenizer to replay: a tokworkbench model, HF tokenizer.json, "
                 "minbpe .model or .tiktoken, or a preset (cl100k_base, o200k_base, gpt2)"):
        super().__init__()
        self.question = question  # the compare key asks for a tokenizer the same way

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(Text(self.question), classes="question")
            yield SteadyInput(placeholder="path/to/tokenizer.json, or cl100k_base", id="replay-path")
            yield Label("pattern for a bare .tiktoken file (others carry their own)", classes="hint")
            yield Select([(FROM_FILE, FROM_FILE)] + [(name, name) for name in PRESETS if name != "none"],
                         value=FROM_FILE, allow_blank=False, id="replay-split")
            yield Label("", id="replay-error", classes="hint")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        name = event.value.strip()
        path = Path(name).expanduser()
        if not name or not (path.is_file() or is_preset(name)):
            return self.show_error("#replay-error", f"no such file or preset: {path} (presets: {PRESET_NAMES})"
                                   if name else "name a file or a preset")
        split = self.query_one("#replay-split", Select).value
        self.dismiss((name if is_preset(name) else str(path), None if split == FROM_FILE else split))
