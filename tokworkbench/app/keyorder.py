"""Keys act in the order they arrived, each after the one before it has run its course.

Textual runs a priority binding as the key arrives, but hands any other key to the focused
widget's queue and runs its binding only when it has bubbled back up to the app. A key behind
it in the same burst (SSH delivers keys together) is meanwhile taken from the app's own queue:
`n s` opened the Save dialog before the merge, which then went to a screen no longer on top, and
was lost. So while a key is on its way through the widgets, the keys behind it wait here; a
barrier posted behind it takes the same road, and when it reaches the app the key's binding has
run. What that binding posted (enter in the merge history posts RewindTo, which asks "Undo 3
merges?") is still on its way up, though, behind the barrier: a second barrier follows it from
the same widget, and when that one is back the key is done and the next one goes. Before, `enter
n` merged first and then asked about a history one step longer. Pastes wait in the same line,
since they type into the same boxes.
"""

from collections import deque
from collections.abc import Awaitable, Callable, Iterable
from typing import Protocol, runtime_checkable

from textual import events
from textual.app import App
from textual.message import Message
from textual.message_pump import MessagePump
from textual.timer import Timer

LOST_AFTER = 2.0
"""Seconds after which a barrier that never came back (its widget went away with the key) stops
holding the keys behind it. Only a removed widget loses one; a slow action holds the event loop
itself, so no timer fires early."""


class KeyBarrier(Message):
    """Follows a forwarded key through the widgets; at the app it says that key is done."""

    def __init__(self, serial: int) -> None:
        super().__init__()
        self.serial = serial


@runtime_checkable
class Retyping(Protocol):
    """An app that keeps keys in line takes back the keys a box held (behind an enter) at the
    head of the line: they passed it before every key still waiting there. It can also hold the
    whole line until such keys come back (the main screen keeps the keys typed while a run
    stops, for when its state is back)."""

    async def retype(self, keys: Iterable[events.Key]) -> None: ...

    def hold_keys(self) -> None: ...


async def retype(app: App, keys: Iterable[events.Key]) -> None:
    """Keys a box held, routed again as if typed now: through the app's line where it keeps one
    (and the line moves again if it was held)."""
    if isinstance(app, Retyping):
        await app.retype(keys)
    else:
        for key in keys:
            await app.on_event(key)


def hold_keys(app: App) -> None:
    """The keys still to come wait in the app's line until `retype` gives some back."""
    if isinstance(app, Retyping):
        app.hold_keys()


class KeyOrder:
    """The line of keys waiting for the one on its way. The app hands it every key and paste
    from the terminal (`arrive`) and every barrier that reaches it (`returned`)."""

    def __init__(self, app: App, dispatch: Callable[[events.Event], Awaitable[None]],
                 split: Callable[[events.Event], list[events.Event]] = lambda event: [event]) -> None:
        self._app = app
        self._dispatch = dispatch  # the app's own handling of an input event
        self._split = split  # one event from the terminal that stands for several keys, asked as it goes
        self._held: deque[events.Event] = deque()
        self._waiting: int | None = None  # the serial of the barrier still on its way
        self._again: MessagePump | None = None  # where the second barrier goes, once the first is back
        self._on_hold = False  # the line waits for keys to be given back (`hold`)
        self._serial = 0
        self._timer: Timer | None = None

    @property
    def holding(self) -> int:
        """How many keys (and pastes) are waiting for the one before them."""
        return len(self._held)

    @property
    def settled(self) -> bool:
        """No key on its way through the widgets and none waiting: what a burst set off has run."""
        return self._waiting is None and not self._held and not self._on_hold

    async def arrive(self, event: events.Event) -> None:
        self._held.append(event)
        await self._drain()

    async def retype(self, keys: Iterable[events.Event]) -> None:
        """Keys that went through the line once and were held by a box (or by the screen):
        first in line again, and the line moves if it was on hold."""
        self._held.extendleft(reversed(list(keys)))
        self._on_hold = False
        await self._drain()

    def hold(self) -> None:
        """Send no key until `retype`: the keys that come meanwhile wait, in order."""
        self._on_hold = True

    async def returned(self, serial: int) -> None:
        if serial != self._waiting:
            return  # one given up for lost, come back late
        self._waiting = None
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        target, self._again = self._again, None
        if target is not None and self._follow(target):
            return  # the binding has run: the second barrier follows what it posted
        await self._drain()

    async def _drain(self) -> None:
        while self._held and self._waiting is None and not self._on_hold:
            await self._send(self._held.popleft())

    async def _send(self, event: events.Event) -> None:
        event, *rest = self._split(event)  # decided as it is routed: by the screen it reaches
        self._held.extendleft(reversed(rest))
        await self._dispatch(event)
        if not event.is_forwarded:
            return  # a priority binding ran it here and then: nothing is on its way
        target = self._app.focused or self._app.screen  # where Textual forwarded it
        if self._follow(target):
            self._again = target

    def _follow(self, target: MessagePump) -> bool:
        """Post a barrier behind what `target`'s queue holds; whether it went."""
        self._serial += 1
        serial = self._serial
        if not target.post_message(KeyBarrier(serial)):
            return False
        self._waiting = serial
        # given up for lost: the same barrier, straight to the app (the timer runs in a task of
        # its own; the app's queue keeps the handling on its loop)
        self._timer = self._app.set_timer(LOST_AFTER, lambda: self._app.post_message(KeyBarrier(serial)))
        return True
