"""SentencePiece BPE in the workbench: the pair table names the next merge, n merges it, u
undoes it exactly, r runs to the target in the worker, and the merges pane lists them."""

import pytest
from recording import RecordingApp
from textual.widgets import Input

from tokworkbench.app.widgets.merges import MergesPanel
from tokworkbench.core.session.settings import Settings
from tokworkbench.core.text.samples import sample_paths

SIZES = [(160, 48), (80, 24)]


def cells(row) -> list[str]:
    return [c if isinstance(c, str) else c[0] for c in row]


@pytest.mark.parametrize("size", SIZES, ids=["160x48", "80x24"])
async def test_merge_undo_and_run_like_bpe(size):
    paths = [str(p) for p in sample_paths() if p.name.startswith("01_")]
    app = RecordingApp(paths, Settings(kind="spbpe", target=400, byte_fallback=True))
    async with app.run_test(size=size) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        main = app.main
        learner = main.session.learner
        assert learner.kind == "spbpe"
        assert main.query_one("#pairs").display and main.query_one("#merges").display
        assert not main.query_one("#pieces").display
        before = main.session.snapshot()
        upcoming = learner.step_text(learner.next_step())
        first = cells(main.query_one("#pair-table").rows[0])
        assert first[0] == "▶" and first[1] == upcoming
        await pilot.press("n")
        await pilot.pause()
        assert main.session.steps == 1 and learner.model().token(learner.history[0].new_id) == upcoming
        assert cells(main.query_one(MergesPanel).rows[0])[1] == upcoming
        await pilot.press("u")
        await pilot.pause()
        assert main.session.steps == 0 and main.session.snapshot() == before
        await pilot.press("r")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert main.session.learner.vocab_size == 400 and not main.running
        assert main.query_one(MergesPanel).border_subtitle == f"{400 - main.session.learner.base_size} merges"


async def test_chosen_in_the_settings_with_its_fields_and_roles():
    paths = [str(p) for p in sample_paths() if p.name.startswith("01_")]
    app = RecordingApp(paths, Settings(split="gpt4"))
    async with app.run_test(size=(160, 48)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.press("c")
        await pilot.pause()
        dialog = app.screen
        assert dialog.query_one("#character_coverage").disabled and dialog.query_one("#byte_fallback").disabled
        dialog.query_one("#model").value = "spbpe"
        await pilot.pause()
        assert not dialog.query_one("#character_coverage").disabled and dialog.query_one("#tie_break").disabled
        assert dialog.query_one("#role-bos").value == "<s>" and dialog.query_one("#role-unk").value == "<unk>"
        dialog.query_one("#byte_fallback").value = "yes"
        dialog.query_one("#target", Input).value = "500"
        await pilot.press("ctrl+s")
        await app.workers.wait_for_complete()
        await pilot.pause()
        settings = app.main.session.settings
        assert (settings.kind, settings.byte_fallback, settings.target) == ("spbpe", True, 500)
        assert app.main.session.learner.kind == "spbpe" and app.main.query_one("#pairs").display
        assert app.main.session.learner.model().roles == settings.roles and settings.roles.bos == "<s>"
