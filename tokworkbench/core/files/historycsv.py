"""The merge history as CSV: one row a step, for a spreadsheet or a plotting script."""

import csv
import io
from collections.abc import Sequence
from pathlib import Path

from tokworkbench.core.files.atomic import write_atomic
from tokworkbench.core.inspection.escape import hex_bytes, render_bytes

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


ROUND_COLUMNS = ("round", "vocab_size", "loss", "tokens_after", "units_per_token", "removed")


def rounds_csv(rounds: Sequence, initial_tokens: int) -> str:
    """A Unigram history: `rounds` holds RoundRows, round 0 (the seed) first; `removed` lists
    the pieces a round removed, separated by spaces (▁ stands for a space in them anyway)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(ROUND_COLUMNS)
    for r in rounds:
        writer.writerow((r.round, r.vocab_size, repr(r.loss), r.tokens,
                         f"{initial_tokens / r.tokens:.6f}" if r.tokens and initial_tokens else "", " ".join(r.removed)))
    return out.getvalue()


def write_rounds_csv(path: str | Path, rounds: Sequence, initial_tokens: int) -> Path:
    path = Path(path)
    write_atomic(path, rounds_csv(rounds, initial_tokens).encode("utf-8"))
    return path
