"""Every dialog and tab, reached by keys as a user reaches them, and how each looks."""

import asyncio

import pytest
from recording import RecordingApp as WorkbenchApp
from textual import events
from textual.keys import _character_to_key
from textual.widgets import Input, Select

from tokworkbench.app.dialogs import (
    ConfirmDialog,
    ExportDialog,
    HelpDialog,
    OpenDialog,
    PromptDialog,
    ReplayDialog,
    SettingsDialog,
)

SIZES = [(160, 48), (80, 24)]

# the key that opens each dialog from the main screen, after one merge
DIALOGS = {
    "help": ("question_mark", HelpDialog),
    "target": ("t", PromptDialog),
    "settings": ("c", SettingsDialog),
    "open": ("o", OpenDialog),
    "save": ("s", PromptDialog),
    "export": ("e", ExportDialog),
    "replay": ("l", ReplayDialog),
    "reset": ("R", ConfirmDialog),
    "quit": ("q", ConfirmDialog),
}


@pytest.fixture
def quiet_folder(tmp_path, monkeypatch):
    """A working directory whose listing is the same on every machine (the open dialog shows it)."""
    folder = tmp_path / "corpus-folder"
    folder.mkdir()
    (folder / "a.txt").write_text("aaa bbb", encoding="utf-8")
    monkeypatch.chdir(folder)
    return folder


@pytest.mark.parametrize("name", DIALOGS)
async def test_each_dialog_opens_from_its_key_and_escape_closes_it(name, quiet_folder):
    key, kind = DIALOGS[name]
    app = WorkbenchApp()
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.press("n")
        await pilot.press(key)
        await pilot.pause()
        assert isinstance(app.screen, kind)
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is app.main and app.main.session.steps == 1


async def test_both_tabs_are_reachable_and_render():
    app = WorkbenchApp()
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.press("n")
        tabs = app.query_one("#bottom")
        for tab in ("tab-bytes", "tab-encode"):
            tabs.active = tab
            await pilot.pause()
            assert tabs.active == tab
        assert "Type above" in str(app.query_one("#encode-result").render())
        tabs.active = "tab-bytes"
        await pilot.pause()
        assert app.query_one("#bytes").rows  # the byte view filled itself when shown


async def test_ctrl_q_asks_about_an_unsaved_model_like_q():
    app = WorkbenchApp()
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.press("n")
        await pilot.press("ctrl+q")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmDialog) and "Quit without saving" in app.screen.question
        await pilot.press("n")
        await pilot.pause()
        assert app.is_running and app.screen is app.main


async def test_replaying_a_damaged_file_is_a_message_and_the_work_is_kept(tmp_path):
    bad = tmp_path / "tokenizer.json"
    bad.write_text('{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": [["a"]]}}', encoding="utf-8")
    app = WorkbenchApp()
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.press("N")
        await pilot.press("l")
        await pilot.pause()
        app.screen.query_one("#replay-path", Input).value = str(bad)
        await pilot.press("enter")
        await pilot.pause()
        assert app.is_running and app.screen is app.main and app.main.session.steps == 10
        assert any("merge" in m for m in app.said[-1:])  # the error names what is wrong


async def test_save_path_with_a_tilde_is_expanded_before_it_is_checked_and_written(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    app = WorkbenchApp()
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.press("n")
        await pilot.press("s")
        await pilot.pause()
        app.screen.query_one(Input).value = "~/m.json"
        await pilot.press("enter")
        await pilot.pause()
        assert (tmp_path / "m.json").is_file() and not app.main.session.unsaved


def steady_cursors(app):
    """A blinking cursor would make a snapshot depend on the moment it is taken."""
    for box in app.screen.query(Input):
        box.cursor_blink = False


@pytest.mark.parametrize("size", SIZES, ids=["160x48", "80x24"])
@pytest.mark.parametrize("name", ["help", "settings", "export", "replay", "open", "quit", "target"])
def test_dialog_snapshot(snap_compare, name, size, quiet_folder):
    key = DIALOGS[name][0]

    async def run_before(pilot):
        await pilot.press("n")
        await pilot.press(key)
        await pilot.pause(0.3)
        steady_cursors(pilot.app)
        pilot.app.clear_notifications()
        await pilot.pause(0.2)

    assert snap_compare(WorkbenchApp(), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES, ids=["160x48", "80x24"])
def test_bytes_tab_snapshot(snap_compare, size):
    async def run_before(pilot):
        await pilot.press("N")
        pilot.app.query_one("#bottom").active = "tab-bytes"
        pilot.app.query_one("#encode-input", Input).value = "héllo 👋🏽"
        await pilot.pause(0.3)
        steady_cursors(pilot.app)
        pilot.app.clear_notifications()
        await pilot.pause(0.2)

    assert snap_compare(WorkbenchApp(), terminal_size=size, run_before=run_before)


async def wait_for(condition, seconds=120.0):
    """A bounded wait for what a busy machine draws a little later."""
    async def poll():
        while not condition():
            await asyncio.sleep(0.01)

    await asyncio.wait_for(poll(), seconds)


async def keys_done(app, pilot):
    """Every key of a burst has run its course through the app's line of keys (app/keyorder.py),
    and the screen has caught up: an event to wait for, not a time that a busy machine outlasts."""
    await wait_for(lambda: app.key_order.settled)
    await pilot.pause()


def burst(app, keys):
    """Keys as a terminal delivers them over SSH: all at once, no waiting in between, each with
    the name and character a terminal's parser gives it ("/" is the key "slash")."""
    for key in keys:
        if len(key) == 1:
            name = key if key.isalnum() else _character_to_key(key)
            app.post_message(events.Key(name, key))
        else:
            app.post_message(events.Key(key, None))


async def test_keys_sent_in_a_burst_land_in_order_in_every_text_box(tmp_path):
    app = WorkbenchApp()
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.press("n", "e")
        await pilot.pause()
        box = app.screen.query_one("#export-path", Input)
        box.value = ""
        burst(app, list("abcdefgh") + ["backspace"] * 8 + list("xyz"))
        await keys_done(app, pilot)
        assert box.value == "xyz"
        box.value = ""
        path = tmp_path / "model.json"
        burst(app, list(str(path)) + ["enter"])
        await keys_done(app, pilot)
        await wait_for(path.is_file)  # the whole name, not "model.jso"
        await pilot.pause()
        encode = app.main.query_one("#encode-input", Input)
        encode.focus()
        burst(app, list("hello") + ["backspace", "left", "left", "X"])
        await keys_done(app, pilot)
        assert encode.value == "heXll"


async def test_typing_hides_the_keys_the_box_takes_and_escape_leaves_the_box():
    app = WorkbenchApp()
    async with app.run_test(size=(160, 48)) as pilot:
        assert app.main.check_action("step", ()) is True
        app.main.query_one("#encode-input", Input).focus()
        await pilot.pause()
        assert app.main.check_action("step", ()) is False  # hidden from the footer while typing
        await pilot.press("n")
        assert app.main.session.steps == 0 and app.main.query_one("#encode-input", Input).value == "n"
        await pilot.press("escape")
        await pilot.press("n")
        await pilot.pause()
        assert app.main.session.steps == 1


async def test_the_pair_filter_finds_pairs_beyond_the_top_of_the_table():
    app = WorkbenchApp()
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.press("slash", "e", "x")
        await pilot.pause()
        rows = app.main.snapshot.next_rows
        assert rows and all("ex" in r.merged_text for r in rows)
        assert "matching ex" in str(app.main.query_one("#pairs").border_subtitle)
        top = {(r.left, r.right) for r in app.main.session.learner.next_rows(400)[0]}
        assert any((r.left, r.right) not in top for r in rows)  # found below the first 400
        await pilot.press("escape")
        await pilot.pause()
        assert app.main.snapshot.rows_in_all > len(rows)


async def test_a_history_row_rewinds_to_its_step_exactly():
    app = WorkbenchApp()
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.press("N")
        await pilot.pause()
        before = app.main.session.snapshot()
        await pilot.press("n", "n")
        history = app.main.query_one("#merges")
        history.focus()
        await pilot.press("home")  # step 1 ... then down to step 10
        for _ in range(9):
            await pilot.press("down")
        await pilot.press("enter")
        await pilot.pause()
        assert "Undo 2 merges, back to step 10?" in app.screen.question
        await pilot.press("y")
        await pilot.pause()
        assert app.main.session.snapshot() == before


async def test_the_compression_tab_plots_every_step():
    app = WorkbenchApp()
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.press("N", "N")
        app.query_one("#bottom").active = "tab-charts"
        await wait_for(lambda: "over 20 merges" in str(app.query_one("#curve-title").render()))
        title = str(app.query_one("#curve-title").render())
        assert "over 20 merges" in title and f"{app.main.snapshot.compression:.3f}" in title
        assert app.query_one("#compression").data == app.main.snapshot.curve
        assert "vocabulary by token length" in str(app.query_one("#lengths").render())


async def test_the_history_exports_as_csv_from_the_app(tmp_path):
    app = WorkbenchApp()
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.press("N", "e")
        await pilot.pause()
        app.screen.query_one("#export-format", Select).value = "history-csv"
        await pilot.pause()
        app.screen.query_one("#export-path", Input).value = str(tmp_path / "merges.csv")
        await pilot.press("enter")
        await pilot.pause()
        lines = (tmp_path / "merges.csv").read_text(encoding="utf-8").splitlines()
        assert lines[0].startswith("step,left,right") and len(lines) == 11
        assert any("wrote 10 merges" in m for m in app.said)


async def test_a_target_below_the_base_is_said_at_start():
    from tokworkbench.core.session.settings import Settings

    app = WorkbenchApp(settings=Settings(units="char", target=500))
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        assert any("below the base vocabulary" in m for m in app.said)


async def test_keys_right_behind_the_key_that_opens_a_box_land_in_it(tmp_path):
    app = WorkbenchApp()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        burst(app, ["/", "e", "x"])
        await wait_for(lambda: app.main.query_one("#pair-filter", Input).value == "ex")
        assert app.screen is app.main
        burst(app, ["escape", "n"])
        await wait_for(lambda: app.main.session.steps == 1)
        path = tmp_path / "m.json"
        burst(app, ["s", "ctrl+a", "ctrl+k", *str(path), "enter"])
        await wait_for(lambda: path.is_file() and app.screen is app.main)
        await pilot.pause()
        assert app.main.session.steps == 1  # nothing after the box reached the screen twice


async def test_a_dimmed_key_says_why_it_cannot_act():
    app = WorkbenchApp()
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.press("u")
        await pilot.pause()
        assert any("nothing to undo" in m for m in app.said)
        await pilot.press("R")
        await pilot.pause()
        assert app.screen is app.main and sum("nothing to undo" in m for m in app.said) == 2


async def test_what_a_folder_walk_passed_over_is_said(tmp_path):
    (tmp_path / "a.txt").write_text("aaa bbb aaa", encoding="utf-8")
    (tmp_path / ".hidden.txt").write_text("secret", encoding="utf-8")
    (tmp_path / "b.bin").write_bytes(b"\x00\x01\x02")
    app = WorkbenchApp([str(tmp_path)])
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        assert any("skipped 1 binary file" in m for m in app.said)
        assert any("skipped 1 hidden file or folder" in m for m in app.said)


async def open_settings(app, pilot):
    await pilot.pause()
    await pilot.press("c")
    await wait_for(lambda: isinstance(app.screen, SettingsDialog) and app.screen.focused is not None)
    return app.screen


async def test_the_settings_open_on_their_first_field_and_enter_on_a_choice_applies():
    app = WorkbenchApp()
    async with app.run_test(size=(160, 48)) as pilot:
        dialog = await open_settings(app, pilot)
        assert dialog.focused.id == "model"  # not the scrolling body, where enter did nothing
        dialog.query_one("#target", Input).value = "1234"
        await pilot.press("enter")
        await wait_for(lambda: app.screen is app.main)
        assert app.main.session.settings.target == 1234
        dialog = await open_settings(app, pilot)
        await pilot.press("tab")  # the units, another choice: its enter applies too
        await wait_for(lambda: dialog.focused.id == "units")
        dialog.query_one("#target", Input).value = "1300"
        await pilot.press("enter")
        await wait_for(lambda: app.screen is app.main)
        assert app.main.session.settings.target == 1300


def command_line(dialog):
    return str(dialog.query_one("#train-command").render())


async def test_the_settings_command_line_follows_every_field():
    app = WorkbenchApp()
    async with app.run_test(size=(160, 48)) as pilot:
        dialog = await open_settings(app, pilot)
        dialog.query_one("#target", Input).value = "1234"
        await wait_for(lambda: "--vocab-size 1234" in command_line(dialog))
        dialog.query_one("#split", Select).value = "gpt2"
        await wait_for(lambda: "--split gpt2" in command_line(dialog))
        dialog.query_one("#target", Input).value = ""  # not a number yet: the last command stays
        await pilot.pause()
        assert "--vocab-size 1234" in command_line(dialog)
        dialog.query_one("#special_tokens", Input).value = "<s>"
        dialog.query_one("#target", Input).value = "900"
        await wait_for(lambda: "--vocab-size 900" in command_line(dialog) and "--special=<s>" in command_line(dialog))


async def test_changing_the_kind_in_the_settings_proposes_its_usual_units_and_split():
    from tokworkbench.core.session.settings import Settings

    app = WorkbenchApp(settings=Settings(split="gpt2"))
    async with app.run_test(size=(160, 48)) as pilot:
        dialog = await open_settings(app, pilot)
        units, split = dialog.query_one("#units", Select), dialog.query_one("#split", Select)
        assert (units.value, split.value) == ("byte", "gpt2")  # opening proposes nothing
        await pilot.press("space", "down", "enter")  # Unigram, picked from the list by keys
        await wait_for(lambda: dialog.query_one("#model", Select).value == "unigram")
        await wait_for(lambda: (units.value, split.value) == ("char", "metaspace"))
        assert app.screen is dialog  # the enter picked in the list; it applied nothing
        await wait_for(lambda: "--split metaspace" in command_line(dialog))
        split.value = "gpt4"  # the user's own choice after the proposal stays
        await pilot.pause()
        assert split.value == "gpt4"
        dialog.query_one("#model", Select).value = "bpe"
        await wait_for(lambda: (units.value, split.value) == ("byte", "gpt4"))
        split.value = "o200k"
        await pilot.pause()
        assert split.value == "o200k" and units.value == "byte"
