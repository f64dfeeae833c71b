"""Modal screens: help, confirmations, prompts (target, save path), settings, and open."""

from pathlib import Path

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Grid, Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, DirectoryTree, Input, Label, Select, Static

from ..core.errors import TokWorkbenchError
from ..core.text.normalize import NORMALIZERS
from ..core.session import Settings
from ..core.bpe.tiebreak import TIE_BREAKS


class HelpScreen(ModalScreen[None]):
    """Every key, built from the bindings the app and its panels declare."""

    BINDINGS = [Binding("escape,q,question_mark", "dismiss", "Close help")]

    def __init__(self, sections: list[tuple[str, list[tuple[str, str]]]]):
        super().__init__()
        self.sections = sections

    def compose(self) -> ComposeResult:
        lines = ["[b]tokworkbench[/b] — watch byte-pair encoding learn, one merge at a time.\n"]
        for title, keys in self.sections:
            lines.append(f"[b]{title}[/b]")
            lines += [f"  [reverse] {key} [/reverse]  {desc}" for key, desc in keys]
            lines.append("")
        lines.append("The pair table's first row (▶) is the next merge. Red characters are cut by a "
                     "byte-level token. Everything is also in the command palette (ctrl+p).")
        with VerticalScroll(id="help-box"):
            yield Static("\n".join(lines))


class ConfirmScreen(ModalScreen[bool]):
    BINDINGS = [Binding("escape,n", "answer(False)", "No"), Binding("y", "answer(True)", "Yes")]

    def __init__(self, question: str, yes: str = "Yes"):
        super().__init__()
        self.question, self.yes = question, yes

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(self.question, classes="question")
            with Horizontal(classes="buttons"):
                yield Button(f"{self.yes} (y)", variant="warning", id="yes")
                yield Button("Cancel (n)", id="no")

    def on_mount(self) -> None:
        self.query_one("#no").focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, value: bool) -> None:
        self.dismiss(value)


class PromptScreen(ModalScreen[str | None]):
    """One line of input, checked by `validate` (returns an error message or None)."""

    BINDINGS = [Binding("escape", "dismiss(None)", "Cancel")]

    def __init__(self, title: str, value: str = "", validate=None, hint: str = ""):
        super().__init__()
        self.title_text, self.value, self.validate, self.hint = title, value, validate, hint

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(self.title_text, classes="question")
            yield Input(self.value, id="prompt-input")
            yield Label(self.hint, id="prompt-error", classes="hint")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        error = self.validate(event.value) if self.validate else None
        if error:
            label = self.query_one("#prompt-error", Label)
            label.update(error)
            label.add_class("error")
            return
        self.dismiss(event.value)


class SettingsScreen(ModalScreen[Settings | None]):
    """Units, normalizer, pre-tokenizer, tie-break and target; validated before it closes."""

    BINDINGS = [Binding("escape", "dismiss(None)", "Cancel"), Binding("ctrl+s", "apply", "Apply")]

    def __init__(self, settings: Settings):
        super().__init__()
        self.settings = settings

    def compose(self) -> ComposeResult:
        s = self.settings
        with Vertical(classes="dialog wide"):
            yield Label("Training settings — changing any but the target restarts training", classes="question")
            with Grid(id="settings-grid"):
                yield Label("units")
                yield Select([("byte (256 base ids)", "byte"), ("char (corpus characters)", "char")],
                             value=s.units, allow_blank=False, id="units")
                yield Label("normalizer")
                yield Select([(n, n) for n in NORMALIZERS], value=s.normalizer, allow_blank=False, id="normalizer")
                yield Label("pre-tokenizer")
                yield Select([(n, n) for n in ("none", "gpt2", "gpt4", "o200k", "custom")],
                             value=s.split, allow_blank=False, id="split")
                yield Label("custom regex")
                yield Input(s.pattern or "", placeholder=r"e.g. \w+|\s+|[^\w\s]+", id="pattern")
                yield Label("tie-break")
                yield Select([(t, t) for t in TIE_BREAKS], value=s.tie_break, allow_blank=False, id="tie_break")
                yield Label("target vocab")
                yield Input(str(s.target), id="target", type="integer")
            yield Label("", id="settings-error", classes="hint")
            with Horizontal(classes="buttons"):
                yield Button("Apply (ctrl+s)", variant="primary", id="apply")
                yield Button("Cancel (esc)", id="cancel")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "apply":
            self.action_apply()
        else:
            self.dismiss(None)

    def action_apply(self) -> None:
        split = self.query_one("#split", Select).value
        pattern = self.query_one("#pattern", Input).value or None
        try:
            target = int(self.query_one("#target", Input).value)
        except ValueError:
            return self._error("target vocabulary must be a whole number")
        settings = self.settings.with_(
            units=self.query_one("#units", Select).value,
            normalizer=self.query_one("#normalizer", Select).value,
            split=split,
            pattern=pattern if split == "custom" else None,
            tie_break=self.query_one("#tie_break", Select).value,
            target=target,
        )
        if split == "custom" and not pattern:
            return self._error("a custom pre-tokenizer needs a regex")
        try:
            settings.config()
        except TokWorkbenchError as exc:
            return self._error(str(exc))
        self.dismiss(settings)

    def _error(self, message: str) -> None:
        label = self.query_one("#settings-error", Label)
        label.update(message)
        label.add_class("error")


class OpenScreen(ModalScreen[list[str] | None]):
    """Pick files or folders: type paths (space-separated) or choose one in the tree."""

    BINDINGS = [Binding("escape", "dismiss(None)", "Cancel")]

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog wide tall"):
            yield Label("Open corpus: a file or folder (enter in the tree picks it; edit and press enter to open)",
                        classes="question")
            yield Input(placeholder="path/to/file.txt another/folder", id="open-input")
            yield DirectoryTree(Path.cwd(), id="open-tree")
            yield Label("", id="open-error", classes="hint")

    def on_directory_tree_file_selected(self, event: DirectoryTree.FileSelected) -> None:
        self._pick(event.path)

    def on_directory_tree_directory_selected(self, event: DirectoryTree.DirectorySelected) -> None:
        self._pick(event.path)

    def _pick(self, path: Path) -> None:
        box = self.query_one("#open-input", Input)
        box.value = str(path)
        box.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        import shlex

        try:
            paths = shlex.split(event.value)
        except ValueError as exc:
            paths, error = [], f"cannot read the paths: {exc}"
        else:
            missing = [p for p in paths if not Path(p).exists()]
            error = f"no such file or folder: {missing[0]}" if missing else ("name a file or folder" if not paths else "")
        if error:
            label = self.query_one("#open-error", Label)
            label.update(error)
            label.add_class("error")
            return
        self.dismiss(paths)


class ExportScreen(ModalScreen[tuple[str, str] | None]):
    """Format and path; the app checks what the format cannot express before writing."""

    BINDINGS = [Binding("escape", "dismiss(None)", "Cancel")]
    DEFAULTS = {"hf": "tokenizer.json", "tiktoken": "model.tiktoken", "minbpe": "model.model"}

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label("Export the model", classes="question")
            yield Select([("Hugging Face tokenizer.json", "hf"), ("tiktoken ranks (+ .json)", "tiktoken"),
                          ("minbpe .model", "minbpe")], value="hf", allow_blank=False, id="export-format")
            yield Input(self.DEFAULTS["hf"], id="export-path")
            yield Label("enter writes the file (atomically); shift+tab picks the format; a format that "
                        "cannot carry the model says why", id="export-error", classes="hint")

    def on_mount(self) -> None:
        self.query_one("#export-path", Input).focus()

    def on_select_changed(self, event: Select.Changed) -> None:
        box = self.query_one("#export-path", Input)
        if box.value in self.DEFAULTS.values():
            box.value = self.DEFAULTS[event.value]

    def on_input_submitted(self, event: Input.Submitted) -> None:
        path = event.value.strip()
        parent = Path(path).expanduser().parent
        if not path or not parent.is_dir():
            label = self.query_one("#export-error", Label)
            label.update(f"folder {parent} does not exist" if path else "name a file")
            label.add_class("error")
            return
        self.dismiss((self.query_one("#export-format", Select).value, path))
