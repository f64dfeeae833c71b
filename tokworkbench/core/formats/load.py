"""Open any tokenizer file this tool reads, by what it holds rather than by its name."""

import json
from pathlib import Path

from ..errors import ForeignModelError, ModelFileError, TokWorkbenchError
from ..models.tokenizer import Tokenizer
from .hf import from_hf, is_hf_tokenizer
from .minbpe import HEADER as MINBPE_HEADER, from_minbpe
from .modelfile import from_json, is_our_model
from .tiktoken import companion_path, from_tiktoken


def load_any(path: str | Path, split: str | None = None) -> Tokenizer:
    """Our model, HF tokenizer.json, minbpe .model, or a tiktoken ranks file (needs `split` unless
    a companion OUT.json from our exporter sits beside it)."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ModelFileError(f"cannot read {path}: {exc.strerror or exc}") from None
    head = raw[:64].lstrip()
    try:
        if head.startswith(b"{"):
            try:
                doc = json.loads(raw.decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError) as exc:
                raise ModelFileError(f"not valid JSON ({exc})") from None
            if is_our_model(doc):
                return from_json(doc)
            if is_hf_tokenizer(doc):
                return from_hf(doc)
            raise ForeignModelError("a JSON file that is neither a tokworkbench model nor a Hugging Face tokenizer.json")
        if head.startswith(MINBPE_HEADER.encode()):
            return from_minbpe(raw.decode("utf-8"))
        side = companion_path(path)
        try:
            meta = json.loads(side.read_text(encoding="utf-8")) if side.exists() else None
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ForeignModelError(f"cannot read the companion {side.name}: {exc}") from None
        return from_tiktoken(raw, split, meta)
    except TokWorkbenchError as exc:
        raise type(exc)(f"{path}: {exc}") from None
