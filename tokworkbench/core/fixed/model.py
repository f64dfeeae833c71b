"""A fixed vocabulary: tokens in id order, segmented longest match first. Nothing is learned.

This is how a course builds a readable tokenizer by hand ("我", "喜欢", "学习", …), and how a
user pins a small vocabulary to study. The rule, at each position of the text:
- the longest token that matches there wins; among equal lengths, the earlier id (only a
  tie-break on paper: tokens are distinct, so two that match at one place differ in length);
- where no token matches, that one character becomes UNK and the cursor moves one character
  (no UNK role: an error naming the character and its offset).

Special tokens (those with a role, and any `extra_specials`) are never matched in content:
their strings are plain text there, as in every model kind.
"""

from collections.abc import Collection
from dataclasses import dataclass
from functools import cached_property

from tokworkbench.core.errors import EncodeError, VocabFileError, check_unicode
from tokworkbench.core.models.roles import NO_ROLES, Roles
from tokworkbench.core.models.specials import encode_with_specials
from tokworkbench.core.models.vocab import LongestMatch, check_ids, index_tokens
from tokworkbench.core.text.pretokenize import pre_tokenizer as make_pre_tokenizer
from tokworkbench.core.units import Units

KIND = "fixed"


@dataclass(frozen=True)
class FixedVocab:
    tokens: tuple[str, ...]
    """Every token in id order (id = index), specials included."""
    roles: Roles = NO_ROLES
    extra_specials: tuple[str, ...] = ()
    """Special tokens without a role (kept out of content like the role tokens)."""

    kind = KIND
    units = Units.CHAR
    normalizer = "none"
    pre_tokenizer = make_pre_tokenizer("none")

    def __post_init__(self):
        tokens = tuple(self.tokens)
        object.__setattr__(self, "tokens", tokens)
        object.__setattr__(self, "extra_specials", tuple(self.extra_specials))
        if not tokens:
            raise VocabFileError("a fixed vocabulary needs at least one token")
        seen = index_tokens(tokens)
        object.__setattr__(self, "roles", Roles.of(self.roles).check(seen, "in this vocabulary"))
        for s in self.extra_specials:
            if s not in seen:
                raise VocabFileError(f"special token {s!r} is not in this vocabulary")

    # -- vocabulary ------------------------------------------------------------------------
    @property
    def vocab_size(self) -> int:
        return len(self.tokens)

    @cached_property
    def special_tokens(self) -> tuple[str, ...]:
        """Role tokens and extra specials, in id order."""
        special = set(self.roles.tokens) | set(self.extra_specials)
        return tuple(t for t in self.tokens if t in special)

    @cached_property
    def special_ids(self) -> dict[str, int]:
        index = self._index
        return {s: index[s] for s in self.special_tokens}

    @cached_property
    def _index(self) -> dict[str, int]:
        return {t: i for i, t in enumerate(self.tokens)}

    @cached_property
    def _content(self) -> LongestMatch:
        """Content tokens by string (specials are never matched in content)."""
        special = set(self.special_tokens)
        return LongestMatch({t: i for i, t in enumerate(self.tokens) if t not in special})

    def _check(self, ids: Collection[int]) -> list[int]:
        return check_ids(ids, len(self.tokens))

    def token(self, tid: int) -> str:
        return self.tokens[self._check([tid])[0]]

    def token_bytes(self, tid: int) -> bytes:
        return self.token(tid).encode("utf-8")

    def token_text(self, tid: int) -> str:
        return self.token(tid)

    # -- encoding --------------------------------------------------------------------------
    def encode_ordinary(self, text: str) -> list[int]:
        check_unicode(text)
        return self._segment(text, 0)

    def encode(self, text: str, allowed_special: Collection[str] | str = (),
               disallowed_special: Collection[str] | str = "all") -> list[int]:
        check_unicode(text)
        return encode_with_specials(text, self.special_ids, allowed_special, disallowed_special, self._segment)

    def encode_chunks(self, text: str) -> list[tuple[str, list[int]]]:
        """One chunk: a fixed vocabulary has no pre-tokenizer."""
        check_unicode(text)
        return [(text, self._segment(text, 0))] if text else []

    def char_lengths(self, chunk: str, ids: list[int]) -> list[int]:
        """Characters each id covers: the unk token stands for one character."""
        unk = self.special_ids.get(self.roles.unk) if self.roles.unk is not None else None
        return [1 if t == unk else len(self.token_text(t)) for t in ids]

    def _segment(self, text: str, offset: int) -> list[int]:
        content = self._content
        unk = self.special_ids.get(self.roles.unk) if self.roles.unk is not None else None
        ids: list[int] = []
        pos, end = 0, len(text)
        while pos < end:
            found = content.at(text, pos, end)
            if found is not None:
                ids.append(found[0])
                pos += found[1]
            else:
                if unk is None:
                    ch = text[pos]
                    raise EncodeError(f"no token of this fixed vocabulary matches at offset {offset + pos} "
                                      f"({ch!r}, U+{ord(ch):04X}), and it has no unk token")
                ids.append(unk)
                pos += 1
        return ids

    # -- decoding --------------------------------------------------------------------------
    def decode(self, ids: list[int], errors: str = "strict") -> str:
        tokens = self.tokens
        return "".join(tokens[i] for i in self._check(ids))

    def decode_bytes(self, ids: list[int]) -> bytes:
        return self.decode(ids).encode("utf-8")
