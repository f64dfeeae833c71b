"""What every dialog shares: a centred box over a dimmed screen, a question, a hint line, and keys
typed behind an enter that reach wherever they would have gone had they been typed a moment later."""

import asyncio
import inspect

from rich.text import Text
from textual import events
from textual.await_complete import AwaitComplete
from textual.screen import ModalScreen
from textual.widgets import Input, Label

from tokworkbench.app.keyorder import retype
from tokworkbench.app.widgets.steady_input import SteadyInput


class Dialog(ModalScreen):
    """Keys sent in one burst behind an enter ("t", "1500", enter, "N N N" over SSH) used to be typed
    into the box, since the box takes its queued keys before the dialog answers the enter, and then
    were thrown away with the dialog. Now the box holds them (see SteadyInput) and the dialog says
    where they go once it has answered:

    - it stays open (a value refused, or a field whose enter answers nothing): routed again by
      the app, in order, as if typed now, so bindings act (tab, ctrl+s) and the rest reach the box;
    - another screen went on top before the close ran (ctrl+p right behind the enter): the close
      waits, keys still held, until this dialog is on top again;
    - it closes: the closing waits for the app's own queue (`call_later` on the app), so every key
      the app had already routed to the box is held by then; then, inside that one app callback,
      the dialog is popped, the answer applied and the held keys routed by the app as new keys
      (`App.on_event`: priority bindings first, then the focused widget). The app routes no other
      key in between, so a key arriving later is routed after them, to whatever is then on top.

    Holding starts when the enter is handed to the box, not when the box gets to it (see
    SteadyInput.post_message), so no key behind the enter is ever in the box's own queue.
    """

    HOLDS_KEYS_AFTER_ENTER = True
    """Read by SteadyInput: hold the keys behind an enter until this dialog has answered it."""

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

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.closing = False
        """A close is waiting for the app's queue (see the class docstring); a second dismiss is ignored."""
        self._close_on_resume: tuple | None = None

    def on_screen_resume(self) -> None:
        """A close that found another screen on top (ctrl+p right behind the enter) happens now."""
        if self._close_on_resume is not None:
            box, result = self._close_on_resume
            self._close_on_resume = None
            self._close_later(box, result)

    async def on_key(self, event: events.Key) -> None:
        """Keys typed right behind the key that opened the dialog were routed before its first
        field had focus (Textual gives focus a moment later), so they come to the screen; hand
        them to that field, in order. Only text and editing keys, which a box always takes, so
        none comes back here; the focus may have arrived while they waited."""
        if getattr(event, "handed_on", False) or not (event.is_printable or event.key in SteadyInput.EDITING_KEYS):
            return  # (a key handed on that comes back, from a box that takes no keys, stops here)
        box = self.focused if isinstance(self.focused, Input) else None
        if self.focused is None:
            box = next(iter(self.query(Input)), None)
            if box is not None:
                self.set_focus(box)
        if box is not None:
            event.stop()
            key = events.Key(event.key, event.character)
            key.handed_on = True
            box.post_message(key)

    def show_error(self, selector: str, message: str) -> None:
        label = self.query_one(selector, Label)
        label.update(Text(message))  # it may quote what was typed: not markup
        label.add_class("error")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """Textual runs this after the dialog's own handler of the same message (it calls each
        class's handler, subclass first), so the answer is known: a dialog that closed has taken
        the held keys in `dismiss`; one that stays gives them back to the box."""
        box = event.input
        if isinstance(box, SteadyInput) and box.holding and not self.closing:
            box.type_back()

    def dismiss(self, result=None) -> AwaitComplete:
        """Closes now, unless a box holds keys: then the close waits its turn in the app's queue."""
        box = self._holding_box()
        if self.closing:
            return AwaitComplete.nothing()
        if box is None:
            return super().dismiss(result)
        self.closing = True
        return AwaitComplete(self._close_later(box, result))

    def _close_later(self, box: SteadyInput, result) -> asyncio.Future:
        """The close, queued on the app (see `_close_and_pass_on`); done when it has run."""
        closed = asyncio.get_running_loop().create_future()
        self.app.call_later(self._close_and_pass_on, box, result, closed)
        return closed

    def _holding_box(self) -> SteadyInput | None:
        return next((box for box in self.query(SteadyInput) if box.holding), None)

    async def _close_and_pass_on(self, box: SteadyInput, result, closed: asyncio.Future) -> None:
        """Runs as a message of the app's own queue: while it runs the app routes no other key, so
        the held keys go first, and a key arriving meanwhile is held by the box or waits its turn."""
        if not self.is_active:  # another screen (the command palette) went on top meanwhile:
            self._close_on_resume = (box, result)  # close when this is on top again, keys still held
            closed.set_result(None)
            return
        keys = box.release()
        # Textual would run the answer's callback at its requester's next idle moment, possibly
        # after the held keys; run it here, between the pop and the keys, so "t 1600 enter t"
        # reopens the dialog on 1600 and "s path enter y" answers the overwrite question.
        answer = self._result_callbacks[-1].callback if self._result_callbacks else None
        if answer is not None:
            self._result_callbacks[-1].callback = None
        super().dismiss(result)
        try:
            if answer is not None and inspect.isawaitable(done := answer(result)):
                await done
            await retype(self.app, keys)
        finally:
            closed.set_result(None)
