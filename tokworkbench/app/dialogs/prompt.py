"""One line of input, checked before the dialog closes."""

from collections.abc import Callable

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Input, Label

from tokworkbench.app.dialogs.base import Dialog
from tokworkbench.app.widgets.steady_input import SteadyInput


class PromptDialog(Dialog):
    """`validate(value)` returns an error message, or None when the value is good."""

    BINDINGS = [Binding("escape", "dismiss(None)", "Cancel")]

    def __init__(self, title: str, value: str = "", validate: Callable[[str], str | None] | None = None,
                 hint: str = ""):
        super().__init__()
        self.title_text, self.value, self.validate, self.hint = title, value, validate, hint

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(Text(self.title_text), classes="question")
            yield SteadyInput(self.value, id="prompt-input")
            yield Label(Text(self.hint), id="prompt-error", classes="hint")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        error = self.validate(event.value) if self.validate else None
        if error:
            self.show_error("#prompt-error", error)
            return
        self.dismiss(event.value)
