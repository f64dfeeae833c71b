"""Hugging Face's pre-tokenizers as `tokenizers` runs them, for a tokenizer.json whose
pre_tokenizer is not one split pattern: Split (every behaviour, invert), ByteLevel (with or
without its regex, add_prefix_space), Digits, Punctuation, Metaspace, Whitespace,
WhitespaceSplit, CharDelimiterSplit, BertPreTokenizer, and Sequences of them.

Each step maps every piece of the step before to pieces of its own, empty ones dropped, as
`PreTokenizedString.split` does; a piece keeps the offset where it starts in the text the
pipeline was given, since Metaspace's `prepend_scheme: first` prepends only at offset 0.
ByteLevel's byte-to-character mapping is left to the byte-level model (it encodes each piece's
UTF-8), so nothing may follow ByteLevel: a step after it would see the mapped characters.
The character classes are HF's own, measured from the library (berttables.py: its punctuation,
`char::is_whitespace`, the regex crate's \\w; hftables.py: `char::is_numeric`).
"""

import json
from dataclasses import dataclass
from functools import lru_cache

import regex

from tokworkbench.core.errors import PatternError
from tokworkbench.core.text import berttables, hftables
from tokworkbench.core.text.onigclasses import oniguruma_classes
from tokworkbench.core.text.patterns import META
from tokworkbench.core.text.pretokenize import PreTokenizer, guarded_matches, validated_pattern

BEHAVIORS = ("Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous")
PREPEND_SCHEMES = ("always", "first", "never")
MAX_DEPTH = 4  # Sequences inside Sequences; the Hub's files nest at most one
MAX_STEPS = 64
BYTELEVEL_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""


def _ranges(ranges: tuple[tuple[int, int], ...]) -> str:
    """The inside of a character class holding these code point ranges."""
    return "".join(f"\\U{a:08x}" if a == b else f"\\U{a:08x}-\\U{b:08x}" for a, b in ranges)


_NUMERIC = f"[{_ranges(hftables.NUMERIC)}]"  # char::is_numeric, measured (hftables.py)
WORD_CLASS = f"[{_ranges(berttables.WORD)}]"  # the regex crate's \w, as HF's build has it
SPACE_CLASS = f"[{_ranges(berttables.WHITESPACE)}]"  # char::is_whitespace, the regex crate's \s
_SPACE = SPACE_CLASS
_PUNCTUATION = f"[{_ranges(berttables.PUNCTUATION)}]"
WHITESPACE_PATTERN = f"{WORD_CLASS}+|[^{_ranges(berttables.WORD)}{_ranges(berttables.WHITESPACE)}]+"  # \w+|[^\w\s]+
KNOWN = ("Sequence", "Split", "ByteLevel", "Digits", "Punctuation", "Metaspace", "Whitespace",
         "WhitespaceSplit", "CharDelimiterSplit", "BertPreTokenizer")


@dataclass(frozen=True)
class Cut:
    """Split the piece at `pattern`'s matches (a regex, or one character class matched a
    character at a time) and keep the parts as `behavior` says."""

    pattern: str
    behavior: str
    invert: bool = False
    per_char: bool = False
    builtin: bool = False
    """One of HF's own classes (already measured), not a file's regex."""


@dataclass(frozen=True)
class ByteLevelStep:
    add_prefix_space: bool
    use_regex: bool


@dataclass(frozen=True)
class MetaspaceStep:
    replacement: str
    prepend_scheme: str
    split: bool


Step = Cut | ByteLevelStep | MetaspaceStep


def canonical(spec: dict) -> str:
    """The spec as one JSON string (what a PreTokenizer holds), checked by `steps_of` first."""
    text = json.dumps(spec, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    steps_of(text)
    return text


@lru_cache(maxsize=32)
def steps_of(spec_json: str) -> tuple[Step, ...]:
    """The steps a pre_tokenizer spec stands for; anything not read is a PatternError naming it."""
    steps: list[Step] = []
    _read(json.loads(spec_json), steps, 0)
    at = next((k for k, s in enumerate(steps) if isinstance(s, ByteLevelStep)), len(steps))
    if at < len(steps) - 1:
        raise PatternError("a pre-tokenizer after ByteLevel is not supported (it would see ByteLevel's "
                           "byte characters); ByteLevel must come last")
    return tuple(steps)


def is_byte_level(steps: tuple[Step, ...]) -> bool:
    return any(isinstance(s, ByteLevelStep) for s in steps)


def metaspace_of(steps: tuple[Step, ...]) -> MetaspaceStep | None:
    return next((s for s in steps if isinstance(s, MetaspaceStep)), None)


def _read(spec, steps: list[Step], depth: int) -> None:
    if not isinstance(spec, dict):
        raise PatternError(f"a pre-tokenizer must be an object, not {type(spec).__name__}")
    kind = spec.get("type")
    if kind == "Sequence":
        if depth >= MAX_DEPTH:
            raise PatternError(f"pre-tokenizer Sequences nested more than {MAX_DEPTH} deep are not supported")
        inner = spec.get("pretokenizers")
        if not isinstance(inner, list):
            raise PatternError("a Sequence pre-tokenizer's 'pretokenizers' must be a list")
        for item in inner:
            _read(item, steps, depth + 1)
    elif kind == "Split":
        steps.append(Cut(_split_pattern(spec.get("pattern")), _behavior(spec.get("behavior"), "Split"),
                         _flag(spec, "invert", False, "Split")))
    elif kind == "ByteLevel":
        steps.append(ByteLevelStep(_flag(spec, "add_prefix_space", True, kind), _flag(spec, "use_regex", True, kind)))
    elif kind == "Digits":
        individual = _flag(spec, "individual_digits", False, kind)
        steps.append(Cut(_NUMERIC, "Isolated" if individual else "Contiguous", per_char=True))
    elif kind == "Punctuation":
        steps.append(Cut(_PUNCTUATION, _behavior(spec.get("behavior", "Isolated"), kind), per_char=True))
    elif kind == "Whitespace":
        steps.append(Cut(WHITESPACE_PATTERN, "Removed", invert=True, builtin=True))
    elif kind == "WhitespaceSplit":
        steps.append(Cut(_SPACE, "Removed", per_char=True))
    elif kind == "BertPreTokenizer":
        steps += [Cut(_SPACE, "Removed", per_char=True), Cut(_PUNCTUATION, "Isolated", per_char=True)]
    elif kind == "CharDelimiterSplit":
        delimiter = spec.get("delimiter")
        if not (isinstance(delimiter, str) and len(delimiter) == 1):
            raise PatternError("CharDelimiterSplit's 'delimiter' must be one character")
        steps.append(Cut(regex.escape(delimiter), "Removed", per_char=True))
    elif kind == "Metaspace":
        steps.append(_metaspace(spec))
    else:
        shown = kind if isinstance(kind, str) else json.dumps(kind)
        raise PatternError(f"pre-tokenizer {shown[:80]!r} is not supported ({', '.join(KNOWN)} are)")
    if len(steps) > MAX_STEPS:
        raise PatternError(f"the pre-tokenizer has more than {MAX_STEPS} steps")


def _metaspace(spec: dict) -> MetaspaceStep:
    replacement = spec.get("replacement", META)
    if not (isinstance(replacement, str) and len(replacement) == 1):
        raise PatternError("Metaspace's 'replacement' must be one character")
    scheme = spec.get("prepend_scheme", "always")
    if scheme not in PREPEND_SCHEMES:
        raise PatternError(f"Metaspace's prepend_scheme {str(scheme)[:40]!r} is not one of {', '.join(PREPEND_SCHEMES)}")
    if spec.get("add_prefix_space") is False:  # the older field, as HF reads it
        if "prepend_scheme" in spec and scheme != "never":
            raise PatternError("Metaspace's add_prefix_space does not match its prepend_scheme")
        scheme = "never"
    return MetaspaceStep(replacement, scheme, _flag(spec, "split", True, "Metaspace"))


def _flag(spec: dict, key: str, default: bool, kind: str) -> bool:
    value = spec.get(key, default)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise PatternError(f"{kind}'s {key!r} must be true or false, not {json.dumps(value)[:40]}")
    return value


def _behavior(value, kind: str) -> str:
    if value not in BEHAVIORS:
        shown = json.dumps(value, ensure_ascii=False)[:60]
        raise PatternError(f"{kind}'s behavior {shown} is not one of {', '.join(BEHAVIORS)}")
    return value


def _split_pattern(pat) -> str:
    if isinstance(pat, dict) and len(pat) == 1 and isinstance(pat.get("Regex"), str):
        return validated_pattern(pat["Regex"])
    if isinstance(pat, dict) and len(pat) == 1 and isinstance(pat.get("String"), str):
        return regex.escape(pat["String"]) if pat["String"] else ""
    raise PatternError("a Split pattern must be {\"Regex\": ...} or {\"String\": ...}")


@lru_cache(maxsize=64)
def _compiled_cached(pattern: str) -> "regex.Pattern[str]":
    """A pattern `_split_pattern` has validated, or one of HF's own classes (berttables)."""
    return regex.compile(pattern)


@lru_cache(maxsize=64)
def _compiled_onig(pattern: str) -> "regex.Pattern[str]":
    """A file's regex (or ByteLevel's) with Oniguruma's classes (onigclasses.py)."""
    return regex.compile(oniguruma_classes(pattern))


# -- running ---------------------------------------------------------------------------------
Piece = tuple[str, int]  # text, offset where it starts in the pipeline's input


def run(steps: tuple[Step, ...], text: str, at_start: bool = True, timeout: float | None = None) -> list[str]:
    """The pieces `tokenizers` gives for `text`; `at_start`: the text starts the input (not
    after an added token), where `prepend_scheme: first` prepends."""
    pieces: list[Piece] = [(text, 0)] if text else []
    for step in steps:
        out: list[Piece] = []
        for piece, offset in pieces:
            out.extend(p for p in _apply(step, piece, offset, at_start, timeout) if p[0])
        pieces = out
    return [p for p, _ in pieces]


def _apply(step: Step, piece: str, offset: int, at_start: bool, timeout) -> list[Piece]:
    if isinstance(step, Cut):
        return _cut(piece, offset, _events(step, piece, timeout), step.behavior)
    if isinstance(step, ByteLevelStep):
        if step.add_prefix_space and not piece.startswith(" "):
            piece = " " + piece
        if not step.use_regex:
            return [(piece, offset)]
        return _cut(piece, offset, _regex_events(_compiled_onig(BYTELEVEL_PATTERN), piece, timeout), "Isolated")
    rep = step.replacement
    piece = piece.replace(" ", rep)
    prepend = step.prepend_scheme == "always" or (step.prepend_scheme == "first" and at_start and offset == 0)
    if prepend and not piece.startswith(rep):
        piece = rep + piece
    if not step.split:
        return [(piece, offset)]
    return _cut(piece, offset, _char_events(regex.compile(regex.escape(rep)), piece), "MergedWithNext")


def _events(step: Cut, piece: str, timeout) -> list[tuple[int, int, bool]]:
    if step.per_char:
        events = _char_events(_compiled_cached(step.pattern), piece)
    elif step.pattern == "":  # an empty String pattern: HF's one unmatched span
        events = [(0, len(piece), False)]
    else:
        events = _regex_events((_compiled_cached if step.builtin else _compiled_onig)(step.pattern), piece, timeout)
    if step.invert:
        events = [(a, b, not m) for a, b, m in events]
    return events


def _regex_events(compiled, piece: str, timeout) -> list[tuple[int, int, bool]]:
    """HF's `find_matches`: matches and the gaps between them, in order. Oniguruma's iterator
    skips an empty match where the last match ended; so does this."""
    events, prev, last_end = [], 0, -1
    for start, end in guarded_matches(compiled, piece, timeout):
        if start == end and start == last_end:
            continue
        if prev != start:
            events.append((prev, start, False))
        events.append((start, end, True))
        prev = last_end = end
    if prev != len(piece):
        events.append((prev, len(piece), False))
    return events


def _char_events(compiled, piece: str) -> list[tuple[int, int, bool]]:
    """A character class's find_matches: each matching character is a match of its own."""
    events, prev = [], 0
    for m in compiled.finditer(piece):
        start = m.start()
        if prev < start:
            events.append((prev, start, False))
        events.append((start, start + 1, True))
        prev = start + 1
    if prev < len(piece):
        events.append((prev, len(piece), False))
    return events


def _cut(piece: str, offset: int, events: list[tuple[int, int, bool]], behavior: str) -> list[Piece]:
    """`NormalizedString::split`: the events grouped as the behaviour says."""
    spans: list[list[int]] = []
    if behavior == "Isolated":
        spans = [[a, b] for a, b, _ in events]
    elif behavior == "Removed":
        spans = [[a, b] for a, b, m in events if not m]
    elif behavior == "Contiguous":
        previous = False
        for a, b, m in events:
            if m == previous and spans:
                spans[-1][1] = b
            else:
                spans.append([a, b])
            previous = m
    elif behavior == "MergedWithPrevious":
        previous = False
        for a, b, m in events:
            if m and not previous and spans:
                spans[-1][1] = b
            else:
                spans.append([a, b])
            previous = m
    else:  # MergedWithNext: the same from the right
        previous = False
        for a, b, m in reversed(events):
            if m and not previous and spans:
                spans[-1][0] = a
            else:
                spans.append([a, b])
            previous = m
        spans.reverse()
    return [(piece[a:b], offset + a) for a, b in spans]


# -- the pre-tokenizer a model holds ---------------------------------------------------------
@dataclass(frozen=True)
class HFPreTokenizer(PreTokenizer):
    """A tokenizer.json's pre_tokenizer run as `tokenizers` runs it. `spec` is its canonical
    JSON (what our model files keep); the pieces may not join back to the text (Removed,
    WhitespaceSplit and Whitespace drop text; Metaspace and add_prefix_space add to it), so
    the views draw them over `surface`, what they do join to."""

    spec: str = ""

    @property
    def steps(self) -> tuple[Step, ...]:
        return steps_of(self.spec)

    def split(self, text: str, at_start: bool = True) -> list[str]:
        return run(self.steps, text, at_start, self.timeout)

    def surface(self, text: str) -> str:
        return "".join(self.split(text))

    def spans(self, text: str) -> list[tuple[int, int]]:
        spans, pos = [], 0
        for piece in self.split(text):
            spans.append((pos, pos + len(piece)))
            pos += len(piece)
        return spans

    def restore(self, tokens: list[str]) -> str:
        """HF's Metaspace decoder token by token: every replacement of the first token is
        dropped (unless `never`), every other one is a space."""
        meta = metaspace_of(self.steps)
        if meta is None or not tokens:
            return "".join(tokens)
        first = tokens[0].replace(meta.replacement, "" if meta.prepend_scheme != "never" else " ")
        return first + "".join(tokens[1:]).replace(meta.replacement, " ")

    def restore_text(self, text: str) -> str:
        """HF's Metaspace decoder where the pipeline has Metaspace: the replacement becomes a
        space, and a leading one is dropped unless nothing was prepended (`never`)."""
        meta = metaspace_of(self.steps)
        if meta is None:
            return text
        if meta.prepend_scheme != "never" and text.startswith(meta.replacement):
            text = text[1:]
        return text.replace(meta.replacement, " ")


def hf_pre_tokenizer(spec: dict) -> HFPreTokenizer:
    """The pre-tokenizer of a tokenizer.json's pre_tokenizer object (PatternError if not read)."""
    return HFPreTokenizer("hf", None, spec=canonical(spec))
