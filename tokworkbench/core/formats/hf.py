"""Hugging Face `tokenizer.json`: byte-level or char-level BPE, both ways.

HF's regex engine (Oniguruma) reads `{n,m}+` as "{n,m} repeated", not as a possessive interval,
so such quantifiers are written as plain `{n,m}`, which matches the same way in these patterns
(tests check it against `tokenizers`). HF numbers its vocabulary its own way; an imported model
keeps those ids through an id map.
"""

import json
from pathlib import Path

import regex

from ..bytelevel import bytes_to_unicode
from ..errors import ForeignModelError
from ..models.tokenizer import UNK, Tokenizer
from ..text.pretokenize import from_pattern
from .atomic import write_atomic

HF_POSSESSIVE_INTERVAL = regex.compile(r"(?<!\\)(\{\d+(?:,\d*)?\})\+")
HF_BYTELEVEL_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""


def hf_pattern(pattern: str) -> str:
    return HF_POSSESSIVE_INTERVAL.sub(r"\1", pattern)


def is_hf_tokenizer(doc) -> bool:
    return isinstance(doc, dict) and isinstance(doc.get("model"), dict)


# -- import ----------------------------------------------------------------------------------
def from_hf(doc: dict) -> Tokenizer:
    model = doc["model"]
    if model.get("type") != "BPE":
        raise ForeignModelError(f"only BPE models are supported, not {model.get('type')!r}")
    for key in ("continuing_subword_prefix", "end_of_word_suffix"):
        if model.get(key):
            raise ForeignModelError(f"BPE with {key} is not supported (byte-level or char-level BPE is)")
    if model.get("dropout"):
        raise ForeignModelError("BPE dropout is random; such a tokenizer cannot be reproduced exactly")
    normalizer = _normalizer(doc.get("normalizer"))
    pattern, byte_level = _pre_tokenizer(doc.get("pre_tokenizer"))
    vocab: dict[str, int] = model["vocab"]
    pairs = [tuple(m.split(" ", 1)) if isinstance(m, str) else tuple(m) for m in model["merges"]]
    added = {t["content"]: t["id"] for t in doc.get("added_tokens", [])}
    specials = sorted(added, key=added.get)
    if byte_level:
        to_char = bytes_to_unicode()
        base_names = [to_char[b] for b in range(256)]
        missing = [n for n in base_names if n not in vocab]
        if missing:
            raise ForeignModelError(f"byte-level vocabulary lacks {len(missing)} of the 256 byte symbols")
        units, base = "byte", None
    else:
        merged = {a + b for a, b in pairs}
        base_names = sorted(n for n in vocab if n not in merged and n not in added and len(n) == 1)
        units, base = "char", tuple(base_names)
    inside = {n: i for i, n in enumerate(base_names)}
    merges = []
    for a, b in pairs:
        if a not in inside or b not in inside:
            raise ForeignModelError(f"merge {a!r} + {b!r} uses a token that no earlier merge made")
        if a + b in inside:
            raise ForeignModelError(
                f"merge {a!r} + {b!r} makes a token that already exists; this tool keeps one id per string here")
        merges.append((inside[a], inside[b]))
        inside[a + b] = len(inside)
    leftovers = [n for n in vocab if n not in inside and n not in added]
    if leftovers:
        raise ForeignModelError(
            f"{len(leftovers)} vocabulary entries are neither base symbols nor merges (e.g. {leftovers[0]!r})")
    names = list(inside) + specials
    ids = tuple(vocab[n] if n in vocab else added[n] for n in names)
    pre = from_pattern(pattern, also_matches=hf_pattern)
    return Tokenizer(units, normalizer, pre, "first", base, tuple(merges), tuple(specials), (), ids)


def _normalizer(spec) -> str:
    if spec is None:
        return "none"
    kind = spec.get("type")
    if kind in ("NFC", "NFKC"):
        return kind.lower()
    if kind == "Sequence" and not spec.get("normalizers"):
        return "none"
    raise ForeignModelError(f"normalizer {kind!r} is not supported (none, NFC and NFKC are)")


def _pre_tokenizer(spec) -> tuple[str | None, bool]:
    """(split pattern or None, byte-level?)"""
    if spec is None:
        return None, False
    steps = spec["pretokenizers"] if spec.get("type") == "Sequence" else [spec]
    pattern, byte_level = None, False
    for step in steps:
        kind = step.get("type")
        if kind == "Split":
            if step.get("behavior") != "Isolated" or step.get("invert"):
                raise ForeignModelError("only Split with behavior Isolated is supported")
            pat = step.get("pattern", {})
            pattern = pat.get("Regex") if "Regex" in pat else regex.escape(pat.get("String", ""))
        elif kind == "ByteLevel":
            byte_level = True
            if step.get("add_prefix_space"):
                raise ForeignModelError("ByteLevel with add_prefix_space changes the text; not supported")
            if step.get("use_regex", True):
                if pattern is not None:
                    raise ForeignModelError("two split patterns (Split and ByteLevel's own) are not supported")
                pattern = HF_BYTELEVEL_PATTERN
        else:
            raise ForeignModelError(f"pre-tokenizer {kind!r} is not supported (Split, ByteLevel are)")
    return pattern, byte_level


# -- export ----------------------------------------------------------------------------------
def hf_notes(tok: Tokenizer) -> list[str]:
    if not tok.units.is_bytes and UNK not in tok.special_tokens:
        return [f"added {UNK} as id {tok.vocab_size} for characters outside the vocabulary"]
    return []


def _added(content: str, tid: int) -> dict:
    return {"id": tid, "content": content, "single_word": False, "lstrip": False, "rstrip": False,
            "normalized": False, "special": True}


def to_hf(tok: Tokenizer) -> dict:
    ids = list(tok.ids) if tok.ids is not None else list(range(tok.vocab_size))
    if tok.units.is_bytes:
        to_char = bytes_to_unicode()
        names = ["".join(to_char[b] for b in t) for t in tok.ranked_tokens]
    else:
        names = list(tok.ranked_tokens)
    vocab = {name: ids[i] for i, name in enumerate(names)}
    added = []
    for s, sid in tok.special_ids.items():
        vocab[s] = sid
        added.append(_added(s, sid))
    unk = None
    if not tok.units.is_bytes:
        unk = UNK
        if UNK not in vocab:
            uid = max(ids) + 1
            vocab[UNK] = uid
            added.append(_added(UNK, uid))
    pretoks = []
    if tok.pre_tokenizer.pattern is not None:
        pretoks.append({"type": "Split", "pattern": {"Regex": hf_pattern(tok.pre_tokenizer.pattern)},
                        "behavior": "Isolated", "invert": False})
    if tok.units.is_bytes:
        pretoks.append({"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False})
        decoder = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False}
    else:
        decoder = {"type": "Fuse"}
    normalizer = {"type": tok.normalizer.upper()} if tok.normalizer != "none" else None
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": normalizer,
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": pretoks} if pretoks else None,
        "post_processor": None,
        "decoder": decoder,
        "model": {
            "type": "BPE", "dropout": None, "unk_token": unk, "continuing_subword_prefix": None,
            "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
            "vocab": vocab,
            "merges": [[names[a], names[b]] for a, b in tok.merges],
        },
    }


def write_hf(tok: Tokenizer, out: Path) -> list[str]:
    notes = hf_notes(tok)
    write_atomic(out, json.dumps(to_hf(tok), ensure_ascii=False, indent=1).encode("utf-8"))
    return notes + [f"wrote {out}"]
