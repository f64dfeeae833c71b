"""A scrollable view of text drawn as tokens (or styled runs), wrapped to its width.

Renders only the visible lines (the line API), because a window of corpus text holds
thousands of differently coloured tokens and is redrawn on every merge; going through
Static/Content for that costs ten times more. A merge repaints only the lines it changed
(app/tokenlayout.py makes them, and keeps the others as they were).
"""

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import zip_longest

from rich.cells import cell_len
from textual.geometry import Region, Size
from textual.message import Message
from textual.strip import Strip

from tokworkbench.app.render import Palette, char_drawn_at
from tokworkbench.app.tokenlayout import Line, TokenLayout, lay_out_tokens, wrap_runs
from tokworkbench.app.widgets.lineview import LineView
from tokworkbench.core.inspection.segments import TokenSpan


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
        self._layout: TokenLayout | None = None  # the tokens' last layout, which the next takes lines from

    def set_runs(self, runs: list[tuple[str, str]]) -> None:
        """Draw styled runs (text, style spec[, click action]), wrapped between runs."""
        if self._drawn != ("runs", runs):
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
        lines = self._wrapped(width, everything)
        before, self._lines = self._lines, lines
        self.set_virtual_size(Size(width, len(lines)), repaint=everything)
        left = self.scrollable_content_region.width or 80
        if left != width:
            # the new length brought the scrollbar in (or took it away), and no resize follows:
            # wrapped to the old width, every line lost its last two chars under it
            self._lines = self._wrapped(left, True)
            self.set_virtual_size(Size(left, len(self._lines)), repaint=True)
            return
        if everything:
            return
        top, size = self.scroll_offset.y, self.size
        changed = [Region(0, y, size.width, 1) for y, (old, new) in
                   enumerate(zip_longest(before[top : top + size.height], lines[top : top + size.height]))
                   if old is None or new is None or (old[0] is not new[0] and old[0] != new[0])]
        if changed:
            self.refresh(*changed)

    def _wrapped(self, width: int, everything: bool) -> list[Line]:
        if not self._drawn:
            return []
        if self._drawn[0] == "runs":
            return wrap_runs(self._drawn[1], width)
        self._layout = lay_out_tokens(*self._drawn[1:], width, None if everything else self._layout)
        return self._layout.lines

    def offset_at(self, x: int, y: int) -> int | None:
        """The text offset of the character drawn at (x, y) of the view, or None past the text.
        Tokens draw every char of their text once, in order (a line end as its ↵, the break
        after it drawing nothing; a named invisible such as ⟨ZWSP⟩ as several): the drawn chars
        before (x, y) say which char it is. Runs are offsets into the runs' text as drawn."""
        index = y + self.scroll_offset.y
        if not 0 <= index < len(self._lines):
            return None
        drawn = sum(len(seg.text) for segments, _, _ in self._lines[:index] for seg in segments)
        x += self.scroll_offset.x
        used = 0
        for seg in self._lines[index][0]:
            for ch in seg.text:
                used += cell_len(ch)
                if used > x:
                    return char_drawn_at(self._drawn[1], drawn) if self._drawn[0] == "tokens" else drawn
                drawn += 1
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
