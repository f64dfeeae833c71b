"""A few lines of styled text that change on every step, such as the corpus pane's counts.

A Static draws through Textual's content pipeline, 0.2-0.3 ms a line, and repaints all of its
lines on every update. This keeps each row's strip and repaints only the rows whose text
changed. A line too long for the width breaks between its items (at " · "), never inside one;
rows past the widget's height are not shown, so the items that matter most come first.
"""

import re
from itertools import zip_longest

from rich.cells import chop_cells
from rich.console import Console
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.geometry import Region
from textual.strip import Strip
from textual.widget import Widget

SEPARATOR = re.compile(r" +· +")


def flow(line: Text, width: int) -> list[Text]:
    """`line` in rows of at most `width` cells, broken at separators (an item wider than the
    row is cropped when drawn)."""
    if line.cell_len <= width:
        return [line]
    cuts = [at for match in SEPARATOR.finditer(line.plain) for at in match.span()]
    parts = line.divide(cuts)  # item, separator, item, ...
    rows, row = [], parts[0]
    for separator, item in zip(parts[1::2], parts[2::2]):
        if row.cell_len + separator.cell_len + item.cell_len <= width:
            row = Text.assemble(row, separator, item)
        else:
            rows.append(row)
            row = item
    rows.append(row)
    return rows


def row_segments(row: Text, console: Console, base: Style) -> list[Segment]:
    """The row's segments over `base`. Rich leaves a Text's own style out of a text without
    spans (`Text.render`): it goes under the spans' here."""
    under = base + console.get_style(row.style) if row.style else base
    return list(Segment.apply_style(row.render(console, end=""), under))


def _drawn_as(row: Text) -> tuple:
    """What a row draws (Text's == leaves its own style out)."""
    return row.plain, row.spans, row.style


class StyledLines(Widget):
    """Rows of text, each repainted only when what it draws changed. Its height comes from CSS
    or, left auto, from its rows."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._lines: list[Text] = []  # as shown
        self._rows: list[Text] = []  # as drawn at `_drawn_at`'s width
        self._strips: dict[int, Strip] = {}
        self._drawn_at: int | None = None  # the width the rows and strips were made for
        self._base = Style()  # the widget's style then (`rich_style` walks every ancestor's styles)

    @property
    def plain(self) -> str:
        """The text shown, whole: what a narrow widget leaves out too."""
        return "\n".join(line.plain for line in self._lines)

    @property
    def drawn(self) -> list[str]:
        """The rows as drawn: those the height holds, each cut to the width."""
        width, height = self.size
        if not width:
            return []
        return [chop_cells(row.plain, width)[0] if row.plain else "" for row in self._flow(width)[:height]]

    def get_selection(self, selection) -> tuple[str, str] | None:
        """Text selected with the mouse, for copying: the rows as they break here."""
        return selection.extract("\n".join(row.plain for row in self._rows)), "\n"

    def selection_updated(self, selection) -> None:
        self._strips.clear()  # rows under a selection are drawn with it, and not kept
        self.refresh()

    def show(self, text: Text) -> None:
        """Show `text`, its lines (split at newlines) each from a new row."""
        self._lines = list(text.split("\n", allow_blank=True)) if text.plain else []
        width = self.size.width
        if not width or self._drawn_at is None:
            self.refresh()  # not laid out yet: the first render flows it
            return
        rows = self._flow(width)
        changed = [y for y, (old, new) in enumerate(zip_longest(self._rows, rows))
                   if old is None or new is None or _drawn_as(old) != _drawn_as(new)]
        more = len(rows) != len(self._rows) and self._auto_height()
        self._rows = rows
        for y in changed:
            self._strips.pop(y, None)
        if more:
            self.refresh(layout=True)
        elif changed:
            self.refresh(*(Region(0, y, width, 1) for y in changed))

    def _auto_height(self) -> bool:
        """Whether the height follows the rows (the corpus pane's are fixed: no layout pass)."""
        height = self.styles.height
        return height is None or height.is_auto

    def _flow(self, width: int) -> list[Text]:
        return [row for line in self._lines for row in flow(line, width)]

    def get_content_height(self, container, viewport, width: int) -> int:
        return len(self._flow(width))

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._drawn_at = None

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        if self._drawn_at != width:
            self._drawn_at, self._base = width, self.rich_style
            self._rows = self._flow(width)
            self._strips.clear()
        base, selection = self._base, self.text_selection
        strip = self._strips.get(y)
        if strip is None:
            row = self._rows[y] if y < len(self._rows) else Text()
            span = selection.get_span(y) if selection is not None else None
            if span is not None:
                start, end = span
                row = row.copy()
                row.stylize(self.screen.get_component_rich_style("screen--selection"), start,
                            len(row) if end == -1 else end)
            strip = Strip(row_segments(row, self.app.console, base)).crop_extend(0, width, base)
            if selection is None:
                self._strips[y] = strip
        return strip
