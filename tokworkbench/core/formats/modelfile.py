"""The tokworkbench model file: versioned JSON, written atomically, validated on load.

Merges are stored as [left_id, right_id] in rank order; the vocabulary is always rebuilt from
them (as minbpe does), so a file cannot disagree with itself about what a token is.
"""

import json
from pathlib import Path

from .atomic import write_atomic
from ..errors import ModelFileError, TokWorkbenchError
from ..text.normalize import NORMALIZERS
from ..text.pretokenize import pre_tokenizer
from ..bpe.tiebreak import TIE_BREAKS
from ..models.tokenizer import Tokenizer
from ..units import Units
from ..bpe.trainer import MergeRecord

FORMAT = "tokworkbench"
VERSION = 1


def is_our_model(doc) -> bool:
    return isinstance(doc, dict) and doc.get("format") == FORMAT


def to_json(tok: Tokenizer, corpus: dict | None = None) -> dict:
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
        "ids": list(tok.ids) if tok.ids is not None else None,
        "history": [
            {"step": r.step, "pair": list(r.pair), "id": r.new_id, "count": r.count,
             "replacements": r.replacements, "length": r.length}
            for r in tok.history
        ],
        "corpus": corpus or {},
    }


def save(tok: Tokenizer, path: str | Path, corpus: dict | None = None) -> None:
    data = json.dumps(to_json(tok, corpus), ensure_ascii=False, indent=1).encode("utf-8")
    try:
        write_atomic(path, data + b"\n")
    except OSError as exc:
        raise ModelFileError(f"cannot write {path}: {exc.strerror or exc}") from None


def load(path: str | Path) -> Tokenizer:
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise ModelFileError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        doc = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ModelFileError(f"{path}: not a model file (not valid JSON: {exc})") from None
    try:
        return from_json(doc)
    except ModelFileError as exc:
        raise ModelFileError(f"{path}: {exc}") from None


def from_json(doc) -> Tokenizer:
    if not is_our_model(doc):
        raise ModelFileError(f'not a tokworkbench model (expected "format": "{FORMAT}")')
    if doc.get("version") != VERSION:
        raise ModelFileError(f"model file version {doc.get('version')!r} is not supported (this tool reads {VERSION})")
    try:
        units = Units(_one_of(doc["units"], [u.value for u in Units], "units"))
        normalizer = _one_of(doc["normalizer"], NORMALIZERS, "normalizer")
        tie_break = _one_of(doc["tie_break"], TIE_BREAKS, "tie_break")
        pre = doc["pre_tokenizer"]
        try:
            pretok = pre_tokenizer(pre["name"], pre["pattern"]) if pre["pattern"] is not None else pre_tokenizer("none")
        except TokWorkbenchError as exc:
            raise ModelFileError(str(exc)) from None
        base = doc["base"]
        if not units.is_bytes:
            if not isinstance(base, list) or not all(isinstance(c, str) and len(c) == 1 for c in base):
                raise ModelFileError("char-unit model needs 'base' as a list of single characters")
            if len(set(base)) != len(base):
                raise ModelFileError("'base' repeats a character")
            base = tuple(base)
        else:
            base = None
        base_size = units.base_size(base)
        merges = []
        for rank, m in enumerate(doc["merges"]):
            limit = base_size + rank
            if not (isinstance(m, list) and len(m) == 2 and all(type(x) is int and 0 <= x < limit for x in m)):
                raise ModelFileError(f"merge {rank} is {m!r}; it must be two ids below {limit}")
            merges.append((m[0], m[1]))
        specials = doc["special_tokens"]
        first = base_size + len(merges)
        ids = doc.get("ids")
        if ids is not None:
            size = first + len(specials)
            if not (isinstance(ids, list) and len(ids) == size and all(type(i) is int and i >= 0 for i in ids)
                    and len(set(ids)) == size):
                raise ModelFileError(f"'ids' must list {size} distinct outside ids, one per token")
            ids = tuple(ids)
        expected = {s: (ids[first + i] if ids else first + i) for i, s in enumerate(specials)}
        if not isinstance(specials, dict) or specials != expected:
            raise ModelFileError("special token ids must follow the merges in order")
        history = tuple(
            MergeRecord(h["step"], tuple(h["pair"]), h["id"], h["count"], h["replacements"], h["length"])
            for h in doc.get("history", [])
        )
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ModelFileError(f"corrupt model file ({type(exc).__name__}: {exc})") from None
    return Tokenizer(units, normalizer, pretok, tie_break, base, tuple(merges), tuple(specials), history, ids)


def _one_of(value, allowed, what):
    if value not in allowed:
        raise ModelFileError(f"{what} {value!r} is not one of {', '.join(allowed)}")
    return value
