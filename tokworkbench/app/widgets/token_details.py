"""One line about the selected token, wherever it was selected (corpus, encode pane, vocabulary):
its id, text, bytes, what kind of token it is (a byte piece, a `##` continuation, whole chunk only,
special, control, or the merge that made it from which parents), and its count in the corpus;
m opens its merge tree."""

from rich.text import Text
from textual.reactive import var
from textual.widgets import Static

from tokworkbench.core.errors import TokWorkbenchError
from tokworkbench.core.inspection.escape import hex_bytes, quote
from tokworkbench.core.inspection.tokenkind import token_kind
from tokworkbench.core.inspection.vocab import TokenCounts, TokenInfo, token_info
from tokworkbench.core.session.snapshot import Snapshot


def describe_token(info: TokenInfo, counts: TokenCounts | None = None, steps: int = 0, kind: str = "") -> Text:
    """The details line's words; `counts` say how often it occurs (when counted for this model),
    `kind` what kind of token it is (inspection/tokenkind.py), where it is not a merge."""
    out = Text(no_wrap=True, overflow="ellipsis")
    out.append(f"id {info.id}", "bold")
    out.append("  ")
    out.append(quote(info.text), "bold")
    out.append(f"  {len(info.data)} byte{'s' if len(info.data) != 1 else ''}: ", "dim")
    out.append(hex_bytes(info.data) if len(info.data) <= 16 else hex_bytes(info.data[:16]) + " …")
    if info.step is None:
        out.append(f"  · {kind or ('special token' if info.special else 'base unit')}",
                   "italic" if info.special else "dim")
    else:
        left, right = info.parents
        lt, rt = info.parent_texts
        out.append(f"  · merge {info.step:,}: ", "dim")
        out.append(f"{quote(lt)} {left} + {quote(rt)} {right}")
    if info.count is not None and counts is not None:
        stale = " (before the latest merges)" if counts.steps != steps else ""
        out.append(f"  · {info.count:,}× in the corpus{stale}", "dim")
    return out


class TokenDetails(Static):
    DEFAULT_CSS = """
    TokenDetails {
        height: 1;
        padding: 0 1;
        background: $boost;
        display: none;
    }
    """

    snapshot: var[Snapshot | None] = var(None, always_update=True)
    selected_token: var[int | None] = var(None)
    """The token chosen last, in any view (an outside id)."""
    token_counts: var[TokenCounts | None] = var(None)

    def watch_snapshot(self) -> None:
        self._draw()

    def watch_selected_token(self) -> None:
        self._draw()

    def watch_token_counts(self) -> None:
        self._draw()

    def _draw(self) -> None:
        snap, tid = self.snapshot, self.selected_token
        self.display = snap is not None and tid is not None
        if not self.display:
            return
        counts = self.token_counts
        try:
            info = token_info(snap.model, tid, counts.counts if counts is not None else None)
        except TokWorkbenchError:  # undone past the merge that made it
            self.update(Text(f"id {tid} is no longer in the vocabulary", "dim"))
            return
        self.update(describe_token(info, counts, snap.steps, token_kind(snap.model, info)))
