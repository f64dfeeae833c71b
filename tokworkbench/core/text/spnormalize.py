"""An imported model's own normalizer: what SentencePiece and HF apply before the pieces.

Not one of the session's named normalizers (none/nfc/nfkc): it belongs to an imported model and
travels with it (our model file keeps it; an HF export writes it back as HF does).

- `SpNormalizer`: SentencePiece's `Normalizer::Normalize` (normalizer.cc), exactly: prefix by
  prefix, a USER_DEFINED piece as it is, else the charsmap's longest key, else one character;
  `remove_extra_whitespaces` drops spaces at the start, a space after a space (across prefixes,
  also inside a run of unmapped text) and spaces and ▁ at the end. Its output still holds plain
  spaces: the metaspace pre-tokenizer then escapes them and puts the dummy prefix in front. One
  case needs help: metaspace puts no ▁ in front of text that already starts with ▁ and
  SentencePiece does, so such text gets a leading space here, which metaspace turns into that ▁
  (and which this normalizer drops again if it meets it: normalizing twice changes nothing).
- `HfNormalizer`: an HF `tokenizer.json` normalizer made of Precompiled (HF's grapheme rule, see
  charsmap.py), Replace, Strip, StripAccents, Lowercase and NFC/NFD/NFKC/NFKD steps, in order.
"""

import base64
import json
from dataclasses import dataclass

import regex

from tokworkbench.core.errors import ModelFileError
from tokworkbench.core.text import hfnormal
from tokworkbench.core.text.charsmap import CharsMap, read_charsmap
from tokworkbench.core.text.pretokenize import guarded_sub

META = "\u2581"
_SPACES = regex.compile(" {2,}")
# Rust's char::is_whitespace (Unicode White_Space), which HF's Strip uses
_WHITE = "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a" \
         "\u2028\u2029\u202f\u205f\u3000"
_MARKS = regex.compile(r"\p{M}+")
_WHITE_RUN = regex.compile("[" + regex.escape(_WHITE) + "]+")


@dataclass(frozen=True)
class SpNormalizer:
    charsmap: CharsMap | None
    name: str = ""  # what SentencePiece called the rule (nmt_nfkc, nfkc_cf, ...)
    remove_extra_whitespaces: bool = True
    user: tuple[str, ...] = ()
    """USER_DEFINED pieces: SentencePiece matches them before the map and keeps them as they are."""

    kind = "sentencepiece"

    @property
    def label(self) -> str:
        collapsed = " (whitespace collapsed)" if self.remove_extra_whitespaces else ""
        return f"sentencepiece {self.name or 'custom'}{collapsed}"

    def __post_init__(self):
        users = sorted(set(self.user), key=len, reverse=True)  # the longest match wins, as in SentencePiece
        object.__setattr__(self, "_user", regex.compile("|".join(regex.escape(p) for p in users)) if users else None)
        object.__setattr__(self, "_user_first", frozenset(p[0] for p in users))

    def _pieces(self, text: str):
        """(normalized prefix, whether it is unmapped text) in order; unmapped text comes in
        runs, each character of which is a prefix of its own. Only where a key or a
        user-defined piece may start is anything looked up."""
        where = self.charsmap.hits(text).tolist() if self.charsmap is not None else []
        if self._user is not None:
            where = sorted(set(where) | {i for i, c in enumerate(text) if c in self._user_first})
        i = 0
        for p in where:
            if p < i:
                continue  # inside what the last match consumed
            if p > i:
                yield text[i:p], True
            m = self._user.match(text, p) if self._user is not None else None
            if m is not None:
                yield m.group(), False
                i = m.end()
                continue
            hit = self.charsmap.longest_at(text, p) if self.charsmap is not None else None
            if hit is None:
                yield text[p], True
                i = p + 1
            else:
                yield hit[0], False
                i = p + hit[1]
        if i < len(text):
            yield text[i:], True

    def normalize(self, text: str) -> str:
        out: list[str] = []
        collapse = self.remove_extra_whitespaces
        prev_space = collapse
        for piece, plain in self._pieces(text):
            if collapse:
                if prev_space:
                    piece = piece.lstrip(" ")
                if plain:
                    piece = _SPACES.sub(" ", piece)
                if piece:
                    out.append(piece)
                    prev_space = piece.endswith(" ")
            else:
                out.append(piece)
        result = "".join(out)
        if collapse:
            result = result.rstrip(" " + META)
            if result.startswith(META):
                result = " " + result  # see the module docstring
        return result

    def to_json(self) -> dict:
        return {"type": "sentencepiece", "name": self.name,
                "precompiled_charsmap": _b64(self.charsmap), "remove_extra_whitespaces": self.remove_extra_whitespaces,
                "user_defined": list(self.user)}

    def to_hf(self) -> dict:
        """The same rule as an HF normalizer: the map as Precompiled, then SentencePiece's
        whitespace rule as four regex Replaces (no space at the start, one for a run, no space
        or ▁ at the end, a space before a leading ▁). HF's converter writes Strip instead, which
        also strips tabs, CR and NBSP, and keeps a ▁ at the end. Exact only where
        `hf_difference` finds none: HF applies a map per grapheme cluster."""
        steps = [{"type": "Precompiled", "precompiled_charsmap": _b64(self.charsmap)}] if self.charsmap else []
        if self.remove_extra_whitespaces:
            steps += [_replace(r"(?<![\s\S]) +", ""), _replace(" {2,}", " "), _replace(r"[ ▁]+(?![\s\S])", ""),
                      _replace(r"(?<![\s\S])▁", " ▁")]
        return {"type": "Sequence", "normalizers": steps}

    def hf_difference(self) -> str | None:
        """Why HF cannot carry this rule exactly, or None when it can: HF's Precompiled applies
        the map per grapheme cluster (the value of the shortest key that starts a cluster
        replaces all of it), SentencePiece by longest match, and the two agree on every text
        only for a map of single control characters (`CharsMap.agrees_with_hf`)."""
        if self.charsmap is None or self.charsmap.agrees_with_hf():
            return None
        probe = self.charsmap.hf_differs_at()
        if probe is None:
            return ("HF's Precompiled normalizer applies this model's SentencePiece map per grapheme cluster, "
                    "SentencePiece by longest match, so some text normalizes otherwise")
        hf = hf_normalizer(self.to_hf()).normalize(probe)
        return (f"HF's Precompiled normalizer applies this model's SentencePiece map per grapheme cluster, "
                f"SentencePiece by longest match: {ascii(probe)} becomes {ascii(hf)} in HF and "
                f"{ascii(self.normalize(probe))} in SentencePiece")


def _replace(pattern: str, content: str) -> dict:
    return {"type": "Replace", "pattern": {"Regex": pattern}, "content": content}


def _b64(cm: CharsMap | None) -> str:
    return base64.b64encode(cm.blob).decode("ascii") if cm is not None else ""


@dataclass(frozen=True, eq=False)
class HfNormalizer:
    spec: dict | None
    """The tokenizer.json normalizer as HF wrote it (written back unchanged on export)."""
    steps: tuple
    whitespace_split: bool = False
    """The pre-tokenizer was Sequence[WhitespaceSplit, Metaspace] (older T5/Pegasus files): the
    words are joined by one space here, so metaspace alone then cuts them as HF does."""

    kind = "hf"

    def identity(self) -> tuple[str, bool]:
        return json.dumps(self.spec, sort_keys=True), self.whitespace_split

    def __eq__(self, other) -> bool:
        return isinstance(other, HfNormalizer) and other.identity() == self.identity()

    def __hash__(self) -> int:  # the spec is a dict: a model holding it stays hashable
        return hash(self.identity())

    @property
    def label(self) -> str:
        return "hf " + "+".join([s[0] for s in self.steps] + (["WhitespaceSplit"] if self.whitespace_split else []))

    def normalize(self, text: str) -> str:
        for step in self.steps:
            text = _apply(step, text)
        if self.whitespace_split:
            # a word that starts with ▁ gets no ▁ from HF's Metaspace: join it without the space
            words = _WHITE_RUN.split(text)
            text = "".join(w if k == 0 or w.startswith(META) else " " + w for k, w in enumerate(w for w in words if w))
        return text

    def to_json(self) -> dict:
        return {"type": "hf", "spec": self.spec, "whitespace_split": self.whitespace_split}

    def to_hf(self) -> dict:
        return self.spec


def _apply(step: tuple, text: str) -> str:
    kind = step[0]
    if kind == "Precompiled":
        return step[1].hf_transform(text)
    if kind == "Replace":  # a pattern from a file: under the pre-tokenizer's timeout
        return guarded_sub(step[1], step[2], text)
    if kind == "Strip":
        _, left, right = step
        if left:
            text = text.lstrip(_WHITE)
        return text.rstrip(_WHITE) if right else text
    if kind == "StripAccents":  # HF drops every combining mark (General_Category M)
        return _MARKS.sub("", text)
    if kind == "Lowercase":
        return "".join(c.lower() for c in text)  # HF lowercases char by char (no final-sigma rule)
    return hfnormal.normalize(kind, text)


HF_STEPS = ("Precompiled", "Replace", "Strip", "StripAccents", "Lowercase", "NFC", "NFD", "NFKC", "NFKD")


def hf_normalizer(spec, error=ModelFileError, whitespace_split: bool = False) -> HfNormalizer:
    """An HF normalizer built only of steps this tool reproduces; anything else is `error`."""
    if spec is None:
        return HfNormalizer(None, (), whitespace_split)
    if not isinstance(spec, dict):
        raise error(f"the normalizer must be an object or null, not {type(spec).__name__}")
    items = spec.get("normalizers") if spec.get("type") == "Sequence" else [spec]
    if not isinstance(items, list):
        raise error("normalizer Sequence must list its normalizers")
    steps = []
    for item in items:
        kind = item.get("type") if isinstance(item, dict) else None
        if kind not in HF_STEPS:
            raise error(f"normalizer {str(kind)[:40]!r} is not supported (this tool reads {', '.join(HF_STEPS)} "
                        "and a Sequence of them)")
        if kind == "Precompiled":
            raw = item.get("precompiled_charsmap")
            try:
                blob = base64.b64decode(raw or "", validate=True)
            except (ValueError, TypeError):
                raise error("normalizer Precompiled: 'precompiled_charsmap' is not base64") from None
            if not blob:  # HF writes an empty map for a model without one: it changes nothing
                continue
            try:
                steps.append((kind, read_charsmap(blob)))
            except ModelFileError as exc:
                raise error(str(exc)) from None
        elif kind == "Replace":
            pattern, content = item.get("pattern"), item.get("content")
            if not isinstance(content, str) or not isinstance(pattern, dict):
                raise error("normalizer Replace needs a pattern and a text content")
            if isinstance(pattern.get("String"), str):
                compiled = regex.compile(regex.escape(pattern["String"]))
            elif isinstance(pattern.get("Regex"), str):
                try:
                    compiled = regex.compile(pattern["Regex"])
                except regex.error as exc:
                    raise error(f"normalizer Replace: bad pattern {pattern['Regex']!r} ({exc})") from None
            else:
                raise error("normalizer Replace: the pattern is neither String nor Regex")
            steps.append((kind, compiled, content))
        elif kind == "Strip":
            steps.append((kind, bool(item.get("strip_left", True)), bool(item.get("strip_right", True))))
        else:
            steps.append((kind,))
    return HfNormalizer(spec, tuple(steps), whitespace_split)


def from_json(doc, error=ModelFileError):
    """Our model file's `"model_normalizer"` entry."""
    if not isinstance(doc, dict):
        raise error(f"'model_normalizer' must be an object, not {type(doc).__name__}")
    if doc.get("type") == "hf":
        if not (isinstance(doc.get("spec"), dict) or doc.get("spec") is None) \
                or not isinstance(doc.get("whitespace_split", False), bool):
            raise error("'model_normalizer' of type hf needs its 'spec' and true/false 'whitespace_split'")
        return hf_normalizer(doc["spec"], error, doc.get("whitespace_split", False))
    if doc.get("type") != "sentencepiece":
        raise error(f"'model_normalizer' type {str(doc.get('type'))[:40]!r} is not sentencepiece or hf")
    raw = doc.get("precompiled_charsmap", "")
    user = doc.get("user_defined", [])
    if not (isinstance(raw, str) and isinstance(user, list) and all(isinstance(u, str) and u for u in user)
            and isinstance(doc.get("remove_extra_whitespaces", True), bool)):
        raise error("'model_normalizer' needs a base64 'precompiled_charsmap', true/false "
                    "'remove_extra_whitespaces' and a list of texts 'user_defined'")
    try:
        blob = base64.b64decode(raw, validate=True)
    except ValueError:
        raise error("'model_normalizer': 'precompiled_charsmap' is not base64") from None
    try:
        cm = read_charsmap(blob) if blob else None
    except ModelFileError as exc:
        raise error(str(exc)) from None
    return SpNormalizer(cm, str(doc.get("name", ""))[:100], doc.get("remove_extra_whitespaces", True), tuple(user))
