"""Pick corpus files or folders: type paths (space-separated) or choose one in the tree."""

import shlex
from pathlib import Path

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import DirectoryTree, Input, Label

from tokworkbench.app.dialogs.base import Dialog
from tokworkbench.app.widgets.steady_input import SteadyInput


class OpenDialog(Dialog):
    DEFAULT_CSS = """
    OpenDialog .dialog {
        width: 90;
        height: 80%;
    }
    OpenDialog #open-tree {
        height: 1fr;
    }
    """
    BINDINGS = [Binding("escape", "dismiss(None)", "Cancel")]

    def __init__(self, start: Path | None = None):
        super().__init__()
        self.start = start or Path.cwd()

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label("Open corpus: a file or folder (enter in the tree picks it; edit and press enter to open)",
                        classes="question")
            yield SteadyInput(placeholder="path/to/file.txt another/folder", id="open-input")
            yield DirectoryTree(self.start, id="open-tree")
            yield Label("", id="open-error", classes="hint")

    def on_directory_tree_file_selected(self, event: DirectoryTree.FileSelected) -> None:
        self._pick(event.path)

    def on_directory_tree_directory_selected(self, event: DirectoryTree.DirectorySelected) -> None:
        self._pick(event.path)

    def _pick(self, path: Path) -> None:
        box = self.query_one("#open-input", Input)
        box.value = shlex.quote(str(path))
        box.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        try:
            paths = [str(Path(p).expanduser()) for p in shlex.split(event.value)]
        except ValueError as exc:
            return self.show_error("#open-error", f"cannot read the paths: {exc}")
        missing = [p for p in paths if not Path(p).exists()]
        if not paths or missing:
            return self.show_error("#open-error", f"no such file or folder: {missing[0]}" if missing
                                   else "name a file or folder")
        self.dismiss(paths)
