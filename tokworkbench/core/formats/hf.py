"""Hugging Face `tokenizer.json`, read by its model type: each type's own module reads it."""

from tokworkbench.core.errors import ForeignModelError
from tokworkbench.core.files.limits import MAX_TOKEN_BYTES, short
from tokworkbench.core.formats import hf_bpe, hf_spbpe, hf_unigram, hf_wordpiece
from tokworkbench.core.models.protocol import Model


def _bpe(doc: dict, max_token_bytes: int) -> Model:
    """A BPE file by its content: SentencePiece's form (byte fallback, ▁ from the normalizer)
    or byte-level/char-level BPE."""
    read = hf_spbpe.from_hf if hf_spbpe.is_sentencepiece_bpe(doc) else hf_bpe.from_hf
    return read(doc, max_token_bytes)


READERS = {"BPE": _bpe, "Unigram": hf_unigram.from_hf, "WordPiece": hf_wordpiece.from_hf}


def from_hf(doc: dict, max_token_bytes: int = MAX_TOKEN_BYTES) -> Model:
    """A model from a parsed tokenizer.json (`hf_common.is_hf_tokenizer`); every part used is
    checked, so a damaged file is a ForeignModelError that names the part."""
    kind = doc["model"].get("type")
    read = READERS.get(kind) if isinstance(kind, str) else None
    if read is None:
        raise ForeignModelError(f"model type {short(kind)} is not one this tool reads ({', '.join(READERS)})")
    return read(doc, max_token_bytes)
