"""No control character from the data reaches the terminal: a corpus, a file name or a model
file is drawn, never obeyed (an ESC or a C1 CSI starts a sequence the terminal would run)."""

import asyncio
import html
import re

from hypothesis import given, settings
from hypothesis import strategies as st
from rich.segment import Segment
from rich.style import Style
from rich.terminal_theme import MONOKAI
from textual.color import Color
from textual.filter import ANSIToTruecolor, DimFilter

from tokworkbench.app import WorkbenchApp
from tokworkbench.app.controlfilter import ControlFilter, LineFilters, TruecolorControls
from tokworkbench.app.render import PALETTES, display
from tokworkbench.app.tokenlayout import lay_out_tokens
from tokworkbench.core.inspection.escape import visible
from tokworkbench.core.inspection.segments import TokenSpan

CONTROLS = [chr(c) for c in [*range(32), *range(127, 160)]]
HOSTILE = "plain \x1b]52;c;aGk=\x07 clipboard \x1b[2J clear \u009b31m c1 \x7f del \x01\nnext \x1b]0;title\x07\n"


def raw_controls(text: str) -> set[str]:
    return {c for c in text if c in CONTROLS and c != "\n"}


def test_the_corpus_text_draws_every_control_character_as_a_picture():
    for c in CONTROLS:
        shown = display(c)
        assert not raw_controls(shown) and shown, repr(c)
    assert display("\x1b[2J") == "␛[2J" and display("\x7f") == "␡" and display("\u009b") == "⟨U+009B⟩"
    spans = [TokenSpan(i, i + 1, 0, i, False) for i in range(len(HOSTILE))]
    lines = lay_out_tokens(HOSTILE, spans, [], PALETTES["truecolor"], 30).lines
    assert not raw_controls("".join(seg.text for segments, _, _ in lines for seg in segments))
    assert all(used == sum(seg.cell_length for seg in segments) for segments, used, _ in lines)


def test_table_cells_escape_c1_as_well():
    assert visible("\u009b\x1b\x7f") == "\\u009b\\x1b\\x7f"


def test_the_filter_drops_what_is_left_and_leaves_clean_lines_alone():
    clean = [Segment("tokens ␛ drawn", None), Segment(" ", None)]
    controls = ControlFilter()
    assert controls.apply(clean, Color(0, 0, 0)) is clean
    dirty = controls.apply([Segment("a\x1b]52;c;x\x07b\u009bc", None)], Color(0, 0, 0))
    assert [seg.text for seg in dirty] == ["a]52;c;xbc"]


STYLES = [None, Style(), Style(color="red"), Style(bgcolor="blue", dim=True), Style(color="#112233", bold=True),
          Style(color="bright_green", bgcolor="#445566"), Style(dim=True), Style(reverse=True, color="color(200)")]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.text(alphabet="ab ␛é日\x1b\x07\x7f\u009b\u00a0\n"), st.sampled_from(STYLES)),
                max_size=12),
       st.sampled_from([Color(0, 0, 0), Color(30, 40, 50), Color(255, 255, 255)]))
def test_the_joined_filter_gives_what_textuals_and_ours_give_one_after_the_other(runs, background):
    segments = [Segment(text, style) for text, style in runs]
    truecolor = ANSIToTruecolor(MONOKAI)
    joined = TruecolorControls(truecolor).apply(segments, background)
    assert joined == ControlFilter().apply(truecolor.apply(segments, background), background)


def test_textuals_truecolor_filter_alone_is_joined_with_ours_else_ours_comes_after():
    filters = LineFilters()
    truecolor = ANSIToTruecolor(MONOKAI)
    first = filters([truecolor])
    assert len(first) == 1 and isinstance(first[0], TruecolorControls)
    assert filters([truecolor])[0] is first[0]  # the same object: Textual caches lines per filter
    theme = ANSIToTruecolor(MONOKAI)  # what Textual makes on a theme change
    assert filters([theme])[0].truecolor is theme
    dim = DimFilter()
    assert filters([theme, dim]) == [theme, dim, filters.controls]


def test_a_hostile_corpus_and_file_name_do_not_reach_the_terminal(tmp_path):
    """The screen as exported (what the terminal would be sent, as text): nothing raw, though
    the file's name (in the document list) and its text both carry ESC, BEL, DEL and C1."""
    hostile = tmp_path / "evil\x1b[31m\u009bname.txt"
    hostile.write_text(HOSTILE, encoding="utf-8")

    async def go():
        app = WorkbenchApp([str(hostile), str(hostile)])
        async with app.run_test(size=(160, 40)) as pilot:
            await app.workers.wait_for_complete()
            await pilot.pause()
            await pilot.press("N")
            await pilot.pause(0.2)
            screen = app.export_screenshot()
            assert not raw_controls(screen)
            drawn = "".join(html.unescape(t) for t in re.findall(r"<text[^>]*>([^<]*)</text>", screen))
            assert "␛]52;c;aGk=␇" in drawn.replace("\xa0", " ")  # shown, as pictures

    asyncio.run(go())


def test_a_message_quoting_a_file_name_is_shown_as_written():
    """Messages quote file names, tokens and errors: none is markup (`[b]x[/b]` was a bold x)."""
    async def go():
        app = WorkbenchApp()
        async with app.run_test(size=(120, 30)) as pilot:
            await app.workers.wait_for_complete()
            await pilot.pause()
            app.main.notify("cannot read /tmp/[b]x[/b] [/].txt", title="Cannot load", severity="error")
            await pilot.pause()
            # Textual's own record of it (headless, its toast is not in the screenshot)
            [note] = [n for n in app._notifications if n.title == "Cannot load"]
            assert note.message == "cannot read /tmp/[b]x[/b] [/].txt" and note.markup is False

    asyncio.run(go())
