"""Unigram models in files: ours, Hugging Face's tokenizer.json, and SentencePiece's .model.

Our file is the BPE one's envelope with `"model": "unigram"` and `"pieces": [[text, log_prob],
...]` in id order, `<unk>` first (id 0). Its `"history"` lists the rounds, round 0 the seed.
Every score must be a finite number and every piece distinct, non-empty text, or the file is
refused with one line naming the entry.

HF: a `Unigram` model with `unk_id` 0, the Metaspace pre-tokenizer and decoder (or a Split
pattern and Fuse), `<unk>` an added special token. SentencePiece: the `.model` file is a
protobuf; the few fields needed (pieces, model type, normalizer) are read by hand below, so no
protobuf library is needed.
"""

import json
import math
import struct

from ..models.roles import Roles
from ..errors import ExportError, ForeignModelError, ModelFileError, TokWorkbenchError
from ..text.normalize import NORMALIZERS
from ..text.pretokenize import METASPACE, PreTokenizer, from_pattern, pre_tokenizer
from ..unigram.model import UNK, UnigramModel
from ..unigram.rows import RoundRow
from .atomic import write_atomic
from .limits import MAX_TOKEN_BYTES, describe_json, is_count, is_text, read_pre_tokenizer

FORMAT = "tokworkbench"
VERSION = 1
META = "\u2581"


def is_unigram(doc) -> bool:
    return isinstance(doc, dict) and doc.get("model") == "unigram"


# -- our file --------------------------------------------------------------------------------
def to_json(model: UnigramModel, corpus: dict | None = None) -> dict:
    pre = model.pre_tokenizer
    return {
        "format": FORMAT,
        "version": VERSION,
        "model": "unigram",
        "units": "char",
        "normalizer": model.normalizer,
        "pre_tokenizer": {"name": pre.name, "pattern": pre.pattern},
        "algorithm": model.algorithm,
        "start_cost": model.start_cost,
        "pieces": [[text, score] for text, score in model.pieces],
        "special_tokens": model.special_ids,
        "roles": model.roles.to_dict(),
        "history": [{"round": r.round, "vocab_size": r.vocab_size, "loss": r.loss, "removed": list(r.removed),
                     "tokens": r.tokens} for r in model.history],
        "corpus": corpus or {},
    }


def save_text(model: UnigramModel, corpus: dict | None = None) -> bytes:
    return (json.dumps(to_json(model, corpus), ensure_ascii=False, indent=1) + "\n").encode("utf-8")


def from_json(doc: dict, max_token_bytes: int = MAX_TOKEN_BYTES) -> UnigramModel:
    """A model from our parsed file; a damaged or hostile file is a ModelFileError naming the
    field, never another exception."""
    version = doc.get("version")
    if not (type(version) is int and version == VERSION):
        raise ModelFileError(f"model file version {version!r} is not supported (this tool reads {VERSION})")
    for key in ("normalizer", "pre_tokenizer", "pieces"):
        if key not in doc:
            raise ModelFileError(f"corrupt Unigram model file: no {key!r}")
    if doc.get("units", "char") != "char":
        raise ModelFileError(f"a Unigram model's units are characters, not {_short(doc.get('units'))}")
    normalizer = doc["normalizer"]
    if normalizer not in NORMALIZERS:
        raise ModelFileError(f"normalizer {_short(normalizer)} is not one of {', '.join(NORMALIZERS)}")
    pre = read_pre_tokenizer(doc["pre_tokenizer"])
    pieces = check_pieces(doc["pieces"], max_token_bytes, ModelFileError)
    if pieces[0][0] != UNK:
        raise ModelFileError(f"piece 0 must be {UNK}, not {_short(pieces[0][0])}")
    specials = doc.get("special_tokens", {UNK: 0})
    if specials != {UNK: 0}:
        raise ModelFileError(f"a Unigram model's one special token is {UNK} with id 0, not {_short(specials)}")
    algorithm = doc.get("algorithm", "")
    if algorithm not in ("", "course", "em"):
        raise ModelFileError(f"algorithm {_short(algorithm)} is not course or em")
    start_cost = doc.get("start_cost", 0.0)
    if not _finite(start_cost):
        raise ModelFileError(f"'start_cost' must be a finite number, not {_short(start_cost)}")
    history = _history(doc.get("history", []))
    try:
        roles = Roles.of(doc.get("roles")).check((UNK,))
    except TokWorkbenchError as exc:
        raise ModelFileError(f"'roles': {exc}") from None
    return UnigramModel(tuple(pieces), normalizer, pre, history, algorithm, float(start_cost), roles)


def check_pieces(pieces, max_token_bytes: int, error=ModelFileError) -> list[tuple[str, float]]:
    """[[text, score], ...]: distinct non-empty texts, finite scores, bounded lengths."""
    if not isinstance(pieces, list) or not pieces:
        raise error(f"'pieces' must be a non-empty list of [text, score], not {describe_json(pieces)}")
    out: list[tuple[str, float]] = []
    seen: dict[str, int] = {}
    total = 0
    for i, entry in enumerate(pieces):
        if not (isinstance(entry, list) and len(entry) == 2 and is_text(entry[0]) and entry[0]):
            raise error(f"piece {i} is {_short(entry)}; a piece is [text, score] with non-empty text")
        text, score = entry
        if not _finite(score):
            raise error(f"piece {i} ({_short(text)}) has the score {_short(score)}; scores must be finite numbers")
        size = len(text.encode("utf-8"))
        if size > max_token_bytes:
            raise error(f"piece {i} is {size:,} bytes long; the limit is {max_token_bytes:,} (--max-token-bytes)")
        total += size
        if text in seen:
            raise error(f"pieces {seen[text]} and {i} are both {_short(text)}; each piece must be distinct")
        seen[text] = i
        out.append((text, float(score)))
    return out


def _finite(x) -> bool:
    return type(x) in (int, float) and math.isfinite(x)


def _history(history) -> tuple[RoundRow, ...]:
    if not isinstance(history, list):
        raise ModelFileError(f"'history' must be a list of rounds, not {describe_json(history)}")
    out = []
    for k, h in enumerate(history):
        if not (isinstance(h, dict) and is_count(h.get("round")) and is_count(h.get("vocab_size"))
                and _finite(h.get("loss")) and isinstance(h.get("removed"), list)
                and all(is_text(p) for p in h["removed"]) and is_count(h.get("tokens", 0))):
            raise ModelFileError(f"history round {k} must have whole numbers for round and vocab_size, a finite "
                                 "loss and a list of removed pieces")
        out.append(RoundRow(h["round"], h["vocab_size"], float(h["loss"]), tuple(h["removed"]), h.get("tokens", 0)))
    return tuple(out)


def _short(value, limit: int = 40) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "…"


# -- Hugging Face tokenizer.json -------------------------------------------------------------
METASPACE_HF = {"type": "Metaspace", "replacement": META, "prepend_scheme": "always", "split": True}


def to_hf(model: UnigramModel) -> dict:
    pre = model.pre_tokenizer
    if pre.rewrites:
        pre_tok, decoder = dict(METASPACE_HF), dict(METASPACE_HF)
    elif pre.pattern is not None:
        from .hf import hf_pattern

        pre_tok = {"type": "Split", "pattern": {"Regex": hf_pattern(pre.pattern)}, "behavior": "Isolated",
                   "invert": False}
        decoder = {"type": "Fuse"}
    else:
        pre_tok, decoder = None, {"type": "Fuse"}
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [{"id": 0, "content": UNK, "single_word": False, "lstrip": False, "rstrip": False,
                          "normalized": False, "special": True}],
        "normalizer": {"type": model.normalizer.upper()} if model.normalizer != "none" else None,
        "pre_tokenizer": pre_tok,
        "post_processor": None,
        "decoder": decoder,
        "model": {"type": "Unigram", "unk_id": 0, "vocab": [[t, s] for t, s in model.pieces], "byte_fallback": False},
    }


def check_hf(model: UnigramModel) -> None:
    """What HF cannot carry: a custom pattern Oniguruma reads otherwise (as for BPE)."""
    from .hf import check_hf_pattern

    if not model.pre_tokenizer.rewrites:
        check_hf_pattern(model.pre_tokenizer)


def write_hf(model: UnigramModel, out) -> list[str]:
    check_hf(model)
    write_atomic(out, json.dumps(to_hf(model), ensure_ascii=False, indent=1).encode("utf-8"))
    return [f"wrote {out}"]


def from_hf(doc: dict, max_token_bytes: int = MAX_TOKEN_BYTES) -> UnigramModel:
    """A tokenizer.json Unigram model; what this tool cannot reproduce exactly is refused."""
    model = doc["model"]
    if model.get("byte_fallback"):
        raise ForeignModelError("Unigram with byte_fallback is not supported (unknown characters would become bytes)")
    if model.get("unk_id") != 0:
        raise ForeignModelError(f"this tool reads Unigram models whose <unk> is id 0; this one has unk_id "
                                f"{_short(model.get('unk_id'))}")
    pieces = check_pieces(model.get("vocab"), max_token_bytes, ForeignModelError)
    if pieces[0][0] != UNK:
        pieces[0] = (UNK, pieces[0][1])  # HF names it as it likes; id 0 is the unknown piece either way
    added = doc.get("added_tokens", [])
    if not isinstance(added, list):
        raise ForeignModelError(f"'added_tokens' must be a list, not {describe_json(added)}")
    for t in added:
        if not (isinstance(t, dict) and t.get("id") == 0):
            raise ForeignModelError("added tokens other than <unk> (id 0) are not supported in a Unigram model")
    normalizer = _hf_normalizer(doc.get("normalizer"))
    pre = _hf_pre_tokenizer(doc.get("pre_tokenizer"), doc.get("decoder"))
    return UnigramModel(tuple(pieces), normalizer, pre)


def _hf_normalizer(spec) -> str:
    if spec is None:
        return "none"
    kind = spec.get("type") if isinstance(spec, dict) else None
    if kind in ("NFC", "NFKC"):
        return kind.lower()
    if kind == "Sequence" and not spec.get("normalizers"):
        return "none"
    raise ForeignModelError(f"normalizer {_short(kind)} is not supported (none, NFC and NFKC are)")


def _hf_pre_tokenizer(spec, decoder) -> PreTokenizer:
    if spec is None:
        return pre_tokenizer("none")
    if not isinstance(spec, dict):
        raise ForeignModelError(f"'pre_tokenizer' must be an object or null, not {describe_json(spec)}")
    steps = spec.get("pretokenizers") if spec.get("type") == "Sequence" else [spec]
    if isinstance(steps, list) and len(steps) == 1 and isinstance(steps[0], dict):
        step = steps[0]
        if step.get("type") == "Metaspace":
            scheme = step.get("prepend_scheme", "always" if step.get("add_prefix_space", True) else "never")
            if step.get("replacement") != META or scheme != "always" or not step.get("split", True):
                raise ForeignModelError("only Metaspace with replacement ▁, prepend_scheme always and split is supported")
            if not (isinstance(decoder, dict) and decoder.get("type") == "Metaspace"):
                raise ForeignModelError("a Metaspace pre-tokenizer needs the Metaspace decoder")
            return pre_tokenizer(METASPACE)
        if step.get("type") == "Split" and step.get("behavior") == "Isolated" and not step.get("invert"):
            from .hf import hf_pattern

            pat = step.get("pattern")
            if isinstance(pat, dict) and is_text(pat.get("Regex")):
                return from_pattern(pat["Regex"], also_matches=hf_pattern)
    raise ForeignModelError(f"pre-tokenizer {_short(spec.get('type'))} is not supported for Unigram "
                            "(Metaspace or one Split pattern is)")


# -- SentencePiece .model --------------------------------------------------------------------
def looks_like_sentencepiece(raw: bytes) -> bool:
    """A protobuf whose first field is `pieces` (field 1, length-delimited, tag byte 0x0A) and
    that parses as one: a text file that happens to start with a line break does not."""
    if raw[:1] != b"\x0a" or len(raw) < 4:
        return False
    try:
        fields = _message(raw)
        first = _message(fields[0][1]) if fields and fields[0][0] == 1 else []
    except (IndexError, ValueError, TypeError):
        return False
    return bool(first) and first[0][0] == 1


def from_sentencepiece(raw: bytes, max_token_bytes: int = MAX_TOKEN_BYTES) -> UnigramModel:
    """The pieces of a SentencePiece ModelProto. Accepted: a Unigram model with the identity
    normalizer (no precompiled map), no whitespace collapsing, a dummy prefix, `<unk>` at id 0
    and no control or byte pieces; everything else is refused, naming what differs."""
    try:
        fields = _message(raw)
    except (IndexError, struct.error, ValueError) as exc:
        raise ForeignModelError(f"not a SentencePiece model: its protobuf is damaged ({exc})") from None
    pieces: list[tuple[str, float]] = []
    kinds: list[int] = []
    trainer = normalizer = None
    try:
        for number, value in fields:
            if number == 1:
                sub = dict((n, v) for n, v in _message(value))
                text = sub.get(1, b"").decode("utf-8")
                score = struct.unpack("<f", sub[2])[0] if 2 in sub else 0.0
                pieces.append((text, score))
                kinds.append(sub.get(3, 1))
            elif number == 2:
                trainer = dict(_message(value))
            elif number == 3:
                normalizer = dict(_message(value))
    except (IndexError, struct.error, ValueError, UnicodeDecodeError, TypeError) as exc:
        raise ForeignModelError(f"not a SentencePiece model: a piece cannot be read ({exc})") from None
    if not pieces:
        raise ForeignModelError("not a SentencePiece model: it holds no pieces")
    model_type = (trainer or {}).get(3, 1)
    if model_type != 1:
        names = {2: "BPE", 3: "WORD", 4: "CHAR"}
        raise ForeignModelError(f"this SentencePiece model is {names.get(model_type, model_type)}, not Unigram")
    norm = normalizer or {}
    name = norm.get(1, b"nmt_nfkc").decode("utf-8", "replace")
    if name != "identity" or norm.get(2):
        raise ForeignModelError(f"SentencePiece normalizer {name!r} is not supported (train with "
                                "--normalization_rule_name=identity)")
    if norm.get(4, 1):
        raise ForeignModelError("this SentencePiece model collapses runs of whitespace (remove_extra_whitespaces); "
                                "train with --remove_extra_whitespaces=false")
    if not norm.get(3, 1):
        raise ForeignModelError("this SentencePiece model adds no dummy prefix; metaspace always adds one")
    if kinds[0] != 2:
        raise ForeignModelError("this tool reads SentencePiece models whose <unk> is id 0 (train with --unk_id=0 "
                                "--bos_id=-1 --eos_id=-1)")
    for i, k in enumerate(kinds[1:], 1):
        if k != 1:
            what = {3: "a control piece", 4: "a user-defined piece", 5: "an unused piece", 6: "a byte piece"}
            raise ForeignModelError(f"piece {i} ({_short(pieces[i][0])}) is {what.get(k, f'of type {k}')}; this "
                                    "tool reads normal pieces only (train with --bos_id=-1 --eos_id=-1)")
    checked = check_pieces([[UNK, 0.0]] + [[t, s] for t, s in pieces[1:]], max_token_bytes, ForeignModelError)
    return UnigramModel(tuple(checked), "none", pre_tokenizer(METASPACE))


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        b = data[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, pos
        shift += 7
        if shift > 63:
            raise ValueError("varint too long")


def _message(data: bytes) -> list[tuple[int, object]]:
    """(field number, value) of a protobuf message: varints as ints, length-delimited fields as
    bytes, fixed32 as 4 bytes (a float score), fixed64 as 8 bytes."""
    out = []
    pos = 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(data, pos)
        elif wire == 2:
            size, pos = _varint(data, pos)
            if pos + size > len(data):
                raise ValueError("a field runs past the end")
            value, pos = data[pos : pos + size], pos + size
        elif wire == 5:
            value, pos = data[pos : pos + 4], pos + 4
        elif wire == 1:
            value, pos = data[pos : pos + 8], pos + 8
        else:
            raise ValueError(f"wire type {wire}")
        out.append((number, value))
    return out


def refuse_bpe_format(fmt: str) -> None:
    raise ExportError(f"{fmt} holds byte-level BPE merges; a Unigram model has scored pieces and no merges "
                      "(export it to hf)")
