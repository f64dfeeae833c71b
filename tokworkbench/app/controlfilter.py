"""The last line of defence between the data we draw and the terminal.

Text from a corpus, a file name or a model file may hold control characters: an ESC or a C1
CSI starts a sequence the terminal obeys (an OSC 52 writes the clipboard, others move the
cursor or retitle the window), and Textual writes a segment's text as it is. The views show
such characters as pictures or escapes (`render.SHOWN`, `escape.visible`); this filter drops
any that are left in a line on its way out, whichever widget drew it. Terminals give them no
width, nor does Rich's cell count, so dropping them moves nothing.
"""

from rich.segment import Segment
from textual.color import Color
from textual.filter import LineFilter

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
