"""The Textual app: a thin shell that opens the main screen and routes quitting through it."""

import os
import sys
import time
from collections.abc import Iterable
from pathlib import Path

from textual import events
from textual.app import App, SystemCommand
from textual.filter import LineFilter
from textual.screen import Screen

from tokworkbench.app.actions import ACTIONS, key_names
from tokworkbench.app.controlfilter import LineFilters
from tokworkbench.app.escapeburst import escape_then_key
from tokworkbench.app.framegc import FrameCollector
from tokworkbench.app.keyorder import KeyBarrier, KeyOrder
from tokworkbench.app.loading import ModelLoader
from tokworkbench.app.main_screen import MainScreen
from tokworkbench.core.errors import OutputError
from tokworkbench.core.models.protocol import Model
from tokworkbench.core.session.settings import Settings


class WorkbenchApp(App):
    CSS_PATH = Path(__file__).with_name("workbench.tcss")  # absolute: subclasses live elsewhere
    TITLE = "tokworkbench"

    def __init__(self, paths: Iterable[str] | None = None, settings: Settings | None = None,
                 inspect: tuple[Model | ModelLoader, str] | None = None):
        """`inspect`: a model (or what reads it, in the load worker) and what it was opened as
        (`-m`): the workbench shows it on the corpus instead of training."""
        super().__init__()
        self.paths = [str(p) for p in paths] if paths else None
        self.settings = settings or Settings()
        self.inspect = inspect
        self._on_screen: dict[tuple, float] = {}  # (message, title, severity) -> when it leaves
        self.key_order = KeyOrder(self, super().on_event, lambda event: escape_then_key(self, event))
        self._line_filters = LineFilters()
        self._frame_collector = FrameCollector(self.call_after_refresh, self.set_timer)

    def get_line_filters(self) -> list[LineFilter]:
        """Textual's filters, and then no control character reaches the terminal (controlfilter.py)."""
        return self._line_filters(super().get_line_filters())

    async def on_event(self, event: events.Event) -> None:
        """Keys and pastes from the terminal go through the line that keeps their order."""
        if isinstance(event, (events.Key, events.Paste)) and not event.is_forwarded:
            self._frame_collector.hold()
            await self.key_order.arrive(event)
            self._when_settled()
        else:
            await super().on_event(event)

    async def on_key_barrier(self, message: KeyBarrier) -> None:
        await self.key_order.returned(message.serial)
        self._when_settled()

    def _when_settled(self) -> None:
        if self.key_order.settled:
            self._frame_collector.settled()

    async def retype(self, keys: Iterable[events.Key]) -> None:
        await self.key_order.retype(keys)
        self._when_settled()

    def hold_keys(self) -> None:
        self.key_order.hold()

    def notify(self, message: str, *, title: str = "", severity: str = "information",
               timeout: float | None = None, markup: bool = True) -> bool:
        """A message still on screen is not stacked again: a key held at an edge ("this is the
        last word") said it once per press and filled the corner with copies. Whether it was
        shown. A message is shown as written, never read as markup (`markup` is ignored): the
        app's messages quote file names, tokens and errors, and a file named `[b]x[/b]` was
        drawn as a bold x."""
        key = (str(message), title, severity)
        now = time.monotonic()
        if self._on_screen.get(key, 0.0) > now:
            return False
        if len(self._on_screen) > 64:  # forget the ones long gone
            self._on_screen = {k: t for k, t in self._on_screen.items() if t > now}
        self._on_screen[key] = now + (self.NOTIFICATION_TIMEOUT if timeout is None else timeout)
        super().notify(message, title=title, severity=severity, timeout=timeout, markup=False)
        return True

    def action_help_quit(self) -> None:
        """ctrl+c: Textual's hint, without its markup (messages are plain here)."""
        self.notify("Press q to quit the app", title="Do you want to quit?")

    def clear_notifications(self) -> None:
        self._on_screen.clear()
        super().clear_notifications()

    def get_default_screen(self) -> Screen:
        return MainScreen(self.paths, self.settings, self.inspect)

    @property
    def main(self) -> MainScreen:
        return self.screen_stack[0]

    async def action_quit(self) -> None:
        """ctrl+q asks the same question as q: nothing unsaved is lost to a shortcut."""
        if self.screen is self.main:
            self.main.action_quit_app()
        elif self.main.session is None or not self.main.session.unsaved:
            self.exit()

    def deliver_screenshot(self, filename: str | None = None, path: str | None = None,
                           time_format: str | None = None) -> str | None:
        """The palette's Screenshot saves where the workbench proposes files (the last folder
        written to, the corpus's, else the working directory), not in ~/Downloads, which may not
        exist; Textual's notice then says where it went."""
        if path is None:
            folder = self.main.proposed_folder()
            path = str(folder if os.access(folder, os.W_OK) else Path.cwd())
        return super().deliver_screenshot(filename, path, time_format)

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        main = self.main
        situation = main.situation()
        for action in ACTIONS:
            if action.state(situation) is True:
                yield SystemCommand(f"{action.label} ({key_names(action.keys, self.get_key_display)})",
                                    action.tooltip, lambda a=action.action: main.run_action(a))


def run_app(paths: list[str] | None = None, settings: Settings | None = None,
            inspect: tuple[Model | ModelLoader, str] | None = None) -> int:
    if not (sys.stdin.isatty() and sys.stdout.isatty()):  # else Textual spins on a closed input
        raise OutputError("the workbench needs a terminal, and its input or output is not one; for scripts there "
                          "are the commands (tokworkbench --help)")
    app = WorkbenchApp(paths or None, settings, inspect)
    app.run()
    return app.return_code or 0  # 1 after an unhandled error: a script must not read a crash as success
