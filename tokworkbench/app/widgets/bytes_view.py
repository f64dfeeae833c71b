"""UTF-8 bytes: each character's code point, name, bytes, and the tokens its bytes fall in."""

from rich.text import Text
from textual.reactive import var

from tokworkbench.app.widgets.laidout import WhenLaidOut
from tokworkbench.app.widgets.rowsview import RowsView
from tokworkbench.core.inspection.escape import hex_bytes, visible
from tokworkbench.core.inspection.hexview import char_rows
from tokworkbench.core.inspection.roundtrip import round_trip
from tokworkbench.core.session.snapshot import Snapshot, selected_line

MAX_ROWS = 400


class BytesPanel(RowsView):
    """Shows the encode input's bytes when there is one, else the selected pair's line of the
    corpus. Rebuilt only while it is on screen (its tab is shown)."""

    snapshot: var[Snapshot | None] = var(None, always_update=True)
    """The session as the core last reported it."""
    selected_pair: var[tuple[int, int] | None] = var(None)
    """The pair chosen in the pair table: its first occurrence is the line shown."""
    encode_text: var[str] = var("")
    """What is typed in the encode box: shown instead of the corpus when not empty."""

    def __init__(self, **kwargs):
        super().__init__(
            [("offset", 7, "right"), ("char", 6, "left"), ("code point", 10, "left"), ("name", 36, "left"),
             ("UTF-8", 12, "left"), ("token of each byte", 60, "left"), ("", 6, "left")],
            **kwargs,
        )
        self._stale = True
        self._laid_out = WhenLaidOut(self, self.on_show)

    def watch_snapshot(self) -> None:
        self._changed()

    def watch_selected_pair(self) -> None:
        self._changed()

    def watch_encode_text(self) -> None:
        self._changed()

    def on_show(self) -> None:
        if self._stale:
            self._rebuild()

    def _changed(self) -> None:
        self._stale = True
        if self.region.area:  # on screen now
            self._rebuild()
        else:
            self._laid_out.wait()

    def _rebuild(self) -> None:
        snap = self.snapshot
        if snap is None:
            return
        self._stale = False
        model = snap.model
        rt = round_trip(model, self.encode_text) if self.encode_text else None
        if rt is not None and rt.error is None:
            text, ids, source = rt.normalized, rt.ids, "encode input"
        else:
            text, ids, source = selected_line(snap, self.selected_pair)
        rows = char_rows(text, [len(model.token_bytes(i)) for i in ids])
        texts = [model.token_text(i) for i in ids]
        cells = []
        for r in rows[:MAX_ROWS]:
            owners = " ".join(f"#{t}" for t in r.tokens)
            detail = "  ".join(visible(texts[t]) for t in sorted(set(r.tokens)) if 0 <= t < len(texts))
            cells.append((
                str(r.offset), (visible(r.char), "bold"), r.codepoint, r.name, hex_bytes(r.data),
                f"{owners}  {detail}", ("✂ cut", "bold #ff7b7b") if r.cut else "",
            ))
        self.set_rows(cells, cursor=0)
        more = f" (first {MAX_ROWS})" if len(rows) > MAX_ROWS else ""
        self.border_subtitle = Text(f"{source}: {len(rows)} characters{more}")

    def row_text(self, index: int) -> list[str]:
        return [c if isinstance(c, str) else c[0] for c in self.rows[index]]
