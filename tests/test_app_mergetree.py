"""The merge tree dialog (m) and the details line, driven by the pilot at 160×48 and 80×24: the
tree of the selected token is core/inspection/mergetree.py's drawing with the trainer's counts
(a loaded model: merge numbers only), it fits the box, escape closes it; a Unigram piece shows
its score and segmentation; with nothing selected the key says what to do."""

import pytest
from recording import RecordingApp
from test_app import ready, wait_until
from test_app_inspect import app_from_cli, opened  # noqa: F401 (fixtures)
from test_app_unigram import course_app, course_files  # noqa: F401 (fixtures)
from textual.widgets import Static

from tokworkbench.app.widgets.mergetree import MergeTreeDialog, tree_width
from tokworkbench.core.inspection.mergetree import cells, describe_tree, merge_tree, step_counts

SIZES = [(160, 48), (80, 24)]


def _tree_lines(app) -> list[str]:
    return str(app.screen.query_one("#tree-lines", Static).render()).splitlines()


async def _select_merged(app, pilot) -> int:
    """Walk the corpus window's tokens with > until one made by a merge is selected."""
    base = app.main.snapshot.base_size
    for _ in range(200):
        await pilot.press("greater_than_sign")
        await pilot.pause()
        if app.main.selected_token is not None and base <= app.main.selected_token < app.main.snapshot.vocab_size:
            return app.main.selected_token
    raise AssertionError("no merged token in the window")


@pytest.mark.parametrize("size", SIZES)
async def test_m_draws_the_selected_tokens_tree_with_the_trainers_counts(size):
    app = RecordingApp()
    async with app.run_test(size=size) as pilot:
        await ready(app, pilot)
        for _ in range(4):
            await pilot.press("N")
        await app.workers.wait_for_complete()
        await pilot.pause()
        tid = await _select_merged(app, pilot)
        details = str(app.query_one("#token-details").render())
        assert f"id {tid}" in details and "· merge " in details
        await pilot.press("m")
        await wait_until(lambda: isinstance(app.screen, MergeTreeDialog))
        await pilot.pause()
        history = app.main.session.learner.history
        expected = describe_tree(merge_tree(app.main.snapshot.model, tid, step_counts(history)), tree_width(size[0]))
        lines = _tree_lines(app)
        assert lines == expected
        record = history[tid - app.main.snapshot.base_size]
        assert f"· merge {record.step:,} · {record.count:,}×" in lines[0]
        assert all(cells(line) <= tree_width(size[0]) for line in lines)
        assert "the pair's count" in str(app.screen.query_one("#tree-hint", Static).render())
        await pilot.press("escape")
        await wait_until(lambda: not isinstance(app.screen, MergeTreeDialog))


async def test_m_with_nothing_selected_says_what_to_select():
    app = RecordingApp()
    async with app.run_test(size=SIZES[0]) as pilot:
        await ready(app, pilot)
        await pilot.press("m")
        await pilot.pause()
        assert not isinstance(app.screen, MergeTreeDialog)
        assert any("select a token first" in str(n.message) for n in app._notifications)


@pytest.mark.parametrize("size", SIZES)
async def test_a_loaded_model_shows_merge_numbers_without_counts(opened, size):  # noqa: F811
    app = app_from_cli(opened, "-m", "r50k_base")
    async with app.run_test(size=size) as pilot:
        await wait_until(lambda: app.main.session is not None)
        await app.workers.wait_for_complete()
        await pilot.pause()
        app.main.action_select_token(2260)  # ' national', as a click selects it
        await pilot.pause()
        await pilot.press("m")
        await wait_until(lambda: isinstance(app.screen, MergeTreeDialog))
        await pilot.pause()
        lines = _tree_lines(app)
        assert lines[0] == "'␣national' id 2260 · merge 2,005"
        assert not any("×" in line for line in lines)
        assert "no counts" in str(app.screen.query_one("#tree-hint", Static).render())
        assert all(cells(line) <= tree_width(size[0]) for line in lines)


async def test_a_unigram_piece_shows_its_score_and_segmentation(course_files):  # noqa: F811
    app = course_app(course_files)
    async with app.run_test(size=SIZES[0]) as pilot:
        await ready(app, pilot)
        model = app.main.snapshot.model
        tid = next(i for i in range(model.vocab_size) if len(model.pieces[i][0]) > 2 and i not in model.specials)
        app.main.action_select_token(tid)
        await pilot.pause()
        assert "piece, score" in str(app.query_one("#token-details").render())
        await pilot.press("m")
        await wait_until(lambda: isinstance(app.screen, MergeTreeDialog))
        await pilot.pause()
        lines = _tree_lines(app)
        assert lines[0].startswith(f"'{model.pieces[tid][0]}' id {tid}: a Unigram piece, score")
        assert lines[1] == "best segmentation of its own text:"
