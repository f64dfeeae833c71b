"""Hugging Face's added tokens (`AddedVocabulary`), for a model read from a tokenizer.json.

HF cuts every added token out of the text before anything else runs: first those with
`normalized: false`, on the raw text; then each remaining piece is normalized and those with
`normalized: true` are cut from it (matched as the normalizer writes them). Matches are
leftmost-longest and never overlap; a token with `single_word` matches only between non-word
characters (a match it discards still ends the search there, as in HF); `lstrip` and `rstrip`
make it take the whitespace on that side (not what an earlier match took). The pieces between
go to the pre-tokenizer and the model, each on its own.

Our encode keeps tiktoken's rule for special tokens (`special: true`): their text is an error
unless allowed, an allowed one is cut out HF's way. A token with `special: false` is ordinary
text to us too, so it is always cut out, as HF does. So `encode(text, allowed_special="all")` is
HF's `encode(text, add_special_tokens=False)`.
"""

from collections.abc import Callable, Collection
from dataclasses import dataclass
from functools import cached_property, lru_cache

import regex

from tokworkbench.core.errors import EncodeError, SpecialTokenInTextError


@lru_cache(maxsize=1)
def _classes() -> tuple["regex.Pattern[str]", "regex.Pattern[str]"]:
    """The regex crate's \\w and \\s, measured from HF: built on first use (their tables cost a
    fifth of a second, which every start would pay for the few models that have added tokens)."""
    from tokworkbench.core.text.hfpretok import SPACE_CLASS, WORD_CLASS

    return regex.compile(WORD_CLASS), regex.compile(SPACE_CLASS)


@dataclass(frozen=True)
class AddedToken:
    content: str
    id: int
    special: bool = True
    normalized: bool = False
    lstrip: bool = False
    rstrip: bool = False
    single_word: bool = False

    def to_json(self) -> dict:
        return {"id": self.id, "content": self.content, "single_word": self.single_word, "lstrip": self.lstrip,
                "rstrip": self.rstrip, "normalized": self.normalized, "special": self.special}


@dataclass(frozen=True)
class AddedVocabulary:
    tokens: tuple[AddedToken, ...]

    @cached_property
    def specials(self) -> frozenset[str]:
        return frozenset(t.content for t in self.tokens if t.special)

    def segments(self, text: str, active: Collection[str], normalize: Callable[[str], str]) -> list:
        """The text as HF's AddedVocabulary cuts it, with only the `active` tokens: a list of
        ids (int) and (normalized piece, offset) pairs, offset where the piece's raw text starts
        (0 only for the very start: what Metaspace's `first` looks at)."""
        raw = [t for t in self.tokens if t.content in active and not t.normalized]
        cooked = [t for t in self.tokens if t.content in active and t.normalized]
        cooked_by_text: dict[str, AddedToken] = {}
        for t in cooked:
            cooked_by_text.setdefault(normalize(t.content), t)
        out: list = []
        for part, start in _cut(text, {t.content: t for t in raw}):
            if isinstance(part, int):
                out.append(part)
                continue
            for sub, at in _cut(normalize(part), cooked_by_text):
                out.append(sub if isinstance(sub, int) else (sub, start + at))
        return out

    def encode(self, text: str, allowed_special: Collection[str] | str, disallowed_special: Collection[str] | str,
               normalize: Callable[[str], str], encode_piece: Callable[[str, int], list[int]]) -> list[int]:
        """tiktoken's rule for the specials, HF's cutting for the rest (module docstring);
        `encode_piece(normalized piece, offset)` encodes what lies between."""
        specials = self.specials
        allowed = set(specials) if allowed_special == "all" else set(allowed_special)
        unknown = allowed - specials
        if unknown:
            raise EncodeError(f"not a special token of this model: {', '.join(sorted(unknown))}")
        disallowed = (specials - allowed) if disallowed_special == "all" else set(disallowed_special) & specials
        found = [(at, s) for s in disallowed if (at := text.find(s)) >= 0]
        if found:
            at, s = min(found, key=lambda f: (f[0], -len(f[1])))
            raise SpecialTokenInTextError(s, at)
        active = allowed | {t.content for t in self.tokens if not t.special}
        ids: list[int] = []
        for seg in self.segments(text, active, normalize):
            if isinstance(seg, int):
                ids.append(seg)
            else:
                ids.extend(encode_piece(*seg))
        return ids


def _cut(text: str, tokens: dict[str, AddedToken]) -> list[tuple]:
    """`find_matches` and `split_with_indices`: (id, start) for a token, (text, start) for
    what lies between; empty pieces are left out."""
    if not tokens or not text:
        return [(text, 0)] if text else []
    pattern = regex.compile("|".join(regex.escape(c) for c in sorted(tokens, key=len, reverse=True)))
    out: list[tuple] = []
    done = 0
    for m in pattern.finditer(text):
        start, stop = m.span()
        token = tokens[m.group()]
        if token.single_word:
            word, _ = _classes()
            start_space = start == 0 or not word.match(text, start - 1)
            stop_space = stop == len(text) or not word.match(text, stop)
            if not (start_space and stop_space):
                continue
        if token.lstrip:
            left = start
            while left > 0 and _classes()[1].match(text, left - 1):
                left -= 1
            start = max(left, done)
        if token.rstrip:
            while stop < len(text) and _classes()[1].match(text, stop):
                stop += 1
        if done < start:
            out.append((text[done:start], done))
        out.append((token.id, start))
        done = stop
    if done < len(text):
        out.append((text[done:], done))
    return out


def read_added(entries, error) -> AddedVocabulary:
    """Our model files' `"added_tokens"` (HF's own fields), checked; `error` is the class to raise."""
    if not isinstance(entries, list) or not entries:
        raise error("'added_tokens' must be a non-empty list")
    tokens, seen = [], set()
    for k, t in enumerate(entries):
        if not (isinstance(t, dict) and isinstance(t.get("content"), str) and t["content"]
                and type(t.get("id")) is int and t["id"] >= 0):
            raise error(f"added token {k} must have a non-empty 'content' and a whole-number 'id'")
        flags = {key: t.get(key, False) for key in ("special", "normalized", "lstrip", "rstrip", "single_word")}
        if not all(isinstance(v, bool) for v in flags.values()):
            raise error(f"added token {k}'s flags must be true or false")
        if t["content"] in seen:
            raise error(f"added token {k} ({t['content'][:40]!r}) appears twice")
        seen.add(t["content"])
        tokens.append(AddedToken(t["content"], t["id"], **flags))
    return AddedVocabulary(tuple(tokens))
