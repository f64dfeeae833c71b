"""Hugging Face `tokenizer.json`, read by its model type: each type's own module reads it."""

from tokworkbench.core.errors import ForeignModelError
from tokworkbench.core.files.limits import MAX_TOKEN_BYTES, short
from tokworkbench.core.formats import hf_bpe, hf_unigram, hf_wordpiece
from tokworkbench.core.models.protocol import Model

READERS = {"BPE": hf_bpe.from_hf, "Unigram": hf_unigram.from_hf, "WordPiece": hf_wordpiece.from_hf}


def from_hf(doc: dict, max_token_bytes: int = MAX_TOKEN_BYTES) -> Model:
    """A model from a parsed tokenizer.json (`hf_common.is_hf_tokenizer`); every part used is
    checked, so a damaged file is a ForeignModelError that names the part."""
    kind = doc["model"].get("type")
    read = READERS.get(kind) if isinstance(kind, str) else None
    if read is None:
        raise ForeignModelError(f"model type {short(kind)} is not one this tool reads ({', '.join(READERS)})")
    return read(doc, max_token_bytes)
