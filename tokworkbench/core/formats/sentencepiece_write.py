"""SentencePiece's `.model` file written by hand: a ModelProto (sentencepiece_model.proto), no
protobuf library, only the fields that decide how `SentencePieceProcessor` encodes and decodes.

Written: each piece with its float32 score and type (NORMAL, UNKNOWN, CONTROL, USER_DEFINED,
BYTE); the trainer_spec's model_type, vocab_size, byte_fallback, unk/bos/eos/pad ids and pieces
(-1 where the model has no such piece) and unk_surface; the normalizer_spec's name, precompiled
charsmap, add_dummy_prefix, remove_extra_whitespaces and escape_whitespaces. Our reader
(sentencepiece.py) reads the file back as the same model.

Refused, saying why: a Unigram model whose text SentencePiece cannot normalize or split the same
way (an NFC/NFKC setting, for which SentencePiece needs a charsmap this tool does not compile; an
HF normalizer; a split other than metaspace; a piece with ▁ after its start, which SentencePiece's
whole-sentence lattice would match across words).

SentencePiece puts its dummy ▁ before any text, HF's Metaspace not before text that already
starts with a space or ▁, and no SentencePiece setting says HF's rule. Models trained with
`--algorithm em` keep SentencePiece's conventions and write exactly; a `--algorithm course` model
(HF's rule) is refused unless its whitespace is collapsed, so that no text starts with a space.
"""

import struct
from dataclasses import dataclass
from pathlib import Path

from tokworkbench.core.errors import ExportError
from tokworkbench.core.files.atomic import write_atomic
from tokworkbench.core.files.limits import short
from tokworkbench.core.spbpe.model import SpBpeModel
from tokworkbench.core.text.bytepieces import BYTE_TEXT_NOTE
from tokworkbench.core.text.spnormalize import META, SpNormalizer
from tokworkbench.core.unigram.model import UnigramModel

NORMAL, UNKNOWN, CONTROL, USER_DEFINED, BYTE = 1, 2, 3, 4, 6
UNIGRAM, BPE = 1, 2
_ROLE_FIELDS = {"unk": (40, 45), "bos": (41, 46), "eos": (42, 47), "pad": (43, 48)}  # (id field, piece field)
_DEFAULT_PIECES = {"unk": "<unk>", "bos": "<s>", "eos": "</s>", "pad": "<pad>"}
UNK_SURFACE = " \u2047 "


@dataclass(frozen=True)
class SpModelSpec:
    """What a .model file says, before it is bytes."""
    pieces: tuple[tuple[str, float, int], ...]  # (text, score, type)
    model_type: int
    byte_fallback: bool
    role_ids: dict  # role -> (id, piece); id -1 when the model has none
    unk_surface: str
    norm_name: str
    charsmap: bytes
    add_dummy_prefix: bool
    remove_extra_whitespaces: bool


# -- protobuf encoding -------------------------------------------------------------------------
def _varint(value: int) -> bytes:
    value &= (1 << 64) - 1  # a negative int32 is written as 64-bit two's complement
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _int(number: int, value: int) -> bytes:
    return _varint(number << 3) + _varint(value)


def _bytes(number: int, data: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(data)) + data


def _float(number: int, value: float) -> bytes:
    return _varint(number << 3 | 5) + struct.pack("<f", value)


def encode_spec(spec: SpModelSpec) -> bytes:
    out = bytearray()
    for text, score, kind in spec.pieces:
        piece = _bytes(1, text.encode("utf-8")) + _float(2, score)
        out += _bytes(1, piece + (_int(3, kind) if kind != NORMAL else b""))
    trainer = _int(3, spec.model_type) + _int(4, len(spec.pieces))
    if spec.byte_fallback:
        trainer += _int(35, 1)
    for role, (id_field, piece_field) in _ROLE_FIELDS.items():
        tid, piece = spec.role_ids[role]
        trainer += _int(id_field, tid) + _bytes(piece_field, piece.encode("utf-8"))
    trainer += _bytes(44, spec.unk_surface.encode("utf-8"))
    out += _bytes(2, trainer)
    norm = _bytes(1, spec.norm_name.encode("utf-8"))
    if spec.charsmap:
        norm += _bytes(2, spec.charsmap)
    norm += _int(3, spec.add_dummy_prefix) + _int(4, spec.remove_extra_whitespaces) + _int(5, 1)
    out += _bytes(3, norm)
    return bytes(out)


# -- a model as a spec -------------------------------------------------------------------------
def _role_ids(roles, pieces: list[str], unk_id: int) -> dict:
    ids = {"unk": (unk_id, pieces[unk_id])}
    index = {p: i for i, p in enumerate(pieces)}
    for role in ("bos", "eos", "pad"):
        name = getattr(roles, role)
        ids[role] = (index[name], name) if name else (-1, _DEFAULT_PIECES[role])
    return ids


def _normalizer(norm) -> tuple[str, bytes, bool]:
    if norm is None:
        return "identity", b"", False
    if not isinstance(norm, SpNormalizer):
        raise ExportError(f"this model normalizes with HF's steps ({norm.label}); SentencePiece normalizes with "
                          "one charsmap, so its text would differ")
    return norm.name or "custom", norm.charsmap.blob if norm.charsmap is not None else b"", \
        norm.remove_extra_whitespaces


def unigram_spec(model: UnigramModel) -> SpModelSpec:
    if model.units.is_bytes:
        raise ExportError("SentencePiece's Unigram pieces are text; this model's units are bytes")
    if model.normalizer != "none":
        raise ExportError(f"SentencePiece normalizes with a precompiled charsmap, which this tool does not build "
                          f"for {model.normalizer.upper()} (train with normalizer none)")
    if not model.pre_tokenizer.rewrites:
        raise ExportError(f"SentencePiece splits text only at ▁ (metaspace); this model splits with "
                          f"{model.pre_tokenizer.name}")
    name, blob, collapse = _normalizer(model.text_normalizer)
    user, specials, spelled = set(model.user_defined), set(model.specials), set(model.byte_pieces)
    pieces = []
    for i, (text, score) in enumerate(model.pieces):
        kind = UNKNOWN if i == model.unk_id else CONTROL if i in specials else USER_DEFINED if i in user else \
            BYTE if i in spelled else NORMAL
        if kind in (NORMAL, USER_DEFINED) and META in text[1:]:
            raise ExportError(f"piece {i} ({short(text)}) holds ▁ after its start: SentencePiece's lattice spans the "
                              "whole sentence and would match it across words, metaspace never does")
        pieces.append((text, 0.0 if kind != NORMAL else score, kind))
    return SpModelSpec(tuple(pieces), UNIGRAM, model.byte_fallback, _role_ids(model.roles, [p for p, _ in model.pieces],
                                                                 model.unk_id),
                       UNK_SURFACE, name, blob, True, collapse)


def spbpe_spec(model: SpBpeModel) -> SpModelSpec:
    norm = model.text_normalizer
    return SpModelSpec(tuple(zip(model.pieces, model.scores, model.types)), BPE, model.byte_fallback,
                       _role_ids(model.roles, list(model.pieces), model.unk_id), model.unk_surface,
                       norm.name or "custom", norm.charsmap.blob if norm.charsmap is not None else b"",
                       model.add_dummy_prefix, norm.remove_extra_whitespaces)


def unigram_notes(model: UnigramModel) -> list[str]:
    """Nothing to note when SentencePiece reads the file with our ids: a model that keeps
    SentencePiece's conventions (read from a .model), or one whose whitespace is collapsed (no
    text then starts with a space). Otherwise refused: SentencePiece puts its dummy ▁ in front
    even of a leading space, HF's Metaspace (the course algorithm's rule) does not, and no
    SentencePiece setting says the latter, so the file would give other ids on such text."""
    norm = model.text_normalizer
    if model.sp_conventions is not None or (isinstance(norm, SpNormalizer) and norm.remove_extra_whitespaces):
        return [BYTE_TEXT_NOTE] if model.hf_byte_fallback else []
    raise ExportError("SentencePiece puts its dummy ▁ in front even of text that starts with a space, and this "
                      "model (HF's Metaspace rule) does not: a .model file would give other ids on such text; "
                      "export it to hf instead")


def write_spec(spec: SpModelSpec, out: Path, notes: list[str] = ()) -> list[str]:
    write_atomic(out, encode_spec(spec))
    return list(notes) + [f"wrote {out}"]
