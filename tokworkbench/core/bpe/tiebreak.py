"""Tie-break rules: which pair wins when several share the highest count (DESIGN.md pins them).

Each rule is a sort key where smaller wins, so the trainer's heap orders by (-count, key).
`first` depends on where the pair occurs now, so the trainer supplies it; the others depend
only on the pair and the vocabulary.
"""

from collections.abc import Callable
from functools import total_ordering

from tokworkbench.core.bytelevel import hf_byte_ranks
from tokworkbench.core.units import Units

TIE_BREAKS = ("first", "lexmin", "lexmax", "hf")
TIE_BREAK_RULES = {
    "first": "minbpe's rule: the pair whose leftmost occurrence comes first",
    "lexmin": "the smallest pair (rustbpe's rule): ids for byte units, token strings for char units",
    "lexmax": "the largest pair, compared as lexmin compares",
    "hf": "Hugging Face's rule: the smallest pair in HF's own ids (GPT-2 byte characters by code point)",
}


@total_ordering
class Descending:
    """Wraps a value so that larger sorts first (for lexmax over strings)."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def __eq__(self, other):
        return self.value == other.value

    def __lt__(self, other):
        return other.value < self.value

    def __hash__(self):
        return hash(self.value)

    def __repr__(self):
        return f"Descending({self.value!r})"


def string_key(rule: str, vocab: list) -> Callable[[tuple[int, int]], object]:
    """Key for the rules that compare token strings (lexmin/lexmax over char units); the others
    compare ids through `order_table` or positions. `vocab` is the trainer's live list."""
    if rule == "lexmin":
        return lambda p: (vocab[p[0]], vocab[p[1]])
    if rule == "lexmax":
        return lambda p: Descending((vocab[p[0]], vocab[p[1]]))
    raise ValueError(f"tie-break {rule!r} does not compare strings")


def order_table(rule: str, units: Units, base_size: int) -> list[int] | None:
    """Sort key per id when a rule compares ids (so keys are two list lookups, no call);
    None when it compares strings or positions."""
    if rule == "first" or (not units.is_bytes and rule in ("lexmin", "lexmax")):
        return None
    if rule == "hf" and units.is_bytes:
        return hf_byte_ranks()
    return [next_order(rule, i) for i in range(base_size)]


def next_order(rule: str, new_id: int) -> int:
    return -new_id if rule == "lexmax" else new_id
