"""The cyclic collector waits while keys are being answered, until the frame that shows them
is painted.

A merge key allocates some ten thousand objects (token spans, segments, strips), so the
collector ran a dozen young passes and a middle one inside each key, and now and then a full
one: 2.6 ms of a 20 ms key-to-frame on average, up to 7 ms at once (mixed-10M, 160x48). The
same passes run once the frame is on screen, when nothing waits for them. A burst of keys is
answered as one, and the collector waits for all of it. (A session's tables are frozen out of
its walks already: core/heap.py.)
"""

import gc
from collections.abc import Callable
from typing import Protocol

LONGEST = 2.0
"""Seconds after which the collector runs again even if the keys have not settled (a key whose
barrier was lost, see keyorder.py): garbage with cycles is never held for long."""


class Stoppable(Protocol):
    def stop(self) -> None: ...


class FrameCollector:
    def __init__(self, after_frame: Callable[[Callable[[], None]], object],
                 later: Callable[[float, Callable[[], None]], Stoppable]):
        """`after_frame(callback)`: calls back once the screen has been painted (Textual's
        `call_after_refresh`, which also calls back when nothing needed painting);
        `later(seconds, callback)`: a timer (`set_timer`)."""
        self._after_frame = after_frame
        self._later = later
        self._holding = False
        self._fallback: Stoppable | None = None

    def hold(self) -> None:
        """A key arrived: the collector waits. One already off (someone else's pause) stays as
        it is, and is not turned on after."""
        if not self._holding and gc.isenabled():
            gc.disable()
            self._holding = True
            self._fallback = self._later(LONGEST, self.release)

    def settled(self) -> None:
        """The keys have run their course: the collector runs again after the next frame."""
        if self._holding:
            self._after_frame(self.release)

    def release(self) -> None:
        if self._holding:
            self._holding = False
            self._fallback.stop()  # else it would end the next burst's hold early
            self._fallback = None
            gc.enable()
