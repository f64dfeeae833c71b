"""Token boundaries stay visible at every colour depth, and without colour."""

import pytest
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

