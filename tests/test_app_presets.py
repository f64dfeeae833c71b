"""The public encodings by name inside the workbench: Compare (`C`) and replay (`l`) take a preset
as the command line does (`tokworkbench compare cl100k_base o200k_base`), through the one loader.
gpt2 (r50k_base) ships with the package, so these always run."""

from recording import RecordingApp
from textual.widgets import Input, Static

from tokworkbench.app.dialogs import ReplayDialog
from tokworkbench.app.widgets.compare import ComparePanel


def shown(app, selector: str) -> str:
    return str(app.query_one(selector, Static).render())


async def test_compare_takes_a_preset_name_and_the_dialog_says_so():
    app = RecordingApp()
    async with app.run_test(size=(160, 48)) as pilot:
        await app.workers.wait_for_complete()
        app.main.query_one("#encode-input", Input).value = "the theory of tokens"
        await pilot.press("C")
        await pilot.pause()
        assert isinstance(app.screen, ReplayDialog) and "preset" in app.screen.question
        app.screen.query_one("#replay-path", Input).value = "gpt2"
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is app.main, app.said
        panel = app.query_one(ComparePanel)
        assert panel.other is not None and panel.other.vocab_size == 50257 and panel.other_name == "gpt2"
        assert "4 tokens" in shown(app, "#compare-b-text")  # 'the', ' theory', ' of', ' tokens'


async def test_a_name_that_is_neither_file_nor_preset_stays_in_the_dialog_with_the_presets_named():
    app = RecordingApp()
    async with app.run_test(size=(160, 48)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.press("C")
        await pilot.pause()
        app.screen.query_one("#replay-path", Input).value = "cl99k_base"
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, ReplayDialog)
        error = shown(app.screen, "#replay-error")
        assert "no such file or preset" in error and "cl100k_base" in error and "gpt2" in error


async def test_replay_takes_a_preset_name():
    app = RecordingApp()
    async with app.run_test(size=(160, 48)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.press("l")
        await pilot.pause()
        app.screen.query_one("#replay-path", Input).value = "gpt2"
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is app.main
        assert [s for s in app.said if s.startswith("replaying 50,000 merges from gpt2")], app.said
        await pilot.press("n")
        await pilot.pause()
        assert app.main.session.steps == 1
