"""A SentencePiece BPE model as HF `tokenizer.json`, in the form transformers' LlamaConverter writes.

SentencePiece merges the adjacent pair whose joined text is the highest-scoring piece; HF merges
the pair listed first. The converter's list gives every split of each piece into two pieces, best
score first (longer left part first among equal scores), so the two agree where no two pieces
share a score and every piece's parts are pieces: both are refused otherwise, naming a piece. Only
NORMAL pieces are merged into (SentencePiece never makes a control or byte piece from text), so
only their splits are listed; byte pieces are HF's byte fallback, the unknown piece its unk_token.

The normalizer is the model's own (its charsmap and whitespace rule as HF steps, where HF can
apply them exactly: `SpNormalizer.hf_difference`), then the dummy ▁ in front and ▁ for each
space. SentencePiece adds the dummy prefix to any text that is not empty, before it maps it,
when it keeps extra whitespace, and to what is left when it collapses it; the steps are ordered
to do the same.
"""

import heapq
import json
from pathlib import Path

from tokworkbench.core.errors import ExportError
from tokworkbench.core.files.atomic import write_atomic
from tokworkbench.core.files.limits import short
from tokworkbench.core.formats.hf_common import padding_of, post_processor_of
from tokworkbench.core.spbpe.model import CONTROL, NORMAL, UNKNOWN, SpBpeModel, byte_piece
from tokworkbench.core.text.spnormalize import META

_PREPEND = {"type": "Prepend", "prepend": META}
_SPACES = {"type": "Replace", "pattern": {"String": " "}, "content": META}


def merges_of(model: SpBpeModel, only=None) -> list[tuple[str, str]]:
    """transformers' `generate_merges` over the NORMAL pieces: each piece's splits into two
    pieces (ordered by the parts' ids), then all of them by score, best first, a longer left
    part first, the order so far kept among equals. `only`: just the merges making those pieces,
    in the same relative order (the sort is stable)."""
    ids = {p: i for i, (p, t) in enumerate(zip(model.pieces, model.types)) if t == NORMAL}
    found = []
    for piece, score, kind in zip(model.pieces, model.scores, model.types):
        if kind != NORMAL or (only is not None and piece not in only):
            continue
        local = [(piece[:k], piece[k:], score) for k in range(1, len(piece)) if piece[:k] in ids and piece[k:] in ids]
        found += sorted(local, key=lambda m: (ids[m[0]], ids[m[1]]))
    found.sort(key=lambda m: (m[2], len(m[0]), len(m[1])), reverse=True)
    return [(left, right) for left, right, _ in found]


def _orphan(piece: str, normal: dict) -> tuple[str, str] | None:
    """A split SentencePiece can merge and HF cannot: a character that is no piece, beside a
    piece or another character."""
    if len(piece) < 2:
        return None
    first, rest, head, last = piece[0], piece[1:], piece[:-1], piece[-1]
    if first not in normal and (rest in normal or len(rest) == 1):
        return first, rest
    if last not in normal and (head in normal or len(head) == 1):
        return head, last
    return None


def check_hf(model: SpBpeModel) -> list[str]:
    """Raise ExportError for what HF would encode otherwise; notes for what it changes harmlessly."""
    if model.user_defined:
        raise ExportError(f"the piece {short(model.user_defined[0])} is a SentencePiece user-defined piece; HF "
                          "matches added tokens before it normalizes, so the dummy ▁ and the ids would differ")
    why = model.text_normalizer.hf_difference()
    if why is not None:
        raise ExportError(f"{why}; HF's ids would differ (export it to sentencepiece)")
    if model.byte_fallback:
        missing = [b for b in range(256) if byte_piece(b) not in model.pieces]
        if missing:
            raise ExportError(f"this model falls back to bytes but has no piece {byte_piece(missing[0])}: "
                              "SentencePiece gives that byte the unknown id, HF the whole character")
    normal = {p: s for p, s, t in zip(model.pieces, model.scores, model.types) if t == NORMAL}
    by_score: dict[float, list[str]] = {}
    for piece, score in normal.items():
        orphan = _orphan(piece, normal)
        if orphan is not None:
            raise ExportError(f"the piece {short(piece)} joins {short(orphan[0])} and {short(orphan[1])}, which is no "
                              "piece: SentencePiece merges a character it has no piece for, HF's merges cannot")
        if any(piece[:k] in normal and piece[k:] in normal for k in range(1, len(piece))):
            by_score.setdefault(score, []).append(piece)
    for score, tied in by_score.items():
        if len(tied) > 1:
            _check_tie(model, normal, by_score, score, tied)
    notes = []
    if model.roles.bos or model.roles.eos:
        notes.append("encode(add_special_tokens=True) adds " +
                     " and ".join(f"{r.upper()} {t}" for r, t in model.roles.items() if r in ("bos", "eos")))
    return notes


RUNS_CHECKED = 16  # runs of a tied character are compared up to this many times its longest piece


def _check_tie(model: SpBpeModel, normal: dict, mergeable: dict, score: float, tied: list[str]) -> None:
    """Pieces that share a score merge leftmost first in SentencePiece and in list order in HF.
    Accepted is the one case real models have (Llama 2, Mistral: runs of ▁ at -1e9): every tied
    piece is a run of one character c, every mergeable piece holding cc is such a run, and the
    tie scores below every other mergeable piece holding c. Then run pieces never join other
    symbols and the others are all joined before any tied merge, so each run of c is segmented
    on its own, by its length alone: the two rules are compared on runs up to `RUNS_CHECKED`
    times the longest run piece."""
    c = tied[0][0]
    why = f"the pieces {short(tied[0])} and {short(tied[1])} share the score {score}: SentencePiece merges the " \
          "leftmost of them first, HF the one its merges list first"
    runs = {p for p in normal if p == c * len(p)}
    if not all(p in runs for p in tied):
        raise ExportError(why)
    for other_score, pieces in mergeable.items():
        for p in pieces:
            if p not in runs and (c + c in p or (c in p and other_score <= score)):
                raise ExportError(why)
    order = {pair: rank for rank, pair in enumerate(merges_of(model, runs))}
    longest = max(len(p) for p in runs)
    for n in range(2, RUNS_CHECKED * longest + 1):
        ours = [len(s) for s in model.merge_symbols(c * n)]
        if ours != _hf_run(n, c, order):
            raise ExportError(f"{why}; in a run of {n} {short(c)} the two rules segment otherwise")


def _hf_run(n: int, c: str, order: dict) -> list[int]:
    """HF's `Word::merge_all` on n symbols c: the entry of lowest rank first, then the leftmost;
    an entry is skipped unless the pair now standing there is listed and makes the same token
    (HF checks the new id, not the rank). Lengths of the result."""
    sizes, nxt, prev = [1] * n, [*range(1, n), -1], list(range(-1, n - 1))
    queue = [(order[(c, c)], i, 2) for i in range(n - 1)] if (c, c) in order else []
    heapq.heapify(queue)
    while queue:
        _, pos, made = heapq.heappop(queue)
        right = nxt[pos]
        if not sizes[pos] or right < 0 or sizes[pos] + sizes[right] != made \
                or (c * sizes[pos], c * sizes[right]) not in order:
            continue
        sizes[pos] = made
        sizes[right] = 0
        nxt[pos] = nxt[right]
        if nxt[pos] >= 0:
            prev[nxt[pos]] = pos
        for left in (prev[pos], pos):
            if left >= 0 and nxt[left] >= 0:
                pair = (c * sizes[left], c * sizes[nxt[left]])
                if pair in order:
                    heapq.heappush(queue, (order[pair], left, sizes[left] + sizes[nxt[left]]))
    return [k for k in sizes if k]


def _normalizer(model: SpBpeModel) -> dict | None:
    norm = model.text_normalizer
    own = norm.to_hf()["normalizers"]
    if norm.remove_extra_whitespaces:
        own = own[:-1]  # its last step is a space before a leading ▁, for the Metaspace split; none here
        steps = own + ([_PREPEND] if model.add_dummy_prefix else []) + [_SPACES]
    else:
        steps = ([_PREPEND] if model.add_dummy_prefix else []) + own + [_SPACES]
    return {"type": "Sequence", "normalizers": steps}


def _added(model: SpBpeModel) -> list[dict]:
    return [{"id": i, "content": p, "single_word": False, "lstrip": False, "rstrip": False, "normalized": False,
             "special": True} for i, (p, t) in enumerate(zip(model.pieces, model.types)) if t in (UNKNOWN, CONTROL)]


def to_hf(model: SpBpeModel) -> dict:
    decoders = [{"type": "Replace", "pattern": {"String": META}, "content": " "}, {"type": "ByteFallback"},
                {"type": "Fuse"}]
    if model.add_dummy_prefix:
        decoders.append({"type": "Strip", "content": " ", "start": 1, "stop": 0})
    return {
        "version": "1.0",
        "truncation": None,
        "padding": padding_of(model),
        "added_tokens": _added(model),
        "normalizer": _normalizer(model),
        "pre_tokenizer": None,
        "post_processor": post_processor_of(model),
        "decoder": {"type": "Sequence", "decoders": decoders},
        "model": {"type": "BPE", "dropout": None, "unk_token": model.pieces[model.unk_id],
                  "continuing_subword_prefix": None, "end_of_word_suffix": None, "fuse_unk": True,
                  "byte_fallback": model.byte_fallback, "ignore_merges": False,
                  "vocab": {p: i for i, p in enumerate(model.pieces)},
                  "merges": [list(m) for m in merges_of(model)]},
    }


def write_hf(model: SpBpeModel, out: Path) -> list[str]:
    notes = check_hf(model)
    write_atomic(out, json.dumps(to_hf(model), ensure_ascii=False, indent=1).encode("utf-8"))
    return notes + [f"wrote {out}"]

