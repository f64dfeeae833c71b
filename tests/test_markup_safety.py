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
