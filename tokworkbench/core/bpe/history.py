"""A BPE trainer's history: one MergeRecord a step, the older ones possibly still rows of an array.

A training state carried back from the training child (core/session/childrun.py) used to turn
its history into records one by one as it arrived: 40-60 ms at 45k merges, with the GIL held,
between `escape` and a usable session, and about 400 bytes a step for as long as the session
lived. Here the steps that arrive stay rows of one int64 array (56 bytes a step) and become
records when they are read; a step appends a record and an undo pops one, as with a list.
A record read twice is the same object; records made by iterating are not kept, so compare
records with ==, as the values they are.
"""

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import chain

import numpy as np

from tokworkbench.core.bpe.flatchunks import Pair

FIELDS = 7  # step, left, right, new id, count, replacements, length
_BATCH = 4096  # records appended before they become rows too; rows made into records at once while iterating


@dataclass(frozen=True)
class MergeRecord:
    """One training step, as DESIGN.md defines it; `length` is total tokens after the step."""

    step: int
    pair: Pair
    new_id: int
    count: int
    replacements: int
    length: int


class TrainingHistory(Sequence[MergeRecord]):
    """The steps in order: rows (taken over whole, or turned into rows here), then the records
    appended since. Not to be changed while iterated, as a list's iterator would see the changes."""

    __slots__ = ("_rows", "_count", "_owned", "_made", "_tail")

    def __init__(self, rows: np.ndarray | None = None) -> None:
        """`rows`: steps taken over whole, as `rows()` gives them. They may be a view of memory
        another process can map (core/transfer.py): they are read there, never written."""
        self._rows = np.empty((0, FIELDS), dtype=np.int64) if rows is None else rows.reshape(-1, FIELDS)
        self._count = len(self._rows)  # rows in use: `_rows` beyond them is room to grow
        self._owned = False  # whether `_rows` was allocated here, so its room may be written
        self._made: list[MergeRecord | None] = [None] * self._count  # each row's record, once read
        self._tail: list[MergeRecord] = []

    def rows(self) -> np.ndarray:
        """Every step as one row of FIELDS: what travels."""
        used = self._rows[: self._count]
        return np.concatenate((used, _rows_of(self._tail))) if self._tail else used

    def __reduce__(self):
        return TrainingHistory, (self.rows(),)

    # -- a list's verbs ------------------------------------------------------------------------
    def __len__(self) -> int:
        return self._count + len(self._tail)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self._at(i) for i in range(len(self))[index]]
        n = len(self)
        i = index + n if index < 0 else index
        if not 0 <= i < n:
            raise IndexError("history index out of range")
        return self._at(i)

    def __iter__(self) -> Iterator[MergeRecord]:
        count, made = self._count, self._made
        for start in range(0, count, _BATCH):
            stop = min(start + _BATCH, count)
            batch = made[start:stop]
            if None in batch:  # rows not read yet: made for this pass, not kept
                fresh = records(self._rows[start:stop])
                batch = [r if r is not None else f for r, f in zip(batch, fresh)]
            yield from batch
        yield from self._tail

    def __eq__(self, other) -> bool:
        if not isinstance(other, (TrainingHistory, list)):
            return NotImplemented
        return len(self) == len(other) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]  (it changes, as a list does)

    def __repr__(self) -> str:
        return f"TrainingHistory({len(self)} steps)"

    def append(self, record: MergeRecord) -> None:
        """Every _BATCH records appended become rows as well (kept as the records they are), so a
        state packed at the end of a long run has few left to turn into rows: 48k of them took
        the training child 25 ms, between its stop and the session's state back."""
        self._tail.append(record)
        if len(self._tail) >= _BATCH:
            self._settle()

    def pop(self) -> MergeRecord:
        if self._tail:
            return self._tail.pop()
        if not self._count:
            raise IndexError("pop from an empty history")
        record = self._at(self._count - 1)
        self._count -= 1
        self._made.pop()
        return record

    def _at(self, i: int) -> MergeRecord:
        k = i - self._count
        if k >= 0:
            return self._tail[k]
        record = self._made[i]
        if record is None:
            record = self._made[i] = records(self._rows[i : i + 1])[0]
        return record

    def _settle(self) -> None:
        """The tail's records as rows, in room that doubles as it runs out (copying the rows at
        every settle made a long history's appends cost quadratic time)."""
        tail, count = self._tail, self._count
        need = count + len(tail)
        if not self._owned or need > len(self._rows):
            rows = np.empty((max(need, 2 * len(self._rows), _BATCH), FIELDS), dtype=np.int64)
            rows[:count] = self._rows[:count]
            self._rows, self._owned = rows, True
        self._rows[count:need] = _rows_of(tail)
        self._made.extend(tail)
        self._tail = []
        self._count = need


def _rows_of(made: list[MergeRecord]) -> np.ndarray:
    fields = chain.from_iterable((r.step, *r.pair, r.new_id, r.count, r.replacements, r.length) for r in made)
    return np.fromiter(fields, dtype=np.int64, count=FIELDS * len(made)).reshape(-1, FIELDS)


def records(rows: np.ndarray) -> list[MergeRecord]:
    """Rows as records. Each is made as a blank object given its fields: the frozen dataclass's
    own __init__ sets them one by one through object.__setattr__, at twice the cost."""
    new, made = object.__new__, []
    for step, a, b, z, count, reps, length in rows.tolist():
        record = new(MergeRecord)
        record.__dict__.update(step=step, pair=(a, b), new_id=z, count=count, replacements=reps, length=length)
        made.append(record)
    return made
