"""What every dialog shares: a centred box over a dimmed screen, a question, a hint line."""

from textual import events
from textual.screen import ModalScreen
from textual.widgets import Input, Label


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

    async def on_key(self, event: events.Key) -> None:
        """Keys typed right behind the key that opened the dialog arrive before its first field
        has focus (Textual gives focus a moment later); hand them to that field, in order."""
        if self.focused is None:
            box = next(iter(self.query(Input)), None)
            if box is not None:
                event.stop()
                self.set_focus(box)
                box.post_message(events.Key(event.key, event.character))

    def show_error(self, selector: str, message: str) -> None:
        label = self.query_one(selector, Label)
        label.update(message)
        label.add_class("error")
