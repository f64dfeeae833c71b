"""What a first session meets: the screen before a slow load, the hints, the screenshot, and
the save box remembering its name (issue 22)."""

import pytest
from textual.widgets import Input, Static

from recording import RecordingApp
from tokworkbench.app.dialogs import PromptDialog
from tokworkbench.core.errors import DecodeError, InvalidUtf8DecodeError


def shown(app, selector: str) -> str:
    return str(app.query_one(selector, Static).render())


async def test_the_encode_hint_describes_what_no_color_draws(monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    app = RecordingApp()
    async with app.run_test(size=(160, 48)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        hint = shown(app, "#encode-result")
        assert "underline and reverse" in hint and "strike-through" in hint
        assert "background" not in hint and "red" not in hint


async def test_the_encode_hint_in_colour_still_speaks_of_backgrounds():
    app = RecordingApp()
    async with app.run_test(size=(160, 48)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert "alternating backgrounds" in shown(app, "#encode-result")


async def test_the_palettes_screenshot_saves_in_the_working_folder_and_says_where(tmp_path, monkeypatch):
    """~/Downloads need not exist (it does not here); the sample texts' folder is not proposed."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # no Downloads folder
    monkeypatch.chdir(tmp_path)
    app = RecordingApp()
    async with app.run_test(size=(160, 48)) as pilot:
        await app.workers.wait_for_complete()
        app.deliver_screenshot()  # what the palette's Screenshot command calls
        for _ in range(50):
            await pilot.pause(0.1)
            if list(tmp_path.glob("*.svg")):
                break
        saved = list(tmp_path.glob("*.svg"))
        assert len(saved) == 1 and saved[0].read_text(encoding="utf-8").startswith("<svg")
        await pilot.pause(0.2)
        assert [s for s in app.said if "Saved screenshot to" in s and str(tmp_path) in s], app.said


async def test_the_save_box_proposes_the_name_just_used(tmp_path):
    app = RecordingApp()
    async with app.run_test(size=(160, 48)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.press("n", "s")
        await pilot.pause()
        assert isinstance(app.screen, PromptDialog)
        path = tmp_path / "mine-v1.json"
        app.screen.query_one(Input).value = str(path)
        await pilot.press("enter")
        await pilot.pause()
        assert path.is_file()
        await pilot.press("n", "s")
        await pilot.pause()
        assert app.screen.query_one(Input).value == str(path.resolve())


def test_a_decode_error_names_the_setting_and_pickles():
    import pickle

    exc = InvalidUtf8DecodeError("the ids decode to bytes that are not valid UTF-8 at byte offset 0 (ec 95)")
    assert str(exc).endswith("decode with errors 'replace' to see U+FFFD there")
    assert exc.worded("--errors replace").endswith("decode with --errors replace to see U+FFFD there")
    again = pickle.loads(pickle.dumps(exc))
    assert isinstance(again, DecodeError) and str(again) == str(exc)


@pytest.mark.parametrize("ids", [["236", "149"]])
def test_decode_on_the_command_line_words_the_setting_as_its_flag(tmp_path, capsys, ids):
    from tokworkbench.cli import main

    model = tmp_path / "model.json"
    assert main(["train", "--vocab-size", "300", "-o", str(model)]) == 0
    capsys.readouterr()
    assert main(["decode", "-m", str(model), *ids]) == 1
    err = capsys.readouterr().err
    assert "decode with --errors replace to see U+FFFD there" in err and "errors=" not in err
    assert main(["decode", "-m", str(model), *ids, "--errors", "replace"]) == 0
    assert capsys.readouterr().out == "\ufffd\n"
