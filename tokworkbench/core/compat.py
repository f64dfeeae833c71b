"""Whether two tokenizers mean the same thing by the same id: fingerprints and a comparison.

A language model's embedding row k means whatever token k was when it was trained; feeding it
ids from a tokenizer with the same vocabulary size but other tokens fails silently. The
fingerprint is what a training pipeline checks instead:

    SHA-256 of the UTF-8 text
        "tokworkbench-fingerprint 1\\n"
        one line per id, ascending:          "<id> <hex of the token's bytes>\\n"
        one line per special token, by id:   "special <id> <role or ->\\n"

So it changes when any id's bytes change, when a token becomes or stops being special, or when
a role moves, and only then: how a model segments text (BPE merges, longest match, Unigram
scores) does not enter it, since the ids still mean the same bytes.
"""

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass

from tokworkbench.core.inspection.escape import quote
from tokworkbench.core.models.protocol import MergeRanked
from tokworkbench.core.models.roles import encode_content, roles_of

FINGERPRINT_VERSION = 1
SHOW_DIFFERENCES = 10


def model_ids(model) -> list[int]:
    """Every outside id of `model`, ascending (an imported model may number its own way)."""
    if isinstance(model, MergeRanked) and model.ids is not None:
        return sorted(model.ids)
    return list(range(model.vocab_size))


def id_table(model) -> dict[int, bytes]:
    """id -> the token's bytes, for every id."""
    return {i: model.token_bytes(i) for i in model_ids(model)}


def special_lines(model) -> list[tuple[int, str, str]]:
    """(id, token, role or '-') for every special token, by id."""
    roles = roles_of(model)
    return sorted((i, s, roles.role_of(s) or "-") for s, i in model.special_ids.items())


def fingerprint(model, table: dict[int, bytes] | None = None) -> str:
    """The SHA-256 hex digest defined in the module docstring."""
    table = id_table(model) if table is None else table
    h = hashlib.sha256(f"tokworkbench-fingerprint {FINGERPRINT_VERSION}\n".encode())
    for i in sorted(table):
        h.update(f"{i} {table[i].hex()}\n".encode())
    for i, _, role in special_lines(model):
        h.update(f"special {i} {role}\n".encode())
    return h.hexdigest()


@dataclass(frozen=True)
class Difference:
    """One id whose token differs; None where a model has no such id."""

    id: int
    a: str | None
    b: str | None

    def __str__(self) -> str:
        def shown(t):
            return "(none)" if t is None else quote(t)
        return f"id {self.id}: {shown(self.a)} vs {shown(self.b)}"


@dataclass(frozen=True)
class Comparison:
    size_a: int
    size_b: int
    fingerprint_a: str
    fingerprint_b: str
    differing: int
    """How many ids (in either model) have different bytes, or exist in one model only."""
    first: tuple[Difference, ...]
    """The first few of them, by id."""
    specials_a: tuple[tuple[int, str, str], ...]
    specials_b: tuple[tuple[int, str, str], ...]
    """(id, token, role or '-') of each model's special tokens."""
    count_a: int | None = None
    count_b: int | None = None
    """Tokens each gives on the text (content only, no boundaries); None without a text."""

    @property
    def compatible(self) -> bool:
        return self.fingerprint_a == self.fingerprint_b

    def lines(self, name_a: str = "A", name_b: str = "B") -> list[str]:
        """The report `tokworkbench compare` prints."""
        width = max(len(name_a), len(name_b))
        out = [f"{name_a:<{width}}  vocabulary {self.size_a:,}  fingerprint {self.fingerprint_a}",
               f"{name_b:<{width}}  vocabulary {self.size_b:,}  fingerprint {self.fingerprint_b}",
               f"ids whose tokens differ: {self.differing:,}"]
        out += [f"  {d}" for d in self.first]
        if self.differing > len(self.first):
            out.append(f"  … and {self.differing - len(self.first):,} more")
        if self.specials_a != self.specials_b:
            out.append("special tokens differ:")
            out.append(f"  {name_a}: " + (_specials(self.specials_a) or "none"))
            out.append(f"  {name_b}: " + (_specials(self.specials_b) or "none"))
        if self.count_a is not None:
            out.append(f"tokens on the text: {name_a} {self.count_a:,}, {name_b} {self.count_b:,}")
        out.append("compatible: the same ids mean the same tokens" if self.compatible else
                   "INCOMPATIBLE: do not feed ids of one to a model trained on the other")
        return out


def _specials(specials: Iterable[tuple[int, str, str]]) -> str:
    return ", ".join(f"{i} {quote(s)}" + (f" ({r})" if r != "-" else "") for i, s, r in specials)


def compare(a, b, text: str | None = None, show: int = SHOW_DIFFERENCES) -> Comparison:
    """Sizes, fingerprints, the ids whose tokens differ (the first `show` of them with both
    tokens), and, given a text, how many content tokens each model makes of it."""
    ta, tb = id_table(a), id_table(b)
    differing = sorted(i for i in ta.keys() | tb.keys() if ta.get(i) != tb.get(i))
    first = tuple(Difference(i, a.token_text(i) if i in ta else None, b.token_text(i) if i in tb else None)
                  for i in differing[:show])
    counts = (len(encode_content(a, text)), len(encode_content(b, text))) if text is not None else (None, None)
    return Comparison(a.vocab_size, b.vocab_size, fingerprint(a, ta), fingerprint(b, tb), len(differing), first,
                      tuple(special_lines(a)), tuple(special_lines(b)), *counts)
