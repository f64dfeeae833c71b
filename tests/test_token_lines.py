"""The corpus text's lines: styled and wrapped in one pass, the same as styling the runs and
wrapping them apart, with colours that alternate from the start of each line."""

import asyncio

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from textual.app import App, ComposeResult

from tokworkbench.app.render import PALETTES, SHOWN, char_drawn_at, style_runs
from tokworkbench.app.tokenlayout import lay_out_tokens, style_of, wrap_runs
from tokworkbench.app.widgets.tokentext import TokenText
from tokworkbench.core.inspection.segments import TokenSpan


def reference(text, spans, marks, palette, width):
    """style_runs, then wrap_runs, then the colours of each line's tokens renumbered: a token
    whose first piece begins a line takes the first colour, every other the one after the
    token before it; a token's pieces share its colour."""
    owners: list[int] = []
    runs = style_runs(text, spans, marks, palette, owners)
    bases = [style_of(s) for s in palette.tokens]
    cuts = [style_of(f"{palette.cut} {s}") for s in palette.tokens]
    colour, last, out = 0, None, []
    for segments, used, run_of in wrap_runs(runs, width):
        line, owned = [], []
        for k, (segment, run) in enumerate(zip(segments, run_of)):
            span = owners[run]
            spec = runs[run][1]
            style = segment.style
            if span >= 0 and span != last:
                colour = 0 if k == 0 else (colour + 1) % len(bases)
                last = span
            if span >= 0 and spec != palette.pair:
                style = cuts[colour] if spec.startswith(palette.cut) else bases[colour]
            line.append((segment.text, style))
            owned.append(span)
        out.append((line, used, owned))
    return out


def drawn(lines):
    return [([(s.text, s.style) for s in segments], used, owners) for segments, used, owners in lines]


@st.composite
def windows(draw, alphabet="abc de\n\t日é\r\x00"):
    """Tokens with gaps (text no token covers) and overlaps (a character two byte-level tokens
    share), over text with line ends, tabs, wide and control characters."""
    layout = draw(st.lists(st.tuples(st.integers(0, 2), st.integers(1, 12), st.booleans()), max_size=40))
    spans, pos = [], 0
    for ordinal, (gap, width, share) in enumerate(layout):
        start = pos - 1 if share and pos and gap == 0 else pos + gap
        spans.append(TokenSpan(start, start + width, ordinal, ordinal, start < pos))
        pos = start + width
    text = draw(st.text(alphabet=alphabet, min_size=pos, max_size=pos + 3))
    marks = draw(st.lists(st.tuples(st.integers(0, max(pos, 1)), st.integers(0, 5)), max_size=4))
    return text, spans, [(a, min(a + w, len(text))) for a, w in marks]


@settings(max_examples=400, deadline=None)
@given(window=windows(), width=st.integers(1, 30), depth=st.sampled_from(["truecolor", "standard", "none"]))
def test_one_pass_is_the_runs_wrapped_with_colours_from_each_line_start(window, width, depth):
    text, spans, marks = window
    palette = PALETTES[depth]
    assert drawn(lay_out_tokens(text, spans, marks, palette, width).lines) == reference(text, spans, marks, palette, width)


def test_a_merge_changes_only_the_lines_it_touches():
    """Alternating through the whole window, one merge near the top recoloured every line."""
    text = "\n".join(f"line {i} has some words" for i in range(12))
    words = [(m, m + 1) for m in range(len(text))]  # one char a token
    before = [TokenSpan(a, b, 0, k, False) for k, (a, b) in enumerate(words)]
    after = [TokenSpan(0, 2, 1, 0, False)] + [TokenSpan(a, b, 0, k + 1, False) for k, (a, b) in enumerate(words[2:])]
    old = lay_out_tokens(text, before, [], PALETTES["truecolor"], 40).lines
    new = lay_out_tokens(text, after, [], PALETTES["truecolor"], 40).lines
    changed = [y for y, (a, b) in enumerate(zip(old, new)) if a[0] != b[0]]
    assert changed == [0] and len(old) == len(new) == 12


@settings(max_examples=300, deadline=None)
@given(window=windows("ab \n\t日\x00\u200b\u0085"), width=st.integers(1, 30))
def test_the_lines_draw_each_char_of_the_text_once_in_order(window, width):
    """What TokenText.offset_at counts on to name the char under a click: the lines' segments
    are the text as SHOWN draws it, line ends as breaks, a char two tokens share drawn once."""
    text, spans, marks = window
    lines = lay_out_tokens(text, spans, marks, PALETTES["truecolor"], width).lines
    assert "".join(seg.text for segments, _, _ in lines for seg in segments) == text.translate(SHOWN).replace("\n", "")


def test_char_drawn_at_counts_a_named_invisible_as_one_char():
    text = "ab\u200bcd\n\u0085ef"  # drawn ab⟨ZWSP⟩cd↵ / ⟨U+0085⟩ef
    assert [char_drawn_at(text, i) for i in (0, 2, 7, 8, 9, 10, 18, 19, 20, 21)] == [0, 2, 2, 3, 4, 5, 6, 7, 8, None]
    assert char_drawn_at("plain", 4) == 4 and char_drawn_at("plain", 5) is None


class Pane(App):
    def compose(self) -> ComposeResult:
        yield TokenText(id="text")


def test_the_view_repaints_only_the_changed_lines():
    async def go():
        app = Pane()
        async with app.run_test(size=(40, 20)) as pilot:
            view = app.query_one(TokenText)
            text = "\n".join(f"row {i}" for i in range(10))
            spans = [TokenSpan(i, i + 1, 0, i, False) for i in range(len(text))]
            view.show_tokens(text, spans, [], PALETTES["truecolor"])
            await pilot.pause()
            dirty = []
            kept = view.refresh

            def refresh(*regions, **kwargs):
                dirty.append(regions)
                return kept(*regions, **kwargs)

            view.refresh = refresh
            merged = [TokenSpan(6, 8, 1, 6, False)] + [s for s in spans if not 6 <= s.start < 8]
            merged.sort(key=lambda s: s.start)
            view.show_tokens(text, merged, [], PALETTES["truecolor"])  # "row 1": its "ro" merged
            assert [[r.y for r in regions] for regions in dirty] == [[1]]
            await pilot.pause()
            assert "".join(s.text for s in view.render_line(1)).startswith("row 1")

    asyncio.run(go())


def test_a_click_after_a_named_invisible_names_the_char_under_it():
    """⟨ZWSP⟩ draws one char as six: a click on the word after it named a char five places on
    (Unigram shows that word's lattice)."""
    async def go():
        app = Pane()
        async with app.run_test(size=(40, 20)) as pilot:
            view = app.query_one(TokenText)
            text = "one\u200btwo\n\u0085three"
            spans = [TokenSpan(i, i + 1, 0, i, False) for i in range(len(text))]
            view.show_tokens(text, spans, [], PALETTES["truecolor"])
            await pilot.pause()
            assert view.offset_at(9, 0) == text.index("t")  # one⟨ZWSP⟩t
            assert view.offset_at(3, 0) == view.offset_at(8, 0) == 3  # every cell of ⟨ZWSP⟩ is the ZWSP
            assert view.offset_at(8, 1) == text.index("th")  # ⟨U+0085⟩t on the second line
            assert view.offset_at(30, 1) is None

    asyncio.run(go())


@pytest.mark.parametrize("first", ["short", "none"])
def test_text_that_brings_in_the_scrollbar_is_wrapped_to_the_width_left_beside_it(first):
    """A window short enough to need no scrollbar, then one that does (the next document, a
    corpus loaded in the background): it was wrapped to the whole width, and the scrollbar then
    hid the last two chars of every line until the next merge or resize."""
    async def go():
        app = Pane()
        async with app.run_test(size=(40, 10)) as pilot:
            view = app.query_one(TokenText)
            if first == "short":
                view.show_tokens("a few words", _chars("a few words"), [], PALETTES["truecolor"])
                await pilot.pause()
                assert not view.show_vertical_scrollbar
            text = " ".join(f"word{i:03d}" for i in range(200))
            view.show_tokens(text, _chars(text), [], PALETTES["truecolor"])
            await pilot.pause()
            assert view.show_vertical_scrollbar
            room = view.scrollable_content_region.width
            assert room < 40 and max(length for _, length, _ in view._lines) <= room
            drawn = "".join(seg.text for segments, _, _ in view._lines for seg in segments)
            assert drawn == text  # every char drawn, none under the scrollbar
            view.show_tokens("short again", _chars("short again"), [], PALETTES["truecolor"])
            await pilot.pause()
            assert not view.show_vertical_scrollbar and view.scrollable_content_region.width == 40

    asyncio.run(go())


def _chars(text: str) -> list[TokenSpan]:
    """One token a word: spans over `text`'s words (a char's ordinal is its place)."""
    out, at = [], 0
    for k, word in enumerate(text.split(" ")):
        out.append(TokenSpan(at, at + len(word), k, k, False))
        at += len(word) + 1
    return out


@st.composite
def merges(draw):
    """A window before and after some merges (adjacent tokens joined) or undos (a token split),
    with marks that may move: what one key changes."""
    text, spans, marks = draw(windows())
    after = list(spans)
    for _ in range(draw(st.integers(0, 6))):
        if len(after) < 2:
            break
        k = draw(st.integers(0, len(after) - 2))
        a, b = after[k], after[k + 1]
        if draw(st.booleans()) and a.end <= b.start + 1:
            after[k : k + 2] = [TokenSpan(a.start, b.end, a.token + b.token + 1, a.ordinal, a.cut or b.cut)]
        elif a.end - a.start > 1 and not a.cut:
            middle = a.start + draw(st.integers(1, a.end - a.start - 1))
            after[k : k + 1] = [TokenSpan(a.start, middle, 7, a.ordinal, False), TokenSpan(middle, a.end, 8, a.ordinal, False)]
    after = [span._replace(ordinal=k) for k, span in enumerate(after)]
    moved = draw(st.lists(st.tuples(st.integers(0, max(len(text), 1)), st.integers(0, 5)), max_size=4))
    return text, spans, marks, after, draw(st.sampled_from([marks, [(a, min(a + w, len(text))) for a, w in moved]]))


@settings(max_examples=500, deadline=None)
@given(change=merges(), width=st.integers(1, 30), depth=st.sampled_from(["truecolor", "none"]))
def test_a_layout_made_from_the_one_before_is_the_layout_made_afresh(change, width, depth):
    text, spans, marks, after, marks_after = change
    palette = PALETTES[depth]
    before = lay_out_tokens(text, spans, marks, palette, width)
    again = lay_out_tokens(text, after, marks_after, palette, width, before)
    fresh = lay_out_tokens(text, after, marks_after, palette, width)
    assert drawn(again.lines) == drawn(fresh.lines)
    assert again.whole == fresh.whole


def test_lines_a_merge_did_not_touch_are_taken_as_they_were():
    text = "\n".join(f"line {i} has some words" for i in range(12))
    before = [TokenSpan(m, m + 1, 0, m, False) for m in range(len(text))]
    after = [TokenSpan(0, 2, 1, 0, False)] + [s._replace(ordinal=k + 1) for k, s in enumerate(before[2:])]
    old = lay_out_tokens(text, before, [], PALETTES["truecolor"], 40)
    new = lay_out_tokens(text, after, [], PALETTES["truecolor"], 40, old)
    assert [a[0] is b[0] for a, b in zip(old.lines, new.lines)] == [False] + [True] * 11


def test_a_line_whose_next_token_was_split_is_made_again():
    """The token after a line decided where it broke: split by an undo, its first half fits."""
    text = "aaa bbbbbb"
    before = [TokenSpan(0, 4, 1, 0, False), TokenSpan(4, 10, 2, 1, False)]
    after = [TokenSpan(0, 4, 1, 0, False), TokenSpan(4, 6, 3, 1, False), TokenSpan(6, 10, 4, 2, False)]
    old = lay_out_tokens(text, before, [], PALETTES["truecolor"], 8)
    new = lay_out_tokens(text, after, [], PALETTES["truecolor"], 8, old)
    assert [seg.text for seg in new.lines[0][0]] == ["aaa ", "bb"]
    assert drawn(new.lines) == drawn(lay_out_tokens(text, after, [], PALETTES["truecolor"], 8).lines)


@st.composite
def byte_level_merges(draw):
    """Spans as a byte-level trainer's window has them (segments.chunk_spans over random byte
    tokenizations of text with multi-byte characters): the second and later byte tokens of a
    character draw nothing, being inside the span before. Then some tokens merged or split."""
    from tokworkbench.core.inspection.segments import chunk_spans

    chunks = draw(st.lists(st.text(alphabet="ab c\n日é😀\x1b", min_size=1, max_size=8), min_size=1, max_size=6))

    def cuts(data: bytes) -> list[int]:
        lengths, left = [], len(data)
        while left:
            lengths.append(min(left, draw(st.integers(1, 4))))
            left -= lengths[-1]
        return lengths

    def spans(tokenization):
        pieces, at = [], 0
        for chunk, lengths in zip(chunks, tokenization):
            pieces.append((at, chunk, lengths))
            at += len(chunk)
        return chunk_spans(pieces, lambda n: b"x" * n)

    before = [cuts(chunk.encode()) for chunk in chunks]
    after = [list(lengths) for lengths in before]
    for _ in range(draw(st.integers(0, 4))):
        lengths = after[draw(st.integers(0, len(after) - 1))]
        k = draw(st.integers(0, len(lengths) - 1))
        if k + 1 < len(lengths) and draw(st.booleans()):
            lengths[k : k + 2] = [lengths[k] + lengths[k + 1]]
        elif lengths[k] > 1:
            m = draw(st.integers(1, lengths[k] - 1))
            lengths[k : k + 1] = [m, lengths[k] - m]
    text = "".join(chunks)
    marks = st.lists(st.tuples(st.integers(-2, len(text) + 2), st.integers(0, 5)).map(lambda m: (m[0], m[0] + m[1])),
                     max_size=3)
    first = draw(marks)
    return text, spans(before), first, spans(after), draw(st.sampled_from([first, draw(marks)]))


@settings(max_examples=2000, deadline=None)  # such a line is rare: about 1 in 500 random cases
@given(change=byte_level_merges(), width=st.integers(1, 12))
def test_byte_level_tokens_laid_out_from_the_layout_before_are_laid_out_afresh(change, width):
    text, spans, marks, after, marks_after = change
    palette = PALETTES["truecolor"]
    before = lay_out_tokens(text, spans, marks, palette, width)
    again = lay_out_tokens(text, after, marks_after, palette, width, before)
    assert drawn(again.lines) == drawn(lay_out_tokens(text, after, marks_after, palette, width).lines)


def test_the_token_that_broke_a_line_is_the_next_that_draws():
    """'日' is three byte tokens; the two after the first draw nothing. The token after them
    decided where the line broke: split by an undo, its first half fits on the line."""
    T = TokenSpan
    text = "x日yyyyy"
    old = [T(0, 1, 120, 0, False), T(1, 2, 0xE6, 1, True), T(1, 2, 0x97, 2, True), T(1, 2, 0xA5, 3, True),
           T(2, 7, 500, 4, False)]
    new = old[:4] + [T(2, 4, 501, 4, False), T(4, 7, 502, 5, False)]
    palette = PALETTES["truecolor"]
    again = lay_out_tokens(text, new, [], palette, 6, lay_out_tokens(text, old, [], palette, 6))
    assert drawn(again.lines) == drawn(lay_out_tokens(text, new, [], palette, 6).lines)
