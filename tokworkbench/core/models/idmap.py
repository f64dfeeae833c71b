"""Outside ids for a model whose file numbers its tokens its own way (HF vocabularies do).

Inside, a BPE model's ids are ranks: base unit b is id b and merge k is id base+k. Every public
method of a model takes and returns outside ids; the map is the one place they are translated.
"""

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property

from tokworkbench.core.errors import DecodeError


@dataclass(frozen=True)
class IdMap:
    outside: tuple[int, ...]  # the outside id of each inside id

    @classmethod
    def of(cls, outside: Iterable[int]) -> "IdMap | None":
        """None where the outside ids are the inside ones (0, 1, 2, …): nothing to translate."""
        outside = tuple(outside)
        return None if outside == tuple(range(len(outside))) else cls(outside)

    @cached_property
    def _inside(self) -> dict[int, int]:
        return {e: i for i, e in enumerate(self.outside)}

    def __len__(self) -> int:
        return len(self.outside)

    def __iter__(self) -> Iterator[int]:
        return iter(self.outside)

    def __getitem__(self, inside: int) -> int:
        return self.outside[inside]

    def to_outside(self, ids: Sequence[int]) -> list[int]:
        table = self.outside
        return [table[i] for i in ids]

    def to_inside(self, ids: Sequence[int]) -> list[int]:
        table = self._inside
        out = []
        for pos, t in enumerate(ids):
            i = table.get(t) if isinstance(t, int) and not isinstance(t, bool) else None
            if i is None:
                raise DecodeError(f"id {t!r} at position {pos} is not in this vocabulary "
                                  f"(ids {min(self.outside)}..{max(self.outside)})")
            out.append(i)
        return out

    def __getstate__(self):
        return {"outside": self.outside}  # the reverse table is rebuilt on demand
