"""A light table: fixed rows of pre-formatted cells, a cursor, and only visible lines rendered.

The pair table and the merge history are rebuilt on every merge; Textual's DataTable re-renders
each cell through Rich on every rebuild, which costs more than the merge itself. Rows here are
turned into strips once per update and drawn by the line API.

A table may also be a virtual list (the merge history, the rounds): it holds the rows
`first…first+len(rows)` of `total`, and asks its owner for the others when they come on screen
(`Wanted`); until they arrive they are drawn as a dim `…`.
"""

from dataclasses import dataclass

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.strip import Strip

from tokworkbench.app.widgets.lineview import LineView

Cell = str | tuple[str, str]  # text, or (text, style)

HEADER = Style(bold=True)
CURSOR = Style(reverse=True)
CURSOR_UNFOCUSED = Style(bgcolor="grey23")
GAP = 2
MARGIN = 100  # rows asked for beyond those on screen, each side, so a short scroll needs no other page
UNHELD = Style(dim=True)


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

    @dataclass
    class Wanted(Message):
        """Rows `start:end` of a virtual list are on screen and not held: the owner answers
        with `set_rows(rows, first=start, total=…)`, or not (they stay `…`)."""

        view: "RowsView"
        start: int
        end: int

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
        self.rows: list[tuple[Cell, ...]] = []  # the rows held: first, first + 1, …
        self.first = 0  # the table index of rows[0]
        self.total = 0  # rows in the whole table; a virtual list holds only some
        self.cursor = 0  # a table index, held or not
        self._asked: tuple[int, int] | None = None  # the rows last asked for, until rows come
        self._natural = self._widths = [len(title) for title, _, _ in columns]
        self._strips: dict[int, Strip] = {}  # row index -> its line, made when first drawn
        self._made: dict[int, tuple] = {}  # id(cells) -> (cells, line): a row whose cells are kept keeps its line
        self._drawn_as: tuple = ()  # the column widths, view width and base style the lines were made for
        self._header = Strip([])
        self._styles: dict[tuple, Style] = {}

    def set_rows(self, rows: list[tuple[Cell, ...]], cursor: int | None = None, follow: bool = False,
                 first: int = 0, total: int | None = None) -> None:
        """Hold `rows` as the table's rows `first…`; `total` makes it a virtual list of that many
        (the cursor keeps its table index; `follow` puts it on the last row)."""
        virtual = self.first or self.total > len(self.rows)  # a virtual list before: its widths only grow
        made = self._made
        self._made = {id(c): m for c in rows if (m := made.get(id(c))) is not None and m[0] is c}
        self.rows = rows
        self.first = first
        self.total = max(first + len(rows), total or 0)
        self._asked = None
        if cursor is not None:
            self.cursor = cursor
        self.cursor = max(0, min(self.cursor, self.total - 1))
        if follow:
            self.cursor = max(0, self.total - 1)
        widths = [len(title) for title, _, _ in self.columns]
        if virtual and (first or self.total > len(rows)):
            widths = list(self._natural)  # a page of other rows: the columns keep their place
        for i, column in enumerate(zip(*rows)):  # a column at a time: 1,280 cells a merge in the history
            texts = [c if isinstance(c, str) else c[0] for c in column]
            widest = max(map(len, texts)) if "".join(texts).isascii() else max(map(cell_len, texts))
            widths[i] = max(widths[i], min(widest, self.columns[i][1]))
        self._natural = widths
        self._lay_out_columns()
        if follow:
            self._scroll_rows(max(0, self.total - self._visible_rows()))
        self._keep_cursor_visible()
        self.refresh()

    def row(self, index: int) -> tuple[Cell, ...] | None:
        """The cells of table row `index`, if held."""
        at = index - self.first
        return self.rows[at] if 0 <= at < len(self.rows) else None

    def _lay_out_columns(self) -> None:
        widths = list(self._natural)
        total = sum(widths) + GAP * len(widths)
        if self.fit is not None:
            flex, least, keep = self.fit
            room = self.scrollable_content_region.width
            if not self.show_vertical_scrollbar and self.total + 1 > self.scrollable_content_region.height:
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
        self._strips = {}
        self.set_virtual_size(Size(total, self.total + 1))
        self._check_drawn_as(self.size.width)

    def on_resize(self) -> None:
        if self.fit is not None:
            self._lay_out_columns()
        # a pane that shrank (a roomy tab opened below it) showed merge 8 of 10 until the next step
        self.call_after_refresh(self._keep_cursor_visible)

    def _check_drawn_as(self, width: int) -> None:
        """Lines are made whole (as wide as the view, on its base style): a change of any of
        those makes them again."""
        drawn_as = (tuple(self._widths), width, self.base_style)
        if drawn_as != self._drawn_as:
            self._drawn_as = drawn_as
            self._made, self._strips, self._styles = {}, {}, {}
            self._header = self._strip([(t, "") for t, _, _ in self.columns], width, HEADER)

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._drawn_as = ()  # the base style may have changed: checked when next drawn

    def _style(self, spec: str, over: Style | None = None) -> Style:
        """The view's base style, then `over` (the header's, or a row not held yet's), then the cell's."""
        style = self._styles.get((spec, over))
        if style is None:
            cell = Style.parse(spec) if spec else Style()
            style = self._styles[spec, over] = self.base_style + (over + cell if over else cell)
        return style

    def _strip(self, row, width: int, over: Style | None = None) -> Strip:
        """A row's whole line, as wide as the view (one Strip: cropping, padding and styling a
        narrower one made three, 60-100 µs a line, and every line changes on a merge)."""
        segments = []
        gap = Segment(" " * GAP, self._style("", over))
        used = 0
        for (_, _, justify), w, c in zip(self.columns, self._widths, row):
            text, spec = (c, "") if isinstance(c, str) else c
            size = len(text) if text.isascii() else cell_len(text)
            if size > w:
                text = set_cell_size(text, w - 1) + "…"
                size = w
            pad = " " * (w - size)
            segments.append(Segment(pad + text if justify == "right" else text + pad, self._style(spec, over)))
            segments.append(gap)
            used += w + GAP
        if used < width:
            segments.append(Segment(" " * (width - used), self.base_style))
            used = width
        return Strip(segments, used)

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        x, top = self.scroll_offset  # each read of the view's geometry costs microseconds: once a line
        self._check_drawn_as(width)
        if y == 0:
            strip = self._header
        else:
            index = y - 1 + top
            if index >= self.total:
                return Strip.blank(width, self.base_style)
            cursor = (CURSOR if self.has_focus else CURSOR_UNFOCUSED) if index == self.cursor else None
            strip = self._strips.get(index) if cursor is None else None
            if strip is None:
                cells = self.row(index)
                if cells is None:
                    self._ask()
                    cells = [("…", "") if i == 0 else "" for i in range(len(self.columns))]
                    # not kept: the row itself is on its way
                    strip = self._strip(cells, width, UNHELD + cursor if cursor else UNHELD)
                elif cursor is not None:  # under the cells' own styles, over the view's
                    strip = self._strip(cells, width, cursor)
                else:
                    made = self._made.get(id(cells))
                    if made is None or made[0] is not cells:
                        made = self._made[id(cells)] = (cells, self._strip(cells, width))
                    strip = self._strips[index] = made[1]
        if x or strip.cell_length != width:  # scrolled sideways, or wider than the view
            strip = strip.crop(x, x + width).extend_cell_length(width, self.base_style)
        return strip

    def _ask(self) -> None:
        """Ask the owner for the rows on screen, and some either side, once until they come."""
        top = self.scroll_offset.y
        start, stop = max(0, top - MARGIN), min(self.total, top + self._visible_rows() + MARGIN)
        asked = self._asked
        if asked is None or not (asked[0] <= top and min(self.total, top + self._visible_rows()) <= asked[1]):
            self._asked = (start, stop)
            self.post_message(self.Wanted(self, start, stop))

    def _keep_cursor_visible(self) -> None:
        top = self.scroll_offset.y
        visible = self._visible_rows()
        if self.cursor < top:
            self._scroll_rows(self.cursor)
        elif self.cursor >= top + visible:
            self._scroll_rows(self.cursor - visible + 1)

    def _scroll_rows(self, top: int) -> None:
        """Textual's scroll waits for the next refresh, and refuses a pane with no size yet: a
        history set before the first layout then drew rows 0… for its first frames, all `…`,
        and asked for a page of them it threw away. So before the first layout, scroll now."""
        if self.size.height:
            self.scroll_to(y=top, animate=False)
        else:
            self.scroll_to(y=top, animate=False, immediate=True, force=True)

    def _visible_rows(self) -> int:
        """Rows that fit under the header, above a horizontal scrollbar if there is one."""
        return max(1, self.scrollable_content_region.height - 1)

    def action_move(self, delta: int) -> None:
        self._set_cursor(self.cursor + delta)

    def action_jump(self, index: int) -> None:
        self._set_cursor(index if index >= 0 else self.total - 1)

    def _set_cursor(self, index: int) -> None:
        if not self.total:
            return
        index = max(0, min(index, self.total - 1))
        if index != self.cursor:
            self.cursor = index
            self._keep_cursor_visible()
            self.refresh()
            self.post_message(self.Highlighted(self, index))

    def on_click(self, event) -> None:
        at = event.get_content_offset(self)  # inside the border, if the table has one
        if at is None or at.y < 1:
            return  # the border, or the header
        row = at.y - 1 + self.scroll_offset.y
        if row < self.total:
            self.focus()
            self._set_cursor(row)

    def on_focus(self) -> None:
        self.refresh()

    def on_blur(self) -> None:
        self.refresh()
