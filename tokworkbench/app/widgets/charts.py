"""What a learner reaches for while stepping: compression against steps, and how long the
vocabulary's tokens are."""

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.reactive import var
from textual.widget import Widget
from textual.widgets import Label, Sparkline, Static

from tokworkbench.app.kind_views import view_of
from tokworkbench.app.labels import plural
from tokworkbench.app.widgets.laidout import WhenLaidOut
from tokworkbench.core.session.snapshot import Snapshot
from tokworkbench.core.unigram.rows import RoundRow

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
    ChartsPanel #loss-plot {
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

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._laid_out = WhenLaidOut(self, self.on_show)

    def compose(self) -> ComposeResult:
        with Vertical(id="curve-box"):
            yield Label("", id="curve-title")
            yield Sparkline([], id="compression")
            yield LossPlot(id="loss-plot")
            yield Label("", id="curve-axis", classes="hint")
        yield Static("", id="lengths")

    def watch_snapshot(self, snap: Snapshot | None) -> None:
        if snap is None:
            return
        if not self.region.area:
            return self._laid_out.wait()  # drawn when its tab is shown and laid out
        self._draw(snap)

    def on_show(self) -> None:
        if self.snapshot is not None:
            self._draw(self.snapshot)

    inspected = False
    """Set by the screen with -m: a model read from a file, which no merge or round changes."""

    def _draw(self, snap: Snapshot) -> None:
        loss = view_of(snap.kind).chart == "Loss"
        self.query_one("#compression", Sparkline).display = not loss and not self.inspected
        self.query_one("#loss-plot", LossPlot).display = loss and not self.inspected
        if self.inspected:
            return self._draw_inspected(snap)
        if loss:
            return self._draw_rounds(snap)
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

    def _draw_inspected(self, snap: Snapshot) -> None:
        """No curve (issue 22 item 9: not a solid block asking for a merge that cannot be made):
        one line saying so, and the model's units/token on the corpus once it is counted."""
        unit = snap.units.plural
        line = "an inspected tokenizer has no training curve"
        if snap.total_tokens:
            line += f": {snap.compression:.3f} {unit}/token on the corpus ({snap.total_tokens:,} tokens)"
        self.query_one("#curve-title", Label).update(line)
        self.query_one("#curve-axis", Label).update("")
        self.query_one("#lengths", Static).update(_histogram(snap.token_lengths, unit))

    def _draw_rounds(self, snap: Snapshot) -> None:
        """Unigram: the corpus loss after each round (round 0 is the seed), as bars."""
        rounds = [r for r in snap.history if isinstance(r, RoundRow)]
        title = self.query_one("#curve-title", Label)
        self.query_one("#loss-plot", LossPlot).show([r.loss for r in rounds])
        if not rounds:
            title.update("corpus loss after each round: no rounds yet")
        else:
            first, last = rounds[0], rounds[-1]
            title.update(f"corpus loss by round: {first.loss:,.1f} at round {first.round} → {last.loss:,.1f} "
                         f"at round {last.round} (vocab {last.vocab_size:,})")
        self.query_one("#curve-axis", Label).update(
            f"round {rounds[0].round}{' ' * 6}…{' ' * 6}round {rounds[-1].round}" if rounds else "")
        self.query_one("#lengths", Static).update(_histogram(snap.token_lengths, snap.units.plural))


class LossPlot(Widget):
    """Bars of the corpus loss by round, as tall and wide as the widget is (drawn at its size)."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.values: list[float] = []

    def show(self, values: list[float]) -> None:
        if values != self.values:
            self.values = values
            self.refresh()

    def render(self) -> Text:
        width, height = max(1, self.size.width), max(1, self.size.height)
        return Text("\n".join(bar_plot(self.values, width, height)), "cyan")


BLOCKS = " ▁▂▃▄▅▆▇█"


def bar_plot(values: list[float], width: int, height: int) -> list[str]:
    """`values` as vertical bars, one to four cells wide each, `height` rows tall; the lowest
    value still gets a sliver, so every round shows. Too many values for the width keep every
    k-th one (and always the last)."""
    if not values:
        return []
    if len(values) > width:
        step = -(-len(values) // width)
        values = values[::-1][::step][::-1]  # thinned from the end: the newest round stays
    bar = max(1, min(4, width // len(values)))
    lo, hi = min(values), max(values)
    span = (hi - lo) or 1.0
    eighths = [1 + round((v - lo) / span * (height * 8 - 1)) for v in values]
    rows = []
    for level in range(height - 1, -1, -1):
        line = []
        for e in eighths:
            fill = max(0, min(8, e - level * 8))
            line.append(BLOCKS[fill] * bar)
        rows.append("".join(line).rstrip())
    return rows


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
