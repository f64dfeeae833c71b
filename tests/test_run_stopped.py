"""A run's stop is heard before its state comes back: the screen shows where the child stopped
at once, and that view is exactly the session's once the state is back."""

import threading
import time

import pytest

from tokworkbench.core import Trainer, sample_paths
from tokworkbench.core.session.childrun import run_in_child
from tokworkbench.core.session.session import FinishReason, Session
from tokworkbench.core.session.settings import Settings
from tokworkbench.core.session.snapshot import View
from tokworkbench.core.text.parallel import can_fork


@pytest.mark.skipif(not can_fork(), reason="the run happens in the calling thread where fork is not the default")
@pytest.mark.parametrize("cancel", [True, False])
def test_the_stop_comes_first_with_the_view_the_session_then_has(cancel):
    session = Session.open([str(p) for p in sample_paths()[:3]], Settings(target=400 if not cancel else 60_000))
    stop, heard = threading.Event(), []

    def stopped(finished, snapshot):
        heard.append((finished, snapshot, session.steps))  # the session has not taken the state yet

    finished = run_in_child(session, View(doc=1), stop.is_set, lambda report: cancel and stop.set(), stopped)
    assert len(heard) == 1
    early, snapshot, steps_then = heard[0]
    assert steps_then == 0 and finished.done > 0
    assert early == finished  # the same count, reason and merges-after-the-key
    assert snapshot == session.snapshot(View(doc=1))
    if not cancel:
        assert finished.reason is FinishReason.TARGET and snapshot.vocab_size == 400


@pytest.mark.asyncio
async def test_the_app_shows_the_stop_then_wakes_the_keys(monkeypatch):
    from tokworkbench.app import WorkbenchApp
    from tokworkbench.app.main_screen import MainScreen

    seen = []
    original = MainScreen.on_train_stopped

    def spy(self, message):
        original(self, message)
        seen.append((self.run_stopped, self.running, message.snapshot.steps, self.snapshot.steps))

    monkeypatch.setattr(MainScreen, "on_train_stopped", spy)
    # the compiled merge loop makes every merge of the samples (13k) before an escape lands:
    # slowed down, the run is still going when the key comes, as it is on a real corpus
    step = Trainer.step
    monkeypatch.setattr(Trainer, "step", lambda self: (time.sleep(0.0005), step(self))[1])
    app = WorkbenchApp(None, Settings(target=60_000))
    async with app.run_test(size=(120, 40)) as pilot:
        main = app.main
        await pilot.press("r")
        while main.snapshot is None or main.snapshot.steps < 50:
            await pilot.pause(0.02)
        await pilot.press("escape")
        while main.running:
            await pilot.pause(0.02)
        if not can_fork():
            pytest.skip("this platform runs training in the calling thread: no early stop to show")
        assert len(seen) == 1
        assert seen[0][:2] == (True, True)  # shown while the keys still wait for the state
        # the stop's line is painted first; the panes take where the child stopped a frame later
        assert seen[0][3] <= seen[0][2] and main.stop_painted_at is not None
        assert main.run_stopped is False and main.session.steps == seen[0][2] == main.snapshot.steps
        await pilot.press("n")
        assert main.session.steps == seen[0][2] + 1
