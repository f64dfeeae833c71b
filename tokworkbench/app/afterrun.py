"""Keys typed while a run stops, kept for when its state is back.

Escape asks a run to stop; its state then takes up to a few hundred ms to come back into the
session. A key that needs the session, typed in that time (`escape u`), was refused ("a run is
going: escape cancels it") and lost. The screen gives such a key here: it is kept, the app's
key line holds the keys behind it so they keep their order, and all go again, as if typed now,
when the run has ended. A run whose end never comes (a worker cancelled before it started posts
no TrainFinished) must not keep every key from then on, q included: after LIMIT seconds the keys
go anyway (and are refused, saying why), and later keys are not held for that run.
"""

from textual import events
from textual.screen import Screen
from textual.timer import Timer

from tokworkbench.app.keyorder import hold_keys, retype

LIMIT = 5.0  # seconds the keys wait for the run's end (it takes under 0.2 s)


class KeysAfterRun:
    def __init__(self, screen: Screen) -> None:
        self._screen = screen
        self._keys: list[events.Key] = []
        self._timer: Timer | None = None
        self.waits = True  # keys typed while the run stops wait for it (until LIMIT has passed)

    def keep(self, key: events.Key) -> None:
        """Keep `key` (which went round the widgets once: a new event is kept) and hold the
        keys behind it."""
        if not self._keys:
            self._timer = self._screen.set_timer(LIMIT, self._give_up)
        self._keys.append(events.Key(key.key, key.character))
        hold_keys(self._screen.app)

    def run_ended(self) -> None:
        self.release()
        self.waits = True

    def release(self) -> None:
        """The kept keys, typed again in the app's own queue, ahead of the keys held behind them."""
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        if self._keys:
            keys, self._keys = self._keys, []
            app = self._screen.app
            app.call_later(retype, app, keys)

    def _give_up(self) -> None:
        if self._keys:
            self.waits = False
            self.release()
