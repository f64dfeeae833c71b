"""What a first session meets: the screen before a slow load, the hints, the screenshot, and
the save box remembering its name (issue 22)."""

import pytest
from recording import RecordingApp
from test_app_key_order import post, settled
from textual.widgets import Input, Static

from tokworkbench.app.dialogs import OpenDialog, PromptDialog
from tokworkbench.core.errors import DecodeError, InvalidUtf8DecodeError
from tokworkbench.core.text.samples import sample_paths


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


async def test_a_preset_is_read_in_the_load_worker_with_the_screen_up():
    """-m cl100k_base parsed its ranks before the app started (~5 s of blank terminal, cold):
    now the screen is drawn first, with a progress line naming what is read."""
    import threading

    from tokworkbench.app.widgets.progress import ProgressRow
    from tokworkbench.core.formats.presets import load_preset

    release = threading.Event()

    def loader():
        assert release.wait(30)
        return load_preset("gpt2")

    app = RecordingApp(None, None, (loader, "gpt2"))
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause(0.2)
        row = app.main.query_one(ProgressRow)
        assert row.display and "reading gpt2" in str(app.main.query_one("#progress-label", Static).render())
        assert app.main.session is None and app.main.query_one("#corpus").region.area  # the panes are there
        release.set()
        await app.workers.wait_for_complete()
        await pilot.pause()
        session = app.main.session
        assert session is not None and session.inspected == "gpt2" and session.model().vocab_size == 50257
        assert isinstance(app.main.inspect[0], type(session.model()))  # read once; a new corpus reuses it
        assert not row.display


async def test_a_preset_that_fails_in_the_worker_ends_the_app_with_one_line():
    from tokworkbench.core.errors import ModelFileError

    def loader():
        raise ModelFileError("cl100k_base.tiktoken: its SHA-256 is 00, not the published one")

    app = RecordingApp(None, None, (loader, "cl100k_base"))
    async with app.run_test(size=(160, 48)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
    assert app.return_code == 1


async def test_the_line_a_failed_load_ends_with_is_escaped_and_not_markup():
    """It is printed after the screen is gone, where no line filter runs: a model file's ESC
    would reach the terminal, and brackets would be read as styles."""
    from tokworkbench.core.errors import ModelFileError

    def loader():
        raise ModelFileError("unknown role \x1b]52;c;aGk=\x07 in [b]x[/b]")

    app = RecordingApp(None, None, (loader, "model.json"))
    said, leave = [], app.exit
    app.exit = lambda *args, **kwargs: said.append(kwargs.get("message")) or leave(*args, **kwargs)
    async with app.run_test(size=(160, 48)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
    assert app.return_code == 1
    [line] = said  # what Textual prints as it leaves
    assert str(line) == "tokworkbench: error: unknown role \\x1b]52;c;aGk=\\x07 in [b]x[/b]"


def test_the_command_line_checks_a_preset_before_the_screen(tmp_path, monkeypatch, capsys):
    """A missing or damaged ranks file is still one line before any screen."""
    from tokworkbench.cli import main

    monkeypatch.setenv("TOKWORKBENCH_DATA", str(tmp_path))
    (tmp_path / "cl100k_base.tiktoken").write_bytes(b"IQ== 0\n")
    assert main(["-m", "cl100k_base"]) == 1
    assert "its SHA-256 is" in capsys.readouterr().err


def test_make_run_says_what_it_does_while_the_venv_builds(tmp_path):
    """`make run` was silent for two minutes (pip --quiet): each step now says what it does, and
    the main install shows pip's progress. `make -n` prints the recipe without running it."""
    import shutil
    import subprocess
    from pathlib import Path

    if shutil.which("make") is None:
        pytest.skip("no make here")
    root = Path(__file__).resolve().parents[1]
    out = subprocess.run(["make", "-n", "-C", str(root), "run", f"VENV={tmp_path / 'venv'}"],
                         capture_output=True, text=True, check=True).stdout
    steps = [line for line in out.splitlines() if line.startswith("echo ")]
    assert any("creating" in s for s in steps) and any("installing" in s for s in steps)
    assert any("opening the workbench" in s for s in steps)
    install = [line for line in out.splitlines() if "pip install" in line and "-e" in line]
    assert install and "--quiet" not in install[0]


async def test_when_the_first_corpus_cannot_be_loaded_open_still_opens_another(tmp_path):
    """An empty (or binary) file given at start-up fails to load, and there is no session. Every
    key then said "the corpus is still loading", Open too: quitting was the only way out."""
    empty = tmp_path / "empty.txt"
    empty.write_text("", encoding="utf-8")
    app = RecordingApp([str(empty)])
    async with app.run_test(size=(80, 24)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.main.session is None
        said = len(app.said)
        post(app, "n")
        await settled(app, pilot)
        assert any("no corpus is loaded: o opens one" in m for m in app.said[said:])
        assert not any("still loading" in m for m in app.said[said:])
        post(app, "o")
        await settled(app, pilot)
        assert isinstance(app.screen, OpenDialog)
        app.screen.query_one("#open-input").value = str(sample_paths()[0])
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.main.session is not None and app.main.session.corpus.documents
