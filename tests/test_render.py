"""Token boundaries stay visible at every colour depth, and without colour."""

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rich.color import ColorSystem
from rich.style import Style

from tokworkbench.app.render import PALETTES, palette_for, style_runs
from tokworkbench.core.inspection.segments import TokenSpan

SYSTEMS = {"truecolor": ColorSystem.TRUECOLOR, "256": ColorSystem.EIGHT_BIT, "standard": ColorSystem.STANDARD}


def as_drawn(spec: str, system: ColorSystem | None):
    """What a terminal of that depth gets: colours downgraded, attributes kept."""
    style = Style.parse(spec)

    def sent(color):
        if color is None or system is None:
            return None
        color = color.downgrade(system)
        return color.number if color.number is not None else color.triplet  # what the terminal receives

    return (sent(style.bgcolor), sent(style.color), bool(style.underline), bool(style.reverse),
            bool(style.bold), bool(style.strike))


@pytest.mark.parametrize("depth", ["truecolor", "256", "standard", "none"])
def test_adjacent_tokens_differ_where_they_are_drawn(depth):
    palette = PALETTES[depth]
    system = SYSTEMS.get(depth)
    drawn = [as_drawn(s, system) for s in palette.tokens]
    # the styles cycle, so every neighbour pair (the last and the first included) must differ
    for a, b in zip(drawn, drawn[1:] + drawn[:1]):
        assert a != b
    assert as_drawn(palette.pair, system) not in drawn


def test_the_truecolor_palette_would_collapse_at_lower_depths():
    """Why each depth has its own palette."""
    truecolor = PALETTES["truecolor"].tokens
    assert len({as_drawn(s, ColorSystem.EIGHT_BIT) for s in truecolor}) < len(truecolor)
    assert len({as_drawn(s, ColorSystem.STANDARD) for s in truecolor}) == 1


def test_the_palette_follows_the_terminal_and_no_color():
    assert palette_for("standard") is PALETTES["standard"]
    assert palette_for("256") is PALETTES["256"]
    assert palette_for("truecolor", no_color=True) is PALETTES["none"]
    assert palette_for(None) is PALETTES["none"]


def test_runs_alternate_through_the_chosen_palette():
    spans = [TokenSpan(i, i + 1, i, i, False) for i in range(5)]
    runs = style_runs("abcde", spans, palette=PALETTES["none"])
    assert [style for _, style in runs] == ["underline", "reverse", "underline", "reverse", "underline"]


def test_text_between_tokens_is_drawn_plain_not_dropped():
    """WordPiece gives the spaces between words no ids: the corpus still shows them."""
    from tokworkbench.app.render import style_runs
    from tokworkbench.core.inspection.segments import TokenSpan

    text = "the first"
    spans = [TokenSpan(0, 3, 1, 0, False), TokenSpan(4, 9, 2, 1, False)]
    owners: list[int] = []
    runs = style_runs(text, spans, owners=owners)
    assert "".join(piece for piece, _ in runs).replace("␣", " ") == text
    assert owners == [0, -1, 1]



def _per_character(text, spans, marks, palette):
    """The runs drawn a character at a time: each character's style (a mark wins over a cut),
    equal neighbours within a token joined; what style_runs' whole-token runs must equal."""
    cut = {i for p, q in zip(spans, spans[1:]) for i in range(q.start, p.end)}
    marked = {i for a, b in marks for i in range(a, b)}
    runs, pos = [], 0
    for span in spans:
        if span.start > pos:
            runs.append((text[pos:span.start], ""))
            pos = span.start
        base = palette.tokens[span.ordinal % len(palette.tokens)]
        for i in range(max(span.start, pos), span.end):
            style = palette.pair if i in marked else f"{palette.cut} {base}" if i in cut else base
            if runs and runs[-1][1] == style and i > max(span.start, pos):
                runs[-1] = (runs[-1][0] + text[i], style)
            else:
                runs.append((text[i], style))
        pos = max(pos, span.end)
    if pos < len(text):
        runs.append((text[pos:], ""))
    return runs


@given(st.lists(st.tuples(st.integers(0, 2), st.integers(1, 4)), max_size=30), st.data())
def test_whole_token_runs_are_the_per_character_drawing(layout, data):
    """Tokens (with gaps and byte-level overlaps), some marked whole and some in part."""
    spans, pos = [], 0
    for ordinal, (gap, width) in enumerate(layout):
        start = max(0, pos + gap - (1 if gap == 0 and ordinal % 3 == 2 and pos else 0))  # a cut now and then
        spans.append(TokenSpan(start, start + width, ordinal, ordinal, start < pos))
        pos = start + width
    text = "abcdefghij" * (pos // 10 + 1)
    text = text[:pos]
    marks = data.draw(st.lists(st.tuples(st.integers(0, max(pos, 1)), st.integers(0, 4)), max_size=6))
    marks = [(a, min(a + w, pos)) for a, w in marks]
    palette = PALETTES["truecolor"]
    assert style_runs(text, spans, marks, palette) == _per_character(text, spans, marks, palette)
