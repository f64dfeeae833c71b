"""Escape typed with the key behind it in one burst, told apart from alt+KEY.

A terminal sends alt+n as escape then n, so when escape and n arrive together (over SSH, or typed
fast) Textual's parser reads the two as one alt+n. Nothing in the workbench binds an alt+letter,
so such a key went to the box with focus as a plain "n", or to nothing: in a dialog, escape n left
the dialog open and the n was lost; on the main screen, escape n during a run neither cancelled it
nor stepped. Where nothing on the screen a key reaches binds the alt+KEY, it is the two keys the
user typed: escape, then KEY, routed after escape has run its course (the key line,
app/keyorder.py), so it goes wherever it would have gone once a dialog had closed.

Only alt+ a letter or digit can be told: for other characters (space, ?, /, enter, tab) the parser
drops the escape itself and gives the plain key, so there is nothing left here to split.
"""

from textual import events
from textual.app import App


def escape_then_key(app: App, event: events.Event) -> list[events.Event]:
    """The keys `event` stands for on the screen now on top: itself, or escape and the plain key."""
    if not isinstance(event, events.Key) or not event.key.startswith("alt+"):
        return [event]
    character = event.character
    if character is None or len(character) != 1 or not character.isalnum():
        return [event]
    if event.key in app.screen.active_bindings:
        return [event]
    return [events.Key("escape", "\x1b"), events.Key(character, character)]
