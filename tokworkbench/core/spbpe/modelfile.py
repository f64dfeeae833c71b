"""Our SentencePiece-BPE file, and the checks a model of this kind must pass from any file.

`"model": "spbpe"` (files/envelope.py), then `pieces`: [[text, score, type], ...] in id order
(type one of normal, unknown, control, user_defined, byte; scores as float32 values),
`model_normalizer` (text/spnormalize.py's SentencePiece rule), `add_dummy_prefix`,
`byte_fallback`, `unk_surface` and `roles`. `check_pieces` is what the SentencePiece and HF
readers use too, so every way in refuses the same damaged model the same way.
"""

import struct

from tokworkbench.core.errors import ModelFileError, TokWorkbenchError
from tokworkbench.core.files.envelope import header
from tokworkbench.core.files.limits import FLOAT32_MAX, MAX_TOKEN_BYTES, describe_json, is_finite_number, is_text, short
from tokworkbench.core.models.roles import Roles
from tokworkbench.core.spbpe.model import BYTE, CONTROL, KIND, TYPE_NAMES, UNK_SURFACE, UNKNOWN, SpBpeModel, byte_piece
from tokworkbench.core.text import spnormalize

_TYPES = {name: t for t, name in TYPE_NAMES.items()}


def to_json(model: SpBpeModel, corpus: dict | None = None) -> dict:
    """Our file; nothing here is trained, so `corpus` is not kept."""
    return {
        **header(KIND),
        "pieces": [[p, s, TYPE_NAMES[t]] for p, s, t in zip(model.pieces, model.scores, model.types)],
        "model_normalizer": model.text_normalizer.to_json(),
        "add_dummy_prefix": model.add_dummy_prefix,
        "byte_fallback": model.byte_fallback,
        "unk_surface": model.unk_surface,
        "roles": model.roles.to_dict(),
        **({"merges": [list(m) for m in model.merges]} if model.merges else {}),
        **({"metaspace": list(model.metaspace)} if model.metaspace else {}),
    }


def from_json(doc: dict, max_token_bytes: int = MAX_TOKEN_BYTES) -> SpBpeModel:
    raw = doc.get("pieces")
    if not isinstance(raw, list) or not raw:
        raise ModelFileError(f"'pieces' must be a non-empty list of [text, score, type], not {describe_json(raw)}")
    pieces, scores, types = [], [], []
    for i, entry in enumerate(raw):
        if not (isinstance(entry, list) and len(entry) == 3 and is_text(entry[0]) and is_text(entry[2])
                and entry[2] in _TYPES):  # a list or an object as the type cannot be looked up
            raise ModelFileError(f"piece {i} is {short(entry)}; a piece is [text, score, type] with type one of "
                                 f"{', '.join(_TYPES)}")
        pieces.append(entry[0])
        scores.append(entry[1])
        types.append(_TYPES[entry[2]])
    if "model_normalizer" not in doc:
        raise ModelFileError("a SentencePiece-BPE file needs its 'model_normalizer'")
    norm = spnormalize.from_json(doc["model_normalizer"])
    if not isinstance(norm, spnormalize.SpNormalizer):
        raise ModelFileError("a SentencePiece-BPE model's 'model_normalizer' is of type sentencepiece")
    flags = {}
    for name in ("add_dummy_prefix", "byte_fallback"):
        flags[name] = doc.get(name)
        if not isinstance(flags[name], bool):
            raise ModelFileError(f"'{name}' must be true or false, not {short(flags[name])}")
    surface = doc.get("unk_surface", UNK_SURFACE)
    if not is_text(surface):
        raise ModelFileError(f"'unk_surface' must be a text, not {short(surface)}")
    try:
        roles = Roles.of(doc.get("roles"))
    except TokWorkbenchError as exc:
        raise ModelFileError(f"'roles': {exc}") from None
    merges = doc.get("merges", [])
    if not (isinstance(merges, list) and all(isinstance(m, list) and len(m) == 2 and all(map(is_text, m))
                                             for m in merges)):
        raise ModelFileError("'merges' must be a list of [left, right] texts")
    metaspace = doc.get("metaspace")
    if metaspace is not None and not (isinstance(metaspace, list) and len(metaspace) == 2
                                      and metaspace[0] in ("always", "first", "never") and isinstance(metaspace[1], bool)):
        raise ModelFileError("'metaspace' must be [prepend scheme (always, first or never), split true or false]")
    return checked_model(pieces, scores, types, norm, flags["add_dummy_prefix"], flags["byte_fallback"], roles,
                         surface, max_token_bytes, ModelFileError, [tuple(m) for m in merges],
                         tuple(metaspace) if metaspace else None)


def checked_model(pieces: list, scores: list, types: list[int], norm, add_dummy_prefix: bool, byte_fallback: bool,
                  roles: Roles, unk_surface: str, max_token_bytes: int, error=ModelFileError,
                  merges: list[tuple[str, str]] = (), metaspace: tuple[str, bool] | None = None) -> SpBpeModel:
    """A model whose pieces SentencePiece would load: distinct non-empty texts, finite float32
    scores, one unknown piece, well-formed byte pieces only with byte_fallback (and then all
    256 of them), roles naming control or unknown pieces; `error` otherwise, naming the piece."""
    seen: dict[str, int] = {}
    for i, (text, score, kind) in enumerate(zip(pieces, scores, types)):
        if not (is_text(text) and text):
            raise error(f"piece {i} is {short(text)}; a piece is a non-empty text")
        if not is_finite_number(score):
            raise error(f"piece {i} ({short(text)}) has the score {short(score)}; scores must be finite numbers")
        if abs(score) > FLOAT32_MAX or struct.unpack("<f", struct.pack("<f", score))[0] != score:
            raise error(f"piece {i} ({short(text)}) has the score {score!r}, which is no float32 value "
                        "(SentencePiece stores float32)")
        size = len(text.encode("utf-8"))
        if size > max_token_bytes:
            raise error(f"piece {i} is {size:,} bytes long; the limit is {max_token_bytes:,}")
        if text in seen:
            raise error(f"pieces {seen[text]} and {i} are both {short(text)}; each piece must be distinct")
        seen[text] = i
        if kind == BYTE:
            if not byte_fallback:
                raise error(f"piece {i} ({short(text)}) is a byte piece in a model without byte_fallback")
            if not (len(text) == 6 and text.startswith("<0x") and text.endswith(">")
                    and all(c in "0123456789ABCDEF" for c in text[3:5])):
                raise error(f"byte piece {i} is {short(text)}, not <0xNN> (two upper-case hex digits)")
    unknown = [i for i, k in enumerate(types) if k == UNKNOWN]
    if len(unknown) != 1:
        raise error(f"a SentencePiece model has one unknown piece; this one has {len(unknown)}")
    if byte_fallback:
        missing = [b for b in range(256) if types[seen[byte_piece(b)]] != BYTE] if all(
            byte_piece(b) in seen for b in range(256)) else [b for b in range(256) if byte_piece(b) not in seen]
        if missing:
            raise error(f"a model with byte_fallback has all 256 byte pieces; {byte_piece(missing[0])} "
                        f"is {'not a byte piece' if byte_piece(missing[0]) in seen else 'missing'}")
    for role, token in roles.items():
        if token not in seen or types[seen[token]] not in (UNKNOWN, CONTROL):
            raise error(f"the {role} token {short(token)} is not a control or unknown piece of this model")
    for k, (a, b) in enumerate(merges):
        for part in (a, b, a + b):
            if part not in seen:
                raise error(f"merge {k} ({short(a)} + {short(b)}) names {short(part)}, which is not a piece")
    return SpBpeModel(tuple(pieces), tuple(float(s) for s in scores), tuple(types), norm, add_dummy_prefix,
                      byte_fallback, roles, unk_surface, tuple(merges), metaspace)
