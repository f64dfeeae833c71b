"""SentencePiece's `.model` file: a protobuf, read by hand.

The few fields needed (pieces and their types, the trainer's model type and special ids, the
normalizer) are read below, so no protobuf library is needed. Its UNKNOWN and CONTROL pieces are
the special pieces, with the roles its trainer_spec gives them (unk_id, bos_id, eos_id, pad_id).
A Unigram model becomes a UnigramModel, a BPE model (model_type 2) an SpBpeModel (core/spbpe/).
"""

import struct

from tokworkbench.core.errors import ForeignModelError, ModelFileError, TokWorkbenchError
from tokworkbench.core.files.limits import MAX_TOKEN_BYTES, short
from tokworkbench.core.models.roles import Roles
from tokworkbench.core.spbpe.model import UNK_SURFACE, SpBpeModel
from tokworkbench.core.spbpe.modelfile import checked_model
from tokworkbench.core.text import spnormalize
from tokworkbench.core.text.charsmap import read_charsmap
from tokworkbench.core.text.patterns import METASPACE
from tokworkbench.core.text.pretokenize import pre_tokenizer
from tokworkbench.core.text.spnormalize import META
from tokworkbench.core.unigram.model import UnigramModel
from tokworkbench.core.unigram.modelfile import byte_piece_ids, check_pieces
from tokworkbench.core.unigram.spconventions import SpConventions


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


def from_sentencepiece(raw: bytes, max_token_bytes: int = MAX_TOKEN_BYTES) -> UnigramModel | SpBpeModel:
    """The pieces of a SentencePiece ModelProto. Accepted: a Unigram model with any normalizer
    (its precompiled charsmap and whitespace rules become the model's own, spnormalize.py), a
    dummy prefix, escaped whitespace, one UNKNOWN piece, and NORMAL, CONTROL and USER_DEFINED
    pieces at any ids; with byte_fallback, all 256 BYTE pieces. Everything else is refused, naming
    what differs."""
    try:
        fields = _message_wire(raw)
    except (IndexError, struct.error, ValueError) as exc:
        raise ForeignModelError(f"not a SentencePiece model: its protobuf is damaged ({exc})") from None
    pieces: list[tuple[str, float]] = []
    kinds: list[int] = []
    trainer, normalizer = _Fields([], "trainer_spec"), _Fields([], "normalizer_spec")
    denormalizer = _Fields([], "denormalizer_spec")
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
            elif number == 5 and wire == 2:
                denormalizer = _Fields(_message_wire(value), "denormalizer_spec")
    except (IndexError, struct.error, ValueError) as exc:
        raise ForeignModelError(f"not a SentencePiece model: a piece cannot be read ({exc})") from None
    if not pieces:
        raise ForeignModelError("not a SentencePiece model: it holds no pieces")
    nul = next((i for i, (text, _) in enumerate(pieces) if "\0" in text), None)
    if nul is not None:  # sentencepiece refuses to load it: "piece must not include null character"
        raise ForeignModelError(f"piece {nul} ({short(pieces[nul][0])}) holds a NUL character, which "
                                "sentencepiece refuses in a piece")
    if trainer.int32(3, "model_type", 1) == 2:
        return _bpe_model(pieces, kinds, trainer, normalizer, denormalizer, max_token_bytes)
    _check_sp_spec(trainer, normalizer)
    unknown = [i for i, k in enumerate(kinds) if k == SP_UNKNOWN]
    if len(unknown) != 1:
        raise ForeignModelError(f"a SentencePiece model has one unknown piece; this one has {len(unknown)}")
    byte_fallback = trainer.flag(35, "byte_fallback", False)
    what = {SP_UNUSED: "an unused piece", SP_BYTE: "a byte piece in a model without byte_fallback"}
    allowed = (SP_NORMAL, SP_UNKNOWN, SP_CONTROL, SP_USER) + ((SP_BYTE,) if byte_fallback else ())
    for i, (k, (text, _)) in enumerate(zip(kinds, pieces)):
        if k not in allowed:
            raise ForeignModelError(f"piece {i} ({short(text)}) is {what.get(k, f'of type {k}')}; this tool reads "
                                    "normal, unknown, control, user-defined and (with byte_fallback) byte pieces")
        if META in text[1:] and k in (SP_NORMAL, SP_USER):
            raise ForeignModelError(f"piece {i} ({short(text)}) holds ▁ after its start; the metaspace split "
                                    "cuts before every ▁, so it could never match")
    specials = tuple(i for i, k in enumerate(kinds) if k in (SP_UNKNOWN, SP_CONTROL))
    user = tuple(i for i, k in enumerate(kinds) if k == SP_USER)
    checked = check_pieces([[t, s] for t, s in pieces], max_token_bytes, ForeignModelError)
    byte_ids = byte_piece_ids([t for t, _ in pieces], kinds, SP_BYTE) if byte_fallback else ()
    roles = {"unk": pieces[unknown[0]][0]}
    for role, (number, default) in SP_ROLE_IDS.items():
        tid = trainer.int32(number, f"{role}_id", default)
        if role != "unk" and 0 <= tid < len(pieces) and kinds[tid] == SP_CONTROL:
            roles[role] = pieces[tid][0]
    conventions = SpConventions(_unk_surface(trainer), normalizer.flag(4, "remove_extra_whitespaces", True),
                                normalizer.flag(3, "add_dummy_prefix", True))
    return UnigramModel(tuple(checked), "none", pre_tokenizer(METASPACE), roles=Roles.of(roles),
                        specials=specials, unk_id=unknown[0], user_defined=user, float32=True,
                        text_normalizer=_sp_normalizer(normalizer, tuple(pieces[i][0] for i in user)),
                        sp_conventions=conventions, byte_pieces=byte_ids)


def _unk_surface(trainer: "_Fields") -> str:
    """What SentencePiece decodes the unknown piece to (trainer_spec.unk_surface)."""
    return trainer.data(44, "unk_surface").decode("utf-8", "replace") if 44 in trainer else UNK_SURFACE


def _bpe_model(pieces: list[tuple[str, float]], kinds: list[int], trainer: "_Fields", norm: "_Fields",
               denorm: "_Fields", max_token_bytes: int) -> SpBpeModel:
    """A BPE ModelProto as SentencePiece encodes it (spbpe/model.py); refused, naming it, is
    each setting whose ids or text that model would not reproduce."""
    if trainer.flag(24, "treat_whitespace_as_suffix", False):
        raise ForeignModelError("this SentencePiece model puts ▁ at the end of pieces (treat_whitespace_as_suffix); "
                                "that is not supported")
    if not norm.flag(5, "escape_whitespaces", True):
        raise ForeignModelError("this SentencePiece model does not escape whitespace as ▁ (escape_whitespaces); "
                                "that is not supported")
    if denorm.data(2, "precompiled_charsmap"):
        raise ForeignModelError("this SentencePiece model has a denormalizer (decoded text is mapped again); "
                                "that is not supported")
    unused = [i for i, k in enumerate(kinds) if k == SP_UNUSED]
    if unused:
        raise ForeignModelError(f"piece {unused[0]} ({short(pieces[unused[0]][0])}) is an unused piece: "
                                "SentencePiece's BPE splits those again by the merges of the whole sentence, "
                                "which is not supported")
    known = (SP_NORMAL, SP_UNKNOWN, SP_CONTROL, SP_USER, SP_BYTE)
    odd = [i for i, k in enumerate(kinds) if k not in known]
    if odd:
        raise ForeignModelError(f"piece {odd[0]} ({short(pieces[odd[0]][0])}) is of type {kinds[odd[0]]}, "
                                "which SentencePiece does not have")
    byte_fallback = trainer.flag(35, "byte_fallback", False)
    user = tuple(p for (p, _), k in zip(pieces, kinds) if k == SP_USER)
    normalizer = _sp_normalizer(norm, user) or spnormalize.SpNormalizer(None, "identity", False, user)
    roles = {}
    for role, (number, default) in SP_ROLE_IDS.items():
        tid = trainer.int32(number, f"{role}_id", default)
        if 0 <= tid < len(pieces) and kinds[tid] in ((SP_UNKNOWN,) if role == "unk" else (SP_CONTROL,)):
            roles[role] = pieces[tid][0]
    surface = _unk_surface(trainer)
    try:
        role_set = Roles.of(roles)
    except TokWorkbenchError as exc:
        raise ForeignModelError(f"this SentencePiece model's roles: {exc}") from None
    return checked_model([p for p, _ in pieces], [s for _, s in pieces], kinds, normalizer,
                         norm.flag(3, "add_dummy_prefix", True), byte_fallback, role_set, surface,
                         max_token_bytes, ForeignModelError)


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
        raise ForeignModelError(f"this SentencePiece model is {names.get(model_type, model_type)}; this tool reads "
                                "Unigram and BPE models")
    if trainer.flag(24, "treat_whitespace_as_suffix", False):
        raise ForeignModelError("this SentencePiece model puts ▁ at the end of pieces (treat_whitespace_as_suffix); "
                                "metaspace puts it at the start")
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


