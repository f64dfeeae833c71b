"""The merge history and the rounds as a user reads them: a click selects the row clicked, and
every step is reachable (the table is a virtual list over the whole history)."""

from recording import RecordingApp
from test_app_dialogs import wait_for as wait_until

from tokworkbench.app.widgets.merges import MergesPanel
from tokworkbench.core.session.snapshot import HISTORY_ROWS

SIZE = (160, 48)


async def trained(app, pilot):
    """Run to the default target (1,000: 744 merges on the sample texts)."""
    await app.workers.wait_for_complete()
    await pilot.pause()
    await pilot.press("r")
    await wait_until(lambda: app.main.last_run is not None and not app.main.running)
    await pilot.pause()
    return app.main.session.steps


def step_cell(panel, index):
    row = panel.row(index)
    return None if row is None else (row[0] if isinstance(row[0], str) else row[0][0])


def screen_row(panel, index) -> int:
    """The y, inside the panel's region (its top border is y 0, the header y 1), of table row `index`."""
    return 2 + index - panel.scroll_offset.y


async def test_every_merge_is_reachable_and_a_click_selects_the_row_clicked():
    app = RecordingApp()
    async with app.run_test(size=SIZE) as pilot:
        steps = await trained(app, pilot)
        assert steps > HISTORY_ROWS  # more than a snapshot carries
        panel = app.main.query_one(MergesPanel)
        assert panel.row_count == steps and panel.cursor == steps - 1
        panel.focus()
        await pilot.press("home")
        # the first rows are read from the session when they come on screen
        await wait_until(lambda: step_cell(panel, 0) == "1")
        assert panel.cursor == 0 and panel.scroll_offset.y == 0
        assert str(panel.render_line(1).text).lstrip().startswith("1 ")
        await pilot.press("enter")
        await pilot.pause()
        assert f"Undo {steps - 1} merges, back to step 1?" in app.screen.question
        await pilot.press("n")
        await pilot.pause()
        # a click on step 740 selects step 740, and enter offers to go back to it
        await pilot.press("end")
        await pilot.pause()
        target = 739  # table row of step 740
        await pilot.click(panel, offset=(3, screen_row(panel, target)))
        await pilot.pause()
        assert panel.cursor == target and step_cell(panel, target) == "740"
        await pilot.press("enter")
        await pilot.pause()
        assert f"Undo {steps - 740} merges, back to step 740?" in app.screen.question
        await pilot.press("y")
        await pilot.pause()
        assert app.main.session.steps == 740 and panel.row_count == 740


async def test_the_history_keeps_the_rows_scrolled_to_while_other_views_change():
    app = RecordingApp()
    async with app.run_test(size=SIZE) as pilot:
        steps = await trained(app, pilot)
        panel = app.main.query_one(MergesPanel)
        panel.focus()
        await pilot.press("home", "pagedown")
        await wait_until(lambda: step_cell(panel, 10) == "11")
        assert panel.cursor == 10
        await pilot.press("right_square_bracket")  # another window: a new snapshot, the same history
        await pilot.pause()
        assert panel.cursor == 10 and step_cell(panel, 10) == "11" and panel.row_count == steps


def test_each_learner_pages_its_whole_history():
    from tokworkbench.core.bpe.trainer import TrainConfig, Trainer
    from tokworkbench.core.session.frozen import FrozenLearner
    from tokworkbench.core.unigram.config import UnigramConfig
    from tokworkbench.core.unigram.learner import UnigramLearner

    texts = ["the theory of the thing", "then there they go"]
    t = Trainer(texts, TrainConfig())
    list(t.run(merges=12))
    rows, total = t.history_page(2, 5)
    assert total == 12 and [r.record.step for r in rows] == [3, 4, 5]
    assert [r.record.step for r in t.history_page(-3, None)[0]] == [10, 11, 12]
    frozen = FrozenLearner(t.model(), texts)
    rows, total = frozen.history_page(0, 2)
    assert total == 12 and [(r.record.step, r.text) for r in rows] == [(1, t.history_page(0, 1)[0][0].text),
                                                                        (2, t.history_page(1, 2)[0][0].text)]
    u = UnigramLearner(texts * 3, UnigramConfig())
    u.step()
    u.step()
    rows, total = u.history_page(0, 10)
    assert total == 3 and [r.round for r in rows] == [0, 1, 2]  # the seed is row 0


async def test_the_rows_cells_follow_their_merge_and_the_replay_mark():
    """The history reuses the cells of rows it held before: a step undone and merged again
    another way, or a replay's mark moving, must still show in them."""
    from types import SimpleNamespace

    from textual.app import App

    from tokworkbench.core.bpe.history import MergeRecord
    from tokworkbench.core.bpe.trainer import MergeRow

    class Pane(App):
        def compose(self):
            yield MergesPanel(id="merges")

    def rows(*pairs):
        return [MergeRow(MergeRecord(k + 1, pair, 256 + k, 9, 9, 90 - k), "ab", 1.5) for k, pair in enumerate(pairs)]

    async with Pane().run_test() as pilot:
        panel = pilot.app.query_one(MergesPanel)
        panel.set_reactive(MergesPanel.snapshot, SimpleNamespace(replay_total=0))
        first = panel.cells(rows((1, 2), (3, 4)), 0)
        assert [c[6] for c in first] == ["1+2", "3+4"]
        again = panel.cells(rows((1, 2), (5, 6)), 0)  # step 2 undone, another pair merged
        assert again[0] is first[0] and again[1][6] == "5+6"
        panel.set_reactive(MergesPanel.snapshot, SimpleNamespace(replay_total=2))
        replayed = panel.cells(rows((1, 2), (5, 6)), 0)
        assert [c[0] for c in replayed] == [("↺1", "italic"), ("↺2", "bold italic underline")]


async def test_the_newest_merge_stays_in_view_when_the_pane_shrinks():
    """At 80x24 the Arena tab takes room from the merges pane: it showed merge 8 of 10 (the
    cursor's row hidden) until the next step."""
    app = RecordingApp()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("N")
        await pilot.pause()
        history = app.main.query_one("#merges")
        await pilot.press("8")  # the Arena tab
        await pilot.pause()
        await pilot.pause()
        top, rows = history.scroll_offset.y, history._visible_rows()
        assert history.size.height < 4 and top <= history.cursor == 9 < top + rows
