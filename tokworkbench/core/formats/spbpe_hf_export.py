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


def merges_of(model: SpBpeModel) -> list[tuple[str, str]]:
    """transformers' `generate_merges` over the NORMAL pieces: each piece's splits into two
    pieces (ordered by the parts' ids), then all of them by score, best first, a longer left
    part first, the order so far kept among equals."""
    ids = {p: i for i, (p, t) in enumerate(zip(model.pieces, model.types)) if t == NORMAL}
    found = []
    for piece, score, kind in zip(model.pieces, model.scores, model.types):
        if kind != NORMAL:
            continue
        local = [(piece[:k], piece[k:], score) for k in range(1, len(piece)) if piece[:k] in ids and piece[k:] in ids]
        found += sorted(local, key=lambda m: (ids[m[0]], ids[m[1]]))
    found.sort(key=lambda m: (m[2], len(m[0]), len(m[1])), reverse=True)
    return [(left, right) for left, right, _ in found]


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
    by_score: dict[float, str] = {}
    for piece, score in normal.items():
        splits = [(piece[:k], piece[k:]) for k in range(1, len(piece))]
        if not any(a in normal and b in normal for a, b in splits):
            continue
        orphan = next(((a, b) for a, b in splits if (a in normal or len(a) == 1) and (b in normal or len(b) == 1)
                       and not (a in normal and b in normal)), None)
        if orphan is not None:
            raise ExportError(f"the piece {short(piece)} joins {short(orphan[0])} and {short(orphan[1])}, which is no "
                              "piece: SentencePiece merges a character it has no piece for, HF's merges cannot")
        other = by_score.setdefault(score, piece)
        if other != piece:
            raise ExportError(f"the pieces {short(other)} and {short(piece)} share the score {score}: SentencePiece "
                              "merges the leftmost of them first, HF the one its merges list first")
    notes = []
    if model.roles.bos or model.roles.eos:
        notes.append("encode(add_special_tokens=True) adds " +
                     " and ".join(f"{r.upper()} {t}" for r, t in model.roles.items() if r in ("bos", "eos")))
    return notes


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

