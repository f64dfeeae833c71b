"""What every dialog shares: a centred box over a dimmed screen, a question, a hint line."""

from textual.screen import ModalScreen
from textual.widgets import Label


class Dialog(ModalScreen):
    DEFAULT_CSS = """
    Dialog {
        align: center middle;
        background: $background 60%;
    }
    Dialog .dialog {
        width: 70;
        max-width: 100%;
        height: auto;
        max-height: 100%;
        border: thick $accent;
        background: $surface;
        padding: 1 2;
    }
    Dialog .question {
        width: 100%;
        margin-bottom: 1;
        text-style: bold;
    }
    Dialog .hint {
        color: $text-muted;
        width: 100%;
    }
    Dialog .hint.error {
        color: $error;
    }
    Dialog .buttons {
        height: auto;
        margin-top: 1;
        align-horizontal: right;
    }
    Dialog .buttons Button {
        margin-left: 2;
    }
    """

    def show_error(self, selector: str, message: str) -> None:
        label = self.query_one(selector, Label)
        label.update(message)
        label.add_class("error")
