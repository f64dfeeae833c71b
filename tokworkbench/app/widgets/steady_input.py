"""A text input that applies every key in the order it arrived, even in a burst.

Textual inserts a printable key in the focused input's own key handler, at once; an editing key
(backspace, delete, the arrows, enter) runs only after its key event has bubbled up to the app
and come back down as a binding. When keys arrive together, as they do over SSH, the letters
behind an editing key overtake it: "abcdefgh", eight backspaces and "xyz" sent at once left
"abc" instead of "xyz", and a typed path lost its last letter. Here the editing keys run in the
same handler as the letters, so their order is the order they were typed.

Keys behind an enter are a second case. Enter only posts a Submitted message, which the screen
answers later, after the input has already typed the keys queued behind the enter; if the answer
closes a dialog those keys are gone with it ("t", "1500", enter, "N" set the target but ran no
merges). On a screen that asks for it (`HOLDS_KEYS_AFTER_ENTER`, see dialogs/base.py) the input
holds every key that reaches it after an enter, until the screen has answered and says where the
held keys go (`release`).

A box on the main screen whose enter gives focus back to the screen (the pair, piece and vocab
filters) asks for the same with `hands_back=True`: "/ e x enter n n" used to leave the filter as
"exnn" and merge nothing. Its panel answers the enter with `hand_back(table)`; see that method and
`_settle` for how the holding ends.
"""

from textual import events
from textual.dom import NoScreen
from textual.widget import Widget
from textual.widgets import Input

from tokworkbench.app.keyorder import retype


def _editing_keys() -> dict[str, str]:
    keys = {}
    for binding in Input.BINDINGS:
        for key in binding.key.split(","):
            keys[key.strip()] = binding.action
    return keys


class SteadyInput(Input):
    EDITING_KEYS = _editing_keys()

    def __init__(self, *args, hands_back: bool = False, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.held: list[events.Key] | None = None
        """The keys that came after an enter, in order, while the screen decides; None when not holding."""
        self.hands_back = hands_back
        """This box's enter gives focus back to the screen: hold the keys behind it on any screen."""
        self.leaving = False
        """`hand_back` was asked for and waits its turn in the app's queue."""

    @property
    def holding(self) -> bool:
        return self.held is not None

    def post_message(self, message) -> bool:
        """Keys are held here, as they are handed to the input, not when it gets round to them: the
        app hands keys over in the order they arrived, so holding from this point keeps that order
        whatever is still waiting in the queue. The enter itself goes on to be taken."""
        if isinstance(message, events.Key):
            if self.held is not None:
                self.held.append(message)
                return True
            if self.EDITING_KEYS.get(message.key) == "submit" and self._holds_after_enter():
                posted = super().post_message(message)
                if posted:
                    self.held = []
                return posted
        return super().post_message(message)

    def _holds_after_enter(self) -> bool:
        if self.hands_back:
            return True
        try:
            return bool(getattr(self.screen, "HOLDS_KEYS_AFTER_ENTER", False))
        except NoScreen:  # not mounted: no screen to answer the enter
            return False

    def release(self) -> list[events.Key]:
        """Stop holding; the held keys, as new events (the old ones were already routed once)."""
        held, self.held = self.held or [], None
        return [events.Key(key.key, key.character) for key in held]

    def type_back(self) -> None:
        """The screen stays: the held keys are routed again as if typed now, in order, through the
        app, so a binding among them acts (tab moves on, ctrl+s applies) and the rest reach the box,
        which still has focus; an enter among them is taken and holds what follows it. Holding
        goes on until the app's queue gets here, so keys that arrive meanwhile stay behind them."""
        self.app.call_later(self._route_back)

    async def _route_back(self) -> None:
        await retype(self.app, self.release())

    async def action_submit(self) -> None:
        """A box that hands back also makes sure its holding ends even if nobody answers the enter:
        the check is queued on this box behind the Submitted message, so it runs after the box has
        passed Submitted on to its parent, and it asks the parent to settle after handling it."""
        await super().action_submit()
        if self.hands_back and self.holding:
            self.call_later(self._after_submitted)

    def _after_submitted(self) -> None:
        if self.parent is None or not self.parent.call_later(self._settle):
            self._settle()

    def _settle(self) -> None:
        """Runs on the parent once it has answered the enter (the panels answer it there and stop
        it). If it did not hand back, the enter left focus in the box: the held keys go back into
        it, as typed."""
        if self.holding and not self.leaving:
            self.type_back()

    def hand_back(self, target: Widget) -> None:
        """Give focus to `target` and route the held keys through the app, in order, as if typed now.

        This waits its turn in the app's queue, as a dialog's close does (dialogs/base.py): every key
        the app routes before then still goes to this box, which holds it. Then, in one app
        callback, focus moves and the held keys are routed (`App.on_event`: priority bindings, then
        the focused widget), so no key arriving later can overtake them. Held keys that open this
        box again ("/") are typed into it, and an enter among them holds what follows it anew.

        The holding of a box with `hands_back` therefore ends in every case: here, in the app's
        callback; or in `_settle`, once the parent has answered the enter without handing back (the
        keys go back into the box); or with the box, if it is removed first (its keys went with it)."""
        if not self.holding:
            target.focus()
            return
        self.leaving = True
        self.app.call_later(self._pass_on, target)

    async def _pass_on(self, target: Widget) -> None:
        self.leaving = False
        try:
            target.screen.set_focus(target)
        except NoScreen:  # the target went away meanwhile: the keys go to whatever has focus
            pass
        await self._route_back()

    async def _on_key(self, event: events.Key) -> None:
        action = self.EDITING_KEYS.get(event.key)
        if action is None:
            await super()._on_key(event)
            return
        event.stop()
        event.prevent_default()
        await self.run_action(action)
