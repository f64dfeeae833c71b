"""UTF-8 bytes: each character's code point, name, bytes, and the tokens its bytes fall in."""

from textual.widgets import DataTable

from ...core.hexview import CharRow
from ..render import cell, hex_bytes, visible

MAX_ROWS = 400


class BytesPanel(DataTable):
    def on_mount(self) -> None:
        self.cursor_type = "row"
        self.zebra_stripes = True
        self.add_columns("offset", "char", "code point", "name", "UTF-8", "token of each byte", "")

    def show(self, rows: list[CharRow], token_texts: list[str], source: str) -> None:
        self.clear()
        for r in rows[:MAX_ROWS]:
            owners = " ".join(f"#{t}" for t in r.tokens)
            distinct = sorted(set(r.tokens))
            detail = " ".join(f"{visible(token_texts[t])!r}" for t in distinct if 0 <= t < len(token_texts))
            self.add_row(
                str(r.offset), cell(visible(r.char), "bold"), r.codepoint, cell(r.name), hex_bytes(r.data),
                cell(f"{owners}  {detail}"), cell("✂ cut", "bold #ff7b7b") if r.cut else "",
            )
        more = f" (first {MAX_ROWS})" if len(rows) > MAX_ROWS else ""
        self.border_subtitle = f"{source}: {len(rows)} characters{more}"
