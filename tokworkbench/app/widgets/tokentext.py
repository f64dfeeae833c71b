"""A scrollable view of text drawn as token runs, wrapped to its width.

Renders only the visible lines (the line API) from strips built once per update, because a
window of corpus text holds thousands of differently coloured tokens and is redrawn on every
merge; going through Static/Content for that costs ten times more.
"""

from dataclasses import dataclass
from functools import lru_cache

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual.geometry import Size
from textual.message import Message
from textual.strip import Strip

from tokworkbench.app.widgets.lineview import LineView


@lru_cache(maxsize=256)
def _style(spec: str) -> Style:
    return Style.parse(spec) if spec else Style()


def _clickable(spec: str, action: str) -> Style:
    """A run's style carrying the action a click on it runs (e.g. `screen.select_token(42)`)."""
    return _style(spec) + Style.from_meta({"@click": action})


Line = tuple[list[Segment], int, list[int]]  # segments, their cell length, each one's run; a Strip only when shown


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
        """The user clicked the character at `offset` of the text the runs were drawn from,
        drawn by run `run` (None: past the text)."""

        view: "TokenText"
        offset: int
        run: int | None = None

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._runs: list[tuple[str, str]] = []
        self._lines: list[Line] = []
        self._width = 0

    def set_runs(self, runs: list[tuple[str, str]]) -> None:
        if runs is self._runs:
            return  # the same runs again (a merge that did not touch this text): no repaint
        self._runs = runs
        self._rewrap()
        self.refresh()

    def on_resize(self) -> None:
        self._rewrap()

    def _rewrap(self) -> None:
        width = self.scrollable_content_region.width or 80
        self._width = width
        self._lines = wrap_runs(self._runs, width)
        self.set_virtual_size(Size(width, len(self._lines)))

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

    def run_at(self, x: int, y: int) -> int | None:
        """The index of the run drawn at (x, y) of the view (None past the text): exact where
        an offset is not, after a named invisible."""
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
            self.post_message(self.Clicked(self, offset, self.run_at(at.x, at.y)))

    def render_line(self, y: int) -> Strip:
        index = y + self.scroll_offset.y
        if index >= len(self._lines):
            return Strip.blank(self.size.width, self.base_style)
        segments, length, _ = self._lines[index]
        return Strip(segments, length).extend_cell_length(self.size.width, self.base_style)
