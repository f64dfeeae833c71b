"""The corpus text's lines: its tokens styled and wrapped, and a merge's lines made from the
lines before it.

Colours alternate from the start of each line (a token that begins a line takes the first,
each next token the next, one carried over from the line before keeps its own), so a line's
look is its own tokens'. A merge changes some lines of the window and leaves the others as
they were (about half, early in a run on mixed-10M); those are taken from the last layout
rather than made again, which is most of what a key's frame spends on the text.
"""

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache, partial
from operator import itemgetter

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style

from tokworkbench.app.render import SHOWN, Palette, marked_chars, shared_chars
from tokworkbench.core.inspection.segments import TokenSpan

Line = tuple[list[Segment], int, list[int]]  # segments, their cell length, what each draws; a Strip only when shown

_segment = partial(tuple.__new__, Segment)  # from a ready (text, style, control): no Python __new__ per token
_KEY = itemgetter(0, 1, 2, 4)  # a TokenSpan's start, end, token and cut: not its ordinal
_END = itemgetter(1)


@lru_cache(maxsize=256)
def style_of(spec: str) -> Style:
    return Style.parse(spec) if spec else Style()


@lru_cache(maxsize=8)
def token_styles(palette: Palette) -> tuple[tuple[Style, ...], tuple[Style, ...], Style, Style]:
    """Each token colour, each with the cut mark over it, the selected pair's mark, plain text.
    The same objects every time: unchanged lines then compare equal by identity."""
    return (tuple(map(style_of, palette.tokens)), tuple(style_of(f"{palette.cut} {base}") for base in palette.tokens),
            style_of(palette.pair), style_of(""))


@dataclass(frozen=True)
class TokenLayout:
    """Lines, and what they were made from: what the next layout may take lines from."""

    text: str
    spans: Sequence[TokenSpan]
    keys: list[tuple]  # each span as a later layout compares it: (start, end, token, cut)
    marked: frozenset[int]  # the characters marks cover
    cut: frozenset[int]  # the characters two tokens share
    palette: Palette
    width: int
    lines: list[Line]
    ends: list[int]  # the colour each line ends with
    # a line's first char -> (line, its first span, its spans, the next span drawn after it or None): lines
    # that may be taken
    whole: dict[int, tuple[int, int, int, int | None]]


def lay_out_tokens(text: str, spans: Sequence[TokenSpan], marks: Sequence[tuple[int, int]],
                   palette: Palette, width: int, before: TokenLayout | None = None) -> TokenLayout:
    """`text` as tokens on alternating backgrounds, wrapped like `wrap_runs` (at token
    boundaries; a token longer than a line is cut), each segment naming the span it draws (-1:
    text no token covers). What `render.style_runs` marks (a character a token cuts, `marks`,
    visible whitespace) it marks the same. A line of `before` (same text, palette and width)
    whose tokens, marks and following token are the same here is taken as it was."""
    width = max(width, 4)
    bases, cuts, mark_style, plain = token_styles(palette)
    colours = len(bases)
    end = len(text)
    cut, sharing = shared_chars(spans)
    marked = marked_chars(marks)
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
    # a line of `before` is taken where its spans match these (not their ordinals, their places
    # in the window, which every merge before them moves): one slice comparison a line, in C
    keys = list(map(_KEY, spans))
    if before is not None and (before.text, before.palette, before.width) == (text, palette, width):
        old_keys, old_lines, old_ends, whole = before.keys, before.lines, before.ends, before.whole
        # chars marked, or shared by two tokens, in one layout and not in the other
        changed = sorted(before.marked.symmetric_difference(marked) | before.cut.symmetric_difference(cut))
    else:
        whole = {}
    lines: list[Line] = []
    ends: list[int] = []  # the colour each line ends with: the next token's follows it
    segments: list[Segment] = []
    owners: list[int] = []
    used = 0
    colour = 0

    def put(piece: str, kind: int, owner: int, opens: bool) -> None:
        """Place one run: kind 0 a token, 1 a cut character, 2 a mark, 3 plain text. `opens`:
        the token's first run, which takes the first colour if it begins a line."""
        nonlocal segments, owners, used, colour
        for k, part in enumerate(piece.split("\n") if "\n" in piece else (piece,)):
            if k:
                lines.append((segments, used, owners))
                ends.append(colour)
                segments, owners, used = [], [], 0
            while part:
                need = len(part) if narrow else cell_len(part)
                if used + need > width:
                    if used and need <= width:  # the whole run fits on a line of its own
                        lines.append((segments, used, owners))
                        ends.append(colour)
                        segments, owners, used = [], [], 0
                        continue
                    fit = _fit(part, width - used)
                    if fit:
                        head = part[:fit]
                        if opens and not segments:
                            colour = 0
                        segments.append(_segment((head, kind_style(kind, colour), None)))
                        owners.append(owner)
                        used += len(head) if narrow else cell_len(head)
                        opens = False
                    lines.append((segments, used, owners))
                    ends.append(colour)
                    segments, owners, used = [], [], 0
                    part = part[fit:]
                    continue
                if opens and not segments:  # the token begins a line: the first colour
                    colour = 0
                segments.append(_segment((part, kind_style(kind, colour), None)))
                owners.append(owner)
                used += need
                opens = False
                break

    def kind_style(kind: int, at: int) -> Style:
        return bases[at] if kind == 0 else cuts[at] if kind == 1 else mark_style if kind == 2 else plain

    def taken(index: int, start: int) -> int:
        """How many spans from `index` a line of `before` that begins at char `start` draws, if
        it may be taken here as it was (else 0): its spans, those after it up to the next that
        draws (which decided where it broke; the byte tokens of a character after its first
        draw nothing), are the same, and no mark or cut came or went on them."""
        line, first, count, through = whole[start]
        last = index + (count if through is None else through - first + 1)
        if last > len(spans) or (through is None and last != len(spans)):
            return 0
        if keys[index:last] != old_keys[first : first + last - index]:
            return 0
        reach = max(start, *map(_END, keys[index:last]))
        k = bisect_left(changed, start)
        if k < len(changed) and changed[k] < reach:
            return 0
        shift = index - first
        segs, length, drawn = old_lines[line]
        lines.append((segs, length, [o + shift for o in drawn] if shift else drawn))
        ends.append(old_ends[line])
        return count if line < len(old_lines) - 1 else -count  # negative: the last line, taken

    pos = 0
    index, count = 0, len(spans)
    while index < count:
        start, stop, _, _, _ = spans[index]
        if start > pos:  # text no token covers (WordPiece's spaces between words): drawn plain
            put(text[pos:min(start, end)].translate(SHOWN), 3, -1, False)
            pos = min(start, end)
        s, e = (start, stop) if start >= pos and stop <= end else (max(start, pos), min(stop, end))
        if e <= s:
            index += 1
            continue
        if not segments and s == start and start in whole:
            n = taken(index, start)
            if n:
                index += abs(n)
                pos = spans[index - 1].end
                if n < 0:
                    return _layout(text, spans, keys, marked, cut, palette, width, lines, ends)
                colour = ends[-1]
                continue
        while ranges[at][1] <= s:
            at += 1
        if (sharing and index in sharing) or ranges[at][0] < e:  # a cut or a mark in it: run by run
            colour = (colour + 1) % colours if segments else 0
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
            if "\n" not in piece:  # the common case, inline
                need = len(piece) if narrow or piece.isascii() else cell_len(piece)
                if used + need > width and used and need <= width:
                    lines.append((segments, used, owners))  # it begins the next line, which may be taken as it was
                    ends.append(colour)
                    segments, owners, used = [], [], 0
                    continue
                colour = (colour + 1) % colours if segments else 0
                if used + need <= width:
                    segments.append(_segment((piece, bases[colour], None)))
                    owners.append(index)
                    used += need
                    pos = e
                    index += 1
                    continue
            else:
                colour = (colour + 1) % colours if segments else 0
            put(piece, 0, index, True)
        pos = e
        index += 1
    if pos < end:
        put(text[pos:end].translate(SHOWN), 3, -1, False)
    lines.append((segments, used, owners))
    ends.append(colour)
    return _layout(text, spans, keys, marked, cut, palette, width, lines, ends)


def _layout(text, spans, keys, marked, cut, palette, width, lines, ends) -> TokenLayout:
    return TokenLayout(text, spans, keys, frozenset(marked), frozenset(cut), palette, width, lines, ends,
                       _whole_lines(lines, spans))


def _whole_lines(lines: list[Line], spans: Sequence[TokenSpan]) -> dict[int, tuple[int, int, int, int | None]]:
    """The lines a later layout may take: each begins with a token's first piece and ends with
    a token's last, and draws no uncovered text."""
    drawn_after: list[int | None] = [None] * (len(lines) + 1)  # the first span drawn after line k
    for k in range(len(lines) - 1, -1, -1):
        drawn_after[k] = next((o for o in lines[k][2] if o >= 0), drawn_after[k + 1])
    whole = {}
    last = None  # the span the line before ended with
    for k, (_, _, drawn) in enumerate(lines):
        if not drawn:
            last = None
            continue
        first, final = drawn[0], drawn[-1]
        after = lines[k + 1][2][0] if k + 1 < len(lines) and lines[k + 1][2] else None
        if first != last and final != after and first >= 0 and -1 not in drawn:
            whole[spans[first].start] = (k, first, final - first + 1, drawn_after[k + 1])
        last = final
    return whole


def _clickable(spec: str, action: str) -> Style:
    """A run's style carrying the action a click on it runs (e.g. `screen.select_token(42)`)."""
    return style_of(spec) + Style.from_meta({"@click": action})


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
        style = _clickable(spec, action[0]) if action and action[0] else style_of(spec)
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
