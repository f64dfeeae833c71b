"""What models over a plain token list share (a fixed vocabulary, WordPiece, SentencePiece's
pieces): the token list's check, the id check every decode makes, and the longest-match lookup."""

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field

from tokworkbench.core.errors import DecodeError, VocabFileError
from tokworkbench.core.inspection.escape import quote


def index_tokens(tokens: Collection[str]) -> dict[str, int]:
    """token -> id; a VocabFileError naming the first token that is empty, not text, or repeated."""
    seen: dict[str, int] = {}
    for i, t in enumerate(tokens):
        if not isinstance(t, str) or not t:
            raise VocabFileError(f"token {i} must be a non-empty string, not {t!r}")
        if t in seen:
            raise VocabFileError(f"token {i} repeats token {seen[t]} ({quote(t)}); each token appears once")
        seen[t] = i
    return seen


def check_ids(ids: Collection[int], size: int) -> list[int]:
    """`ids` as a list; a DecodeError naming the first that is not an id of a vocabulary of `size`."""
    for pos, t in enumerate(ids):
        if not isinstance(t, int) or isinstance(t, bool) or not 0 <= t < size:
            raise DecodeError(f"id {t!r} at position {pos} is out of range: this vocabulary has ids 0..{size - 1}")
    return list(ids)


@dataclass(frozen=True)
class LongestMatch:
    """Strings to ids, looked up longest first at a position. Only the lengths some string has
    are tried, so a lookup costs one dict probe per distinct length, not per character."""

    table: Mapping[str, int]
    lengths: tuple[int, ...] = field(init=False)

    def __post_init__(self):
        object.__setattr__(self, "lengths", tuple(sorted({len(t) for t in self.table}, reverse=True)))

    def at(self, text: str, pos: int, end: int | None = None) -> tuple[int, int] | None:
        """(id, length) of the longest string that starts at `pos` and ends by `end`, or None."""
        end = len(text) if end is None else end
        table = self.table
        for n in self.lengths:
            if pos + n <= end:
                tid = table.get(text[pos : pos + n])
                if tid is not None:
                    return tid, n
        return None
