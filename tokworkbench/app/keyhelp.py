"""The help dialog's sections (?): the workbench's keys for the kind on screen, then each pane's."""

from collections.abc import Callable

from textual.binding import Binding

from tokworkbench.app.actions import ACTIONS, key_names
from tokworkbench.app.widgets.batches import BatchesPanel
from tokworkbench.app.widgets.encode import EncodePanel
from tokworkbench.app.widgets.lattice import LatticePanel
from tokworkbench.app.widgets.merges import MergesPanel
from tokworkbench.app.widgets.rounds import RoundsPanel
from tokworkbench.app.widgets.vocab import VocabPanel


def help_sections(kind: str, display: Callable[[Binding], str]) -> list[tuple[str, list[tuple[str, str]]]]:
    """`display`: how the app writes a key (App.get_key_display)."""
    def keys(bindings) -> list[tuple[str, str]]:
        return [(key_names(b.key, display), b.tooltip or b.description) for b in bindings]

    mine = [a.binding() for a in ACTIONS if not (a.kinds is not None and kind not in a.kinds)]  # not the other kind's
    return [("Workbench", keys(mine)), ("Merge history", keys(MergesPanel.BINDINGS)),
            ("Encode / decode (while its boxes have focus) and vocabulary", keys(EncodePanel.BINDINGS + VocabPanel.BINDINGS)),
            ("Batches (b gives them the keys)", keys(BatchesPanel.BINDINGS)),
            ("Unigram rounds", keys(RoundsPanel.BINDINGS)), ("Lattice", keys(LatticePanel.BINDINGS)),
            ("Everywhere", [("tab / shift+tab", "move between panes"), ("ctrl+p", "command palette"),
                            ("escape", "close a dialog; clear the pair filter")])]
