"""A light table: fixed rows of pre-formatted cells, a cursor, and only visible lines rendered.

The pair table and the merge history are rebuilt on every merge; Textual's DataTable re-renders
each cell through Rich on every rebuild, which costs more than the merge itself. Rows here are
turned into strips once per update and drawn by the line API.
"""

from dataclasses import dataclass

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.strip import Strip

from .lineview import LineView

Cell = str | tuple[str, str]  # text, or (text, style)

HEADER = Style(bold=True)
CURSOR = Style(reverse=True)
CURSOR_UNFOCUSED = Style(bgcolor="grey23")
GAP = 2


class RowsView(LineView, can_focus=True):
    DEFAULT_CSS = """
    RowsView {
        height: 1fr;
    }
    """
    BINDINGS = [
        Binding("up,k", "move(-1)", "Up", show=False),
        Binding("down,j", "move(1)", "Down", show=False),
        Binding("pageup", "move(-10)", "Page up", show=False),
        Binding("pagedown", "move(10)", "Page down", show=False),
        Binding("home", "jump(0)", "First", show=False),
        Binding("end", "jump(-1)", "Last", show=False),
    ]

    @dataclass
    class Highlighted(Message):
        """The user moved the cursor to row `index` (not sent when rows are replaced)."""

        view: "RowsView"
        index: int

    def __init__(self, columns: list[tuple[str, int, str]], fit: tuple[int, int, int] | None = None, **kwargs):
        """`columns`: (title, max width, "left"|"right"). `fit`: (flexible column, its least
        width, last column to keep in view) for a table refilled on every report: it never
        scrolls sideways, and the flexible column gives up width so the columns up to the last
        kept one show in a narrow pane; the ones after it are cut at the pane's edge."""
        super().__init__(**kwargs)
        self.columns = columns
        self.fit = fit
        if fit is not None:
            # no horizontal scrollbar to come and go as rows change: each time would be a
            # layout pass of the whole screen, which delays the keys behind it
            self.styles.overflow_x = "hidden"
        self.rows: list[tuple[Cell, ...]] = []
        self.cursor = 0
        self._natural = self._widths = [len(title) for title, _, _ in columns]
        self._strips: dict[int, Strip] = {}
        self._header = Strip([])
        self._styles: dict[str, Style] = {}

    def set_rows(self, rows: list[tuple[Cell, ...]], cursor: int | None = None, follow: bool = False) -> None:
        self.rows = rows
        if cursor is not None:
            self.cursor = cursor
        self.cursor = max(0, min(self.cursor, len(rows) - 1))
        if follow:
            self.cursor = max(0, len(rows) - 1)
        widths = [len(title) for title, _, _ in self.columns]
        for row in rows:
            for i, c in enumerate(row):
                widths[i] = max(widths[i], min(cell_len(c if isinstance(c, str) else c[0]), self.columns[i][1]))
        self._natural = widths
        self._lay_out_columns()
        if follow:
            self.scroll_to(y=max(0, len(rows) - self._visible_rows()), animate=False)
        self._keep_cursor_visible()
        self.refresh()

    def _lay_out_columns(self) -> None:
        widths = list(self._natural)
        total = sum(widths) + GAP * len(widths)
        if self.fit is not None:
            flex, least, keep = self.fit
            room = self.scrollable_content_region.width
            if not self.show_vertical_scrollbar and len(self.rows) + 1 > self.scrollable_content_region.height:
                room -= self.styles.scrollbar_size_vertical  # the scrollbar these rows bring
            over = sum(widths[: keep + 1]) + GAP * (keep + 1) - room
            if over > 0 and room > 0:
                widths[flex] = max(min(least, widths[flex]), widths[flex] - over)
            ends = [sum(widths[: i + 1]) + GAP * i for i in range(len(widths))]
            # a column that does not fit whole is left out: a number cut at the edge reads as another
            shown = max(keep + 1, sum(1 for end in ends if end <= room))
            widths = widths[:shown]
            total = min(sum(widths) + GAP * len(widths), max(room, 1))
        self._widths = widths
        self._header = self._strip([(t, "") for t, _, _ in self.columns], HEADER)
        self._strips = {}  # row index -> Strip, made when first drawn
        self.set_virtual_size(Size(total, len(self.rows) + 1))

    def on_resize(self) -> None:
        if self.fit is not None:
            self._lay_out_columns()

    def _style(self, spec: str) -> Style:
        style = self._styles.get(spec)
        if style is None:
            style = self._styles[spec] = Style.parse(spec) if spec else Style()
        return style

    def _strip(self, row, base: Style | None = None) -> Strip:
        segments = []
        for (title, width, justify), w, c in zip(self.columns, self._widths, row):
            text, spec = (c, "") if isinstance(c, str) else c
            if cell_len(text) > w:
                text = set_cell_size(text, w - 1) + "…"
            pad = " " * (w - cell_len(text))
            text = pad + text if justify == "right" else text + pad
            style = self._style(spec)
            segments.append(Segment(text, base + style if base else style))
            segments.append(Segment(" " * GAP, base))
        return Strip(segments)

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        x = self.scroll_offset.x
        if y == 0:
            strip = self._header
        else:
            index = y - 1 + self.scroll_offset.y
            if index >= len(self.rows):
                return Strip.blank(width, self.base_style)
            strip = self._strips.get(index)
            if strip is None:
                strip = self._strips[index] = self._strip(self.rows[index])
            if index == self.cursor:
                strip = strip.apply_style(CURSOR if self.has_focus else CURSOR_UNFOCUSED)
        base = self.base_style
        return strip.crop(x, x + width).extend_cell_length(width, base).apply_style(base)

    def _keep_cursor_visible(self) -> None:
        top = self.scroll_offset.y
        visible = self._visible_rows()
        if self.cursor < top:
            self.scroll_to(y=self.cursor, animate=False)
        elif self.cursor >= top + visible:
            self.scroll_to(y=self.cursor - visible + 1, animate=False)

    def _visible_rows(self) -> int:
        """Rows that fit under the header, above a horizontal scrollbar if there is one."""
        return max(1, self.scrollable_content_region.height - 1)

    def action_move(self, delta: int) -> None:
        self._set_cursor(self.cursor + delta)

    def action_jump(self, index: int) -> None:
        self._set_cursor(index if index >= 0 else len(self.rows) - 1)

    def _set_cursor(self, index: int) -> None:
        if not self.rows:
            return
        index = max(0, min(index, len(self.rows) - 1))
        if index != self.cursor:
            self.cursor = index
            self._keep_cursor_visible()
            self.refresh()
            self.post_message(self.Highlighted(self, index))

    def on_click(self, event) -> None:
        row = event.y - 1 + self.scroll_offset.y
        if 0 <= row < len(self.rows) and event.y >= 1:
            self.focus()
            self._set_cursor(row)

    def on_focus(self) -> None:
        self.refresh()

    def on_blur(self) -> None:
        self.refresh()
