"""Changing the session: its settings (c), its target (t), and undoing its steps (R, and enter
in the history), each asked before work is discarded."""

from collections.abc import Callable

from tokworkbench.app.dialogs import PromptDialog, SettingsDialog
from tokworkbench.app.flows.ui import Ui
from tokworkbench.app.kind_views import step_noun, view_of
from tokworkbench.app.labels import describe_settings, plural
from tokworkbench.core.errors import TokWorkbenchError
from tokworkbench.core.registry.kinds import kind_of
from tokworkbench.core.session.session import Session
from tokworkbench.core.session.settings import Settings
from tokworkbench.core.session.snapshot import Snapshot


class ChangeFlows:
    def __init__(self, ui: Ui, session: Callable[[], Session], refresh: Callable[[], None],
                 start_load: Callable[[list[str] | None, Session | None, Settings], None],
                 title: Callable[[str], None], snapshot: Callable[[], Snapshot]):
        """`refresh`: read the session again after a change; `start_load(paths, base, settings)`:
        a new session; `title`: the app's subtitle, which says the settings; `snapshot`: the
        session as on screen."""
        self.ui = ui
        self.session = session
        self.refresh = refresh
        self.start_load = start_load
        self.title = title
        self.snapshot = snapshot

    def _steps(self, session: Session, n: int | None = None) -> str:
        return plural(session.steps if n is None else n, step_noun(session.learner.kind))

    def reset(self) -> None:
        session = self.session()

        def reset() -> None:
            session.undo_all()
            self.refresh()

        self.ui.ask(f"Undo all {self._steps(session)}?", "Reset", reset)

    def rewind(self, step: int) -> None:
        """Back to `step` (the history's enter), after a yes."""
        session = self.session()

        def rewind() -> None:
            session.undo_to(step)
            self.refresh()

        where = view_of(session.learner.kind).back_to(step)
        self.ui.ask(f"Undo {self._steps(session, session.steps - step)}, back to {where}?", "Rewind", rewind)

    def set_target(self) -> None:
        session, ui = self.session(), self.ui

        def validate(value: str) -> str | None:
            try:
                session.learner.steps_for_vocab(int(value))
            except ValueError:
                return "a whole number, please"
            except TokWorkbenchError as exc:
                return str(exc)
            return None

        def done(value: str | None) -> None:
            if value is not None:
                with ui.reporting("Target not changed"):
                    session.set_target(int(value))
                    self.title(describe_settings(session.settings))
                    self.refresh()
                    vocab = self.snapshot().vocab_size
                    if session.steps_to_target() == 0 and vocab != int(value):  # say so now, not at r
                        # undoing a step that grew the vocabulary goes back below the target
                        grows = not kind_of(session.learner).stops_at_target
                        back = "; u or R goes back below it" if vocab > int(value) and grows else ""
                        ui.notify(f"the vocabulary is already {vocab:,} for a target of {int(value):,}: "
                                  f"r has nothing to do{back}", timeout=6)

        shown = self.snapshot()
        ui.push(PromptDialog("Target vocabulary size (base + merges + specials)", str(session.settings.target),
                             validate, f"now {shown.vocab_size:,}; base {shown.base_size}"), done)

    def settings(self) -> None:
        session = self.session()

        def done(new: Settings | None) -> None:
            if new is None or new == session.settings:
                return
            if not session.settings.needs_retrain(new):
                with self.ui.reporting("Settings not changed"):
                    session.set_target(new.target)
                    session.set_roles(new.roles)
                    self.title(describe_settings(new))
                    self.refresh()
                return
            restart = lambda: self.start_load(None, session, new)  # noqa: E731
            if session.steps:
                self.ui.ask(f"Restart training with the new settings? {self._steps(session)} will be discarded.",
                            "Restart", restart)
            else:
                restart()

        self.ui.push(SettingsDialog(session.settings, session.stats.distinct_chars), done)
