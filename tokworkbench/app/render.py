"""How tokens and text are drawn: alternating token colours, visible whitespace, cut characters."""

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import compress, count, islice
from operator import gt, itemgetter

from rich.text import Text

from tokworkbench.core.inspection.segments import TokenSpan


@dataclass(frozen=True)
class Palette:
    """Token backgrounds (adjacent tokens always differ), the mark for a character that a
    byte-level token cuts (drawn over the token's own style), the selected pair's mark, and the
    Viterbi path in the lattice view (reverse video without colour: it must show there too);
    for batches, a PAD cell, an ignored (-100) target and a role token (⟨bos⟩)."""

    tokens: tuple[str, ...]
    cut: str
    pair: str
    path: str
    pad: str = "dim"
    ignored: str = "bold #ff7b7b"
    special: str = "bold #e5c07b"
    legend: str = "tokens are drawn with alternating backgrounds; red marks a character a token cuts"


# Each depth gets colours that stay distinct there: the truecolor six fold onto three indexes
# of the 256-colour cube and onto one background in 16 colours.
PALETTES = {
    "truecolor": Palette(("on #2c3e5c", "on #4a3560", "on #2f5a46", "on #5c4f2a", "on #5a2f3c", "on #2a5559"),
                         "bold underline #ff7b7b", "bold black on #e5c07b", "bold #ffffff on #2f6f9f"),
    "256": Palette(("on color(17)", "on color(53)", "on color(22)", "on color(58)", "on color(52)", "on color(23)"),
                   "bold underline color(210)", "bold black on color(179)", "bold color(231) on color(25)",
                   ignored="bold color(210)", special="bold color(179)"),
    "standard": Palette(("white on blue", "black on cyan", "white on magenta", "black on green"),
                        "bold underline bright_red", "bold black on yellow", "bold bright_white on blue",
                        ignored="bold bright_red", special="bold yellow"),
    # NO_COLOR: no colour at all, so boundaries alternate underline and reverse video
    "none": Palette(("underline", "reverse"), "bold strike", "bold reverse underline", "bold reverse",
                    ignored="bold reverse", special="bold",
                    legend="tokens alternate underline and reverse video; bold strike-through marks a character "
                    "a token cuts"),
}
TRUECOLOR = PALETTES["truecolor"]


def palette_for(color_system: str | None, no_color: bool = False) -> Palette:
    if no_color or color_system is None:
        return PALETTES["none"]
    return PALETTES.get(color_system, PALETTES["standard"])


def palette_of(app) -> Palette:
    """The palette for the terminal this app draws on (Rich's colour system, NO_COLOR)."""
    return palette_for(app.console.color_system, app.no_color)
_VISIBLE = {
    "\n": "↵\n", "\t": "→", "\u200b": "⟨ZWSP⟩", "\u200d": "⟨ZWJ⟩",
    # every other control character as its picture (␀ … ␟, ␡) or its code point: written raw, a
    # corpus's ESC or C1 CSI would drive the terminal (an OSC 52 writes the clipboard)
    **{chr(c): chr(0x2400 + c) for c in range(32) if chr(c) not in "\n\t"}, "\x7f": "␡",
    **{chr(c): f"⟨U+{c:04X}⟩" for c in range(0x80, 0xA0)},
}


SHOWN = str.maketrans(_VISIBLE)  # for str.translate
# the characters drawn as more than one (a line end's break draws nothing: ↵ stands for it)
_WIDE = {c: len(shown.replace("\n", "")) for c, shown in _VISIBLE.items() if len(shown.replace("\n", "")) != 1}
_DROP_WIDE = str.maketrans(dict.fromkeys(_WIDE))  # a text that loses no char to it has none of them


def char_drawn_at(text: str, drawn: int) -> int | None:
    """Which char of `text` the `drawn`-th char of its drawing (`text.translate(SHOWN)`, line
    ends as breaks) belongs to, or None past it. Most chars are drawn as one, and a named
    invisible (⟨ZWSP⟩, ⟨U+0085⟩) as several."""
    if len(text.translate(_DROP_WIDE)) == len(text):
        return drawn if drawn < len(text) else None
    used = 0
    for i, ch in enumerate(text):
        used += _WIDE.get(ch, 1)
        if used > drawn:
            return i
    return None


def display(chunk: str) -> str:
    """Text as drawn: line ends, tabs and invisible characters shown."""
    return chunk.translate(SHOWN)


def shared_chars(spans: Sequence[TokenSpan]) -> tuple[set[int], set[int]]:
    """The characters two neighbouring tokens share (a byte-level token cut them), and the
    indices of the spans that share one. The neighbours are compared in C (map, compress):
    a merge's frame asks this of every span in the window (some 1,500 at 160x48), and few
    share a character."""
    cut: set[int] = set()
    sharing: set[int] = set()
    ends = map(itemgetter(1), spans)
    starts = map(itemgetter(0), islice(spans, 1, None))
    for i in compress(count(), map(gt, ends, starts)):
        cut.update(range(spans[i + 1].start, spans[i].end))
        sharing.update((i, i + 1))
    return cut, sharing


def marked_chars(marks: Sequence[tuple[int, int]]) -> set[int]:
    return {i for a, b in marks for i in range(a, b)}


def style_runs(
    text: str,
    spans: Sequence[TokenSpan],
    marks: Sequence[tuple[int, int]] = (),
    palette: Palette = TRUECOLOR,
    owners: list[int] | None = None,
) -> list[tuple[str, str]]:
    """`text` as (display text, style) runs, each token on its own background.

    A character that two tokens share (a byte-level token cut it) is drawn once, underlined in
    red; `marks` are char ranges to highlight (occurrences of the selected pair). `owners`, if
    given, receives each run's span index (-1 for text no span covers), so a click on a run
    can name its token.
    """
    end = len(text)
    cut, _ = shared_chars(spans)
    marked = marked_chars(marks)
    runs: list[tuple[str, str]] = []
    pos = 0
    for index, span in enumerate(spans):
        if span.start > pos:  # text no token covers (WordPiece's spaces between words): drawn plain
            runs.append((display(text[pos:min(span.start, end)]), ""))
            if owners is not None:
                owners.append(-1)
            pos = min(span.start, end)
        s, e = max(span.start, pos), min(span.end, end)
        if e <= s:
            continue
        base = palette.tokens[span.ordinal % len(palette.tokens)]
        if (not cut or cut.isdisjoint(range(s, e))) and (not marked or marked.isdisjoint(range(s, e))):
            runs.append((display(text[s:e]), base))
            if owners is not None:
                owners.append(index)
            pos = e
            continue

        def style_of(i: int) -> str:
            if i in marked:
                return palette.pair
            return f"{palette.cut} {base}" if i in cut else base

        i = s
        while i < e:
            style = style_of(i)
            j = i + 1
            while j < e and style_of(j) == style:
                j += 1
            runs.append((display(text[i:j]), style))
            if owners is not None:
                owners.append(index)
            i = j
        pos = e
    if pos < end:
        runs.append((display(text[pos:end]), ""))
        if owners is not None:
            owners.append(-1)
    return runs


def draw_tokens(text: str, spans: Sequence[TokenSpan], marks: Sequence[tuple[int, int]] = (),
                palette: Palette = TRUECOLOR) -> Text:
    """The same runs as a Rich Text, for small texts shown in a Static."""
    out = Text(no_wrap=False, overflow="fold")
    for piece, style in style_runs(text, spans, marks, palette):
        out.append(piece, style)
    return out
