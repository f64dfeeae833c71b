"""The corpus pane's count lines: a merge repaints only the rows that changed, and a narrow pane
breaks a line between its items."""

from drawnrows import drawn_rows
from hypothesis import given
from hypothesis import strategies as st
from recording import RecordingApp as WorkbenchApp
from rich.console import Console
from rich.style import Style
from rich.text import Text
from textual.selection import Selection

from tokworkbench.app.widgets.styledlines import SEPARATOR, StyledLines, flow, row_segments


def test_a_line_breaks_between_items_and_keeps_their_styles():
    line = Text.assemble(("100,155", "bold"), " tokens · ", ("1.116", "bold"), " bytes/token · vocab 266/1,000")
    rows = flow(line, 45)
    assert [r.plain for r in rows] == ["100,155 tokens · 1.116 bytes/token", "vocab 266/1,000"]
    assert rows[0].spans[0].style == "bold" and rows[0].plain[rows[0].spans[1].start:rows[0].spans[1].end] == "1.116"
    assert flow(line, 200) == [line]
    assert [r.plain for r in flow(Text("a-very-long-item · b"), 5)] == ["a-very-long-item", "b"]  # cropped when drawn
    window = Text("name  ·  chars 0–9  ·  [ ] window")
    assert [r.plain for r in flow(window, 20)] == ["name  ·  chars 0–9", "[ ] window"]

CONSOLE = Console()
items = st.text(st.sampled_from("ab ·界"), min_size=1, max_size=12).filter(lambda t: "·" not in t and t.strip() == t)


@given(st.lists(items, min_size=1, max_size=8), st.sampled_from([" · ", "  ·  "]), st.integers(0, 40))
def test_rows_hold_the_items_in_order_and_fit_unless_one_is_wider(parts, separator, width):
    line = Text(separator.join(parts), style="bold")
    rows = flow(line, width)
    assert separator.join(r.plain for r in rows) == line.plain  # every break is at a separator
    assert all(r.cell_len <= width or SEPARATOR.search(r.plain) is None for r in rows)
    assert all(segment.style.bold for r in rows for segment in row_segments(r, CONSOLE, Style()))  # styles kept
    for row, after in zip(rows, rows[1:]):  # a row ends only where the next item would not fit
        first = SEPARATOR.split(after.plain)[0]
        assert row.cell_len + len(separator) + Text(first).cell_len > width


async def test_a_merge_repaints_only_the_count_rows_that_changed(monkeypatch):
    drawn = drawn_rows(monkeypatch, StyledLines, "corpus-stats")
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


async def test_a_wide_document_name_gives_way_to_the_range_and_the_lines_copy(tmp_path):
    (tmp_path / "a日本語のとても長いファイル名の文書です.txt").write_text("hello world " * 300, encoding="utf-8")
    (tmp_path / "b.txt").write_text("more text " * 300, encoding="utf-8")
    app = WorkbenchApp([str(tmp_path)])
    async with app.run_test(size=(80, 24)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        window = app.main.query_one("#corpus-window", StyledLines)
        assert "… (1/2)  ·  chars 0–" in window.drawn[0]  # the name cut by cells, the range kept
        stats = app.main.query_one("#corpus-stats", StyledLines)
        app.screen.selections = {stats: Selection(None, None)}
        assert "tokens · " in app.screen.get_selected_text()  # what is drawn, not the widget's name
        await pilot.pause()
        selected = app.screen.get_component_rich_style("screen--selection").bgcolor
        assert all(seg.style.bgcolor == selected for seg in stats.render_line(0) if seg.text.strip())  # shown
        app.screen.selections = {}
        await pilot.pause()
        assert not any(seg.style.bgcolor == selected for seg in stats.render_line(0))
