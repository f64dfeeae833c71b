"""Escape and the key behind it in one burst (over SSH the two arrive as one escape sequence,
which Textual's parser reads as alt+KEY): the same as escape, then the key, pressed one at a time.
Before app/escapeburst.py a dialog stayed open and the key was lost, or was typed into its box."""

import time

import pytest
from recording import RecordingApp as WorkbenchApp
from test_app_dialogs import wait_for
from test_app_key_order import post, restore, settled, state
from textual import events
from textual.widgets import Input

from tokworkbench.app.escapeburst import escape_then_key
from tokworkbench.core.session.session import FinishReason
from tokworkbench.core.session.settings import Settings


def post_burst(app, key: str) -> None:
    """escape then `key` as the parser gives them when they come together: one alt+key."""
    app.post_message(events.Key(f"alt+{key.lower()}" if key.islower() or key.isdigit() else f"alt+shift+{key.lower()}", key))


def boxes(app) -> tuple:
    return tuple(box.value for box in app.screen.query(Input))


# the keys that open a dialog (t: a box with focus; ? help; s save; c settings; o open; e export),
# and none (the main screen); then the key typed behind escape
OPENERS = ["", "t", "question_mark", "s", "c", "o", "e"]
KEYS = ["n", "N", "u", "t", "x"]


@pytest.mark.parametrize("opener", OPENERS, ids=[o or "main" for o in OPENERS])
async def test_escape_and_a_key_in_one_burst_act_as_the_two_pressed_one_at_a_time(opener):
    app = WorkbenchApp(settings=Settings(target=300))
    differ = []
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        for key in KEYS:
            results = []
            for burst in (False, True):
                await restore(app, pilot)
                said = len(app.said)
                if opener:
                    post(app, opener)
                    await settled(app, pilot)
                    assert len(app.screen_stack) == 2, opener
                if burst:
                    post_burst(app, key)
                else:
                    post(app, "escape")
                    await settled(app, pilot)
                    post(app, key)
                await settled(app, pilot)
                results.append((state(app, said), boxes(app)))
            if results[0] != results[1]:
                differ.append((key, *results))
    assert not differ, "\n".join(f"{opener} escape {k}: one at a time {a}, in a burst {b}" for k, a, b in differ)


async def test_escape_n_in_a_dialog_closes_it_and_merges_once():
    """The case of the report, spelled out: the target box keeps its text and the n merges."""
    app = WorkbenchApp(settings=Settings(target=300))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await restore(app, pilot)
        post(app, "t")
        await settled(app, pilot)
        assert len(app.screen_stack) == 2
        before = app.main.session.steps
        post_burst(app, "n")
        post(app, "n")  # and one more behind it, in the same burst
        await settled(app, pilot)
        assert len(app.screen_stack) == 1
        assert app.main.session.steps == before + 2


def slow_steps(app, monkeypatch) -> None:
    """1 ms a step: the compiled merge loop could end the whole run before the escape (13 s for
    the samples' 12,876 merges keeps it going when escape comes). The run's child inherits it."""
    learner_type = type(app.main.session.learner)
    real_step = learner_type.step
    monkeypatch.setattr(learner_type, "step", lambda self: (time.sleep(0.001), real_step(self))[1])


async def test_escape_n_during_a_run_cancels_it(monkeypatch):
    """On the main screen escape cancels a run (and n, pressed while it stops, merges once its
    state is back, as it would pressed alone); as alt+n the escape was lost and the run went on
    to the end."""
    app = WorkbenchApp(settings=Settings(target=100_000))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        slow_steps(app, monkeypatch)
        post(app, "r")
        await wait_for(lambda: app.main.running)
        post_burst(app, "n")
        await settled(app, pilot)
        assert app.main.last_run is not None
        assert app.main.last_run.reason is FinishReason.CANCELLED
        assert app.main.session.steps == app.main.last_run.done + 1


async def test_keys_typed_while_a_run_stops_act_in_order_once_its_state_is_back(monkeypatch):
    """Escape asks the run to stop; its state then takes up to a few hundred ms to come back.
    An undo typed in that time was refused ("a run is going: escape cancels it") and lost. Now
    the keys wait and act in order when the state is back, as if typed after it."""
    app = WorkbenchApp(settings=Settings(target=100_000))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        slow_steps(app, monkeypatch)
        said = len(app.said)
        post(app, "r")
        await wait_for(lambda: app.main.running and app.main.snapshot.steps >= 5)  # shown as it goes
        for key in ("escape", "u", "u", "n", "s"):
            post(app, key)
        await settled(app, pilot)
        run = app.main.last_run
        assert run is not None and run.reason is FinishReason.CANCELLED
        assert app.main.session.steps == run.done - 1
        assert type(app.screen).__name__ == "PromptDialog"  # s came last: its dialog is open
        assert not [m for m in app.said[said:] if "can't act" in m or "run is going" in m]


async def test_an_alt_key_something_binds_is_left_alone():
    app = WorkbenchApp()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        key = events.Key("alt+backspace", None)  # the boxes' delete-word: not a letter, never split
        assert escape_then_key(app, key) == [key]
        app.main.query_one("#pair-filter", Input).focus()
        await pilot.pause()
        parts = escape_then_key(app, events.Key("alt+n", "n"))
        assert [(k.key, k.character) for k in parts] == [("escape", "\x1b"), ("n", "n")]


async def test_keys_held_for_a_run_that_never_ends_are_let_go(monkeypatch):
    """Keys typed while a run stops wait for its end; a run whose end never comes (its worker
    cancelled before it started) must not keep every key from then on, q included."""
    from tokworkbench.app import afterrun

    monkeypatch.setattr(afterrun, "LIMIT", 0.3)
    app = WorkbenchApp(settings=Settings(target=300))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        main = app.main
        main.run.running = main.run.stopped = True  # stopping, and nothing will end it
        said = len(app.said)
        post(app, "u")
        await pilot.pause()
        assert not app.key_order.settled  # held
        await wait_for(lambda: app.key_order.settled)
        assert any("coming back" in m for m in app.said[said:])  # let go, then refused as it stands
        main.run.running = main.run.stopped = False
