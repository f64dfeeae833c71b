"""Our Unigram model file: the envelope (files/envelope.py) with `"model": "unigram"`.

`"pieces": [[text, log_prob], ...]` in id order, special pieces included; `"special_tokens"`
maps each special piece to its id, `"unk_id"` names the unknown piece (0, `<unk>`, in what we
train) and `"user_defined"` lists SentencePiece USER_DEFINED ids; `"byte_pieces"` (with
byte_fallback) the ids of `<0x00>` ... `<0xFF>`, in byte order, and `"hf_byte_fallback": true`
where they are HF's (matched in text, ByteFallback's decoding: model.py). Its `"history"` lists the
rounds, round 0 the seed. Every score must be a finite number and every piece distinct,
non-empty text, or the file is refused with one line naming the entry (`check_pieces`, which the
HF and SentencePiece readers share).

Scores: any finite number. What we train are log probabilities (≤ 0), but SentencePiece and HF
read any score and encode with it as it is (their own tests use 2.0, 5.0, 10.0), so a model from
either keeps its scores and its ids.
"""

from tokworkbench.core.errors import ForeignModelError, ModelFileError, TokWorkbenchError
from tokworkbench.core.files.envelope import header
from tokworkbench.core.files.limits import (
    FLOAT32_MAX,
    MAX_TOKEN_BYTES,
    describe_json,
    is_count,
    is_finite_number,
    is_text,
    read_pre_tokenizer,
    short,
)
from tokworkbench.core.models.roles import Roles
from tokworkbench.core.text import spnormalize
from tokworkbench.core.text.bytepieces import byte_piece, piece_byte
from tokworkbench.core.text.normalize import NORMALIZERS
from tokworkbench.core.unigram.model import UnigramModel
from tokworkbench.core.unigram.rows import RoundRow
from tokworkbench.core.unigram.spconventions import SpConventions

KIND = "unigram"


# -- our file --------------------------------------------------------------------------------
def to_json(model: UnigramModel, corpus: dict | None = None) -> dict:
    pre = model.pre_tokenizer
    return {
        **header(KIND),
        "units": "char",
        "normalizer": model.normalizer,
        "pre_tokenizer": {"name": pre.name, "pattern": pre.pattern},
        "algorithm": model.algorithm,
        "start_cost": model.start_cost,
        "pieces": [[text, score] for text, score in model.pieces],
        "special_tokens": model.special_ids,
        "unk_id": model.unk_id,
        "user_defined": list(model.user_defined),
        **({"byte_pieces": list(model.byte_pieces)} if model.byte_pieces else {}),
        **({"hf_byte_fallback": True} if model.hf_byte_fallback else {}),
        "float32": model.float32,
        "hf_floats": model.hf_floats,
        "roles": model.roles.to_dict(),
        "history": [{"round": r.round, "vocab_size": r.vocab_size, "loss": r.loss, "removed": list(r.removed),
                     "tokens": r.tokens} for r in model.history],
        "corpus": corpus or {},
        **({"model_normalizer": model.text_normalizer.to_json()} if model.text_normalizer is not None else {}),
        **({"sentencepiece": {"unk_surface": model.sp_conventions.unk_surface,
                              "remove_extra_whitespaces": model.sp_conventions.collapse,
                              "add_dummy_prefix": model.sp_conventions.dummy_prefix}}
           if model.sp_conventions is not None else {}),
    }


def from_json(doc: dict, max_token_bytes: int = MAX_TOKEN_BYTES) -> UnigramModel:
    """A model from our parsed file; a damaged or hostile file is a ModelFileError naming the
    field, never another exception."""
    for key in ("normalizer", "pre_tokenizer", "pieces"):
        if key not in doc:
            raise ModelFileError(f"corrupt Unigram model file: no {key!r}")
    if doc.get("units", "char") != "char":
        raise ModelFileError(f"a Unigram model's units are characters, not {short(doc.get('units'))}")
    normalizer = doc["normalizer"]
    if normalizer not in NORMALIZERS:
        raise ModelFileError(f"normalizer {short(normalizer)} is not one of {', '.join(NORMALIZERS)}")
    pre = read_pre_tokenizer(doc["pre_tokenizer"])
    pieces = check_pieces(doc["pieces"], max_token_bytes, ModelFileError)
    specials, unk_id, user = _our_specials(doc, pieces)
    algorithm = doc.get("algorithm", "")
    if algorithm not in ("", "course", "em"):
        raise ModelFileError(f"algorithm {short(algorithm)} is not course or em")
    start_cost = doc.get("start_cost", 0.0)
    if not is_finite_number(start_cost):
        raise ModelFileError(f"'start_cost' must be a finite number, not {short(start_cost)}")
    history = _history(doc.get("history", []))
    try:
        roles = Roles.of(doc.get("roles")).check([pieces[i][0] for i in specials])
    except TokWorkbenchError as exc:
        raise ModelFileError(f"'roles': {exc}") from None
    float32 = doc.get("float32", False)
    if not isinstance(float32, bool):
        raise ModelFileError(f"'float32' must be true or false, not {short(float32)}")
    if float32:  # SentencePiece's scores: one past float32's range failed the first encode (OverflowError)
        far = next((i for i, (_, score) in enumerate(pieces) if abs(score) > FLOAT32_MAX), None)
        if far is not None:
            raise ModelFileError(f"piece {far} ({short(pieces[far][0])}) has the score {pieces[far][1]!r}, beyond "
                                 "float32's range, which a 'float32' model's scores are in (SentencePiece's)")
    hf_floats = doc.get("hf_floats", False)
    if not isinstance(hf_floats, bool):
        raise ModelFileError(f"'hf_floats' must be true or false, not {short(hf_floats)}")
    hf_bytes = doc.get("hf_byte_fallback", False)
    if not isinstance(hf_bytes, bool):
        raise ModelFileError(f"'hf_byte_fallback' must be true or false, not {short(hf_bytes)}")
    own = spnormalize.from_json(doc["model_normalizer"]) if "model_normalizer" in doc else None
    if own is not None and normalizer != "none":
        raise ModelFileError("a model with its own 'model_normalizer' has 'normalizer' none")
    byte_ids = _byte_pieces(doc, pieces, specials, user)
    if hf_bytes and not byte_ids:
        raise ModelFileError("'hf_byte_fallback' needs the 256 'byte_pieces'")
    return UnigramModel(tuple(pieces), normalizer, pre, history, algorithm, float(start_cost), roles,
                        specials, unk_id, user, float32, own, hf_floats, _conventions(doc.get("sentencepiece")),
                        byte_ids, hf_bytes)


def _byte_pieces(doc: dict, pieces: list[tuple[str, float]], specials, user) -> tuple[int, ...]:
    """`"byte_pieces"`: none, or the 256 ids of `<0x00>` ... `<0xFF>`, neither special nor user-defined."""
    ids = doc.get("byte_pieces", [])
    if ids == []:
        return ()
    if not (isinstance(ids, list) and len(ids) == 256 and all(is_count(i) and i < len(pieces) for i in ids)):
        raise ModelFileError(f"'byte_pieces' must list the 256 ids of <0x00> ... <0xFF>, not {short(ids)}")
    for b, tid in enumerate(ids):
        if pieces[tid][0] != byte_piece(b) or tid in specials or tid in user:
            raise ModelFileError(f"'byte_pieces' entry {b} is piece {tid} ({short(pieces[tid][0])}), not the "
                                 f"byte piece {byte_piece(b)}")
    return tuple(ids)


def byte_piece_ids(texts: list[str], types: list[int], byte_type: int, error=ForeignModelError) -> tuple[int, ...]:
    """The ids of the 256 byte pieces of a model with byte_fallback, in byte order; each piece of
    `byte_type` must be one of them, as SentencePiece's `PieceToByte` requires."""
    found: dict[int, int] = {}
    for i, (text, kind) in enumerate(zip(texts, types)):
        if kind == byte_type:
            b = piece_byte(text)
            if b is None:
                raise error(f"piece {i} ({short(text)}) is a byte piece, but not one of <0x00> ... <0xFF>")
            found.setdefault(b, i)
    missing = [b for b in range(256) if b not in found]
    if missing:
        raise error(f"a model with byte_fallback has all 256 byte pieces; {byte_piece(missing[0])} is missing")
    return tuple(found[b] for b in range(256))


def _conventions(spec) -> SpConventions | None:
    """`"sentencepiece"`: the model came from SentencePiece's file and keeps its conventions."""
    if spec is None:
        return None
    flags = ("remove_extra_whitespaces", "add_dummy_prefix")
    if not (isinstance(spec, dict) and is_text(spec.get("unk_surface"))
            and all(isinstance(spec.get(f), bool) for f in flags)):
        raise ModelFileError(f"'sentencepiece' must hold a text 'unk_surface' and true/false "
                             f"'remove_extra_whitespaces' and 'add_dummy_prefix', not {short(spec)}")
    return SpConventions(spec["unk_surface"], *(spec[f] for f in flags))


def _our_specials(doc: dict, pieces: list[tuple[str, float]]) -> tuple[tuple[int, ...], int, tuple[int, ...]]:
    """The special ids (each naming its piece), the unknown piece among them, and the
    USER_DEFINED ids; a file from before these fields has `<unk>` at 0 and nothing else."""
    specials = doc.get("special_tokens", {pieces[0][0]: 0})
    if not (isinstance(specials, dict) and specials):
        raise ModelFileError(f"'special_tokens' must map each special piece to its id, not {short(specials)}")
    for text, tid in specials.items():
        if not (is_count(tid) and tid < len(pieces) and pieces[tid][0] == text):
            raise ModelFileError(f"special token {short(text)} has the id {short(tid)}, which is not that "
                                 "piece's id")
    unk_id = doc.get("unk_id", 0)
    if unk_id not in specials.values() or not is_count(unk_id):
        raise ModelFileError(f"'unk_id' {short(unk_id)} must be the id of one of the special tokens")
    user = doc.get("user_defined", [])
    if not (isinstance(user, list) and all(is_count(i) and i < len(pieces) for i in user)):
        raise ModelFileError(f"'user_defined' must be a list of piece ids, not {short(user)}")
    if set(user) & set(specials.values()):
        raise ModelFileError("a piece cannot be both user-defined and special")
    return tuple(sorted(specials.values())), unk_id, tuple(sorted(set(user)))


def check_pieces(pieces, max_token_bytes: int, error=ModelFileError) -> list[tuple[str, float]]:
    """[[text, score], ...]: distinct non-empty texts, finite scores, bounded lengths."""
    if not isinstance(pieces, list) or not pieces:
        raise error(f"'pieces' must be a non-empty list of [text, score], not {describe_json(pieces)}")
    out: list[tuple[str, float]] = []
    seen: dict[str, int] = {}
    total = 0
    for i, entry in enumerate(pieces):
        if not (isinstance(entry, list) and len(entry) == 2 and is_text(entry[0]) and entry[0]):
            raise error(f"piece {i} is {short(entry)}; a piece is [text, score] with non-empty text")
        text, score = entry
        if not is_finite_number(score):
            raise error(f"piece {i} ({short(text)}) has the score {short(score)}; scores must be finite numbers")
        size = len(text.encode("utf-8"))
        if size > max_token_bytes:
            raise error(f"piece {i} is {size:,} bytes long; the limit is {max_token_bytes:,} (the longest a loader accepts)")
        total += size
        if text in seen:
            raise error(f"pieces {seen[text]} and {i} are both {short(text)}; each piece must be distinct")
        seen[text] = i
        out.append((text, float(score)))
    return out


def _history(history) -> tuple[RoundRow, ...]:
    if not isinstance(history, list):
        raise ModelFileError(f"'history' must be a list of rounds, not {describe_json(history)}")
    out = []
    for k, h in enumerate(history):
        if not (isinstance(h, dict) and is_count(h.get("round")) and is_count(h.get("vocab_size"))
                and is_finite_number(h.get("loss")) and isinstance(h.get("removed"), list)
                and all(is_text(p) for p in h["removed"]) and is_count(h.get("tokens", 0))):
            raise ModelFileError(f"history round {k} must have whole numbers for round and vocab_size, a finite "
                                 "loss and a list of removed pieces")
        out.append(RoundRow(h["round"], h["vocab_size"], float(h["loss"]), tuple(h["removed"]), h.get("tokens", 0)))
    return tuple(out)
