"""spm_train's piece options in the settings dialog: set by a user, applied to the session, and
shown in the train command as the command line spells them (a user copies it)."""

import asyncio
import shlex

from recording import RecordingApp
from textual.widgets import Input, Select

from tokworkbench.app.dialogs import SettingsDialog
from tokworkbench.cli import build_parser
from tokworkbench.core.session.settings import Settings
from tokworkbench.core.text.samples import sample_paths

SP_FIELDS = ("split_digits", "user_defined_symbols", "control_symbols", "required_chars", "character_coverage",
             "byte_fallback")
SCREENSHOT = None  # a path to save the 80x24 look to, when looking at it by eye


def corpus() -> list[str]:
    return [str(p) for p in sample_paths() if p.name.startswith("01_")]


async def wait_for(condition, seconds=120.0):
    """A bounded wait for what a busy machine draws a little later."""
    async def poll():
        while not condition():
            await asyncio.sleep(0.01)

    await asyncio.wait_for(poll(), seconds)


async def open_settings(app, pilot) -> SettingsDialog:
    await app.workers.wait_for_complete()
    await pilot.pause()
    await pilot.press("c")
    await wait_for(lambda: isinstance(app.screen, SettingsDialog) and app.screen.focused is not None)
    return app.screen


def command_line(dialog) -> str:
    return str(dialog.query_one("#train-command").render())


def fill(dialog, users="", controls="", required="", digits="no") -> None:
    dialog.query_one("#split_digits", Select).value = digits
    dialog.query_one("#user_defined_symbols", Input).value = users
    dialog.query_one("#control_symbols", Input).value = controls
    dialog.query_one("#required_chars", Input).value = required


def enabled(dialog) -> dict[str, bool]:
    return {name: not dialog.query_one(f"#{name}").disabled for name in SP_FIELDS}


async def test_sentencepiece_bpe_takes_the_options_and_its_command_reads_back():
    app = RecordingApp(corpus(), Settings(kind="spbpe", split="metaspace", units="char", target=500))
    async with app.run_test(size=(160, 48)) as pilot:
        dialog = await open_settings(app, pilot)
        assert all(enabled(dialog).values())
        fill(dialog, users="<sep>, <cls>", controls="<mask>", required="-09", digits="yes")
        flags = "--split-digits --user-defined-symbols '<sep>,<cls>' --control-symbols '<mask>' --required-chars=-09"
        await wait_for(lambda: flags in command_line(dialog))  # a value with a leading dash after `=`
        await pilot.press("ctrl+s")
        await wait_for(lambda: app.screen is app.main)
        await app.workers.wait_for_complete()
        await pilot.pause()
        s = app.main.session.settings
        assert (s.split_digits, s.user_defined_symbols, s.control_symbols, s.required_chars) == (
            True, ("<sep>", "<cls>"), ("<mask>",), "-09")
        assert app.main.session.learner.kind == "spbpe"

        dialog = await open_settings(app, pilot)  # it opens on what the session holds
        assert dialog.query_one("#split_digits", Select).value == "yes"
        assert dialog.query_one("#user_defined_symbols", Input).value == "<sep>,<cls>"
        assert dialog.query_one("#control_symbols", Input).value == "<mask>"
        assert dialog.query_one("#required_chars", Input).value == "-09"
        words = shlex.split(command_line(dialog).removeprefix("same from the command line: "))
        args = build_parser().parse_args(words[1:])  # the program's name off
        assert (args.split_digits, args.user_defined_symbols, args.control_symbols, args.required_chars) == (
            True, ("<sep>", "<cls>"), ("<mask>",), "-09")


async def test_the_fields_are_only_for_the_kinds_that_read_them_and_for_unigram_only_under_em():
    app = RecordingApp(corpus(), Settings(target=400))
    async with app.run_test(size=(160, 48)) as pilot:
        dialog = await open_settings(app, pilot)
        assert not any(enabled(dialog).values())  # BPE reads none of them
        dialog.query_one("#model", Select).value = "unigram"
        await pilot.pause()
        assert dialog.query_one("#algorithm", Select).value == "course" and not any(enabled(dialog).values())
        dialog.query_one("#algorithm", Select).value = "em"
        await wait_for(lambda: all(enabled(dialog).values()))
        fill(dialog, controls="<mask>", digits="yes")
        dialog.query_one("#byte_fallback", Select).value = "yes"
        await wait_for(lambda: "--split-digits --control-symbols '<mask>'" in command_line(dialog)
                       and "--byte-fallback" in command_line(dialog))
        dialog.query_one("#algorithm", Select).value = "course"  # em's alone: the command drops them
        await wait_for(lambda: not any(enabled(dialog).values()) and "--split-digits" not in command_line(dialog)
                       and "--byte-fallback" not in command_line(dialog))
        dialog.query_one("#algorithm", Select).value = "em"
        await wait_for(lambda: "--control-symbols '<mask>'" in command_line(dialog))
        await pilot.press("ctrl+s")
        await wait_for(lambda: app.screen is app.main)
        await app.workers.wait_for_complete()
        s = app.main.session.settings
        assert (s.kind, s.algorithm, s.split_digits, s.control_symbols) == ("unigram", "em", True, ("<mask>",))


async def test_a_value_the_core_refuses_is_shown_and_the_dialog_stays_open():
    app = RecordingApp(corpus(), Settings(kind="spbpe", split="metaspace", units="char", target=500))
    async with app.run_test(size=(80, 24)) as pilot:
        dialog = await open_settings(app, pilot)
        error = dialog.query_one("#settings-error")
        for users, controls, said in (("", "<a>,,<b>", "holds an empty symbol"),
                                      ("<a>", "<a>", "is given twice"),
                                      ("<s>", "", "already one of the model's own pieces")):
            fill(dialog, users=users, controls=controls)
            await pilot.pause()
            await pilot.press("ctrl+s")
            await wait_for(lambda: said in str(error.render()))
            assert app.screen is dialog
        fill(dialog, required="a b")
        await pilot.press("ctrl+s")
        await wait_for(lambda: "holds whitespace" in str(error.render()))
        assert app.screen is dialog and app.main.session.settings.required_chars == ""
        fill(dialog, users="<sep>")
        await pilot.pause()
        if SCREENSHOT:
            dialog.query_one("#user_defined_symbols").scroll_visible(animate=False)
            await pilot.pause(0.3)
            app.save_screenshot(SCREENSHOT)
        await pilot.press("ctrl+s")
        await wait_for(lambda: app.screen is app.main)
        assert app.main.session.settings.user_defined_symbols == ("<sep>",)


async def test_hints_show_only_for_the_kinds_that_read_their_field():
    """The tie-break rule's line under BPE only (SentencePiece BPE and Unigram break no ties
    by it), the seed-holds-every-character line under Unigram only; they follow the model box."""
    app = RecordingApp(corpus(), Settings(target=500))
    async with app.run_test(size=(160, 48)) as pilot:
        dialog = await open_settings(app, pilot)
        tie, seed = dialog.query_one("#tie-break-rule"), dialog.query_one("#unigram-hint")
        assert tie.display and not seed.display
        for kind, shows_tie, shows_seed in (("spbpe", False, False), ("unigram", False, True), ("bpe", True, False)):
            dialog.query_one("#model", Select).value = kind
            await wait_for(lambda: (tie.display, seed.display) == (shows_tie, shows_seed))


async def test_a_course_session_keeps_its_rounds_when_only_the_target_changes():
    """Course reads the default coverage as every character: the dialog keeps it, so a new
    target alone restarts nothing (it set 1.0, which differs from the default, and asked to)."""
    settings = Settings(kind="unigram", units="char", split="metaspace", algorithm="course", target=500)
    app = RecordingApp(corpus(), settings)
    async with app.run_test(size=(160, 48)) as pilot:
        dialog = await open_settings(app, pilot)
        dialog.query_one("#target", Input).value = "450"
        await wait_for(lambda: not isinstance(dialog._gathered(), str) and dialog._gathered().target == 450)
        assert not settings.needs_retrain(dialog._gathered())
