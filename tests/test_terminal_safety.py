"""No control character from the data reaches the terminal: a corpus, a file name or a model
file is drawn, never obeyed (an ESC or a C1 CSI starts a sequence the terminal would run)."""

import asyncio
import html
import re

from rich.segment import Segment
from textual.color import Color

from tokworkbench.app import WorkbenchApp
from tokworkbench.app.controlfilter import ControlFilter
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
