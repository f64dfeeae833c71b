"""What a learner reaches for while stepping: compression against steps, and how long the
vocabulary's tokens are."""

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.reactive import var
from textual.widgets import Label, Sparkline, Static

from ...core.snapshot import Snapshot
from ..labels import plural

BAR = 28
LONGEST = 24  # lengths past this share one row


class ChartsPanel(Horizontal):
    DEFAULT_CSS = """
    ChartsPanel {
        height: 1fr;
    }
    ChartsPanel #curve-box {
        width: 2fr;
        padding: 0 1;
    }
    ChartsPanel #compression {
        height: 1fr;
        min-height: 2;
    }
    ChartsPanel #lengths {
        width: 1fr;
        padding: 0 1;
        overflow-y: auto;
    }
    """

    snapshot: var[Snapshot | None] = var(None, always_update=True)
    """The session as the core last reported it: its compression curve and token lengths."""

    def compose(self) -> ComposeResult:
        with Vertical(id="curve-box"):
            yield Label("", id="curve-title")
            yield Sparkline([], id="compression")
            yield Label("", id="curve-axis", classes="hint")
        yield Static("", id="lengths")

    def watch_snapshot(self, snap: Snapshot | None) -> None:
        if snap is None or not self.region.area:
            return  # drawn when its tab is shown
        self._draw(snap)

    def on_show(self) -> None:
        if self.snapshot is not None:
            self._draw(self.snapshot)

    def _draw(self, snap: Snapshot) -> None:
        unit = snap.units.plural
        curve = snap.curve
        title = self.query_one("#curve-title", Label)
        if curve:
            title.update(f"{unit}/token after each merge: 1.000 → {curve[-1]:.3f} over {plural(snap.steps, 'merge')}")
        else:
            title.update(f"{unit}/token after each merge: make a merge to start the curve")
        self.query_one("#compression", Sparkline).data = curve or [1.0]
        self.query_one("#curve-axis", Label).update(f"step 1{' ' * 6}…{' ' * 6}step {snap.steps:,}" if curve else "")
        self.query_one("#lengths", Static).update(_histogram(snap.token_lengths, unit))


def _histogram(counts: list[int], unit: str) -> Text:
    rows = list(enumerate(counts))[1:]
    if len(rows) > LONGEST:
        rows = rows[: LONGEST - 1] + [(LONGEST, sum(n for _, n in rows[LONGEST - 1 :]))]
    top = max((n for _, n in rows), default=0) or 1
    out = Text(f"vocabulary by token length ({unit})\n", style="bold")
    for length, n in rows:
        label = f"{length}+" if length == LONGEST and len(counts) > LONGEST + 1 else str(length)
        out.append(f"{label:>4} ")
        out.append("█" * round(BAR * n / top), "cyan")
        out.append(f" {n:,}\n", "dim")
    return out
