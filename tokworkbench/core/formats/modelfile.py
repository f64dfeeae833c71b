"""The tokworkbench model file: versioned JSON, written atomically, validated on load.

Merges are stored as [left_id, right_id] in rank order; the vocabulary is always rebuilt from
them (as minbpe does), so a file cannot disagree with itself about what a token is. Loading
checks every field and the length of every token (limits.py) before any token is built.
Special-token roles are recorded as {"bos": "<s>", …}, each naming a special token. A
`"model"` field names the kind; without it the file is BPE, and "fixed" is read by fixedfile.py.
"""

import json
from pathlib import Path

from tokworkbench.core.formats import unigramfile
from tokworkbench.core.formats.atomic import write_atomic
from tokworkbench.core.formats.limits import (MAX_TOKEN_BYTES, check_token_lengths, describe_json, is_count, is_text, parse_json,
                     read_model_file, read_pre_tokenizer)
from tokworkbench.core.errors import ModelFileError, TokWorkbenchError
from tokworkbench.core.text.normalize import NORMALIZERS
from tokworkbench.core.bpe.tiebreak import TIE_BREAKS
from tokworkbench.core.models.tokenizer import Tokenizer
from tokworkbench.core.models.roles import Roles
from tokworkbench.core.units import Units
from tokworkbench.core.bpe.trainer import MergeRecord

FORMAT = "tokworkbench"
VERSION = 1


def is_our_model(doc) -> bool:
    return isinstance(doc, dict) and doc.get("format") == FORMAT


def to_json(tok, corpus: dict | None = None) -> dict:
    if tok.kind == "fixed":
        from tokworkbench.core.formats import fixedfile

        return fixedfile.to_json(tok)
    return {
        "format": FORMAT,
        "version": VERSION,
        "units": tok.units.value,
        "normalizer": tok.normalizer,
        "pre_tokenizer": {"name": tok.pre_tokenizer.name, "pattern": tok.pre_tokenizer.pattern},
        "tie_break": tok.tie_break,
        "base": list(tok.base) if tok.base is not None else None,
        "merges": [list(p) for p in tok.merges],
        "special_tokens": tok.special_ids,
        "roles": tok.roles.to_dict(),
        "ids": list(tok.ids) if tok.ids is not None else None,
        "history": [
            {"step": r.step, "pair": list(r.pair), "id": r.new_id, "count": r.count,
             "replacements": r.replacements, "length": r.length}
            for r in tok.history
        ],
        "corpus": corpus or {},
    }


def save(tok, path: str | Path, corpus: dict | None = None) -> Path:
    """Write the model atomically (see atomic.py for what `path` may be); OutputError if not."""
    if tok.kind == "unigram":
        return write_atomic(path, unigramfile.save_text(tok, corpus))
    # the C encoder: indent= takes the pure-Python one (2x the memory and time at the end of a run)
    text = json.dumps(to_json(tok, corpus), ensure_ascii=False, separators=(",", ":"))
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError as exc:  # only through the API: the CLI and the loaders refuse these
        raise ModelFileError(f"cannot save the model: it holds a lone surrogate (U+{ord(text[exc.start]):04X}), "
                             "most likely in a special token; it has no UTF-8 form") from None
    return write_atomic(path, data + b"\n")


def load(path: str | Path, max_token_bytes: int = MAX_TOKEN_BYTES) -> Tokenizer:
    raw = read_model_file(path)
    try:
        doc = parse_json(raw)
        if not is_our_model(doc):
            raise ModelFileError(f'not a tokworkbench model (expected "format": "{FORMAT}", found {describe_json(doc)})'
                                 if not isinstance(doc, dict) else
                                 f'not a tokworkbench model (expected "format": "{FORMAT}")')
        return from_json(doc, max_token_bytes)
    except ModelFileError as exc:
        raise type(exc)(f"{path}: {exc}") from None


def from_json(doc, max_token_bytes: int = MAX_TOKEN_BYTES) -> Tokenizer:
    """A model from its parsed JSON; every field is checked, so a damaged or hostile file is a
    ModelFileError naming the field, never another exception."""
    if not is_our_model(doc):
        raise ModelFileError(f'not a tokworkbench model (expected "format": "{FORMAT}")')
    if unigramfile.is_unigram(doc):
        return unigramfile.from_json(doc, max_token_bytes)
    version = doc.get("version")
    if not (type(version) is int and version == VERSION):
        raise ModelFileError(f"model file version {version!r} is not supported (this tool reads {VERSION})")
    kind = doc.get("model", "bpe")
    if kind == "fixed":
        from tokworkbench.core.formats import fixedfile

        return fixedfile.from_json(doc)
    if kind != "bpe":
        raise ModelFileError(f"model kind {_short(kind)} is not one this tool reads (bpe, unigram, fixed)")
    for key in ("units", "normalizer", "tie_break", "pre_tokenizer", "merges", "special_tokens"):
        if key not in doc:
            raise ModelFileError(f"corrupt model file: no {key!r}")
    units = Units(_one_of(doc["units"], [u.value for u in Units], "units"))
    normalizer = _one_of(doc["normalizer"], NORMALIZERS, "normalizer")
    tie_break = _one_of(doc["tie_break"], TIE_BREAKS, "tie_break")
    pretok = read_pre_tokenizer(doc["pre_tokenizer"])
    base = _base(doc.get("base"), units)
    base_size = units.base_size(base)
    merges = _merges(doc["merges"], base_size)
    base_lengths = [1] * base_size if units.is_bytes else [len(c.encode("utf-8")) for c in base]
    check_token_lengths(base_lengths, merges, max_token_bytes)
    first = base_size + len(merges)
    specials = doc["special_tokens"]
    if not isinstance(specials, dict) or not all(is_text(s) and s for s in specials):
        raise ModelFileError("'special_tokens' must map non-empty strings to ids")
    ids = _ids(doc.get("ids"), first + len(specials))
    expected = {s: (ids[first + i] if ids else first + i) for i, s in enumerate(specials)}
    if specials != expected or not all(is_count(i) for i in specials.values()):
        raise ModelFileError("special token ids must follow the merges in order")
    history = _history(doc.get("history", []), base_size, len(merges))
    try:
        roles = Roles.of(doc.get("roles")).check(specials)
    except TokWorkbenchError as exc:
        raise ModelFileError(f"'roles': {exc}") from None
    return Tokenizer(units, normalizer, pretok, tie_break, base, tuple(merges), tuple(specials), history, ids, roles)


def _base(base, units: Units) -> tuple[str, ...] | None:
    if units.is_bytes:
        return None
    if not isinstance(base, list) or not all(isinstance(c, str) and len(c) == 1 for c in base):
        raise ModelFileError("char-unit model needs 'base' as a list of single characters")
    for i, c in enumerate(base):
        if not is_text(c):
            raise ModelFileError(f"'base' character {i} is a lone surrogate (U+{ord(c):04X}), not a character")
    if len(set(base)) != len(base):
        raise ModelFileError("'base' repeats a character")
    return tuple(base)


def _merges(merges, base_size: int) -> list[tuple[int, int]]:
    if not isinstance(merges, list):
        raise ModelFileError(f"'merges' must be a list of [left_id, right_id], not {describe_json(merges)}")
    out = []
    for rank, m in enumerate(merges):
        limit = base_size + rank
        if not (isinstance(m, list) and len(m) == 2 and all(is_count(x) and x < limit for x in m)):
            raise ModelFileError(f"merge {rank} is {_short(m)}; it must be two ids below {limit}")
        out.append((m[0], m[1]))
    return out


def _ids(ids, size: int) -> tuple[int, ...] | None:
    if ids is None:
        return None
    if not (isinstance(ids, list) and len(ids) == size and all(is_count(i) for i in ids) and len(set(ids)) == size):
        raise ModelFileError(f"'ids' must list {size} distinct outside ids, one per token")
    return tuple(ids)


_HISTORY_FIELDS = ("step", "id", "count", "replacements", "length")


def _history(history, base_size: int, n_merges: int) -> tuple[MergeRecord, ...]:
    """Training records: whole numbers where the views divide and format them."""
    if not isinstance(history, list) or len(history) > n_merges:
        raise ModelFileError(f"'history' must be a list of at most {n_merges} training records")
    out = []
    for k, h in enumerate(history):
        if not isinstance(h, dict) or not all(is_count(h.get(f)) for f in _HISTORY_FIELDS):
            raise ModelFileError(f"history record {k} must have whole numbers for {', '.join(_HISTORY_FIELDS)}")
        pair = h.get("pair")
        if not (isinstance(pair, list) and len(pair) == 2 and all(is_count(x) for x in pair)):
            raise ModelFileError(f"history record {k}: 'pair' must be two ids")
        if h["length"] < 1:
            raise ModelFileError(f"history record {k}: 'length' (tokens after the step) must be at least 1")
        out.append(MergeRecord(h["step"], tuple(pair), h["id"], h["count"], h["replacements"], h["length"]))
    return tuple(out)


def _short(value, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "…"


def _one_of(value, allowed, what):
    if not isinstance(value, str) or value not in allowed:
        raise ModelFileError(f"{what} {_short(value)} is not one of {', '.join(allowed)}")
    return value
