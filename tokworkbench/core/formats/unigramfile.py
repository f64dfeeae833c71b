"""Unigram models in files: ours, Hugging Face's tokenizer.json, and SentencePiece's .model.

Our file is the BPE one's envelope with `"model": "unigram"` and `"pieces": [[text, log_prob],
...]` in id order, special pieces included; `"special_tokens"` maps each special piece to its id,
`"unk_id"` names the unknown piece (0, `<unk>`, in what we train) and `"user_defined"` lists
SentencePiece USER_DEFINED ids. Its `"history"` lists the rounds, round 0 the seed. Every score
must be a finite number and every piece distinct, non-empty text, or the file is refused with
one line naming the entry.

Scores: a piece Viterbi matches holds a log probability, so it must be ≤ 0; a special piece and
a USER_DEFINED one may hold any finite number (SentencePiece writes 0 for them, and HF's T5
files do too: neither score takes part in a normal piece's cost).

HF: a `Unigram` model with any `unk_id`, the Metaspace pre-tokenizer and decoder (or a Split
pattern and Fuse); its added special tokens are the special pieces. Roles come from where HF
keeps them (a TemplateProcessing post-processor for BOS/EOS, padding for PAD), PAD also from
the names `<pad>`/`[PAD]` when exactly one special piece has one; UNK is the unk piece.
SentencePiece: the `.model` file is a protobuf; the few fields needed (pieces and their types,
the trainer's model type and special ids, the normalizer) are read by hand below, so no
protobuf library is needed. Its UNKNOWN and CONTROL pieces are the special pieces, with the
roles its trainer_spec gives them (unk_id, bos_id, eos_id, pad_id).
"""

import json
import math
import struct

from tokworkbench.core.models.roles import Roles
from tokworkbench.core.errors import ExportError, ForeignModelError, ModelFileError, TokWorkbenchError
from tokworkbench.core.text.normalize import NORMALIZERS
from tokworkbench.core.text.pretokenize import METASPACE, PreTokenizer, from_pattern, pre_tokenizer
from tokworkbench.core.unigram.model import UnigramModel
from tokworkbench.core.unigram import spnormalize
from tokworkbench.core.text.charsmap import read_charsmap
from tokworkbench.core.unigram.rows import RoundRow
from tokworkbench.core.formats.atomic import write_atomic
from tokworkbench.core.formats.limits import MAX_TOKEN_BYTES, describe_json, is_count, is_text, read_pre_tokenizer

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
        "unk_id": model.unk_id,
        "user_defined": list(model.user_defined),
        "float32": model.float32,
        "roles": model.roles.to_dict(),
        "history": [{"round": r.round, "vocab_size": r.vocab_size, "loss": r.loss, "removed": list(r.removed),
                     "tokens": r.tokens} for r in model.history],
        "corpus": corpus or {},
        **({"model_normalizer": model.text_normalizer.to_json()} if model.text_normalizer is not None else {}),
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
    specials, unk_id, user = _our_specials(doc, pieces)
    check_scores(pieces, set(specials) | set(user), ModelFileError)
    algorithm = doc.get("algorithm", "")
    if algorithm not in ("", "course", "em"):
        raise ModelFileError(f"algorithm {_short(algorithm)} is not course or em")
    start_cost = doc.get("start_cost", 0.0)
    if not _finite(start_cost):
        raise ModelFileError(f"'start_cost' must be a finite number, not {_short(start_cost)}")
    history = _history(doc.get("history", []))
    try:
        roles = Roles.of(doc.get("roles")).check([pieces[i][0] for i in specials])
    except TokWorkbenchError as exc:
        raise ModelFileError(f"'roles': {exc}") from None
    float32 = doc.get("float32", False)
    if not isinstance(float32, bool):
        raise ModelFileError(f"'float32' must be true or false, not {_short(float32)}")
    own = spnormalize.from_json(doc["model_normalizer"]) if "model_normalizer" in doc else None
    if own is not None and normalizer != "none":
        raise ModelFileError("a model with its own 'model_normalizer' has 'normalizer' none")
    return UnigramModel(tuple(pieces), normalizer, pre, history, algorithm, float(start_cost), roles,
                        specials, unk_id, user, float32, own)


def _our_specials(doc: dict, pieces: list[tuple[str, float]]) -> tuple[tuple[int, ...], int, tuple[int, ...]]:
    """The special ids (each naming its piece), the unknown piece among them, and the
    USER_DEFINED ids; a file from before these fields has `<unk>` at 0 and nothing else."""
    specials = doc.get("special_tokens", {pieces[0][0]: 0})
    if not (isinstance(specials, dict) and specials):
        raise ModelFileError(f"'special_tokens' must map each special piece to its id, not {_short(specials)}")
    for text, tid in specials.items():
        if not (is_count(tid) and tid < len(pieces) and pieces[tid][0] == text):
            raise ModelFileError(f"special token {_short(text)} has the id {_short(tid)}, which is not that "
                                 "piece's id")
    unk_id = doc.get("unk_id", 0)
    if unk_id not in specials.values() or not is_count(unk_id):
        raise ModelFileError(f"'unk_id' {_short(unk_id)} must be the id of one of the special tokens")
    user = doc.get("user_defined", [])
    if not (isinstance(user, list) and all(is_count(i) and i < len(pieces) for i in user)):
        raise ModelFileError(f"'user_defined' must be a list of piece ids, not {_short(user)}")
    if set(user) & set(specials.values()):
        raise ModelFileError("a piece cannot be both user-defined and special")
    return tuple(sorted(specials.values())), unk_id, tuple(sorted(set(user)))


def check_scores(pieces: list[tuple[str, float]], exempt: set[int], error=ModelFileError) -> None:
    """A piece Viterbi matches scores a log probability, ≤ 0; `exempt` (special and
    USER_DEFINED pieces) may score anything finite (see the module docstring)."""
    for i, (text, score) in enumerate(pieces):
        if score > 0 and i not in exempt:
            raise error(f"piece {i} ({_short(text)}) has the score {score!r}; a piece's score is a log "
                        "probability, at most 0")


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
    """A JSON number that is a finite float (an integer too large for a float is not)."""
    try:
        return type(x) in (int, float) and math.isfinite(x)
    except OverflowError:
        return False


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
    """Every piece keeps its id: the special ones are added special tokens at their own ids,
    BOS/EOS a TemplateProcessing and PAD the padding, as for BPE."""
    from tokworkbench.core.formats.hf import padding_of, post_processor_of

    pre = model.pre_tokenizer
    if pre.rewrites:
        pre_tok, decoder = dict(METASPACE_HF), dict(METASPACE_HF)
        if getattr(model.text_normalizer, "whitespace_split", False):
            pre_tok = {"type": "Sequence", "pretokenizers": [{"type": "WhitespaceSplit"}, pre_tok]}
    elif pre.pattern is not None:
        from tokworkbench.core.formats.hf import hf_pattern

        pre_tok = {"type": "Split", "pattern": {"Regex": hf_pattern(pre.pattern)}, "behavior": "Isolated",
                   "invert": False}
        decoder = {"type": "Fuse"}
    else:
        pre_tok, decoder = None, {"type": "Fuse"}
    return {
        "version": "1.0",
        "truncation": None,
        "padding": padding_of(model),
        "added_tokens": [{"id": i, "content": model.pieces[i][0], "single_word": False, "lstrip": False,
                          "rstrip": False, "normalized": False, "special": True} for i in model.specials],
        "normalizer": (model.text_normalizer.to_hf() if model.text_normalizer is not None
                       else {"type": model.normalizer.upper()} if model.normalizer != "none" else None),
        "pre_tokenizer": pre_tok,
        "post_processor": post_processor_of(model),
        "decoder": decoder,
        "model": {"type": "Unigram", "unk_id": model.unk_id, "vocab": [[t, s] for t, s in model.pieces],
                  "byte_fallback": False},
    }


def check_hf(model: UnigramModel) -> None:
    """What HF cannot carry: a custom pattern Oniguruma reads otherwise (as for BPE), and
    SentencePiece's USER_DEFINED pieces (HF has no Viterbi bonus; its converter makes them added
    tokens, matched before Viterbi, which gives other ids on some text)."""
    from tokworkbench.core.formats.hf import check_hf_pattern

    if model.user_defined:
        i = model.user_defined[0]
        raise ExportError(f"piece {i} ({_short(model.pieces[i][0])}) is a SentencePiece user-defined piece; "
                          "HF has no such piece (its added tokens match otherwise), so its ids would differ")
    if not model.pre_tokenizer.rewrites:
        check_hf_pattern(model.pre_tokenizer)
    if getattr(model.text_normalizer, "kind", "") == "sentencepiece":
        why = model.text_normalizer.hf_difference()
        if why is not None:
            raise ExportError(f"{why}; HF's ids would differ (keep it as a .model or a tokworkbench model file)")


def write_hf(model: UnigramModel, out) -> list[str]:
    check_hf(model)
    write_atomic(out, json.dumps(to_hf(model), ensure_ascii=False, indent=1).encode("utf-8"))
    notes = ["note: HF sums path scores in float64 and SentencePiece in float32: where two segmentations tie "
             "exactly, HF may pick the other one"] if model.float32 else []
    return notes + [f"wrote {out}"]


PAD_NAMES = ("<pad>", "[PAD]")  # what a pad piece is called when no padding section names it


def from_hf(doc: dict, max_token_bytes: int = MAX_TOKEN_BYTES) -> UnigramModel:
    """A tokenizer.json Unigram model; what this tool cannot reproduce exactly is refused."""
    from tokworkbench.core.formats.hf import read_roles

    model = doc["model"]
    if model.get("byte_fallback"):
        raise ForeignModelError("Unigram with byte_fallback is not supported (unknown characters would become bytes)")
    pieces = check_pieces(model.get("vocab"), max_token_bytes, ForeignModelError)
    unk_id = model.get("unk_id")
    if not (is_count(unk_id) and unk_id < len(pieces)):
        raise ForeignModelError(f"'unk_id' is {_short(unk_id)}; this tool reads Unigram models with an unknown "
                                f"piece (an id in 0..{len(pieces) - 1})")
    specials = _hf_added(doc.get("added_tokens", []), pieces) | {unk_id}
    check_scores(pieces, specials, ForeignModelError)
    names = {pieces[i][0] for i in specials}
    found = read_roles(doc, model, names).to_dict()
    found["unk"] = pieces[unk_id][0]
    if "pad" not in found:
        pads = [t for t in PAD_NAMES if t in names]
        if len(pads) == 1:
            found["pad"] = pads[0]
    try:
        roles = Roles.of(found)
    except TokWorkbenchError:  # two roles on one token: keep only the unknown piece's
        roles = Roles(unk=pieces[unk_id][0])
    pre_spec = doc.get("pre_tokenizer")
    split = _whitespace_split(pre_spec)
    if split:  # Sequence[WhitespaceSplit, Metaspace]: the split becomes the last normalizer step
        pre_spec = pre_spec["pretokenizers"][1]
    normalizer, own = _hf_normalizer(doc.get("normalizer"), split)
    pre = _hf_pre_tokenizer(pre_spec, doc.get("decoder"))
    return UnigramModel(tuple(pieces), normalizer, pre, roles=roles, specials=tuple(sorted(specials)),
                        unk_id=unk_id, text_normalizer=own)


def _hf_added(added, pieces: list[tuple[str, float]]) -> set[int]:
    """The ids of HF's added special tokens, each a piece of the model's own vocabulary. A
    non-special added token is refused: HF cuts it out of the text before the model, which no
    piece of ours does."""
    if not isinstance(added, list):
        raise ForeignModelError(f"'added_tokens' must be a list, not {describe_json(added)}")
    out = set()
    for k, t in enumerate(added):
        if not (isinstance(t, dict) and is_text(t.get("content")) and is_count(t.get("id"))):
            raise ForeignModelError(f"added token {k} must have a text 'content' and a whole-number 'id'")
        tid, content = t["id"], t["content"]
        if tid >= len(pieces) or pieces[tid][0] != content:
            raise ForeignModelError(f"added token {_short(content)} (id {tid}) is not the model's piece {tid}; this "
                                    "tool reads added tokens that are pieces of the Unigram vocabulary")
        if not t.get("special", False):
            raise ForeignModelError(f"added token {_short(content)} (id {tid}) is not special; HF matches such a "
                                    "token before the model, which this tool does not reproduce")
        out.add(tid)
    return out


def _whitespace_split(spec) -> bool:
    steps = spec.get("pretokenizers") if isinstance(spec, dict) and spec.get("type") == "Sequence" else None
    return (isinstance(steps, list) and len(steps) == 2 and all(isinstance(s, dict) for s in steps)
            and steps[0].get("type") == "WhitespaceSplit" and steps[1].get("type") == "Metaspace")


def _hf_normalizer(spec, whitespace_split: bool = False) -> tuple[str, object]:
    """A named normalizer of ours where HF's is one, else the model's own (spnormalize.py):
    T5/ALBERT/XLNet's Precompiled map with Replace, Strip, Lowercase..."""
    if whitespace_split:
        return "none", spnormalize.hf_normalizer(spec, ForeignModelError, True)
    if spec is None:
        return "none", None
    if not isinstance(spec, dict):
        raise ForeignModelError(f"'normalizer' must be an object or null, not {describe_json(spec)}")
    kind = spec.get("type")
    if kind in ("NFC", "NFKC"):
        return kind.lower(), None
    if kind == "Sequence" and not spec.get("normalizers"):
        return "none", None
    return "none", spnormalize.hf_normalizer(spec, ForeignModelError)


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
            from tokworkbench.core.formats.hf import hf_pattern

            pat = step.get("pattern")
            if isinstance(pat, dict) and is_text(pat.get("Regex")):
                return from_pattern(pat["Regex"], also_matches=hf_pattern)
    raise ForeignModelError(f"pre-tokenizer {_short(spec.get('type'))} is not supported for Unigram "
                            "(Metaspace or one Split pattern is)")


# -- SentencePiece .model --------------------------------------------------------------------
def looks_like_sentencepiece(raw: bytes) -> bool:
    """A protobuf whose first field is `pieces` (field 1, length-delimited, tag byte 0x0A) and
    whose first piece parses as one: a text file that happens to start with a line break does
    not. Only the first piece is read, so a file cut short is still named as SentencePiece's
    (`from_sentencepiece` then says what is wrong with it)."""
    if raw[:1] != b"\x0a" or len(raw) < 4:
        return False
    try:
        size, pos = _varint(raw, 1)
        first = _message(raw[pos : pos + size]) if pos + size <= len(raw) else []
    except (IndexError, ValueError, TypeError):
        return False
    return bool(first) and first[0][0] == 1


SP_NORMAL, SP_UNKNOWN, SP_CONTROL, SP_USER, SP_UNUSED, SP_BYTE = 1, 2, 3, 4, 5, 6
SP_ROLE_IDS = {"unk": (40, 0), "bos": (41, 1), "eos": (42, 2), "pad": (43, -1)}  # trainer_spec field, default


def from_sentencepiece(raw: bytes, max_token_bytes: int = MAX_TOKEN_BYTES) -> UnigramModel:
    """The pieces of a SentencePiece ModelProto. Accepted: a Unigram model with any normalizer
    (its precompiled charsmap and whitespace rules become the model's own, spnormalize.py), a
    dummy prefix, escaped whitespace, one UNKNOWN piece, and NORMAL, CONTROL and USER_DEFINED
    pieces at any ids. Everything else is refused, naming what differs."""
    try:
        fields = _message_wire(raw)
    except (IndexError, struct.error, ValueError) as exc:
        raise ForeignModelError(f"not a SentencePiece model: its protobuf is damaged ({exc})") from None
    pieces: list[tuple[str, float]] = []
    kinds: list[int] = []
    trainer, normalizer = _Fields([], "trainer_spec"), _Fields([], "normalizer_spec")
    try:
        for number, wire, value in fields:
            if number in (1, 2, 3) and wire != 2:
                name = {1: "a piece", 2: "trainer_spec", 3: "normalizer_spec"}[number]
                raise ForeignModelError(f"not a SentencePiece model: {name} (field {number}) has wire type {wire}, "
                                        "not a message")
            if number == 1:
                sub = _Fields(_message_wire(value), f"piece {len(pieces)}")
                try:
                    text = sub.data(1, "piece").decode("utf-8")
                except UnicodeDecodeError:
                    raise ForeignModelError(f"not a SentencePiece model: piece {len(pieces)} is not UTF-8") from None
                score = struct.unpack("<f", sub.fixed32(2, "score"))[0] if 2 in sub else 0.0
                pieces.append((text, score))
                kinds.append(sub.int32(3, "type", SP_NORMAL))
            elif number == 2:
                trainer = _Fields(_message_wire(value), "trainer_spec")
            elif number == 3:
                normalizer = _Fields(_message_wire(value), "normalizer_spec")
    except (IndexError, struct.error, ValueError) as exc:
        raise ForeignModelError(f"not a SentencePiece model: a piece cannot be read ({exc})") from None
    if not pieces:
        raise ForeignModelError("not a SentencePiece model: it holds no pieces")
    _check_sp_spec(trainer, normalizer)
    unknown = [i for i, k in enumerate(kinds) if k == SP_UNKNOWN]
    if len(unknown) != 1:
        raise ForeignModelError(f"a SentencePiece model has one unknown piece; this one has {len(unknown)}")
    what = {SP_UNUSED: "an unused piece", SP_BYTE: "a byte piece"}
    for i, (k, (text, _)) in enumerate(zip(kinds, pieces)):
        if k not in (SP_NORMAL, SP_UNKNOWN, SP_CONTROL, SP_USER):
            raise ForeignModelError(f"piece {i} ({_short(text)}) is {what.get(k, f'of type {k}')}; this tool reads "
                                    "normal, unknown, control and user-defined pieces")
        if META in text[1:] and k in (SP_NORMAL, SP_USER):
            raise ForeignModelError(f"piece {i} ({_short(text)}) holds ▁ after its start; the metaspace split "
                                    "cuts before every ▁, so it could never match")
    specials = tuple(i for i, k in enumerate(kinds) if k in (SP_UNKNOWN, SP_CONTROL))
    user = tuple(i for i, k in enumerate(kinds) if k == SP_USER)
    checked = check_pieces([[t, s] for t, s in pieces], max_token_bytes, ForeignModelError)
    check_scores(checked, set(specials) | set(user), ForeignModelError)
    roles = {"unk": pieces[unknown[0]][0]}
    for role, (number, default) in SP_ROLE_IDS.items():
        tid = trainer.int32(number, f"{role}_id", default)
        if role != "unk" and 0 <= tid < len(pieces) and kinds[tid] == SP_CONTROL:
            roles[role] = pieces[tid][0]
    return UnigramModel(tuple(checked), "none", pre_tokenizer(METASPACE), roles=Roles.of(roles),
                        specials=specials, unk_id=unknown[0], user_defined=user, float32=True,
                        text_normalizer=_sp_normalizer(normalizer, tuple(pieces[i][0] for i in user)))


def _sp_normalizer(norm: "_Fields", user: tuple[str, ...]):
    """SentencePiece's normalizer_spec as ours: its charsmap and whitespace rules; None for
    the identity rule without whitespace collapsing (metaspace alone is then exact)."""
    blob = norm.data(2, "precompiled_charsmap")
    collapse = norm.flag(4, "remove_extra_whitespaces", True)
    if not blob and not collapse:
        return None
    try:
        cm = read_charsmap(blob) if blob else None
    except ModelFileError as exc:
        raise ForeignModelError(f"this SentencePiece model's normalizer: {exc}") from None
    name = norm.data(1, "name").decode("utf-8", "replace")[:100]
    return spnormalize.SpNormalizer(cm, name, collapse, user)


def _check_sp_spec(trainer: "_Fields", norm: "_Fields") -> None:
    """Refuse, naming it, each SentencePiece setting that makes its ids differ from a Viterbi
    over metaspace chunks."""
    model_type = trainer.int32(3, "model_type", 1)
    if model_type != 1:
        names = {2: "BPE", 3: "WORD", 4: "CHAR"}
        raise ForeignModelError(f"this SentencePiece model is {names.get(model_type, model_type)}, not Unigram")
    if trainer.flag(35, "byte_fallback", False):
        raise ForeignModelError("this SentencePiece model has byte_fallback (unknown characters become bytes); "
                                "that is not supported")
    if trainer.flag(24, "treat_whitespace_as_suffix", False):
        raise ForeignModelError("this SentencePiece model puts ▁ at the end of pieces (treat_whitespace_as_suffix); "
                                "metaspace puts it at the start")
    if not norm.flag(3, "add_dummy_prefix", True):
        raise ForeignModelError("this SentencePiece model adds no dummy prefix; metaspace always adds one")
    if not norm.flag(5, "escape_whitespaces", True):
        raise ForeignModelError("this SentencePiece model does not escape whitespace as ▁ (escape_whitespaces); "
                                "metaspace does")


class _Fields:
    """The fields of one protobuf message, each read as the wire type its field must have (the
    last value wins, as in protobuf); a field of another wire type is refused, naming it."""

    def __init__(self, fields: list[tuple[int, int, object]], what: str):
        self.fields = {number: (wire, value) for number, wire, value in fields}
        self.what = what

    def __contains__(self, number: int) -> bool:
        return number in self.fields

    def _get(self, number: int, wire: int, name: str):
        found, value = self.fields[number]
        if found != wire:
            kinds = {0: "a varint", 1: "fixed64", 2: "length-delimited", 5: "fixed32"}
            raise ForeignModelError(f"not a SentencePiece model: {self.what}'s {name} (field {number}) is "
                                    f"{kinds.get(found, f'wire type {found}')}, not {kinds[wire]}")
        return value

    def int32(self, number: int, name: str, default: int) -> int:
        """An int32 or enum: the low 32 bits of the varint, signed, as protobuf reads them."""
        if number not in self.fields:
            return default
        return _int32(self._get(number, 0, name))

    def flag(self, number: int, name: str, default: bool) -> bool:
        return bool(self._get(number, 0, name)) if number in self.fields else default

    def data(self, number: int, name: str) -> bytes:
        return self._get(number, 2, name) if number in self.fields else b""

    def fixed32(self, number: int, name: str) -> bytes:
        return self._get(number, 5, name)


def _int32(value: int) -> int:
    """A protobuf int32 read as a varint (a negative one is written in 64-bit two's complement):
    its low 32 bits, signed, as protobuf's own parsers truncate it."""
    return ((value & 0xFFFFFFFF) ^ 0x80000000) - 0x80000000


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
    return [(number, value) for number, _, value in _message_wire(data)]


def _message_wire(data: bytes) -> list[tuple[int, int, object]]:
    """(field number, wire type, value) of a protobuf message, values as `_message` gives them."""
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
        if pos > len(data):
            raise ValueError("a field runs past the end")
        out.append((number, wire, value))
    return out


def refuse_bpe_format(fmt: str) -> None:
    raise ExportError(f"{fmt} holds byte-level BPE merges; a Unigram model has scored pieces and no merges "
                      "(export it to hf)")
