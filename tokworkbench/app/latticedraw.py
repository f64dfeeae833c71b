"""The Viterbi lattice as lines of styled runs: characters across, vocabulary pieces under them.

Every character gets a slot of the same width; position k (between characters k-1 and k) is the
slot's left edge. A piece over characters [s, e) is drawn from position s to position e as a
bracket with its text (and its cost when that fits) inside. The Viterbi path is the first lane,
drawn with heavy lines in the palette's path style, so it reads without colour too; the other
pieces are packed into as few lanes as fit, short pieces first. Above them, fixed rows give the
characters and the best cost to reach each position.
"""

from bisect import bisect_right
from dataclasses import dataclass

from rich.cells import cell_len, set_cell_size

from tokworkbench.app.render import TRUECOLOR, Palette
from tokworkbench.core.inspection.escape import visible
from tokworkbench.core.unigram.rows import Lattice, LatticeEdge

Run = tuple[str, str]  # text, style spec
Line = list[Run]

LIGHT = ("├", "─", "┤", "┼")  # left end, body, right end, two pieces meeting
HEAVY = ("┣", "━", "┫", "╋")
MIN_SLOT = 4
MAX_SLOT = 12  # a short word spreads over the room it has, up to this many cells a character
MAX_LANES = 48  # lanes of other pieces drawn; a word of one repeated character can have hundreds


@dataclass(frozen=True)
class LatticeDrawing:
    """Rows of styled runs, all `width` cells wide: `head` (characters, best costs) stays on
    screen while `lanes` (the path first) scroll under it."""

    head: list[Line]
    head_labels: list[str]
    lanes: list[Line]
    lane_labels: list[str]
    width: int
    slot: int
    hidden: int = 0  # pieces left out because every lane was full where they go


def cost_label(cost: float) -> str:
    if cost != cost or cost in (float("inf"), float("-inf")):
        return "∞"
    return f"{cost:.1f}"


def _cells(text: str) -> list[str]:
    """One entry per character, made visible (a tab, a space) and at most two cells wide."""
    return [visible(ch) if cell_len(visible(ch)) <= 2 else "?" for ch in text]


def slot_width(lattice: Lattice, room: int = 0) -> int:
    """Wide enough for every character and every best-cost label, plus one cell of border;
    wider when the word is short and there is `room` (cells) to spread it over."""
    chars = max((cell_len(c) for c in _cells(lattice.text)), default=1)
    labels = max((len(cost_label(b)) for b in lattice.best), default=1)
    least = max(MIN_SLOT, chars + 1, labels + 1)
    return max(least, min(MAX_SLOT, room // (len(lattice.text) + 1)))


def pack_lanes(edges: list[tuple[int, LatticeEdge]], most: int = MAX_LANES
               ) -> tuple[list[list[tuple[int, LatticeEdge]]], int]:
    """Greedy interval packing, shortest pieces first: pieces in one lane never overlap (they
    may touch). Few lanes keep the picture short; at most `most` lanes, and the number of
    pieces that found no room in them."""
    lanes: list[list[tuple[int, LatticeEdge]]] = []
    starts: list[list[int]] = []  # each lane's piece starts, sorted: a bisect finds the neighbours
    hidden = 0
    for item in sorted(edges, key=lambda ie: (ie[1].end - ie[1].start, ie[1].start, ie[1].end)):
        edge = item[1]
        for lane, at in zip(lanes, starts):
            k = bisect_right(at, edge.start)
            if (k == 0 or lane[k - 1][1].end <= edge.start) and (k == len(at) or edge.end <= at[k]):
                lane.insert(k, item)
                at.insert(k, edge.start)
                break
        else:
            if len(lanes) < most:
                lanes.append([item])
                starts.append([edge.start])
            else:
                hidden += 1
    return lanes, hidden


def _lane_line(items: list[tuple[int, LatticeEdge]], slot: int, width: int, glyphs: tuple[str, str, str, str],
               style_of) -> Line:
    """One lane: each piece a bracket from its start position to its end position."""
    cells: list[tuple[str, str]] = [(" ", "")] * width
    left, body, right, meet = glyphs
    for index, edge in items:
        a, b = edge.start * slot, edge.end * slot
        style = style_of(index, edge)
        inner = b - a - 1
        label = visible(edge.piece)
        with_cost = f"{label} {cost_label(edge.cost)}"
        text = with_cost if cell_len(with_cost) <= inner else label
        if cell_len(text) > inner:
            text = set_cell_size(text, max(0, inner - 1)) + "…" if inner >= 1 else ""
        pad = inner - cell_len(text)
        before = pad // 2
        row = [body] * before + _split_cells(text) + [body] * (pad - before)
        prev = cells[a][0]
        cells[a] = (meet if prev in (right, LIGHT[2], HEAVY[2]) else left, style)
        for k, ch in enumerate(row):
            cells[a + 1 + k] = (ch, style)
        cells[b] = (right, style)
    return _merge(cells)


def _split_cells(text: str) -> list[str]:
    """A string as one entry per cell: a wide character takes its cell and an empty one."""
    out: list[str] = []
    for ch in text:
        out.append(ch)
        if cell_len(ch) == 2:
            out.append("")
    return out


def _merge(cells: list[tuple[str, str]]) -> Line:
    runs: Line = []
    for ch, style in cells:
        if runs and runs[-1][1] == style:
            runs[-1] = (runs[-1][0] + ch, style)
        else:
            runs.append((ch, style))
    return runs


def draw_lattice(lattice: Lattice, palette: Palette = TRUECOLOR, selected: int | None = None,
                 room: int = 0) -> LatticeDrawing:
    """The lattice as rows of runs. `selected` is a piece id to mark wherever it appears (the
    piece under the piece table's cursor); `room` is the width there is to fill."""
    slot = slot_width(lattice, room)
    n = len(lattice.text)
    width = n * slot + slot  # the last position's cost label needs a slot after the last character
    on_path = set(lattice.path)
    cut_at = {0, n} | {lattice.edges[i].end for i in lattice.path}

    chars: list[tuple[str, str]] = [(" ", "")] * width
    for k, ch in enumerate(_cells(lattice.text)):
        at = k * slot + 1 + (slot - 1 - cell_len(ch)) // 2
        for j, c in enumerate(_split_cells(ch)):
            chars[at + j] = (c, "bold")
    for k in range(n + 1):
        chars[k * slot] = ("╎" if k in cut_at else "┆", "" if k in cut_at else "dim")

    best: list[tuple[str, str]] = [(" ", "")] * width
    for k, cost in enumerate(lattice.best[: n + 1]):
        label = cost_label(cost)
        style = palette.path if k in cut_at else "dim"
        at = min(k * slot, width - len(label))
        for j, c in enumerate(label):
            best[at + j] = (c, style)

    def style_of(index: int, edge: LatticeEdge) -> str:
        if index in on_path:
            return palette.path if edge.id != selected else f"{palette.path} underline"
        return palette.pair if edge.id == selected else ""

    path_items = [(i, lattice.edges[i]) for i in lattice.path]
    others = [(i, e) for i, e in enumerate(lattice.edges) if i not in on_path]
    lanes = [_lane_line(path_items, slot, width, HEAVY, style_of)] if path_items else []
    labels = ["path"] if path_items else []
    packed, hidden = pack_lanes(others)
    for lane in packed:
        lanes.append(_lane_line(lane, slot, width, LIGHT, style_of))
        labels.append("")
    return LatticeDrawing([_merge(chars), _merge(best)], ["chars", "best"], lanes, labels, width, slot, hidden)
