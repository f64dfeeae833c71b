"""Pre-tokenizers: split normalized text into chunks; no merge ever crosses a chunk boundary.

The presets are the patterns exactly as tiktoken publishes them. Note for exports: Hugging Face's
regex engine (Oniguruma) reads the possessive `\\p{N}{1,3}+` of cl100k differently from Python's
`regex`, so the HF exporter must translate it rather than copy it.

A custom pattern can backtrack catastrophically (`(a|aa)+c` on a run of `a`s never ends), so it
runs under the `regex` module's timeout: a search that finds no match for `PATTERN_TIMEOUT`
seconds is an error naming the offset. The presets never backtrack that way and run without it
(the timeout costs a clock read per match). On the command line a custom pattern is written
`regex:PATTERN`, so that a mistyped preset name is not taken for a regex.
"""

import difflib
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache

import regex

from tokworkbench.core import jit
from tokworkbench.core.errors import PatternError, PatternTimeoutError
from tokworkbench.core.inspection.escape import quote
from tokworkbench.core.text.fastsplit import (
    FAST_FROM,
    chunk_counts,
    split_gpt2,
    split_gpt4,
    split_llama3,
    split_o200k,
    split_tekken,
)
from tokworkbench.core.text.patterns import META, METASPACE, METASPACE_PATTERN, PRESETS

FAST_SPLITS = {"gpt4": split_gpt4, "o200k": split_o200k, "llama3": split_llama3,
               "tekken": split_tekken, "gpt2": split_gpt2}  # the same chunks as findall, in numpy (gpt2: compiled)
REGEX_MARKER = "regex:"
PATTERN_TIMEOUT = 5.0  # seconds a custom pattern may search without finding a match
MAX_PATTERN_CHARS = 16_384  # the presets are under 400
MAX_REPEAT_PRODUCT = 100_000  # product of the {n,m} bounds in a pattern
_REPEAT = regex.compile(r"(?<!\\)\{([0-9]+)(?:,([0-9]*))?\}")


@dataclass(frozen=True)
class PreTokenizer:
    """A named split rule; `pattern` is None for `none` (the whole document is one chunk)."""

    name: str
    pattern: str | None
    timeout: float | None = field(default=None, compare=False, repr=False)
    """Seconds a custom pattern may search without a match; None: PATTERN_TIMEOUT."""

    @property
    def is_preset_pattern(self) -> bool:
        """One of the published patterns (not none, not custom): they match every character and
        always start a chunk at a single space between two non-space characters."""
        return self.pattern is not None and self.name != METASPACE and PRESETS.get(self.name) == self.pattern

    def counts_compiled(self, work: int) -> bool:
        """Whether `counts` of `work` characters in all hashes the chunks in compiled code and
        makes a str per distinct chunk only: counting may then take larger pieces, as there is
        no list of every chunk to bound."""
        return self.is_preset_pattern and self.name in FAST_SPLITS and jit.available(work)

    @property
    def rewrites(self) -> bool:
        """Whether chunks join to a rewritten text (metaspace) rather than to the text itself."""
        return self.name == METASPACE and self.pattern == METASPACE_PATTERN

    def surface(self, text: str) -> str:
        """The text the chunks join back to: the text itself, or metaspace's rewrite of it."""
        if not self.rewrites or not text:
            return text
        text = text.replace(" ", META)
        return text if text.startswith(META) else META + text

    def restore(self, tokens: list[str]) -> str:
        """Decoded tokens joined, undoing `surface` as HF's Metaspace decoder does: every ▁ of
        the first token is dropped (the prepended one), every other ▁ becomes a space."""
        if not self.rewrites or not tokens:
            return "".join(tokens)
        return tokens[0].replace(META, "") + "".join(tokens[1:]).replace(META, " ")

    def restore_text(self, text: str) -> str:
        """`restore` for decoded text whose token boundaries are gone (BPE): the leading ▁
        dropped, every other ▁ a space."""
        if not self.rewrites:
            return text
        return (text[1:] if text.startswith(META) else text).replace(META, " ")

    def split(self, text: str, at_start: bool = True) -> list[str]:
        """Chunks in order; they always join back to `text` (text between matches is kept).
        `at_start` (the text begins the input) matters only to HF's pipelines (hfpretok.py)."""
        if self.pattern is None:
            return [text] if text else []
        if self.rewrites:  # the surface starts with ▁ and each chunk runs to the next: a plain split
            return [META + part for part in self.surface(text).split(META)[1:]]
        if self.is_preset_pattern:  # presets match every character: findall is lossless
            fast = FAST_SPLITS.get(self.name)
            return fast(text) if fast else _compiled(self.pattern).findall(text)
        return self._tiling(text) or [text[a:b] for a, b in self.spans(text)]

    def _tiling(self, text: str) -> list[str] | None:
        """A file's pattern that matches every character (tekken's, most Split patterns) in
        one `findall`, 20 times quicker than a match at a time: its matches when they tile the
        text, with no empty one; None when they do not, or when the search takes longer than
        the pattern timeout (then `spans` searches under its per-match guard, and names the
        offset if it is stuck)."""
        compiled = _compiled(self.pattern)
        if compiled.groups:  # findall would give the groups
            return None
        try:
            found = compiled.findall(text, timeout=PATTERN_TIMEOUT if self.timeout is None else self.timeout)
        except TimeoutError:
            return None
        if sum(map(len, found)) != len(text) or "" in found:
            return None
        return found

    def counts(self, text: str) -> Counter:
        """`Counter(self.split(text))`, keys in order of first appearance. Metaspace counts the
        parts between its ▁ first and prefixes only the distinct ones: one new string per
        distinct chunk, not per occurrence (the occurrences were a third of counting); so do
        the compiled presets."""
        if self.rewrites:
            surface = self.surface(text)
            if not surface:
                return Counter()
            parts = surface.split(META)
            parts[0] = None  # the empty string before the first ▁
            found = Counter(parts)
            del found[None]
            return Counter({META + part: n for part, n in found.items()})
        # work 0: `split` below, or `chunk_counts`, counts this text's work once
        if len(text) >= FAST_FROM and self.counts_compiled(0):  # a short text: a tally's arrays cost more
            counted = chunk_counts(self.name, text)  # compiled: a str only for each distinct chunk
            if counted is not None:
                return counted
        return Counter(self.split(text))

    def spans(self, text: str) -> list[tuple[int, int]]:
        """Character spans of the chunks: the matches, and any text between them as its own chunk
        (for metaspace: spans of `surface(text)`)."""
        if self.pattern is None:
            return [(0, len(text))] if text else []
        if self.rewrites:
            text = self.surface(text)
        spans: list[tuple[int, int]] = []
        pos = 0
        for start, end in self._matches(text):
            if start == end:
                continue
            if start > pos:
                spans.append((pos, start))
            spans.append((start, end))
            pos = end
        if pos < len(text):
            spans.append((pos, len(text)))
        return spans

    def matched_spans(self, text: str) -> list[tuple[int, int]]:
        """The spans of the pattern's non-empty matches alone, without the text between them:
        what tiktoken encodes (its `findall`), which drops that text. Presets match every char."""
        if self.pattern is None or self.rewrites:
            return self.spans(text)
        return [(a, b) for a, b in self._matches(text) if a < b]

    def matches(self, text: str) -> list[str]:
        """`matched_spans` as text: one `findall` where the matches tile the text (the patterns
        of tiktoken's own files do), a match at a time where they leave text out."""
        if self.pattern is None or self.rewrites or self.is_preset_pattern:
            return self.split(text)
        tiled = self._tiling(text)
        return tiled if tiled is not None else [text[a:b] for a, b in self.matched_spans(text)]

    def _matches(self, text: str):
        return guarded_matches(_compiled(self.pattern), text, self.timeout)


def guarded_matches(compiled: "regex.Pattern[str]", text: str, limit: float | None = None):
    """The match spans of a pattern that came from a user or a file, under a timeout that
    restarts at each match's end: a long document is fine, a search stuck for `limit` seconds
    without a match is a PatternTimeoutError. (A restart at the last match's end finds what the
    one search would have found next.) Every such pattern runs through here."""
    limit = PATTERN_TIMEOUT if limit is None else limit
    resume = 0
    while True:
        window_start = resume
        try:
            for match in compiled.finditer(text, resume, timeout=limit):
                resume = match.end()
                yield match.span()
            return
        except TimeoutError:
            if resume == window_start:
                raise PatternTimeoutError(resume, limit) from None


def guarded_sub(compiled: "regex.Pattern[str]", content: str, text: str, limit: float | None = None) -> str:
    """`compiled.sub(content, text)` with the content taken literally (HF's Replace), under
    `guarded_matches`' timeout."""
    parts, pos = [], 0
    for start, end in guarded_matches(compiled, text, limit):
        parts += (text[pos:start], content)
        pos = end
    if not parts:
        return text
    parts.append(text[pos:])
    return "".join(parts)


@lru_cache(maxsize=64)
def _compiled(pattern: str) -> "regex.Pattern[str]":
    return regex.compile(pattern)


def pre_tokenizer(spec: str, pattern: str | None = None) -> PreTokenizer:
    """Resolve a preset name, or a custom regex (given as `spec` or as `pattern` with a name)."""
    if pattern is not None:
        return PreTokenizer(spec, validated_pattern(pattern))
    key = spec.lower()
    if key in PRESETS:
        return PreTokenizer(key, PRESETS[key])
    return PreTokenizer("custom", validated_pattern(spec))


def parse_split(spec: str) -> PreTokenizer:
    """A pre-tokenizer as the command line names it: a preset, or `regex:PATTERN`. A bare name
    that is not a preset is refused with the closest preset, never taken for a regex."""
    if spec.startswith(REGEX_MARKER):
        pattern = spec[len(REGEX_MARKER):]
        if not pattern:
            raise PatternError(f"{REGEX_MARKER} needs a pattern after it, e.g. {REGEX_MARKER}\\w+|\\s+")
        return from_pattern(pattern)
    key = spec.lower()
    if key in PRESETS:
        return PreTokenizer(key, PRESETS[key])
    close = difflib.get_close_matches(key, list(PRESETS), n=1, cutoff=0.5)
    advice = f"did you mean {close[0]}?" if close else f"choose one of {', '.join(PRESETS)}"
    raise PatternError(f"unknown pre-tokenizer {spec!r}; {advice} (a custom pattern is written {REGEX_MARKER}PATTERN)")


def from_pattern(pattern: str | None, also_matches=None) -> PreTokenizer:
    """The pre-tokenizer a file's pattern stands for: a preset when it is one (`also_matches`
    may rewrite a preset the way a format writes it), else custom. No pattern splits nothing."""
    if not pattern:
        return PreTokenizer("none", None)
    for name, preset in PRESETS.items():
        if preset is not None and (pattern == preset or (also_matches and pattern == also_matches(preset))):
            return PreTokenizer(name, preset)
    return PreTokenizer("custom", validated_pattern(pattern))


def validated_pattern(pattern: str) -> str:
    """A pattern that compiles, checked first for what would make compiling itself hang or
    exhaust memory (patterns also come from model files, which may be damaged or hostile)."""
    _check_size(pattern)
    try:
        _compiled(pattern)
    except regex.error as exc:
        where = f" at position {exc.pos}" if getattr(exc, "pos", None) is not None else ""
        raise PatternError(f"invalid pre-tokenizer regex {_shown(pattern)}: {exc.msg}{where}") from None
    except (RecursionError, MemoryError, OverflowError):
        raise PatternError(f"the pre-tokenizer regex {_shown(pattern)} is too deeply nested or too large to compile") from None
    return pattern


def _shown(pattern: str, limit: int = 200) -> str:
    return quote(pattern) if len(pattern) <= limit else quote(pattern[:limit]) + "…"


def _check_size(pattern: str) -> None:
    """`regex` expands fixed repeats when compiling: (?:a{10000}){10000} takes gigabytes. The
    presets are a few hundred characters with repeats of at most 3."""
    try:
        pattern.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise PatternError(f"the pre-tokenizer regex holds a lone surrogate at position {exc.start}") from None
    if len(pattern) > MAX_PATTERN_CHARS:
        raise PatternError(f"the pre-tokenizer regex is {len(pattern):,} characters long; "
                           f"the limit is {MAX_PATTERN_CHARS:,}")
    product = 1
    for m in _REPEAT.finditer(pattern):
        counts = [c for c in m.groups() if c]
        if any(len(c) > 9 for c in counts):
            product = MAX_REPEAT_PRODUCT + 1
            break
        product *= max(1, *map(int, counts))
        if product > MAX_REPEAT_PRODUCT:
            break
    if product > MAX_REPEAT_PRODUCT:
        raise PatternError(f"the pre-tokenizer regex's repeat counts multiply to more than {MAX_REPEAT_PRODUCT:,}; "
                           "compiling it would take too much memory")
