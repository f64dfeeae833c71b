"""Snapshots of the choosing-and-debugging views (issue 27) as a user sees them: the pipeline
view, the merge tree dialog and the vocabulary browser's kinds and health filter, at 80×24 and
160×48. The pilot tests beside them (test_app_pipeline.py, test_app_mergetree.py,
test_app_vocab_kinds.py) check what they say; these keep how it looks."""

import pytest
from recording import RecordingApp as WorkbenchApp
from test_app_dialogs import steady_cursors
from textual.widgets import Input

from tokworkbench.app.widgets.mergetree import MergeTreeDialog

SIZES = [(80, 24), (160, 48)]
TEXT = "Héllo,  WORLD!! café 日本語 x"


async def _trained(pilot, merges: int = 3) -> None:
    for _ in range(merges):
        await pilot.press("N")
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


async def _settled(pilot) -> None:
    await pilot.app.workers.wait_for_complete()
    await pilot.pause(0.2)
    steady_cursors(pilot.app)
    pilot.app.clear_notifications()
    await pilot.pause(0.2)


@pytest.mark.parametrize("size", SIZES)
def test_pipeline_view_snapshot(snap_compare, size):
    async def run_before(pilot):
        await _trained(pilot)
        box = pilot.app.main.query_one("#encode-input", Input)
        box.value = TEXT
        await pilot.pause()
        await pilot.press("p")
        await _settled(pilot)

    assert snap_compare(WorkbenchApp(), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_merge_tree_dialog_snapshot(snap_compare, size):
    async def run_before(pilot):
        await _trained(pilot, 4)
        base = pilot.app.main.snapshot.base_size
        for _ in range(200):  # the first token of the window a merge made
            await pilot.press("greater_than_sign")
            await pilot.pause()
            if (pilot.app.main.selected_token or 0) >= base:
                break
        await pilot.press("m")
        for _ in range(50):
            if isinstance(pilot.app.screen, MergeTreeDialog):
                break
            await pilot.pause(0.05)
        await _settled(pilot)

    assert snap_compare(WorkbenchApp(), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_vocabulary_kinds_and_health_filter_snapshot(snap_compare, size):
    async def run_before(pilot):
        await _trained(pilot, 3)
        await pilot.press("v")  # the vocabulary tab, its search box focused
        await pilot.pause()
        for _ in range(3):  # roundtrip, unreachable (none in a model this young), then partial UTF-8
            await pilot.press("ctrl+y")
            await _settled(pilot)

    assert snap_compare(WorkbenchApp(), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_arena_tab_snapshot(snap_compare, size):
    """The Arena tab with this model (3 merges) beside gpt2 (shipped, so the picture is the
    same on every machine): its table and its bars."""
    from tokworkbench.app.widgets.arena import ArenaPanel

    async def run_before(pilot):
        await _trained(pilot, 3)
        await pilot.press("A")
        await pilot.pause()
        pilot.app.screen.query_one("#prompt-input", Input).value = "gpt2"
        await pilot.press("enter")
        panel = pilot.app.main.query_one(ArenaPanel)
        for _ in range(2400):
            if panel.scored is not None and panel.scored.key == panel._key():
                break
            await pilot.pause(0.05)
        await _settled(pilot)

    assert snap_compare(WorkbenchApp(), terminal_size=size, run_before=run_before)
