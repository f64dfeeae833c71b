"""How a training batch is drawn: the id stream with its document boundaries, the inputs and
targets as a grid of ids with their token text beneath, and one row's allowed (causal ∧ padding)
matrix.

Pure functions from arrays to Rich Text, so they are tested without an app. Everything that
matters is also said in characters, not only in colour: a boundary is a ┃, a role token is
⟨bos⟩, a PAD cell says ⟨pad⟩ and is dimmed, an ignored target is -100 over a ✗, and the matrix
uses ■ and ·. So NO_COLOR and 16-colour terminals show the same facts.
"""

from collections.abc import Callable, Mapping, Sequence

import numpy as np
from rich.cells import cell_len
from rich.text import Text

from tokworkbench.app.render import TRUECOLOR, Palette
from tokworkbench.core.inspection.escape import visible

IGNORE = -100
CELL = 5  # cells per grid column at least (ids up to 4 digits, or -100, and a gap)
LABEL = 6  # the grid's row-label column: "▶0  in", "   tgt"
BOUNDARY = "┃"
MATRIX_MAX = 32  # a larger T draws its first 32 positions
SPACED = 12  # up to this T the matrix has a space between columns

TokenText = Callable[[int], str]


BASE = "◌"  # U+25CC, the dotted circle a lone combining mark is drawn on (as Unicode charts do)


def clusters(text: str) -> list[str]:
    """`text` as cells go: each character with the zero-width ones (combining marks, joiners)
    that follow it. A leading zero-width character gets the dotted circle as its base, so it
    never lands on a column start and combines with whatever the terminal drew there."""
    out: list[str] = []
    for char in text:
        if out and cell_len(char) == 0:
            out[-1] += char
        else:
            out.append(BASE + char if not out and cell_len(char) == 0 else char)
    return out


def label_of(tid: int, token_text: TokenText, roles: Mapping[int, str]) -> str:
    """A role token by its role (⟨eos⟩), any other by its visible text (a token that starts
    with a combining mark, as Devanagari vowel signs do, on a dotted circle: ◌ै)."""
    role = roles.get(tid)
    if role is not None:
        return f"⟨{role}⟩"
    try:
        return "".join(clusters(visible(token_text(tid))))
    except Exception:  # an id the model cannot name (the core reports it elsewhere)
        return "?"


def crop(text: str, width: int) -> str:
    """The clusters of `text` that fit in `width` cells, never a mark without its base."""
    out, used = [], 0
    for cluster in clusters(text):
        size = cell_len(cluster)
        if used + size > width:
            break
        out.append(cluster)
        used += size
    return "".join(out)


def fit(text: str, width: int, right: bool = False) -> str:
    """`text` in exactly `width` terminal cells (rich.cells.cell_len: wide characters two,
    combining marks none): cut by whole clusters with …, or padded."""
    if width <= 0:
        return ""
    if cell_len(text) > width:
        text = crop(text, width - 1) + "…"
    pad = " " * (width - cell_len(text))
    return pad + text if right else text + pad


def cell_width(ids: np.ndarray, roles: Mapping[int, str] = {}) -> int:
    """Wide enough for the longest id in the grid (at least CELL), and for ⟨bos⟩ when a role
    token is in it."""
    flat = np.asarray(ids).ravel()
    longest = max((len(str(int(v))) for v in flat), default=1)
    named = max((len(roles[int(v)]) + 2 for v in np.unique(flat) if int(v) in roles), default=0)
    return max(CELL, longest + 1, named + 1)


def draw_stream(ids: Sequence[int], boundaries: Sequence[int], token_text: TokenText,
                roles: Mapping[int, str], palette: Palette = TRUECOLOR,
                window: tuple[int, int] | None = None, lo: int = 0, hi: int | None = None) -> Text:
    """Stream positions lo..hi as tokens on alternating backgrounds, a ┃ where a document
    starts (`boundaries`: the position of each document's first id), role tokens bold and
    named, and the chosen window's positions [a, b) in the pair mark."""
    hi = len(ids) if hi is None else min(hi, len(ids))
    starts = set(boundaries)
    out = Text(no_wrap=False, overflow="fold")
    if lo > 0:
        out.append(f"…{lo:,} ids before… ", "dim")
    for pos in range(lo, hi):
        if pos in starts and pos > 0:
            out.append(f" {BOUNDARY} ", "bold")
        tid = int(ids[pos])
        if window is not None and window[0] <= pos < window[1]:
            style = palette.pair
        elif tid in roles:
            style = palette.special
        else:
            style = palette.tokens[pos % len(palette.tokens)]
        out.append(label_of(tid, token_text, roles), style)
    if hi < len(ids):
        out.append(f" …{len(ids) - hi:,} more", "dim")
    return out


def grid_layout(inputs: np.ndarray, targets: np.ndarray, roles: Mapping[int, str], width: int) -> tuple[int, int]:
    """(cell width, columns per band) for a grid drawn in `width` cells."""
    cell = cell_width(np.concatenate([np.ravel(inputs), np.ravel(targets)]), roles)
    return cell, max(1, (width - LABEL) // cell)


def row_lines(context: int, per_band: int) -> int:
    """Lines one batch row takes: four per band of columns, and a column header before each
    band after the first."""
    bands = -(-context // per_band)
    return 4 * bands + (bands - 1)


def draw_grid(inputs: np.ndarray, targets: np.ndarray, token_text: TokenText, roles: Mapping[int, str],
              mask: np.ndarray | None = None, palette: Palette = TRUECOLOR, chosen: int | None = None,
              width: int | None = None) -> Text:
    """Each row as four lines: input ids, their tokens, target ids, their tokens; ▶ marks the
    chosen row. PAD cells (mask 0) are dimmed and say ⟨pad⟩; -100 targets are marked, ✗ beneath.
    Columns that do not fit in `width` continue in bands below, under their own t header, so
    the row labels never scroll away.

    Every line is exactly `width` terminal cells (None: as wide as the widest band), padded
    with spaces: a line of the last frame that was longer, or a wide or combining character a
    terminal measured differently, is overwritten, not left at the line's end (issue 22)."""
    inputs, targets = np.asarray(inputs), np.asarray(targets)
    cell, per_band = grid_layout(inputs, targets, roles, 10_000 if width is None else width)
    rows, context = inputs.shape
    full = LABEL + cell * min(per_band, context) if width is None else width
    lines: list[Text] = []

    def header(first: int) -> None:
        line = Text(" " * LABEL)
        for t in range(first, min(context, first + per_band)):
            line.append(fit(f"t{t}", cell, right=True), "dim")
        lines.append(line)

    header(0)
    for b in range(rows):
        mark = "▶" if b == chosen else " "
        for first in range(0, context, per_band):
            if first:
                header(first)
            for name, grid in ((f"{mark}{b:<2} in", inputs), ("   tgt", targets)):
                id_line = Text(fit(name, LABEL), "bold" if b == chosen else "")
                text_line = Text(" " * LABEL)
                for t in range(first, min(context, first + per_band)):
                    tid = int(grid[b, t])
                    if tid == IGNORE:
                        id_line.append(fit(str(tid), cell, right=True), palette.ignored)
                        text_line.append(fit("✗", cell, right=True), palette.ignored)
                        continue
                    padded = grid is inputs and mask is not None and not mask[b, t]  # a target on PAD is -100
                    id_line.append(fit(str(tid), cell, right=True), palette.pad if padded else "")
                    text_line.append(" " + fit(label_of(tid, token_text, roles), cell - 1, right=True),
                                     palette.pad if padded else (palette.special if tid in roles else "italic"))
                lines += [id_line, text_line]
    out = Text(no_wrap=True, overflow="crop")
    for i, line in enumerate(lines):
        if i:
            out.append("\n")
        out.append_text(line)
        if line.cell_len < full:
            out.append(" " * (full - line.cell_len))
    return out


def draw_allowed(allowed: np.ndarray, row: int, start: int, valid: int) -> Text:
    """allowed[t, j] for one row: ■ where position t may attend to j (j ≤ t and j is a real
    id), · where not. Column heads are j mod 10. Headed by the row's start and valid targets."""
    allowed = np.asarray(allowed, dtype=bool)
    size = allowed.shape[0]
    shown = min(size, MATRIX_MAX)
    out = Text(no_wrap=True, overflow="crop")
    out.append(f"row {row} · start {start:,}", "bold")
    out.append(f"\n{valid} valid targets", "dim")
    out.append(f"\nallowed {int(allowed.sum())}/{size * size}", "bold")
    out.append("\n(j ≤ t, j not PAD)", "dim")
    gap = " " if shown <= SPACED else ""  # a large T is drawn dense, to leave the grid its room
    out.append("\nt\\j " + gap.join(str(j % 10) for j in range(shown)), "dim")
    for t in range(shown):
        out.append(f"\n{t:>3} ", "dim")
        out.append(gap.join("■" if allowed[t, j] else "·" for j in range(shown)))
    if shown < size:
        out.append(f"\n(first {shown} of {size})", "dim")
    return out
