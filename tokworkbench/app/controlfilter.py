"""The last line of defence between the data we draw and the terminal.

Text from a corpus, a file name or a model file may hold control characters: an ESC or a C1
CSI starts a sequence the terminal obeys (an OSC 52 writes the clipboard, others move the
cursor or retitle the window), and Textual writes a segment's text as it is. The views show
such characters as pictures or escapes (`render.SHOWN`, `escape.visible`); this filter drops
any that are left in a line on its way out, whichever widget drew it. Terminals give them no
width, nor does Rich's cell count, so dropping them moves nothing.

Textual runs its own filter on every line too (ANSIToTruecolor, which gives the theme's colours
to ANSI ones). Each filter is a pass over a repainted line's segments and a cache lookup for
every line shown, so the two run as one (`TruecolorControls`) when Textual's is the only one.
"""

from collections.abc import Sequence
from functools import partial

from rich.segment import Segment
from textual.color import Color
from textual.filter import ANSIToTruecolor, LineFilter

_DROPPED = dict.fromkeys([*range(32), *range(127, 160)])


class ControlFilter(LineFilter):
    def apply(self, segments: list[Segment], background: Color) -> list[Segment]:
        # isprintable is False for every control character (and for some harmless ones, such
        # as a no-break space): the common line passes with one check a segment
        if all(text.isprintable() for text, _, _ in segments):
            return segments
        return [Segment(text.translate(_DROPPED), style, control)
                if control is None and not text.isprintable() else Segment(text, style, control)
                for text, style, control in segments]


class TruecolorControls(LineFilter):
    """Textual's ANSIToTruecolor and then ControlFilter, in one pass: the same segments. A
    merge repaints some 55 lines at 160x48; two passes cost 7 us a line more, and each of the
    frame's 370 lines is looked up in one filter cache instead of two."""

    def __init__(self, truecolor: ANSIToTruecolor) -> None:
        super().__init__()
        self.truecolor = truecolor

    def apply(self, segments: list[Segment], background: Color) -> list[Segment]:
        convert = self.truecolor.truecolor_style
        rich_background = background.rich_color
        return [_segment((text if text.isprintable() else text.translate(_DROPPED),
                          None if style is None else convert(style, rich_background), None))
                for text, style, _ in segments]


_segment = partial(tuple.__new__, Segment)  # from a ready (text, style, control): no Python __new__


class LineFilters:
    """What a line goes through on its way out: Textual's filters, then ControlFilter; when
    Textual's is its truecolor filter alone, the two joined. The same objects every frame (a
    new joined one only when Textual makes a new truecolor filter, on a theme change), since
    Textual keeps a line's filtered form per filter."""

    def __init__(self) -> None:
        self.controls = ControlFilter()
        self._joined: TruecolorControls | None = None

    def __call__(self, textual: Sequence[LineFilter]) -> list[LineFilter]:
        if len(textual) == 1 and type(textual[0]) is ANSIToTruecolor:
            if self._joined is None or self._joined.truecolor is not textual[0]:
                self._joined = TruecolorControls(textual[0])
            return [self._joined]
        return [*textual, self.controls]
