"""Keys act in the order they arrived (issue 22, item 1): a step key followed in one burst by any
other key of the main screen gives what the two keys give pressed one at a time.

Before the key line (app/keyorder.py), the priority bindings that open a dialog or move focus
overtook the step queued before them: `n s` left 0 merges behind the Save dialog, `n u` said
"nothing to undo" and ended at 1 merge."""

import pytest
from recording import RecordingApp as WorkbenchApp
from test_app_dialogs import wait_for
from textual import events
from textual.keys import key_to_character
from textual.widgets import Button, TabbedContent

from tokworkbench.app.actions import ACTIONS
from tokworkbench.app.keyorder import KeyBarrier
from tokworkbench.app.main_screen import MainScreen
from tokworkbench.app.widgets.batches import BatchesPanel
from tokworkbench.app.widgets.encode import EncodePanel
from tokworkbench.core.session.settings import Settings
from tokworkbench.core.session.snapshot import View

STEP_KEYS = ["n", "N", "u"]  # the keys that write the learner (space and backspace are n's and u's too)
OTHER_KEYS = sorted({key for b in MainScreen.BINDINGS for key in b.key.split(",")}
                    | {"tab", "shift+tab", "ctrl+p", "x"})  # x: a key bound to nothing
START_STEPS = 2  # so that undo has something to undo


def post(app, key: str) -> None:
    """One key as a terminal's parser gives it: its name and its character."""
    app.post_message(events.Key(key, key_to_character(key)))


async def settled(app, pilot) -> None:
    """Every key has run its course, a run it started has ended, the screen has caught up."""
    await wait_for(lambda: app.key_order.settled)
    await pilot.pause()
    if app.main.running:
        await wait_for(lambda: not app.main.running)
        await pilot.pause()


def state(app, said_before: int) -> tuple:
    main = app.main
    tabs = main.query_one("#bottom", TabbedContent)
    focused = app.screen.focused
    return (main.session.steps, type(app.screen).__name__, focused.id if focused is not None else None,
            tabs.active, tuple(app.said[said_before:]))


async def restore(app, pilot) -> None:
    """Back to the same start: no dialog, START_STEPS merges, the first window, the pair table,
    the encode pane showing tokens."""
    while len(app.screen_stack) > 1:
        app.pop_screen()
    main = app.main
    main.session.undo_all()
    main.session.step_many(START_STEPS)
    main.view = View(rows=main.view.rows)
    main.query_one("#bottom", TabbedContent).active = "tab-encode"
    encode = main.query_one(EncodePanel)
    if encode.show_pipeline:  # p toggles it: each try starts from the tokens view
        encode.action_toggle_pipeline()
    main.set_focus(main.query_one("#pair-table"))
    main.refresh_snapshot()
    await pilot.pause()


# Every (step key, other key) pair is checked; the other keys are cut into a few groups, one app
# per group, so that the pairs spread over the test workers (one test of all 41 keys took a minute).
KEY_GROUPS = [OTHER_KEYS[i::4] for i in range(4)]
assert sorted(key for group in KEY_GROUPS for key in group) == OTHER_KEYS


@pytest.mark.parametrize("seconds", KEY_GROUPS, ids=[f"keys{i}" for i in range(len(KEY_GROUPS))])
@pytest.mark.parametrize("first", STEP_KEYS)
async def test_a_step_key_and_any_key_in_one_burst_act_as_if_pressed_one_at_a_time(first, seconds):
    app = WorkbenchApp(settings=Settings(target=300))  # r reaches the target in a few dozen merges
    differ = []
    async with app.run_test(size=(80, 24)) as pilot:  # the smallest screen draws fastest
        await pilot.pause()
        for second in seconds:
            await restore(app, pilot)
            said = len(app.said)
            post(app, first)
            await settled(app, pilot)
            post(app, second)
            await settled(app, pilot)
            one_at_a_time = state(app, said)

            await restore(app, pilot)
            said = len(app.said)
            post(app, first)
            post(app, second)
            await settled(app, pilot)
            burst = state(app, said)
            if burst != one_at_a_time:
                differ.append((second, one_at_a_time, burst))
    assert not differ, "\n".join(f"{first} {second}: one at a time {a}, in a burst {b}" for second, a, b in differ)


class Swallower(Button):
    """A widget that takes the barrier behind a key and never passes it on, as one removed while
    the key was on its way does."""

    def post_message(self, message) -> bool:
        return True if isinstance(message, KeyBarrier) else super().post_message(message)


async def test_keys_behind_a_key_whose_barrier_was_lost_are_not_held_forever():
    app = WorkbenchApp()
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        main = app.main
        swallower = Swallower("swallower")
        await main.mount(swallower)
        swallower.focus()
        await pilot.pause()
        post(app, "x")  # forwarded to it, and its barrier lost
        post(app, "n")
        await wait_for(lambda: app.key_order.holding == 1)
        await wait_for(lambda: app.key_order.holding == 0)  # given up for lost after a while
        await wait_for(lambda: main.session.steps == 1)  # n reached the screen's binding, in order


async def test_a_step_key_that_could_not_act_as_it_arrived_acts_once_it_can():
    """A step key is a priority binding, which Textual checks only as the key arrives. One
    pressed before the corpus had loaded, which had loaded by the time the key had gone round
    the widgets, was lost without a word (the first N of three in a burst at start-up)."""
    app = WorkbenchApp()
    async with app.run_test(size=(80, 24)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        main = app.main
        refused = []
        allowed = main.check_action

        def not_yet(action, parameters):  # the first check of N: as if the corpus were loading
            if action == "step_ten" and not refused:
                refused.append(action)
                return None
            return allowed(action, parameters)

        main.check_action = not_yet
        post(app, "N")
        await settled(app, pilot)
        assert refused and main.session.steps == 10 and not app.said
        post(app, "slash")  # a text box has focus: n and u are characters, not steps
        post(app, "n")
        post(app, "u")
        await settled(app, pilot)
        assert main.session.steps == 10 and main.query_one("#pair-filter").value == "nu"


@pytest.mark.parametrize("second", ["n", "u", "space", "backspace", "N"])
async def test_a_step_key_behind_enter_in_the_history_waits_for_the_question_enter_asks(second):
    """Enter in the merge history posts RewindTo, which opens "Undo 3 merges?". The step key
    behind it in a burst overtook that message: `enter n` merged first and then asked about a
    history one step longer. Now the key waits, and meets the question as if typed after it."""
    app = WorkbenchApp(settings=Settings(target=300))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        outcomes = []
        for burst in (False, True):
            await restore(app, pilot)
            main = app.main
            main.session.step_many(3)
            main.refresh_snapshot()
            history = main.query_one("#merges")
            main.set_focus(history)
            await pilot.pause()
            history.cursor = 1  # step 2 of 5
            said = len(app.said)
            post(app, "enter")
            if not burst:
                await settled(app, pilot)
                asked = type(app.screen).__name__
            post(app, second)
            await settled(app, pilot)
            outcomes.append((main.session.steps, type(app.screen).__name__, tuple(app.said[said:])))
        assert asked != "MainScreen"  # the question
        assert outcomes[1] == outcomes[0]


async def test_number_keys_show_the_bottom_tabs():
    """Issue 22, item 11: the bottom tabs from the keyboard (the newcomer clicked)."""
    app = WorkbenchApp()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        tabs = app.main.query_one("#bottom", TabbedContent)
        for key, tab in (("7", "tab-vocab"), ("2", "tab-bytes"), ("5", "tab-batches"), ("1", "tab-encode")):
            post(app, key)
            await settled(app, pilot)
            assert tabs.active == tab, key
        post(app, "3")  # the lattice is Unigram's: in a BPE session the key does nothing
        await settled(app, pilot)
        assert tabs.active == "tab-encode"


@pytest.mark.parametrize("size", [(80, 24), (100, 30), (160, 48)])
async def test_the_keys_line_ends_in_whole_keys_and_the_help_key(size):
    """Issue 22, item 12: the footer was cut mid-word at 80 columns ("s Sa") and at 160 in the
    batches mode; the keys line takes whole keys and ends in ? when some are left out."""
    from tokworkbench.app.widgets.keys_footer import KeysFooter

    app = WorkbenchApp()
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        for keys in ([], ["b"]):  # the main screen, then the batches pane's keys first
            for key in keys:
                post(app, key)
            await settled(app, pilot)
            footer = app.main.query_one(KeysFooter)
            line = footer.render()
            assert line.cell_len <= size[0]
            shown = line.plain
            labels = {a.label for a in ACTIONS} | {b.description for b in BatchesPanel.BINDINGS}
            words = shown.split(" ")
            assert "?" in words  # help is always in reach
            # every label shown is whole: the line ends in a label, not in a cut one
            assert shown.endswith(("more keys", "Help")) or any(shown.endswith(label) for label in labels)
