"""The keys line at the bottom: as many of the keys that can act now as fit, never cut mid-word.

Textual's footer lays its keys side by side and lets the screen's edge cut the last one ("s Sa"
at 80 columns, and in the lattice and batches modes at 160, where their pane's keys come first).
This line takes whole keys while they fit and, when some are left out, ends in the help key,
which lists them all.
"""

from dataclasses import dataclass

from rich.cells import cell_len
from rich.text import Text
from textual import events
from textual.screen import Screen
from textual.widget import Widget

HELP_ACTION = "help"


@dataclass(frozen=True)
class KeyItem:
    key: str  # as the terminal's parser names it: what a click simulates
    shown: str  # as the footer writes it
    label: str
    enabled: bool
    action: str


def fit(items: list[KeyItem], width: int) -> list[KeyItem]:
    """The items that fit in `width` cells, in order, each `shown label` with a space between;
    when some are left out, the help item takes the last place (its label then "more keys")."""
    def cells(item: KeyItem) -> int:
        return cell_len(item.shown) + 1 + cell_len(item.label)

    if sum(cells(i) for i in items) + len(items) - 1 <= width:
        return items
    helps = [i for i in items if i.action == HELP_ACTION]
    more = [KeyItem(h.key, h.shown, "more keys", h.enabled, h.action) for h in helps[:1]]
    room = width - sum(cells(m) + 1 for m in more)
    kept: list[KeyItem] = []
    for item in items:
        if item.action == HELP_ACTION:
            continue
        need = cells(item) + (1 if kept else 0)
        if need > room:
            break
        kept.append(item)
        room -= need
    return kept + more


class KeysFooter(Widget):
    """Redrawn when the screen's bindings change (focus, a key turned on or off) or its width."""

    DEFAULT_CSS = """
    KeysFooter {
        dock: bottom;
        height: 1;
        background: $footer-background;
    }
    """

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._items: list[KeyItem] = []
        self._spans: list[tuple[int, int, KeyItem]] = []  # cells each drawn item covers

    def on_mount(self) -> None:
        self.screen.bindings_updated_signal.subscribe(self, self.bindings_changed)
        self.bindings_changed(self.screen)

    def on_unmount(self) -> None:
        self.screen.bindings_updated_signal.unsubscribe(self)

    def bindings_changed(self, screen: Screen) -> None:
        if screen is not self.screen:
            return
        items, seen = [], set()
        for key, active in screen.active_bindings.items():
            binding = active.binding
            if not binding.show or binding.action in seen:
                continue  # one entry per action: n and space are one Merge
            seen.add(binding.action)
            items.append(KeyItem(key, self.app.get_key_display(binding), binding.description, active.enabled,
                                 binding.action))
        if items != self._items:
            self._items = items
            self.refresh()

    def render(self) -> Text:
        text, self._spans = Text(no_wrap=True, overflow="crop"), []
        for item in fit(self._items, self.size.width):
            if text:
                text.append(" ")
            start = text.cell_len
            text.append(item.shown, "bold reverse" if item.enabled else "dim reverse")
            text.append(" " + item.label, "" if item.enabled else "dim")
            self._spans.append((start, text.cell_len, item))
        return text

    def on_click(self, event: events.Click) -> None:
        for start, end, item in self._spans:
            if start <= event.x < end and item.enabled:
                self.app.simulate_key(item.key)
                return
