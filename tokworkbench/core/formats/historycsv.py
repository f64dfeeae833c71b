"""The merge history as CSV: one row a step, for a spreadsheet or a plotting script."""

import csv
import io
from collections.abc import Sequence
from pathlib import Path

from ..inspection.escape import hex_bytes, render_bytes
from .atomic import write_atomic

COLUMNS = ("step", "left", "right", "new_id", "token", "token_hex", "count", "replacements",
           "tokens_after", "units_per_token")


def history_csv(history: Sequence, token_bytes, initial_tokens: int) -> str:
    """`history` holds MergeRecords; `token_bytes(id)` gives a token's bytes; compression is
    counted from `initial_tokens` (the corpus length before any merge)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    for r in history:
        data = token_bytes(r.new_id)
        writer.writerow((r.step, r.pair[0], r.pair[1], r.new_id, render_bytes(data), hex_bytes(data), r.count,
                         r.replacements, r.length, f"{initial_tokens / r.length:.6f}" if r.length else ""))
    return out.getvalue()


def write_history_csv(path: str | Path, history: Sequence, token_bytes, initial_tokens: int) -> Path:
    path = Path(path)
    write_atomic(path, history_csv(history, token_bytes, initial_tokens).encode("utf-8"))
    return path
