"""A bordered pane that says in its bottom border what it shows ("12 of 40,312 pairs").

The count changes on every step. Setting `border_subtitle` repaints the whole widget: for a
container, every line of its border and background (15 lines, 0.7 ms a merge at 160x48) to
change one. A panel repaints only its bottom border line. The text is shown as written: Textual
reads a plain string as markup, where a typed filter such as `[/]` raises and `[b]` styles.
"""

from rich.text import Text
from textual.containers import Vertical
from textual.geometry import Region


class Panel(Vertical):
    """A container with a border whose subtitle is set through `set_subtitle`."""

    def __init__(self, *children, **kwargs):
        super().__init__(*children, **kwargs)
        self._subtitle_shown: str | None = None
        self._retitling = False

    @property
    def subtitle_text(self) -> str:
        """The bottom border's text, as set."""
        return self._subtitle_shown or ""

    def set_subtitle(self, text: str) -> None:
        if text == self._subtitle_shown:
            return
        self._subtitle_shown = text
        self._retitling = True  # the descriptor's refresh below repaints the one line
        try:
            self.border_subtitle = Text(text)
        finally:
            self._retitling = False

    def refresh(self, *regions: Region, **kwargs) -> "Panel":
        """Only the descriptor's own refresh, inside `set_subtitle`, is narrowed to the bottom
        line; every other refresh is Textual's."""
        if self._retitling and not regions and not kwargs:
            left, top = self.content_offset  # refresh takes regions relative to the content
            width, height = self.outer_size
            return super().refresh(Region(-left, height - 1 - top, width, 1))
        return super().refresh(*regions, **kwargs)
