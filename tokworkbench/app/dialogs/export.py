"""Format and path; the screen checks what the format cannot carry before anything is written."""

from pathlib import Path

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Input, Label, Select

from tokworkbench.app.dialogs.base import Dialog
from tokworkbench.app.widgets.steady_input import SteadyInput
from tokworkbench.core.registry import export

HISTORY = "history-csv"
# the formats `tokworkbench export` offers (the kind records'), then the history
FORMAT_CHOICES = {fmt: export.LABELS[fmt] for fmt in export.FORMATS} | {HISTORY: "the merge history (CSV)"}
DEFAULT_NAMES = {fmt: export.DEFAULT_NAMES[fmt] for fmt in export.FORMATS} | {HISTORY: "merges.csv"}


def folder_problem(value: str) -> str | None:
    """Why a typed path cannot be written to, or None (checked on the path as it will be used)."""
    if not value.strip():
        return "name a file"
    parent = Path(value.strip()).expanduser().parent
    return None if parent.is_dir() else f"folder {parent} does not exist"


class ExportDialog(Dialog):
    AUTO_FOCUS = "#export-path"  # not the format above it: keys typed right behind e belong in the path
    BINDINGS = [Binding("escape", "dismiss(None)", "Cancel")]

    def __init__(self, folder: Path | None = None):
        super().__init__()
        self.folder = folder

    def _default(self, fmt: str) -> str:
        return str(self.folder / DEFAULT_NAMES[fmt]) if self.folder else DEFAULT_NAMES[fmt]

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label("Export the model", classes="question")
            yield Select([(label, fmt) for fmt, label in FORMAT_CHOICES.items()], value="hf",
                         allow_blank=False, id="export-format")
            yield SteadyInput(self._default("hf"), id="export-path")
            yield Label("enter writes the file (atomically); shift+tab picks the format; a format that "
                        "cannot carry the model says why", id="export-error", classes="hint")

    def on_mount(self) -> None:
        self.query_one("#export-path", Input).focus()

    def on_select_changed(self, event: Select.Changed) -> None:
        box = self.query_one("#export-path", Input)
        if box.value in {self._default(f) for f in DEFAULT_NAMES}:
            box.value = self._default(event.value)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        problem = folder_problem(event.value)
        if problem:
            return self.show_error("#export-error", problem)
        path = str(Path(event.value.strip()).expanduser())
        self.dismiss((self.query_one("#export-format", Select).value, path))
