"""The collector waits from a key until its frame is painted, and always runs again after."""

import asyncio
import gc

from tokworkbench.app import WorkbenchApp
from tokworkbench.app.framegc import LONGEST, FrameCollector


class Timer:
    def __init__(self, seconds, callback):
        self.seconds, self.callback, self.stopped = seconds, callback, False

    def stop(self):
        self.stopped = True


def test_held_from_a_key_until_the_frame_after_the_keys_settle():
    frames, timers = [], []
    collector = FrameCollector(frames.append, lambda seconds, callback: timers.append(Timer(seconds, callback)) or timers[-1])
    assert gc.isenabled()
    try:
        collector.hold()
        collector.hold()  # a burst: one hold
        assert not gc.isenabled() and len(timers) == 1 and timers[0].seconds == LONGEST
        collector.settled()
        assert not gc.isenabled()  # until the frame is painted
        frames.pop()()
        assert gc.isenabled() and timers[0].stopped  # the fallback would end the next burst's hold early
    finally:
        gc.enable()


def test_a_collector_someone_else_paused_is_left_off():
    collector = FrameCollector(lambda callback: callback(), Timer)
    gc.disable()
    try:
        collector.hold()
        collector.settled()
        collector.release()
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_keys_that_never_settle_release_it_after_a_while():
    timers = []
    collector = FrameCollector(lambda callback: None, lambda seconds, callback: timers.append(Timer(seconds, callback)) or timers[-1])
    try:
        collector.hold()
        timers.pop().callback()
        assert gc.isenabled()
    finally:
        gc.enable()


def test_the_app_runs_the_collector_again_once_a_burst_is_on_screen():
    async def go():
        app = WorkbenchApp()
        async with app.run_test(size=(100, 30)) as pilot:
            await app.workers.wait_for_complete()
            await pilot.pause()
            steps = app.main.session.steps
            await pilot.press("n", "n", "u", "n")
            await pilot.pause()
            await pilot.pause()
            assert app.main.session.steps == steps + 2
            assert gc.isenabled()

    try:
        asyncio.run(go())
    finally:
        gc.enable()
