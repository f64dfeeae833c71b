"""A panel's subtitle: typed text is shown as written (markup raised on `[/]`), and a merge
repaints the one border line that holds it."""

from drawnrows import drawn_rows
from recording import RecordingApp as WorkbenchApp

from tokworkbench.app.widgets.pairs import PairsPanel


async def test_a_typed_filter_is_shown_as_written_and_a_merge_repaints_one_border_line(monkeypatch):
    drawn = drawn_rows(monkeypatch, PairsPanel)
    app = WorkbenchApp()
    async with app.run_test(size=(160, 48)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        panel = app.main.query_one(PairsPanel)
        drawn.clear()
        await pilot.press("n")
        await pilot.pause()
        assert drawn == []  # only the bottom border line, which holds no content line
        await pilot.press("slash", *"[/]")  # markup would raise on this, and style [b]
        await pilot.pause()
        assert panel.subtitle_text.endswith("matching [/] (text or hex bytes)")
        bottom = app.screen._compositor.render_strips()[panel.region.bottom - 1].text
        assert "matching [/] (text" in bottom
