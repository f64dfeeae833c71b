"""What every flow needs of the screen: show a dialog, ask yes or no, say something, and turn
a failure into a message; and where files are proposed."""

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from textual.screen import Screen

from tokworkbench.app.dialogs import ConfirmDialog
from tokworkbench.core.errors import TokWorkbenchError
from tokworkbench.core.session.session import Session
from tokworkbench.core.text.samples import sample_paths

Notify = Callable[..., None]  # Textual's notify(message, title=, severity=, timeout=)


class Ui:
    def __init__(self, push_screen: Callable[[Screen, Callable], object], notify: Notify,
                 log_error: Callable[[str], None]):
        self.push = push_screen  # (dialog, what to do with its answer)
        self.notify = notify
        self.log_error = log_error

    def ask(self, question: str, yes: str, then: Callable[[], None]) -> None:
        self.push(ConfirmDialog(question, yes), lambda answer: then() if answer else None)

    @contextmanager
    def reporting(self, title: str) -> Iterator[None]:
        """Whatever fails inside becomes a message; the session is never lost to an exception."""
        try:
            yield
        except TokWorkbenchError as exc:
            self.notify(str(exc), title=title, severity="error", timeout=10)
        except Exception as exc:  # a bug of ours: say so, keep the session
            self.log_error(f"{title}: {exc!r}")
            self.notify(f"{type(exc).__name__}: {exc}", title=f"{title} (unexpected; your work is kept)",
                        severity="error", timeout=15)


@dataclass
class Folders:
    """Where the user last wrote, and the model file's name they last saved to."""

    last: Path | None = None
    saved_name: str | None = None

    def proposed(self, session: Session | None) -> Path:
        """Where files are proposed: the last folder written to, else the corpus's own folder
        (unless it is the embedded sample), else the working directory."""
        if self.last is not None:
            return self.last
        first = Path(session.corpus.documents[0].name) if session and session.corpus.documents else None
        if first is not None and first.parent != sample_paths()[0].parent and first.parent.is_dir():
            return first.parent.resolve()
        return Path.cwd()
