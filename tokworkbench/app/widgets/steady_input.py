"""A text input that applies every key in the order it arrived, even in a burst.

Textual inserts a printable key in the focused input's own key handler, at once; an editing key
(backspace, delete, the arrows, enter) runs only after its key event has bubbled up to the app
and come back down as a binding. When keys arrive together, as they do over SSH, the letters
behind an editing key overtake it: "abcdefgh", eight backspaces and "xyz" sent at once left
"abc" instead of "xyz", and a typed path lost its last letter. Here the editing keys run in the
same handler as the letters, so their order is the order they were typed.
"""

from textual import events
from textual.widgets import Input


def _editing_keys() -> dict[str, str]:
    keys = {}
    for binding in Input.BINDINGS:
        for key in binding.key.split(","):
            keys[key.strip()] = binding.action
    return keys


class SteadyInput(Input):
    EDITING_KEYS = _editing_keys()

    async def _on_key(self, event: events.Key) -> None:
        action = self.EDITING_KEYS.get(event.key)
        if action is None:
            await super()._on_key(event)
            return
        event.stop()
        event.prevent_default()
        await self.run_action(action)
