"""The corpus pane's count lines: a merge repaints only the rows that changed, and a narrow pane
breaks a line between its items."""

from recording import RecordingApp as WorkbenchApp
from rich.text import Text

from tokworkbench.app.widgets.styledlines import StyledLines, flow


def test_a_line_breaks_between_items_and_keeps_their_styles():
    line = Text.assemble(("100,155", "bold"), " tokens · ", ("1.116", "bold"), " bytes/token · vocab 266/1,000")
    rows = flow(line, 45)
    assert [r.plain for r in rows] == ["100,155 tokens · 1.116 bytes/token", "vocab 266/1,000"]
    assert rows[0].spans[0].style == "bold" and rows[0].plain[rows[0].spans[1].start:rows[0].spans[1].end] == "1.116"
    assert flow(line, 200) == [line]
    assert [r.plain for r in flow(Text("a-very-long-item · b"), 5)] == ["a-very-long-item", "b"]  # cropped when drawn
    window = Text("name  ·  chars 0–9  ·  [ ] window")
    assert [r.plain for r in flow(window, 20)] == ["name  ·  chars 0–9", "[ ] window"]


async def test_a_merge_repaints_only_the_count_rows_that_changed(monkeypatch):
    drawn = []
    render_line = StyledLines.render_line

    def counted(view, y):
        if view.id == "corpus-stats":
            drawn.append(y)
        return render_line(view, y)

    monkeypatch.setattr(StyledLines, "render_line", counted)
    app = WorkbenchApp()
    async with app.run_test(size=(160, 48)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        stats = app.main.query_one("#corpus-stats", StyledLines)
        assert "0 merges\n" in stats.plain and "12 docs" in stats.plain
        drawn.clear()
        await pilot.press("n")
        await pilot.pause()
        assert "· 1 merge\n" in stats.plain
        assert drawn == [0]  # the corpus line under it is as it was
