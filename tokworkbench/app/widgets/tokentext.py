"""A scrollable view of text drawn as tokens (or styled runs), wrapped to its width.

Renders only the visible lines (the line API), because a window of corpus text holds
thousands of differently coloured tokens and is redrawn on every merge; going through
Static/Content for that costs ten times more. A merge repaints only the lines it changed:
token colours alternate from the start of each line, so a line's colours are its own tokens'
(alternating through the whole window, one merge near its top recoloured every line after it).
"""

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache, partial
from itertools import zip_longest

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual.geometry import Region, Size
from textual.message import Message
from textual.strip import Strip

from tokworkbench.app.render import SHOWN, Palette
from tokworkbench.app.widgets.lineview import LineView
from tokworkbench.core.inspection.segments import TokenSpan


@lru_cache(maxsize=256)
def _style(spec: str) -> Style:
    return Style.parse(spec) if spec else Style()


def _clickable(spec: str, action: str) -> Style:
    """A run's style carrying the action a click on it runs (e.g. `screen.select_token(42)`)."""
    return _style(spec) + Style.from_meta({"@click": action})


Line = tuple[list[Segment], int, list[int]]  # segments, their cell length, what each draws; a Strip only when shown

_segment = partial(tuple.__new__, Segment)  # from a ready (text, style, control): no Python __new__ per token


@lru_cache(maxsize=8)
def _token_styles(palette: Palette) -> tuple[tuple[Style, ...], tuple[Style, ...], Style, Style]:
    """Each token colour, each with the cut mark over it, the selected pair's mark, plain text.
    The same objects every time: unchanged lines then compare equal by identity."""
    return (tuple(map(_style, palette.tokens)), tuple(_style(f"{palette.cut} {base}") for base in palette.tokens),
            _style(palette.pair), _style(""))


def lay_out_tokens(text: str, spans: Sequence[TokenSpan], marks: Sequence[tuple[int, int]],
                   palette: Palette, width: int) -> list[Line]:
    """`text` as tokens on alternating backgrounds, wrapped like `wrap_runs`, each segment
    naming the span it draws (-1: text no token covers). What `render.style_runs` marks (a
    character a token cuts, `marks`, visible whitespace) it marks the same; the colours restart
    at each line: a token that begins a line takes the first, each next token the next, and a
    token carried over from the line before keeps its own. Style and wrap in one pass: apart,
    they took 3.5 ms of every merge's frame at 160x48."""
    width = max(width, 4)
    bases, cuts, mark_style, plain = _token_styles(palette)
    colours = len(bases)
    end = len(text)
    cut: set[int] = set()  # characters two tokens share
    sharing: set[int] = set()  # the spans that share one
    for i, (p, q) in enumerate(zip(spans, spans[1:])):
        if p.end > q.start:
            cut.update(range(q.start, p.end))
            sharing.update((i, i + 1))
    marked: set[int] = set()
    for a, b in marks:
        marked.update(range(a, b))
    # the marks as sorted disjoint ranges, walked beside the spans: whether a span meets one
    ranges: list[tuple[int, int]] = []
    for a, b in sorted(m for m in marks if m[0] < m[1]):
        if ranges and a <= ranges[-1][1]:
            ranges[-1] = (ranges[-1][0], max(b, ranges[-1][1]))
        else:
            ranges.append((a, b))
    ranges.append((end + 1, end + 1))  # past every span: the walk needs no bound check
    at = 0
    narrow = text.isascii()  # every drawn character one cell (↵ → ␍ ␀ too)
    lines: list[Line] = []
    segments: list[Segment] = []
    owners: list[int] = []
    used = 0
    colour = 0

    def put(piece: str, kind: int, owner: int, opens: bool) -> None:
        """Place one run: kind 0 a token, 1 a cut character, 2 a mark, 3 plain text. `opens`:
        the token's first run, which takes the first colour if it moves to a new line."""
        nonlocal segments, owners, used, colour
        for k, part in enumerate(piece.split("\n") if "\n" in piece else (piece,)):
            if k:
                lines.append((segments, used, owners))
                segments, owners, used = [], [], 0
            while part:
                need = len(part) if narrow else cell_len(part)
                if used + need > width:
                    if used and need <= width:  # the whole run fits on a line of its own
                        lines.append((segments, used, owners))
                        segments, owners, used = [], [], 0
                        continue
                    room = width - used
                    fit = _fit(part, room)
                    if fit:
                        head = part[:fit]
                        if opens and not segments:
                            colour = 0
                        segments.append(_segment((head, _kind_style(kind, colour), None)))
                        owners.append(owner)
                        used += len(head) if narrow else cell_len(head)
                        opens = False
                    lines.append((segments, used, owners))
                    segments, owners, used = [], [], 0
                    part = part[fit:]
                    continue
                if opens and not segments:  # the token begins a line: the first colour
                    colour = 0
                segments.append(_segment((part, _kind_style(kind, colour), None)))
                owners.append(owner)
                used += need
                opens = False
                break

    def _kind_style(kind: int, at: int) -> Style:
        return bases[at] if kind == 0 else cuts[at] if kind == 1 else mark_style if kind == 2 else plain

    pos = 0
    for index, (start, stop, _, _, _) in enumerate(spans):
        if start > pos:  # text no token covers (WordPiece's spaces between words): drawn plain
            put(text[pos:min(start, end)].translate(SHOWN), 3, -1, False)
            pos = min(start, end)
        s, e = (start, stop) if start >= pos and stop <= end else (max(start, pos), min(stop, end))
        if e <= s:
            continue
        colour = (colour + 1) % colours if segments else 0
        while ranges[at][1] <= s:
            at += 1
        if (sharing and index in sharing) or ranges[at][0] < e:
            i, opens = s, True
            while i < e:
                kind = 2 if i in marked else 1 if i in cut else 0
                j = i + 1
                while j < e and (2 if j in marked else 1 if j in cut else 0) == kind:
                    j += 1
                put(text[i:j].translate(SHOWN), kind, index, opens)
                i, opens = j, False
        else:
            piece = text[s:e].translate(SHOWN)
            if "\n" not in piece:  # the common case, inline: a token that fits on the line
                need = len(piece) if narrow or piece.isascii() else cell_len(piece)
                if used + need <= width:
                    segments.append(_segment((piece, bases[colour], None)))
                    owners.append(index)
                    used += need
                    pos = e
                    continue
            put(piece, 0, index, True)
        pos = e
    if pos < end:
        put(text[pos:end].translate(SHOWN), 3, -1, False)
    lines.append((segments, used, owners))
    return lines


def wrap_runs(runs: list[tuple[str, str]], width: int) -> list[Line]:
    """Wrap at token boundaries: a token that does not fit on what is left of a line starts
    the next one; only a token longer than a whole line is cut, wherever the width ends. A run
    may carry a third item, the action a click on it runs."""
    width = max(width, 4)
    lines: list[Line] = []
    segments: list[Segment] = []
    owners: list[int] = []
    used = 0
    for run, (text, spec, *action) in enumerate(runs):
        style = _clickable(spec, action[0]) if action and action[0] else _style(spec)
        parts = text.split("\n")
        for k, part in enumerate(parts):
            if k:
                lines.append((segments, used, owners))
                segments, owners, used = [], [], 0
            while part:
                need = cell_len(part)
                if used + need <= width:
                    segments.append(Segment(part, style))
                    owners.append(run)
                    used += need
                    break
                if used and need <= width:  # the whole token fits on a line of its own
                    lines.append((segments, used, owners))
                    segments, owners, used = [], [], 0
                    continue
                room = width - used
                cut = _fit(part, room)
                if cut:
                    segments.append(Segment(part[:cut], style))
                    owners.append(run)
                    used += cell_len(part[:cut])
                lines.append((segments, used, owners))
                segments, owners, used = [], [], 0
                part = part[cut:]
    lines.append((segments, used, owners))
    return lines


def _fit(text: str, room: int) -> int:
    """How many characters of `text` fit in `room` cells."""
    used = 0
    for i, ch in enumerate(text):
        used += cell_len(ch)
        if used > room:
            return i
    return len(text)


class TokenText(LineView, can_focus=True):
    DEFAULT_CSS = """
    TokenText {
        height: 1fr;
    }
    """

    @dataclass
    class Clicked(Message):
        """The user clicked the character at `offset` of the text drawn, which draws `item`:
        the index of its run (`set_runs`) or of its token's span (`show_tokens`); None past
        the text, or on text no token covers."""

        view: "TokenText"
        offset: int
        item: int | None = None

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._drawn: tuple = ()  # what the lines are drawn from: ("runs", runs) or ("tokens", …)
        self._lines: list[Line] = []
        self._width = 0

    def set_runs(self, runs: list[tuple[str, str]]) -> None:
        """Draw styled runs (text, style spec[, click action]), wrapped between runs."""
        if self._drawn[1:] != (runs,) or self._drawn[0] != "runs":
            self._drawn = ("runs", runs)
            self._rewrap()

    def show_tokens(self, text: str, spans: Sequence[TokenSpan], marks: Sequence[tuple[int, int]],
                    palette: Palette) -> None:
        """Draw `text` as its tokens (`lay_out_tokens`): only the lines that changed are repainted."""
        drawn = ("tokens", text, spans, marks, palette)
        if drawn != self._drawn:  # most merges leave the window's tokens as they were
            self._drawn = drawn
            self._rewrap()

    def on_resize(self) -> None:
        self._rewrap(everything=True)

    def _rewrap(self, everything: bool = False) -> None:
        width = self.scrollable_content_region.width or 80
        self._width = width
        if not self._drawn:
            lines = []
        elif self._drawn[0] == "runs":
            lines = wrap_runs(self._drawn[1], width)
        else:
            lines = lay_out_tokens(*self._drawn[1:], width)
        before, self._lines = self._lines, lines
        self.set_virtual_size(Size(width, len(lines)), repaint=everything)
        if everything:
            return
        top, width = self.scroll_offset.y, self.size.width
        changed = [Region(0, y, width, 1) for y, (old, new) in
                   enumerate(zip_longest(before[top : top + self.size.height], lines[top : top + self.size.height]))
                   if old is None or new is None or old[0] != new[0]]  # the same style objects: compared by identity
        if changed:
            self.refresh(*changed)

    def offset_at(self, x: int, y: int) -> int | None:
        """The text offset of the character drawn at (x, y) of the view, or None past the text.
        Every drawn character stands for one character of the text (a line end is its ↵, the
        break after it draws nothing), except the named invisibles (⟨ZWSP⟩), which this count
        takes as written."""
        index = y + self.scroll_offset.y
        if not 0 <= index < len(self._lines):
            return None
        offset = sum(len(seg.text) for segments, _, _ in self._lines[:index] for seg in segments)
        x += self.scroll_offset.x
        used = 0
        for seg in self._lines[index][0]:
            for ch in seg.text:
                used += cell_len(ch)
                if used > x:
                    return offset
                offset += 1
        return None

    def item_at(self, x: int, y: int) -> int | None:
        """What is drawn at (x, y) of the view (see Clicked; -1: text no token covers, None past
        the text): exact where an offset is not, after a named invisible."""
        index = y + self.scroll_offset.y
        if not 0 <= index < len(self._lines):
            return None
        x += self.scroll_offset.x
        used = 0
        segments, _, owners = self._lines[index]
        for seg, run in zip(segments, owners):
            used += seg.cell_length
            if used > x:
                return run
        return None

    def on_click(self, event) -> None:
        at = event.get_content_offset(self)  # inside the padding
        offset = self.offset_at(at.x, at.y) if at is not None else None
        if offset is not None:
            item = self.item_at(at.x, at.y)
            self.post_message(self.Clicked(self, offset, item if item is not None and item >= 0 else None))

    def render_line(self, y: int) -> Strip:
        index = y + self.scroll_offset.y
        if index >= len(self._lines):
            return Strip.blank(self.size.width, self.base_style)
        segments, length, _ = self._lines[index]
        return Strip(segments, length).extend_cell_length(self.size.width, self.base_style)
