"""A panel in a hidden tab draws nothing until it is seen, and catches up when it is laid out.

Show and Resize alone do not say when that is: on a busy machine Textual can lay a newly shown
tab out in a refresh that posts neither (its scroll path), and the panel then waits, stale, for
the next change. The screen's layout signal is published after every layout, whichever path, so
a stale panel listens to it until it has an area, then draws once and stops listening."""

from collections.abc import Callable

from textual.widget import Widget


class WhenLaidOut:
    """Calls `draw` after the first layout that gives `widget` an area on screen."""

    def __init__(self, widget: Widget, draw: Callable[[], None]) -> None:
        self._widget = widget
        self._draw = draw
        self._waiting = False

    def wait(self) -> None:
        if self._waiting or not self._widget.is_running:
            return
        self._waiting = True
        self._widget.screen.screen_layout_refresh_signal.subscribe(self._widget, self._laid_out)

    def _laid_out(self, screen) -> None:
        if not self._waiting or not self._widget.region.area:
            return
        self._waiting = False
        screen.screen_layout_refresh_signal.unsubscribe(self._widget)
        self._draw()
