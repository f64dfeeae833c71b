"""Open any tokenizer file this tool reads, by what it holds rather than by its name.

Only a regular file of at most `MAX_MODEL_FILE_BYTES` is read, and every token's length is
bounded (`max_token_bytes`) before any token is built. A file that is none of the formats gets
a message naming what it holds (a JSON array, null, an empty file, a minbpe version we do not
read, a byte-order mark), and every failure is a ModelFileError prefixed with the path.
"""

import codecs
import os
from pathlib import Path

from tokworkbench.core.bpe.model import Tokenizer
from tokworkbench.core.errors import ForeignModelError, ModelFileError, TokWorkbenchError
from tokworkbench.core.files.envelope import is_our_model
from tokworkbench.core.files.limits import MAX_TOKEN_BYTES, describe_json, parse_json, read_model_file
from tokworkbench.core.formats.hf import from_hf
from tokworkbench.core.formats.hf_common import is_hf_tokenizer
from tokworkbench.core.formats.minbpe import from_minbpe
from tokworkbench.core.formats.sentencepiece import from_sentencepiece, looks_like_sentencepiece
from tokworkbench.core.formats.tekken import from_tekken, is_tekken
from tokworkbench.core.formats.tiktoken import companion_path, from_tiktoken, ranks_digest, read_companion
from tokworkbench.core.registry.modelfile import from_json
from tokworkbench.core.text.pretokenize import PreTokenizer
from tokworkbench.core.wordpiece.modelfile import from_vocab_txt, looks_like_vocab_txt

_JSON_STARTS = tuple(b'{["-0123456789tfn')


def load_any(path: str | Path, split: "str | PreTokenizer | None" = None,
             max_token_bytes: int = MAX_TOKEN_BYTES, specials: dict[str, int] | None = None,
             lowercase: bool = True, strip_accents: bool | None = None) -> Tokenizer:
    """Our model, HF tokenizer.json, Mistral's tekken.json, minbpe .model, BERT's vocab.txt, or a tiktoken ranks file
    (needs `split` unless a companion OUT.json from our exporter sits beside it). `split` is a
    preset name, `regex:PATTERN` or a PreTokenizer; `specials` (name -> id) adds special tokens to
    tiktoken ranks, which keep theirs outside the file. `lowercase` and `strip_accents` (None: as
    lowercase) are BERT's do_lower_case and strip_accents, which a vocab.txt does not record."""
    path = Path(path)
    raw = read_model_file(path)
    try:
        if looks_like_vocab_txt(raw):
            _no_specials(specials)
            return from_vocab_txt(raw, lowercase, strip_accents, max_token_bytes)
        return _parse(path, raw, split, max_token_bytes, specials)
    except TokWorkbenchError as exc:
        raise _with_path(exc, path) from None


def _with_path(exc: TokWorkbenchError, path: Path) -> TokWorkbenchError:
    """The same error, its message prefixed with the file (the class kept where it can be)."""
    try:
        return type(exc)(f"{path}: {exc}")
    except TypeError:  # a class whose constructor takes more than a message
        return ModelFileError(f"{path}: {exc}")


def _parse(path: Path, raw: bytes, split, max_token_bytes: int, specials: dict[str, int] | None = None) -> Tokenizer:
    if raw.startswith(codecs.BOM_UTF8):
        parse_json(raw)  # raises, naming the byte-order mark
    head = raw[:64].lstrip()
    if not head:
        raise ModelFileError("the file is empty" if not raw else "the file holds only whitespace")
    if head[0] in _JSON_STARTS and not _looks_like_ranks(head):
        _no_specials(specials)
        doc = parse_json(raw)
        if is_tekken(doc):
            return from_tekken(doc, max_token_bytes, ranks_digest(raw))
        return _from_json_doc(doc, max_token_bytes)
    if looks_like_sentencepiece(raw):
        _no_specials(specials)
        return from_sentencepiece(raw, max_token_bytes)
    if head.startswith(b"minbpe v"):
        _no_specials(specials)
        return from_minbpe(raw, max_token_bytes)
    meta = read_companion(path, raw)
    return from_tiktoken(raw, split, meta, max_token_bytes, companion_path(path).name, specials)


def _no_specials(specials) -> None:
    if specials:
        raise ForeignModelError("special tokens by id (NAME=ID) are for tiktoken ranks, which keep them "
                                "outside the file; this model's file names its own")


def _looks_like_ranks(head: bytes) -> bool:
    """A ranks line can start with a JSON-ish character ('n', 't', 'f', a digit): 'BASE64 RANK',
    and the first rank need not be 0 (tiktoken allows gaps and any order)."""
    first = head.split(b"\n", 1)[0].split()
    return len(first) == 2 and first[1].isdigit()


def _from_json_doc(doc, max_token_bytes: int) -> Tokenizer:
    if is_our_model(doc):
        return from_json(doc, max_token_bytes)
    if is_hf_tokenizer(doc):
        return from_hf(doc, max_token_bytes)
    if isinstance(doc, dict):
        raise ForeignModelError("a JSON object that is neither a tokworkbench model nor a Hugging Face "
                                "tokenizer.json (no \"format\": \"tokworkbench\", no \"model\" object)")
    raise ForeignModelError(f"the file holds {describe_json(doc)}, not a tokenizer "
                            f"(a tokworkbench model or a Hugging Face tokenizer.json is a JSON object)")


def model_inputs(path: str | Path) -> list[str]:
    """The files a model at `path` is read from: itself, and a tiktoken companion if one is there
    (so an output can be checked against all of them before any work)."""
    side = companion_path(Path(path))
    return [str(path)] + ([str(side)] if os.path.lexists(side) else [])


def open_model(name: str | Path, split: "str | PreTokenizer | None" = None, max_token_bytes: int = MAX_TOKEN_BYTES,
               specials: dict[str, int] | None = None, lowercase: bool = True, strip_accents: bool | None = None):
    """A model file, or a preset by name (cl100k_base, o200k_base, gpt2) when no such file is
    here: what every command that reads a model accepts."""
    from tokworkbench.core.formats.presets import is_preset, load_preset

    if is_preset(str(name)):
        return load_preset(str(name), max_token_bytes, specials, split)
    return load_any(name, split, max_token_bytes, specials, lowercase, strip_accents)
