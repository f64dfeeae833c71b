"""The UTF-8 byte view: each character's code point, name, bytes, and the tokens its bytes fall in."""

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class CharRow:
    offset: int
    char: str
    codepoint: str
    name: str
    data: bytes
    tokens: tuple[int, ...]  # ordinal of the token holding each byte
    cut: bool  # the character's bytes fall in more than one token


def char_name(ch: str) -> str:
    name = unicodedata.name(ch, "")
    if name:
        return name
    cat = unicodedata.category(ch)
    return {"Cc": "<control>", "Cs": "<surrogate>", "Co": "<private use>", "Cn": "<unassigned>"}.get(cat, f"<{cat}>")


def char_rows(text: str, token_lengths: Sequence[int], limit: int | None = None) -> list[CharRow]:
    """Rows for `text` whose UTF-8 bytes are covered, in order, by tokens of `token_lengths` bytes."""
    owner: list[int] = []
    for ordinal, n in enumerate(token_lengths):
        owner.extend([ordinal] * n)
    rows = []
    b = 0
    for i, ch in enumerate(text if limit is None else text[:limit]):
        data = ch.encode("utf-8")
        toks = tuple(owner[b + k] if b + k < len(owner) else -1 for k in range(len(data)))
        rows.append(CharRow(i, ch, f"U+{ord(ch):04X}", char_name(ch), data, toks, len(set(toks)) > 1))
        b += len(data)
    return rows
