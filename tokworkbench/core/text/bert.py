"""BERT's text steps exactly as HF tokenizers runs them: `BertNormalizer` (and the NFD /
Lowercase / StripAccents normalizers it is built from) and the BertPreTokenizer / WhitespaceSplit
word splits.

HF reads Unicode through its own Rust tables, which are not Python's `unicodedata` (another
Unicode version, and unassigned code points are not "control" there), so every character class
here comes from `berttables.py`, measured from the library itself. The rules, from HF's
normalizers/bert.rs and pre_tokenizers/bert.rs:
- clean_text drops NUL, U+FFFD and HF's control characters (tab, LF and CR are kept) and turns
  every whitespace character into a space;
- handle_chinese_chars puts a space either side of each CJK ideograph;
- strip_accents is NFD, then every nonspacing mark dropped (HF's StripAccents normalizer drops
  every combining mark, enclosing and spacing ones too); when it is null it follows lowercase;
- lowercase maps each character alone (no final-sigma rule: Σ is always σ);
- BertPreTokenizer drops whitespace runs and makes each punctuation character (Unicode P*, and
  every ASCII symbol) a word of its own; WhitespaceSplit only drops the whitespace; Whitespace
  (`\\w+|[^\\w\\s]+`) splits runs of word characters from runs of other symbols.

A normalizer here is one `HfSteps`: the steps in order, read from and written back to HF's own
JSON (which is also how our WordPiece file keeps it), so what is read is what is exported.
"""

import re
from dataclasses import dataclass
from functools import cached_property

from tokworkbench.core.files.limits import describe_json, short
from tokworkbench.core.text import berttables, hfnormal
from tokworkbench.core.text.pretokenize import PreTokenizer


def _class(ranges: tuple[tuple[int, int], ...]) -> str:
    """The inside of a character class (for `re` and `regex` alike) holding these ranges."""
    def one(c: int) -> str:
        return f"\\U{c:08x}"
    return "".join(one(a) if a == b else f"{one(a)}-{one(b)}" for a, b in ranges)


_DROP = re.compile(f"[{_class(berttables.DROP)}\\U0000fffd]+")
_SPACE = re.compile(f"[{_class(berttables.SPACE)}]")
_CHINESE = re.compile(f"([{_class(berttables.CHINESE)}])")
_NONSPACING = re.compile(f"[{_class(berttables.NONSPACING_MARKS)}]+")  # what BertNormalizer strips
_COMBINING = re.compile(f"[{_class(berttables.COMBINING_MARKS)}]+")  # what StripAccents strips (Mn, Mc, Me)
_LOWER_OWN = {c: s for c, s in berttables.LOWERCASE.items()}
WHITESPACE = frozenset(chr(c) for a, b in berttables.WHITESPACE for c in range(a, b + 1))
_WS = _class(berttables.WHITESPACE)
_PUNCT = _class(berttables.PUNCTUATION)
BERT_WORDS = f"[{_PUNCT}]|[^{_WS}{_PUNCT}]+"
WHITESPACE_WORDS = f"[^{_WS}]+"
_WORD = _class(berttables.WORD)  # what Rust regex calls \w
WORDS_AND_SYMBOLS = f"[{_WORD}]+|[^{_WORD}{_WS}]+"  # HF's Whitespace: \w+|[^\w\s]+


def nfd(text: str) -> str:
    """HF's NFD (hfnormal.py)."""
    return hfnormal.normalize("NFD", text)


def lowercase(text: str) -> str:
    """HF's Lowercase: each character on its own (Python's `lower` gives a final Σ its own form)."""
    text = text.translate(_LOWER_OWN)
    return "".join(ch.lower() for ch in text) if "Σ" in text else text.lower()


def strip_accents(text: str) -> str:
    """HF's StripAccents alone: combining marks dropped (no NFD first). Not BertNormalizer's
    strip_accents, which drops only the nonspacing ones."""
    return _COMBINING.sub("", text)


@dataclass(frozen=True)
class BertNormalizer:
    clean_text: bool = True
    handle_chinese_chars: bool = True
    strip_accents: bool | None = None  # None: as lowercase
    lowercase: bool = True

    def normalize(self, text: str) -> str:
        if self.clean_text:
            text = _SPACE.sub(" ", _DROP.sub("", text))
        if self.handle_chinese_chars:
            text = _CHINESE.sub(r" \1 ", text)
        if self.lowercase if self.strip_accents is None else self.strip_accents:
            text = _NONSPACING.sub("", nfd(text))
        return lowercase(text) if self.lowercase else text

    def to_hf(self) -> dict:
        return {"type": "BertNormalizer", "clean_text": self.clean_text,
                "handle_chinese_chars": self.handle_chinese_chars, "strip_accents": self.strip_accents,
                "lowercase": self.lowercase}


_SIMPLE = {"NFD": nfd, "Lowercase": lowercase, "StripAccents": strip_accents}


@dataclass(frozen=True)
class HfSteps:
    """HF normalizers applied in order: BertNormalizer, NFD, Lowercase, StripAccents."""

    steps: tuple  # each a BertNormalizer or one of the names in _SIMPLE

    def normalize(self, text: str) -> str:
        for step in self.steps:
            text = step.normalize(text) if isinstance(step, BertNormalizer) else _SIMPLE[step](text)
        return text

    @cached_property
    def label(self) -> str:
        return "+".join("bert" if isinstance(s, BertNormalizer) else s.lower() for s in self.steps)

    def to_hf(self) -> dict:
        specs = [s.to_hf() if isinstance(s, BertNormalizer) else {"type": s} for s in self.steps]
        return specs[0] if len(specs) == 1 else {"type": "Sequence", "normalizers": specs}


def bert_normalizer(**flags) -> HfSteps:
    return HfSteps((BertNormalizer(**flags),))


def normalizer_from_hf(spec, error) -> HfSteps | None:
    """HF's normalizer JSON (null for none); `error` (a TokWorkbenchError class) names the part
    this tool does not reproduce."""
    if spec is None:
        return None
    if not isinstance(spec, dict):
        raise error(f"'normalizer' must be an object or null, not {describe_json(spec)}")
    if spec.get("type") == "Sequence":
        parts = spec.get("normalizers")
        if not isinstance(parts, list) or not all(isinstance(p, dict) for p in parts):
            raise error("a Sequence normalizer needs 'normalizers': a list of objects")
    else:
        parts = [spec]
    steps = tuple(_step(p, error) for p in parts)
    return HfSteps(steps) if steps else None


def _step(spec: dict, error):
    kind = spec.get("type")
    if isinstance(kind, str) and kind in _SIMPLE:
        return kind
    if kind != "BertNormalizer":
        raise error(f"normalizer {short(kind)} is not supported for WordPiece (BertNormalizer, NFD, Lowercase, "
                    "StripAccents, or a Sequence of them)")
    flags = {}
    for name, default in (("clean_text", True), ("handle_chinese_chars", True), ("lowercase", True)):
        value = spec.get(name, default)
        if not isinstance(value, bool):
            raise error(f"BertNormalizer's {name!r} must be true or false, not {short(value)}")
        flags[name] = value
    strip = spec.get("strip_accents")
    if strip is not None and not isinstance(strip, bool):
        raise error(f"BertNormalizer's 'strip_accents' must be true, false or null, not {short(strip)}")
    return BertNormalizer(strip_accents=strip, **flags)


# -- word splits -------------------------------------------------------------------------------
SPLITS = {"BertPreTokenizer": ("bert", BERT_WORDS), "WhitespaceSplit": ("whitespace_split", WHITESPACE_WORDS),
          "Whitespace": ("whitespace", WORDS_AND_SYMBOLS)}


def word_split(hf_type: str) -> PreTokenizer:
    """The PreTokenizer of HF's BertPreTokenizer, WhitespaceSplit or Whitespace: its matches are the words,
    the whitespace between them is a chunk of its own that no token covers."""
    name, pattern = SPLITS[hf_type]
    return PreTokenizer(name, pattern)


def split_to_hf(pre: PreTokenizer) -> dict | None:
    """HF's JSON for a split of `word_split`'s (None for no split)."""
    if pre.pattern is None:
        return None
    return next({"type": t} for t, (name, pattern) in SPLITS.items() if (pre.name, pre.pattern) == (name, pattern))


def split_from_hf(spec, error) -> PreTokenizer:
    if spec is None:
        return PreTokenizer("none", None)
    if not isinstance(spec, dict):
        raise error(f"'pre_tokenizer' must be an object or null, not {describe_json(spec)}")
    steps = spec.get("pretokenizers") if spec.get("type") == "Sequence" else [spec]
    if (isinstance(steps, list) and len(steps) == 1 and isinstance(steps[0], dict)
            and isinstance(steps[0].get("type"), str) and steps[0]["type"] in SPLITS):
        return word_split(steps[0]["type"])
    raise error(f"pre-tokenizer {short(spec.get('type'))} is not supported for WordPiece "
                "(BertPreTokenizer, WhitespaceSplit or Whitespace is)")


def is_space(chunk: str) -> bool:
    """A chunk between words (whitespace), which no token covers."""
    return chunk[:1] in WHITESPACE
