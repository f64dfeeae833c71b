"""Pre-tokenizers: split normalized text into chunks; no merge ever crosses a chunk boundary.

The presets are the patterns exactly as tiktoken publishes them. Note for exports: Hugging Face's
regex engine (Oniguruma) reads the possessive `\\p{N}{1,3}+` of cl100k differently from Python's
`regex`, so the HF exporter must translate it rather than copy it.
"""

from dataclasses import dataclass
from functools import lru_cache

import regex

from ..errors import PatternError

GPT2_PATTERN = (
    r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""
)
GPT4_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
O200K_PATTERN = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)

PRESETS = {"none": None, "gpt2": GPT2_PATTERN, "gpt4": GPT4_PATTERN, "o200k": O200K_PATTERN}


@dataclass(frozen=True)
class PreTokenizer:
    """A named split rule; `pattern` is None for `none` (the whole document is one chunk)."""

    name: str
    pattern: str | None

    @property
    def is_preset_pattern(self) -> bool:
        """One of the published patterns (not none, not custom): they match every character and
        always start a chunk at a single space between two non-space characters."""
        return self.pattern is not None and PRESETS.get(self.name) == self.pattern

    def split(self, text: str) -> list[str]:
        """Chunks in order; they always join back to `text` (text between matches is kept)."""
        if self.pattern is None:
            return [text] if text else []
        if self.is_preset_pattern:  # presets match every character: findall is lossless
            return _compiled(self.pattern).findall(text)
        return [text[a:b] for a, b in self.spans(text)]

    def spans(self, text: str) -> list[tuple[int, int]]:
        """Character spans of the chunks: the matches, and any text between them as its own chunk."""
        if self.pattern is None:
            return [(0, len(text))] if text else []
        spans = []
        pos = 0
        for match in _compiled(self.pattern).finditer(text):
            start, end = match.span()
            if start == end:
                continue
            if start > pos:
                spans.append((pos, start))
            spans.append((start, end))
            pos = end
        if pos < len(text):
            spans.append((pos, len(text)))
        return spans


@lru_cache(maxsize=64)
def _compiled(pattern: str) -> "regex.Pattern[str]":
    return regex.compile(pattern)


def pre_tokenizer(spec: str, pattern: str | None = None) -> PreTokenizer:
    """Resolve a preset name, or a custom regex (given as `spec` or as `pattern` with a name)."""
    if pattern is not None:
        return PreTokenizer(spec, _validated(pattern))
    key = spec.lower()
    if key in PRESETS:
        return PreTokenizer(key, PRESETS[key])
    return PreTokenizer("custom", _validated(spec))


def from_pattern(pattern: str | None, also_matches=None) -> PreTokenizer:
    """The pre-tokenizer a file's pattern stands for: a preset when it is one (`also_matches`
    may rewrite a preset the way a format writes it), else custom. No pattern splits nothing."""
    if not pattern:
        return PreTokenizer("none", None)
    for name, preset in PRESETS.items():
        if preset is not None and (pattern == preset or (also_matches and pattern == also_matches(preset))):
            return PreTokenizer(name, preset)
    return PreTokenizer("custom", _validated(pattern))


def _validated(pattern: str) -> str:
    try:
        _compiled(pattern)
    except regex.error as exc:
        where = f" at position {exc.pos}" if getattr(exc, "pos", None) is not None else ""
        raise PatternError(f"invalid pre-tokenizer regex {pattern!r}: {exc.msg}{where}") from None
    return pattern
