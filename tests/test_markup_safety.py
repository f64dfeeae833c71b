"""What the user types or a file holds is shown as written: Textual reads a plain string as
markup, where `[/INST]` (a Mistral special token) raises and `[INST]` vanishes as a tag."""

from recording import RecordingApp as WorkbenchApp
from textual.widgets import Input, Label


def label_text(screen, selector: str) -> str:
    return str(screen.query_one(selector, Label).render())


async def test_the_settings_command_line_and_errors_keep_brackets():
    app = WorkbenchApp()
    async with app.run_test(size=(160, 48)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.press("c")
        await pilot.pause()
        app.screen.query_one("#special_tokens", Input).value = "<s> [/INST] [INST]"
        await pilot.pause()
        assert "--special '<s>' '[/INST]' '[INST]'" in label_text(app.screen, "#train-command")
        app.screen.query_one("#split").value = "custom"
        app.screen.query_one("#pattern", Input).value = "[/]("
        await pilot.press("ctrl+s")
        await pilot.pause()
        error = label_text(app.screen, "#settings-error")
        assert "invalid pre-tokenizer regex" in error and "[/](" in error


async def test_the_overwrite_question_names_the_file_as_written(tmp_path):
    path = tmp_path / "[k='v] [b]m.json"  # a quoted value left open raises; [b] would style
    path.write_text("{}", encoding="utf-8")
    app = WorkbenchApp()
    async with app.run_test(size=(160, 48)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.press("n", "s")
        await pilot.pause()
        app.screen.query_one(Input).value = str(path)
        await pilot.press("enter")
        await pilot.pause()
        assert f"{path} exists. Overwrite it?" in label_text(app.screen, ".question")
        await pilot.press("n")
        await pilot.pause()
        assert path.read_text(encoding="utf-8") == "{}"
