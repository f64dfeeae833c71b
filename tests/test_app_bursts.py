"""Keys typed behind an enter, sent in one burst as a terminal over SSH sends them: held by the
box until the enter is answered, then routed on to wherever they would have gone."""

import pytest
from recording import RecordingApp as WorkbenchApp
from test_app_dialogs import burst, wait_for
from textual.widgets import Input

from tokworkbench.app.dialogs import PromptDialog, SettingsDialog


async def settle(app, pilot, condition):
    """Waits for `condition`, then for every key of the burst to have run its course."""
    await wait_for(condition)
    if isinstance(app, WorkbenchApp):  # a plain Textual app keeps no line of keys
        await wait_for(lambda: app.key_order.settled)
    await pilot.pause()


async def test_keys_behind_enter_in_a_dialog_act_on_the_screen_beneath():
    app = WorkbenchApp()
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.press("n")
        await pilot.pause()
        burst(app, ["t", "ctrl+u", *"1500", "enter", "N", "N", "N"])
        await settle(app, pilot, lambda: app.screen is app.main and app.main.session.settings.target == 1500)
        assert app.main.session.steps == 31  # the three N ran ten merges each, none went into the box
        burst(app, ["t", "ctrl+u", *"1600", "enter", "t"])  # the second t opens the dialog again
        await settle(app, pilot, lambda: isinstance(app.screen, PromptDialog)
                     and app.main.session.settings.target == 1600)
        assert app.screen.query_one(Input).value == "1600"  # opened after the first one's answer was applied


async def test_keys_behind_a_refused_enter_go_back_into_the_box_in_order():
    app = WorkbenchApp()
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.press("n")
        await pilot.pause()
        burst(app, ["t", "ctrl+u", "x", "enter", "1", "2", "backspace", "3"])
        await settle(app, pilot, lambda: any("whole number" in str(label.render())
                                             for label in app.screen.query("#prompt-error")))
        assert app.screen.query_one(Input).value == "x13"
        # a second enter among the returned keys is taken again, and what follows it reaches the main screen
        burst(app, ["ctrl+u", "x", "enter", "ctrl+u", *"1500", "enter", "N"])
        await settle(app, pilot, lambda: app.screen is app.main and app.main.session.steps == 11)
        assert app.main.session.settings.target == 1500


async def test_keys_behind_enter_in_the_save_and_export_boxes_reach_the_main_screen(tmp_path):
    app = WorkbenchApp()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("n")
        await pilot.pause()
        saved = tmp_path / "m.json"
        burst(app, ["s", "ctrl+a", "ctrl+k", *str(saved), "enter", "n", "n"])
        await settle(app, pilot, lambda: saved.is_file() and app.screen is app.main)
        assert app.main.session.steps == 3
        exported = tmp_path / "tokenizer.json"
        burst(app, ["e", "ctrl+a", "ctrl+k", *str(exported), "enter", "N"])
        await settle(app, pilot, lambda: exported.is_file() and app.screen is app.main)
        assert app.main.session.steps == 13


async def test_keys_behind_enter_in_the_pair_filter_act_on_the_main_screen():
    app = WorkbenchApp()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        box = app.main.query_one("#pair-filter", Input)
        burst(app, ["/", "e", "x", "enter", "n", "n"])
        await settle(app, pilot, lambda: app.main.session.steps == 2 or len(box.value) > 2)
        assert box.value == "ex" and app.main.session.steps == 2  # on main: "exnn" and no merge
        assert app.main.query_one("#pair-table").has_focus
        # a held slash opens the box again (focus selects its text), what follows is typed there,
        # and the enter among the held keys holds the key behind it in turn
        burst(app, ["/", "z", "enter", "/", "y", "enter", "n"])
        await settle(app, pilot, lambda: app.main.session.steps == 3 or box.value.endswith("n"))
        assert box.value == "y" and app.main.session.steps == 3


async def test_keys_behind_enter_in_the_vocab_search_act_on_the_main_screen():
    app = WorkbenchApp()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        box = app.main.query_one("#vocab-search", Input)
        burst(app, ["v", "t", "h", "enter", "n"])
        await settle(app, pilot, lambda: app.main.session.steps == 1 or len(box.value) > 2)
        assert box.value == "th" and app.main.session.steps == 1  # on main: "thn" and no merge


@pytest.fixture
def course_files(tmp_path):
    paths = []
    for k, sentence in enumerate(["This is the Hugging Face Course.", "This chapter is about tokenization."]):
        path = tmp_path / f"{k}.txt"
        path.write_text(sentence, encoding="utf-8")
        paths.append(str(path))
    return paths


async def test_keys_behind_enter_in_the_piece_filter_act_on_the_main_screen(course_files):
    from tokworkbench.core.session.settings import Settings

    app = WorkbenchApp(course_files, Settings(kind="unigram", algorithm="course", split="metaspace",
                                              seed_size=300, target=60))
    async with app.run_test(size=(80, 24)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        box = app.main.query_one("#piece-filter", Input)
        burst(app, ["/", "i", "s", "enter", "n"])
        await settle(app, pilot, lambda: app.main.session.steps == 1 or len(box.value) > 2)
        assert box.value == "is" and app.main.session.steps == 1  # a round, not "isn"


async def test_keys_behind_an_enter_nobody_hands_back_go_back_into_the_box():
    """A box with hands_back whose parent answers the enter but keeps it focused: holding ends once
    the parent has answered, and the held keys are typed into the box in order, not held forever."""
    from textual.app import App
    from textual.containers import Vertical

    from tokworkbench.app.widgets.steady_input import SteadyInput

    answers = []

    class Panel(Vertical):
        def compose(self):
            yield SteadyInput(id="box", hands_back=True)

        def on_input_submitted(self, event: Input.Submitted) -> None:
            event.stop()
            answers.append(event.value)  # answered, and the focus stays in the box

    class BoxApp(App):
        def compose(self):
            yield Panel()

    app = BoxApp()
    async with app.run_test(size=(40, 5)) as pilot:
        box = app.query_one("#box", SteadyInput)
        box.focus()
        await pilot.pause()
        burst(app, ["a", "enter", "b", "backspace", "c", "enter", "d"])
        await settle(app, pilot, lambda: answers)
        assert box.value == "acd" and answers == ["a", "ac"] and not box.holding and box.has_focus


async def test_a_screen_opened_right_behind_the_enter_does_not_trap_the_dialog():
    """ctrl+p (a priority key) opened the palette over a dialog whose close was waiting, and the
    dialog then ignored every key: it now closes, with its answer, once it is on top again."""
    from textual.command import CommandPalette

    app = WorkbenchApp()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        burst(app, ["t", "ctrl+u", *"1600", "enter", "ctrl+p"])
        await settle(app, pilot, lambda: isinstance(app.screen, CommandPalette))
        await pilot.press("escape")
        await settle(app, pilot, lambda: app.screen is app.main and app.main.session.settings.target == 1600)


async def test_bindings_behind_an_enter_that_keeps_the_dialog_open_still_act():
    """Enter in a settings field answers nothing: the keys behind it are routed again, so tab
    moves on and ctrl+s applies, as they did before keys were held."""
    app = WorkbenchApp()
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        await pilot.press("c")
        await settle(app, pilot, lambda: isinstance(app.screen, SettingsDialog))
        app.screen.set_focus(app.screen.query_one("#target", Input))
        await pilot.pause()
        burst(app, ["ctrl+u", *"123", "enter", "4", "tab", "ctrl+s"])
        await settle(app, pilot, lambda: app.screen is app.main and app.main.session.settings.target == 1234)


async def test_keys_behind_a_held_key_that_opens_a_dialog_land_in_it():
    app = WorkbenchApp()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        burst(app, ["/", "t", "h", "enter", "t", "ctrl+u", *"1700", "enter", "n"])
        await settle(app, pilot, lambda: app.screen is app.main and app.main.session.steps == 1)
        assert app.main.session.settings.target == 1700
        assert app.main.query_one("#pair-filter", Input).value == "th"
