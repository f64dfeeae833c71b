"""Hugging Face `tokenizer.json` with a BPE model: byte-level or char-level, both ways.

HF's regex engine (Oniguruma) reads `{n,m}+` as "{n,m} repeated", not as a possessive interval,
so such quantifiers are written as plain `{n,m}`, which matches the same way in these patterns
(tests check it against `tokenizers`). HF numbers its vocabulary its own way; an imported model
keeps those ids through an id map.

Roles travel as HF keeps them: BOS/EOS as a `TemplateProcessing` post-processor ("$A" between
them; `encode(add_special_tokens=True)` adds them), PAD as the padding token, UNK as the
model's unk_token (hf_common.py). Reading a file takes them back from the same places.
"""

import json
from dataclasses import dataclass
from pathlib import Path

from tokworkbench.core.bpe.model import UNK, Tokenizer
from tokworkbench.core.bytelevel import bytes_to_unicode
from tokworkbench.core.errors import ExportError, ForeignModelError, PatternError
from tokworkbench.core.files.atomic import write_atomic
from tokworkbench.core.files.limits import (
    MAX_ID,
    MAX_TOKEN_BYTES,
    check_token_length,
    check_token_lengths,
    describe_json,
    is_id,
    is_text,
    short,
)
from tokworkbench.core.formats.hf_common import (
    check_hf_pattern,
    hf_added_ids,
    hf_pattern,
    padding_of,
    post_processor_of,
    read_roles,
)
from tokworkbench.core.models.added import AddedToken, AddedVocabulary
from tokworkbench.core.text.hfpretok import (
    ByteLevelStep,
    Cut,
    HFPreTokenizer,
    hf_pre_tokenizer,
    is_byte_level,
    metaspace_of,
)
from tokworkbench.core.text.pretokenize import PreTokenizer, from_pattern

HF_BYTELEVEL_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""


# -- import ----------------------------------------------------------------------------------
def from_hf(doc: dict, max_token_bytes: int = MAX_TOKEN_BYTES) -> Tokenizer:
    """A model from a parsed tokenizer.json; every part used is checked, so a damaged file is a
    ForeignModelError that names the part, never another exception."""
    model = doc["model"]
    for key in ("continuing_subword_prefix", "end_of_word_suffix"):
        if model.get(key):
            raise ForeignModelError(f"BPE with {key} is not supported (byte-level or char-level BPE is)")
    if model.get("dropout"):
        raise ForeignModelError("BPE dropout is random; such a tokenizer cannot be reproduced exactly")
    ignore_merges = model.get("ignore_merges", False)
    if not isinstance(ignore_merges, bool):
        raise ForeignModelError(f"'ignore_merges' must be true or false, not {short(ignore_merges)}")
    normalizer = _normalizer(doc.get("normalizer"))
    pre, byte_level = _pre_tokenizer(doc.get("pre_tokenizer"))
    vocab = read_vocab(model.get("vocab"))
    pairs = read_merge_pairs(model.get("merges"))
    added_list = _added_tokens(doc.get("added_tokens", []), vocab)
    added = {t.content: t.id for t in added_list}
    if model.get("fuse_unk") and not byte_level and model.get("unk_token") is not None:
        raise ForeignModelError("a char-level BPE with fuse_unk (a run of unknown characters as one unk) is not "
                                "supported; this tool gives each unknown character its own unk")
    if byte_level:
        to_char = bytes_to_unicode()
        base_names = [to_char[b] for b in range(256)]
        missing = [n for n in base_names if n not in vocab]
        if missing:
            raise ForeignModelError(f"byte-level vocabulary lacks {len(missing)} of the 256 byte symbols")
        units, base = "byte", None
    else:
        merged = {a + b for a, b in pairs}
        base_names = sorted(n for n in vocab if n not in merged and len(n) == 1)
        units, base = "char", tuple(base_names)
    plan = _merges(pairs, base_names, vocab)
    inside, merges = plan.inside, plan.merges
    if plan.general:
        for n, z in inside.items():
            size = 1 if byte_level and z < 256 else (len(n) if byte_level else len(n.encode("utf-8")))
            check_token_length(vocab.get(n, z), size, max_token_bytes)
    else:
        base_lengths = [1 if byte_level else len(n.encode("utf-8")) for n in base_names]
        check_token_lengths(base_lengths, merges, max_token_bytes)
    whole = [n for n in vocab if n not in inside and n not in added]
    if whole and not ignore_merges:
        raise ForeignModelError(
            f"{len(whole)} vocabulary entries are neither base symbols nor merges (e.g. {short(whole[0])})")
    for n in whole:
        inside[n] = len(inside)
    specials = [s for s in sorted(added, key=added.get) if s not in inside]  # the others keep their token
    ids = tuple(vocab[n] for n in inside) + tuple(added[s] for s in specials)
    if len(set(ids)) != len(ids):
        raise ForeignModelError("two tokens share an id (an added token and a vocabulary entry)")
    roles = read_roles(doc, model, set(specials))
    if byte_level:
        from_char = {c: b for b, c in enumerate(base_names)}
        made = [bytes(map(from_char.__getitem__, n)) for n in whole]
    else:
        made = list(whole)
    fields = {"units": units, "normalizer": normalizer, "pre_tokenizer": pre, "tie_break": "first", "base": base,
              "merges": tuple(merges), "special_tokens": tuple(specials), "ids": ids, "roles": roles,
              "whole_tokens": tuple(made), "added": AddedVocabulary(tuple(added_list)) if added_list else None}
    if plan.general:
        names = list(inside)
        tokens = [bytes(map(from_char.__getitem__, n)) for n in names] if byte_level else names
        tok = Tokenizer.with_tokens(tokens, **fields, join="pairs", whole_chunk=ignore_merges, pairs=plan.pairs)
    else:
        tok = Tokenizer(**fields)
        if ignore_merges and (whole or not _merges_make_every_token(tok)):
            tok = Tokenizer(**fields, whole_chunk=True)
    return tok


@dataclass(frozen=True)
class _MergePlan:
    """The merges of a file in inside ids. `merges` holds one merge per merged token (the first
    in the list that makes it), in that order; `general`: the list is not one merge per token
    each joining tokens made before it (a file converted from tiktoken ranks holds every split
    of a token, parts made later), so the model joins by HF's rule over `pairs` (every merge:
    left, right, made) instead."""

    inside: dict[str, int]
    merges: list[tuple[int, int]]
    pairs: tuple[tuple[int, int, int], ...]
    general: bool


def read_vocab(vocab) -> dict[str, int]:
    if not isinstance(vocab, dict):
        raise ForeignModelError(f"'model.vocab' must be an object of token: id, not {describe_json(vocab)}")
    seen: dict[int, str] = {}
    for name, tid in vocab.items():
        if not is_text(name) or not name:
            raise ForeignModelError(f"vocabulary entry {short(name)} is not a token (empty, or a lone surrogate)")
        if not is_id(tid):
            raise ForeignModelError(f"vocabulary entry {short(name)} has the id {short(tid)}; "
                                    f"ids are whole numbers from 0 to {MAX_ID:,} (HF reads them as u32)")
        if tid in seen:
            raise ForeignModelError(f"id {tid} is given to both {short(seen[tid])} and {short(name)}")
        seen[tid] = name
    return vocab


def read_merge_pairs(merges) -> list[tuple[str, str]]:
    """Merges as HF writes them: "left right" (one space) or ["left", "right"]."""
    if not isinstance(merges, list):
        raise ForeignModelError(f"'model.merges' must be a list, not {describe_json(merges)}")
    pairs = []
    for rank, m in enumerate(merges):
        if isinstance(m, str):
            parts = m.split(" ")
        elif isinstance(m, list):
            parts = m
        else:
            parts = None
        if not (parts and len(parts) == 2 and all(isinstance(p, str) and p for p in parts)):
            raise ForeignModelError(f"merge {rank} is {short(m)}; a merge is \"left right\" (one space) "
                                    "or [\"left\", \"right\"]")
        pairs.append((parts[0], parts[1]))
    return pairs


def _added_tokens(added, vocab: dict[str, int]) -> list[AddedToken]:
    """The file's added tokens with their flags, and the ids HF gives them (`hf_added_ids`):
    an edited file with <x> at 5000 in a vocabulary of 1,000 gave 5000 here and 1000 in HF."""
    if not isinstance(added, list):
        raise ForeignModelError(f"'added_tokens' must be a list, not {describe_json(added)}")
    for k, t in enumerate(added):
        if not (isinstance(t, dict) and is_text(t.get("content")) and t["content"] and is_id(t.get("id"))):
            raise ForeignModelError(f"added token {k} must have a non-empty 'content' and a whole-number 'id'")
    out: dict[str, AddedToken] = {}
    for t, tid in zip(added, hf_added_ids([t["content"] for t in added], vocab)):
        content = t["content"]
        if content in out:
            raise ForeignModelError(f"added token {short(content)} appears twice")
        special = _added_flag(t, "special", False, content)
        flags = {key: _added_flag(t, key, False, content) for key in ("lstrip", "rstrip", "single_word")}
        out[content] = AddedToken(content, tid, special, _added_flag(t, "normalized", not special, content), **flags)
    return list(out.values())


def _added_flag(token: dict, key: str, default: bool, content: str) -> bool:
    value = token.get(key, default)
    if not isinstance(value, bool):
        raise ForeignModelError(f"added token {short(content)}'s {key!r} must be true or false, not {short(value)}")
    return value


def _merges(pairs, base_names: list[str], vocab: dict[str, int]) -> _MergePlan:
    inside = {n: i for i, n in enumerate(base_names)}
    for rank, (a, b) in enumerate(pairs):
        for part in (a, b):
            if part not in vocab and part not in inside:
                raise ForeignModelError(f"merge {rank} ({short(a)} + {short(b)}) names {short(part)}, "
                                        "which is not in the vocabulary")
        joined = a + b
        if joined not in vocab:
            raise ForeignModelError(f"merge {short(a)} + {short(b)} makes {short(joined)}, which is not in the vocabulary")
    first_made: dict[str, tuple[str, str]] = {}
    for a, b in pairs:
        first_made.setdefault(a + b, (a, b))
    first_made = {t: ab for t, ab in first_made.items() if t not in inside}  # a merge making a base symbol
    for t in first_made:
        inside[t] = len(inside)
    for a, b in pairs:
        for part in (a, b):
            if part not in inside:
                raise ForeignModelError(f"merge {short(a)} + {short(b)} uses {short(part)}, which is neither "
                                        "a base symbol nor made by any merge")
    merges = [(inside[a], inside[b]) for a, b in first_made.values()]
    in_order = len(first_made) == len(pairs) and all(
        max(ab) < len(base_names) + k for k, ab in enumerate(merges))
    if in_order:
        return _MergePlan(inside, merges, (), False)
    table = tuple((inside[a], inside[b], inside[a + b]) for a, b in pairs)
    return _MergePlan(inside, merges, table, True)


def _merges_make_every_token(tok: Tokenizer) -> bool:
    """Whether each merged token is what the merges make of its own bytes. With
    `ignore_merges`, HF first looks a whole chunk up in the vocabulary; where this holds, the
    lookup finds what the merges would, and the model need not look."""
    index = {c: i for i, c in enumerate(tok.base or ())}
    for z in range(tok.base_size, tok.base_size + len(tok.merges)):
        token = tok.ranked_tokens[z]
        units = list(token) if tok.units.is_bytes else [index[c] for c in token]
        if tok.apply_merges(units) != [z]:
            return False
    return True


def _normalizer(spec) -> str:
    if spec is None:
        return "none"
    if not isinstance(spec, dict):
        raise ForeignModelError(f"'normalizer' must be an object or null, not {describe_json(spec)}")
    kind = spec.get("type")
    if kind in ("NFC", "NFKC"):
        return kind.lower()
    if kind == "Sequence" and not spec.get("normalizers"):
        return "none"
    raise ForeignModelError(f"normalizer {short(kind)} is not supported (none, NFC and NFKC are)")


def _pre_tokenizer(spec) -> tuple[PreTokenizer, bool]:
    """(the pre-tokenizer, byte-level?). The shapes one split pattern says (a Split with
    behaviour Isolated and ByteLevel without its prefix, or ByteLevel's regex alone) become
    that pattern, so the presets' fast paths apply; any other is HF's pipeline (hfpretok.py)."""
    if spec is None:
        return from_pattern(None), False
    if not isinstance(spec, dict):
        raise ForeignModelError(f"'pre_tokenizer' must be an object or null, not {describe_json(spec)}")
    try:
        pre = hf_pre_tokenizer(spec)
    except PatternError as exc:
        raise ForeignModelError(str(exc)) from None
    steps = pre.steps
    byte_level = is_byte_level(steps)
    pattern = _one_pattern(steps)
    if pattern is not False:
        return from_pattern(pattern, also_matches=hf_pattern), byte_level
    return pre, byte_level


def _one_pattern(steps) -> str | None | bool:
    """The split pattern the steps amount to (None: no split), or False if they are more."""
    pattern = None
    for k, step in enumerate(steps):
        if isinstance(step, ByteLevelStep):
            if step.add_prefix_space or k != len(steps) - 1:
                return False
            if step.use_regex:
                if pattern is not None:
                    return False
                pattern = HF_BYTELEVEL_PATTERN
        elif isinstance(step, Cut) and not step.per_char and step.behavior == "Isolated" and not step.invert:
            if pattern is not None or not step.pattern:
                return False
            pattern = step.pattern
        else:
            return False
    return pattern


# -- export ----------------------------------------------------------------------------------
def _names(tok: Tokenizer) -> list[str]:
    """Each ordinary token's name in an HF vocabulary: byte-level symbols, or the text itself."""
    if tok.units.is_bytes:
        to_char = bytes_to_unicode()
        return ["".join(to_char[b] for b in t) for t in tok.ranked_tokens]
    return list(tok.ranked_tokens)


def check_hf_specials(tok: Tokenizer) -> None:
    """HF gives one id per string: a special token named like an ordinary token would take that
    token's id (tested against `tokenizers`), so the export is refused."""
    names = {name: z for z, name in enumerate(_names(tok))}
    extra = [] if tok.units.is_bytes or tok.unk_token in tok.special_tokens else [UNK]
    for s in list(tok.special_tokens) + extra:
        z = names.get(s)
        if z is not None:
            kind = "byte-level name" if tok.units.is_bytes else "text"
            raise ExportError(
                f"HF cannot hold the special token {s!r}: it is also the {kind} of token "
                f"{tok.to_outside([z])[0]} ({tok.rank_text(z)!r}), and HF gives one id per string; "
                "rename the special token")


def check_hf(tok: Tokenizer) -> None:
    if tok.join == "ranks" or any(tok.whole_tokens) and not tok.whole_chunk:
        raise ExportError("this model joins by tiktoken's rule over its ranks (tokens no merge makes, or "
                          "merges of later-ranked parts); the hf export writes one merge per token, which "
                          "would encode differently: export to tiktoken")
    if tok.drops_unmatched:
        raise ExportError("this model drops the text its pattern does not match, as tiktoken does; HF's Split "
                          "keeps it, so its ids would differ (export to tiktoken, or give a preset split)")
    if tok.pre_tokenizer.rewrites:
        raise ExportError("the hf export of BPE writes a Split pattern; metaspace rewrites the text first "
                          "(a Unigram model with metaspace exports to hf)")
    check_hf_specials(tok)
    check_hf_pattern(tok.pre_tokenizer)


def hf_notes(tok: Tokenizer) -> list[str]:
    notes = []
    if not tok.units.is_bytes and tok.unk_token not in tok.special_tokens:
        notes.append(f"added {UNK} as id {tok.vocab_size} for characters outside the vocabulary")
    if tok.roles.bos or tok.roles.eos:
        notes.append("encode(add_special_tokens=True) adds " +
                     " and ".join(f"{r.upper()} {t}" for r, t in tok.roles.items() if r in ("bos", "eos")))
    return notes


def _added(content: str, tid: int) -> dict:
    return {"id": tid, "content": content, "single_word": False, "lstrip": False, "rstrip": False,
            "normalized": False, "special": True}


def to_hf(tok: Tokenizer) -> dict:
    ids = list(tok.ids) if tok.ids is not None else list(range(tok.vocab_size))
    names = _names(tok)
    vocab = {name: ids[i] for i, name in enumerate(names)}
    added = []
    for s, sid in tok.special_ids.items():
        vocab[s] = sid
        if tok.added is None:
            added.append(_added(s, sid))
    if tok.added is not None:
        added = [t.to_json() for t in tok.added.tokens]
    unk = tok.roles.unk
    if not tok.units.is_bytes:
        unk = tok.unk_token
        if unk not in vocab:
            uid = max(ids) + 1
            vocab[UNK] = uid
            added.append(_added(UNK, uid))
    pretoks = []
    if isinstance(tok.pre_tokenizer, HFPreTokenizer):
        pretoks.append(json.loads(tok.pre_tokenizer.spec))
    elif tok.pre_tokenizer.pattern is not None:
        pretoks.append({"type": "Split", "pattern": {"Regex": hf_pattern(tok.pre_tokenizer.pattern)},
                        "behavior": "Isolated", "invert": False})
    if tok.units.is_bytes and not isinstance(tok.pre_tokenizer, HFPreTokenizer):
        pretoks.append({"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False})
        decoder = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False}
    else:
        decoder = _char_decoder(tok.pre_tokenizer)
    normalizer = {"type": tok.normalizer.upper()} if tok.normalizer != "none" else None
    return {
        "version": "1.0",
        "truncation": None,
        "padding": padding_of(tok),
        "added_tokens": added,
        "normalizer": normalizer,
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": pretoks} if pretoks else None,
        "post_processor": post_processor_of(tok),
        "decoder": decoder,
        "model": {
            "type": "BPE", "dropout": None, "unk_token": unk, "continuing_subword_prefix": None,
            "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False,
            "ignore_merges": tok.whole_chunk,
            "vocab": vocab,
            "merges": [[names[a], names[b]] for a, b, _ in tok.pairs] if tok.join == "pairs"
            else [[names[a], names[b]] for a, b in tok.merges],
        },
    }


def _char_decoder(pre: PreTokenizer) -> dict:
    """Fuse, or HF's Metaspace decoder for a pipeline with Metaspace (what `restore` does)."""
    meta = metaspace_of(pre.steps) if isinstance(pre, HFPreTokenizer) else None
    if meta is None:
        return {"type": "Fuse"}
    return {"type": "Metaspace", "replacement": meta.replacement, "prepend_scheme": meta.prepend_scheme,
            "split": meta.split}


def write_hf(tok: Tokenizer, out: Path) -> list[str]:
    """Write the file; `export.check` (which runs `check_hf`) must have accepted the model."""
    notes = hf_notes(tok)
    write_atomic(out, json.dumps(to_hf(tok), ensure_ascii=False, indent=1).encode("utf-8"))
    return notes + [f"wrote {out}"]
