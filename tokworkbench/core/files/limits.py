"""What a model file may hold before it is refused, and the reading that enforces it.

A model defines its tokens by merges, so a file of a few hundred bytes can describe a token of
a terabyte (40 merges, each joining the last token to itself). Lengths are therefore summed from
the merge list, never built, and a token over `MAX_TOKEN_BYTES` (or a vocabulary over
`MAX_VOCAB_BYTES` in all) is refused before anything materialises it. The largest tokens of
published vocabularies are a few hundred bytes; the limits leave ample room above that.
"""

import codecs
import json
import math
from collections.abc import Iterable, Sequence
from pathlib import Path

from tokworkbench.core.errors import ModelFileError, TokenLimitError, TokWorkbenchError
from tokworkbench.core.text.corpus import describe_size, read_regular
from tokworkbench.core.text.patterns import PRESETS
from tokworkbench.core.text.pretokenize import PreTokenizer, pre_tokenizer

MAX_MODEL_FILE_BYTES = 256 << 20  # a model file (and a tiktoken companion) is read up to this
MAX_TOKEN_BYTES = 64 << 10  # one token's UTF-8 bytes; a parameter of every loader
MAX_VOCAB_BYTES = 256 << 20  # all tokens' bytes together
MAX_ID = (1 << 32) - 1  # HF and tiktoken hold an id as u32: a larger one makes a file none of them reads
FLOAT32_MAX = 3.4028234663852886e38  # the largest float32: SentencePiece's scores are float32


def read_model_file(path: str | Path, limit: int = MAX_MODEL_FILE_BYTES) -> bytes:
    return read_regular(path, limit, "model file", ModelFileError)


def check_token_lengths(base_lengths: Iterable[int], merges: Sequence[tuple[int, int]],
                        max_token_bytes: int = MAX_TOKEN_BYTES, what: str = "merge") -> None:
    """Refuse merges whose tokens are too long, from lengths added up without building them.
    `base_lengths` are the base tokens' byte lengths; merges name ids below base + rank."""
    lengths = list(base_lengths)
    total = sum(lengths)
    for rank, (a, b) in enumerate(merges):
        n = lengths[a] + lengths[b]
        if n > max_token_bytes:
            raise TokenLimitError(
                f"{what} {rank} makes a token of {n:,} bytes; the limit is {max_token_bytes:,} "
                f"({describe_size(max_token_bytes)}): a corrupt or hostile file, or raise the limit")
        total += n
        if total > MAX_VOCAB_BYTES:
            raise ModelFileError(
                f"the tokens up to {what} {rank} hold more than {describe_size(MAX_VOCAB_BYTES)} in all; "
                "a corrupt or hostile file")
        lengths.append(n)


def check_token_length(rank: int, size: int, max_token_bytes: int = MAX_TOKEN_BYTES) -> None:
    """One token whose bytes are written out in the file (tiktoken ranks)."""
    if size > max_token_bytes:
        raise TokenLimitError(f"rank {rank} is a token of {size:,} bytes; the limit is {max_token_bytes:,} "
                              f"({describe_size(max_token_bytes)})")


def parse_json(raw: bytes):
    """JSON from a file's bytes, or a ModelFileError that says what was found instead."""
    if raw.startswith(codecs.BOM_UTF8):
        raise ModelFileError("the file starts with a UTF-8 byte-order mark (EF BB BF); "
                             "JSON tokenizer files have none: save it without the BOM")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ModelFileError(f"not valid JSON: not UTF-8 at byte offset {exc.start}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ModelFileError(f"not valid JSON ({exc})") from None
    except RecursionError:
        raise ModelFileError("not a model file: its JSON nests too deeply to read") from None
    except ValueError as exc:  # an integer of more digits than Python converts
        raise ModelFileError(f"not a model file: {str(exc).split(';')[0]}") from None


def short(value, limit: int = 40) -> str:
    """A value from a file, quoted and cut to `limit` characters, for an error message."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "…"


def describe_json(doc) -> str:
    """What a JSON document is, in words, for 'expected a model, found …'."""
    names = {list: "a JSON array", str: "a JSON string", bool: "a JSON boolean", int: "a JSON number",
             float: "a JSON number", type(None): "JSON null", dict: "a JSON object"}
    found = names.get(type(doc), "JSON")
    if isinstance(doc, list):
        found += f" of {len(doc)} items"
    return found


def is_text(s) -> bool:
    """A str that is valid Unicode text: no lone surrogate (JSON's \\ud800 escapes make them)."""
    if not isinstance(s, str):
        return False
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def within(digits: str, limit: int) -> bool:
    """Whether ASCII `digits` name a number of at most `limit`, told by their length before
    Python converts them (which raises ValueError past 4,300 digits)."""
    return len(digits) <= len(str(limit)) and int(digits) <= limit


def whole_number(digits: str, limit: int, what: str, error=ModelFileError) -> int:
    """ASCII digits as an int of at most `limit`; a number of far too many digits is refused
    before Python converts it."""
    if not within(digits, limit):
        shown = digits if len(digits) <= 24 else f"{digits[:20]}… ({len(digits):,} digits)"
        raise error(f"{what} {shown} is larger than {limit:,}")
    return int(digits)


def is_id(x) -> bool:
    """A token id HF, tiktoken and our writers can hold: an int from 0 to MAX_ID."""
    return type(x) is int and 0 <= x <= MAX_ID


def is_finite_number(x) -> bool:
    """A JSON number that is a finite float (not a bool; an integer too large for a float is not)."""
    try:
        return type(x) in (int, float) and math.isfinite(x)
    except OverflowError:
        return False


def is_count(x, minimum: int = 0) -> bool:
    """An int (not a bool, which JSON's true would give) of at least `minimum`."""
    return type(x) is int and x >= minimum


def pre_tokenizer_json(pre: PreTokenizer) -> dict:
    """What our model files keep of a pre-tokenizer: name and pattern, and an HF pipeline's spec."""
    from tokworkbench.core.text.hfpretok import HFPreTokenizer  # its Unicode tables load on first use

    out = {"name": pre.name, "pattern": pre.pattern}
    if isinstance(pre, HFPreTokenizer):
        out["hf"] = json.loads(pre.spec)
    return out


def read_pre_tokenizer(pre) -> PreTokenizer:
    """Our model files' `"pre_tokenizer": {"name", "pattern"}` (and "hf", a tokenizer.json's
    pipeline), checked (every kind's file)."""
    if not isinstance(pre, dict) or not isinstance(pre.get("name"), str) or "pattern" not in pre:
        raise ModelFileError("'pre_tokenizer' must be {\"name\": ..., \"pattern\": ...}")
    name, pattern = pre["name"], pre["pattern"]
    if "hf" in pre:
        if name != "hf" or pattern is not None:
            raise ModelFileError("a pre-tokenizer with an 'hf' pipeline is named 'hf' and has no pattern")
        from tokworkbench.core.text.hfpretok import hf_pre_tokenizer

        try:
            return hf_pre_tokenizer(pre["hf"])
        except TokWorkbenchError as exc:
            raise ModelFileError(f"pre-tokenizer: {exc}") from None
    if pattern is None:
        return pre_tokenizer("none")
    if not isinstance(pattern, str):
        raise ModelFileError(f"pre-tokenizer pattern must be a string, not {describe_json(pattern)}")
    if name != "custom" and PRESETS.get(name) != pattern:
        raise ModelFileError(f"pre-tokenizer {name!r} does not go with its pattern (name a preset with "
                             "its own pattern, or 'custom')")
    try:
        return pre_tokenizer(name, pattern)
    except TokWorkbenchError as exc:
        raise ModelFileError(str(exc)) from None
