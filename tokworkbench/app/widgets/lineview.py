"""What the two line-API views (the tables and the token text) share.

Both are redrawn on every merge, a line at a time, so per-line costs count: Textual's
`rich_style` walks every ancestor's styles each time it is read (a third of the tables' draw
time), and changing the virtual size through the reactive lays out the whole screen.
"""

from rich.style import Style
from textual.geometry import Size
from textual.scroll_view import ScrollView


class LineView(ScrollView):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._base_style: Style | None = None

    @property
    def base_style(self) -> Style:
        """`rich_style`, kept until Textual reports a style change here."""
        if self._base_style is None:
            self._base_style = self.rich_style
        return self._base_style

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._base_style = None

    def set_virtual_size(self, size: Size, repaint: bool = True) -> None:
        """Change the scrollable size without a layout pass of the whole screen (which the
        reactive would trigger, and which costs more than anything else on a merge); only this
        widget's scrollbars and (with `repaint`) lines are refreshed."""
        if self.virtual_size != size:
            self.set_reactive(ScrollView.virtual_size, size)
            self._scroll_update(size)
        if repaint:
            self.refresh()
