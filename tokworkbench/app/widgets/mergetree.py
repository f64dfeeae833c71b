"""The merge tree of the selected token, in a dialog (m): core/inspection/mergetree.py's drawing,
fitted to the box's width, scrolled with the arrows; escape, q or m closes it."""

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Static

from tokworkbench.app.dialogs.base import Dialog
from tokworkbench.core.inspection.mergetree import TokenTree, describe_tree, merge_tree, step_counts
from tokworkbench.core.models.protocol import MergeRanked, Model

BOX_WIDTH = 100  # columns at most; a narrower screen gets a narrower box


def tree_width(screen_width: int) -> int:
    """The drawing's columns inside the box: its border (2), padding (4) and scrollbar (2) off."""
    return max(30, min(BOX_WIDTH, screen_width) - 8)


def tree_for(model: Model, tid: int, history, trained: bool, running: bool) -> tuple[TokenTree, str]:
    """The token's tree, with the pair counts of a training `history` (MergeRecords) when the
    session trains and no run holds the learner; and words for where its numbers come from."""
    if not isinstance(model, MergeRanked):
        return merge_tree(model, tid), "no merges in this model"
    if not trained:
        return merge_tree(model, tid), "a loaded model: merge numbers, no counts (no training history)"
    if running:
        return merge_tree(model, tid), "counts show once the run stops"
    return merge_tree(model, tid, step_counts(history)), "× the pair's count when it was merged"


class MergeTreeDialog(Dialog):
    DEFAULT_CSS = f"""
    MergeTreeDialog #tree-box {{
        width: {BOX_WIDTH};
        max-width: 100%;
        height: auto;
        max-height: 90%;
        border: thick $accent;
        background: $surface;
        padding: 0 2;
    }}
    MergeTreeDialog #tree-hint {{
        color: $text-muted;
    }}
    """
    BINDINGS = [Binding("escape,q,m", "dismiss", "Close")]

    def __init__(self, tree: TokenTree, source: str):
        super().__init__()
        self.token_tree, self.source = tree, source  # source: where the counts come from, or why there are none

    def compose(self) -> ComposeResult:
        lines = describe_tree(self.token_tree, tree_width(self.app.size.width))
        with VerticalScroll(id="tree-box"):
            yield Static(Text(f"Merge tree · {self.source} · escape closes", "dim"), id="tree-hint")
            yield Static(Text("\n".join(lines), no_wrap=True, overflow="crop"), id="tree-lines")

    def on_mount(self) -> None:
        self.query_one("#tree-box").focus()
