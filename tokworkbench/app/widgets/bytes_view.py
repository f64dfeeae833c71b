"""UTF-8 bytes: each character's code point, name, bytes, and the tokens its bytes fall in."""

from ...core.inspection.hexview import CharRow
from ...core.inspection.escape import hex_bytes
from ..render import visible
from .rowsview import RowsView

MAX_ROWS = 400


class BytesPanel(RowsView):
    def __init__(self, **kwargs):
        super().__init__(
            [("offset", 7, "right"), ("char", 6, "left"), ("code point", 10, "left"), ("name", 36, "left"),
             ("UTF-8", 12, "left"), ("token of each byte", 60, "left"), ("", 6, "left")],
            **kwargs,
        )

    def show(self, rows: list[CharRow], token_texts: list[str], source: str) -> None:
        cells = []
        for r in rows[:MAX_ROWS]:
            owners = " ".join(f"#{t}" for t in r.tokens)
            detail = " ".join(repr(visible(token_texts[t])) for t in sorted(set(r.tokens)) if 0 <= t < len(token_texts))
            cells.append((
                str(r.offset), (visible(r.char), "bold"), r.codepoint, r.name, hex_bytes(r.data),
                f"{owners}  {detail}", ("✂ cut", "bold #ff7b7b") if r.cut else "",
            ))
        self.set_rows(cells, cursor=0)
        more = f" (first {MAX_ROWS})" if len(rows) > MAX_ROWS else ""
        self.border_subtitle = f"{source}: {len(rows)} characters{more}"

    def row_text(self, index: int) -> list[str]:
        return [c if isinstance(c, str) else c[0] for c in self.rows[index]]
