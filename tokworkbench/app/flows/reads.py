"""Reading files: open another corpus (o), replay a tokenizer on this one (l), compare another
tokenizer with this one (C)."""

from collections.abc import Callable
from pathlib import Path

from tokworkbench.app.dialogs import OpenDialog, ReplayDialog
from tokworkbench.app.flows.ui import Folders, Ui
from tokworkbench.app.kind_views import view_of
from tokworkbench.core.models.protocol import Model
from tokworkbench.core.registry.kinds import kind_of
from tokworkbench.core.registry.load import open_model
from tokworkbench.core.session.session import Session
from tokworkbench.core.session.settings import Settings

COMPARE_QUESTION = ("Tokenizer to compare with this one: any model file (tokworkbench, HF tokenizer.json, "
                    "SentencePiece or minbpe .model, tiktoken ranks, tekken.json, vocab.txt) or a preset "
                    "(cl100k_base, o200k_base, gpt2)")


class ReadFlows:
    def __init__(self, ui: Ui, session: Callable[[], Session | None], folders: Folders, refresh: Callable[[], None],
                 start_load: Callable[[list[str] | None, Session | None, Settings], None],
                 settings: Callable[[], Settings]):
        """`refresh`: read the session again after a change; `start_load(paths, base, settings)`:
        a new session (the screen's loader); `settings`: what a load uses where there is no
        session (the first load failed)."""
        self.ui = ui
        self.session = session
        self.settings = settings
        self.folders = folders
        self.refresh = refresh
        self.start_load = start_load

    def open(self) -> None:
        def done(paths: list[str] | None) -> None:
            if not paths:
                return
            session = self.session()
            settings = session.settings if session is not None else self.settings()
            go = lambda: self.start_load(paths, None, settings)  # noqa: E731
            if session is not None and session.unsaved:
                self.ui.ask("Open another corpus? The trained model is not saved.", "Open", go)
            else:
                go()

        self.ui.push(OpenDialog(self.folders.proposed(self.session())), done)

    def replay(self) -> None:
        """Replay as the session's kind does (`Kind.replay`): BPE makes the model's merges again
        here; a Unigram's vocabulary becomes round 0, which the rounds after it prune."""
        session, ui = self.session(), self.ui
        kind = kind_of(session.learner)
        view = view_of(kind.name)

        def chosen(result: tuple[str, str | None] | None) -> None:
            if not result:
                return
            path, split = result
            with ui.reporting("Cannot replay"):
                model = open_model(path, split)

                def go() -> None:
                    with ui.reporting("Cannot replay"):
                        session.replay(model, path)
                        ui.notify(view.replayed(kind, model, session.learner.vocab_size, path))
                        self.refresh()

                if session.steps:
                    ui.ask(f"Undo the {kind.count(session.steps)} made here and replay {path}?{view.replay_note}",
                           "Replay", go)
                else:
                    go()

        ui.push(ReplayDialog(), chosen)

    def compare(self, show: Callable[[Model, str], None]) -> None:
        """`show(model, name)`: the compare tab, with the other tokenizer."""
        def chosen(result: tuple[str, str | None] | None) -> None:
            if not result:
                return
            path, split = result
            with self.ui.reporting("Cannot compare"):
                show(open_model(path, split), Path(path).name)

        self.ui.push(ReplayDialog(COMPARE_QUESTION), chosen)
