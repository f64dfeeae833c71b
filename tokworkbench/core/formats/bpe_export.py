"""Which foreign formats hold a BPE model exactly, and writing it there.

Each format is checked first for what it cannot express; then the file encodes exactly as we
do, or it is not written.
"""

from pathlib import Path

from tokworkbench.core.bpe.model import Tokenizer
from tokworkbench.core.errors import ExportError
from tokworkbench.core.files.atomic import write_atomic
from tokworkbench.core.formats.hf_bpe import check_hf, hf_notes, write_hf
from tokworkbench.core.formats.minbpe import check_minbpe, to_minbpe
from tokworkbench.core.formats.ranks_hf_export import check_hf as check_ranks_hf
from tokworkbench.core.formats.ranks_hf_export import joins_by_ranks
from tokworkbench.core.formats.ranks_hf_export import write_hf as write_ranks_hf
from tokworkbench.core.formats.tiktoken import check_tiktoken, write_tiktoken

FORMATS = ("hf", "tiktoken", "minbpe")


def _duplicate_tokens(tok: Tokenizer) -> list[tuple[int, int]]:
    seen: dict = {}
    dups = []
    for i, t in enumerate(tok.ranked_tokens):
        if t in seen:
            dups.append((seen[t], i))
        else:
            seen[t] = i
    return dups


def _check_no_duplicates(tok: Tokenizer, fmt: str) -> None:
    dups = _duplicate_tokens(tok)
    if dups:
        a, b = dups[0]
        raise ExportError(
            f"{fmt} cannot hold two tokens with the same {'bytes' if tok.units.is_bytes else 'text'}: "
            f"ranks {a} and {b} are both {tok.rank_text(a)!r} ({len(dups)} such pairs); "
            "BPE can make these (the same string merged two ways), the format maps each string to one id"
        )


def check_bpe(tok: Tokenizer, fmt: str) -> list[str]:
    """Raise ExportError for what `fmt` cannot express; return notes for what it changes harmlessly."""
    if tok.ids is not None and fmt == "minbpe":
        raise ExportError(f"{fmt} numbers tokens by merge order; this model's imported ids are not that order")
    if fmt in ("tiktoken", "minbpe"):
        if not tok.units.is_bytes:
            raise ExportError(f"{fmt} is byte-level only; this is a char-unit model (export it to hf)")
        if tok.normalizer != "none":
            raise ExportError(f"{fmt} has no normalizer; this model normalizes with {tok.normalizer.upper()}")
        pre = tok.pre_tokenizer
        if pre.pattern is not None and not pre.is_preset_pattern:
            raise ExportError(
                f"{fmt} drops text that its pattern does not match, while this model keeps it as chunks; "
                "only the preset pre-tokenizers (gpt2, gpt4, o200k) export exactly"
            )
        if fmt == "tiktoken" and pre.pattern is None:
            raise ExportError("tiktoken needs a pre-tokenizer pattern; this model uses none (export to minbpe or hf)")
    if fmt in ("tiktoken", "hf"):
        _check_no_duplicates(tok, fmt)
    if fmt == "hf" and joins_by_ranks(tok):
        return check_ranks_hf(tok)  # Llama 3's form: TikTokenConverter's merges and ignore_merges
    if fmt == "tiktoken":
        check_tiktoken(tok)
    if fmt == "hf":
        check_hf(tok)
    if fmt == "minbpe":
        check_minbpe(tok)
    return hf_notes(tok) if fmt == "hf" else []


def write_bpe(tok: Tokenizer, fmt: str, out: Path) -> list[str]:
    """Write `tok` as `fmt` (`check_bpe` has accepted it); tiktoken also writes OUT.json."""
    if fmt == "hf":
        return write_ranks_hf(tok, out) if joins_by_ranks(tok) else write_hf(tok, out)
    if fmt == "tiktoken":
        return write_tiktoken(tok, out)
    write_atomic(out, to_minbpe(tok).encode("utf-8"))
    return [f"wrote {out}"]
