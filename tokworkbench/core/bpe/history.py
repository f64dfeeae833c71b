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
    """The steps in order: rows taken over whole, then the records appended since."""

    __slots__ = ("_rows", "_read", "_tail")

    def __init__(self, rows: np.ndarray | None = None) -> None:
        """`rows`: steps taken over whole, as `rows()` gives them."""
        self._rows = np.empty((0, FIELDS), dtype=np.int64) if rows is None else rows.reshape(-1, FIELDS)
        self._read: dict[int, MergeRecord] = {}  # the records made from rows so far, by index
        self._tail: list[MergeRecord] = []

    def rows(self) -> np.ndarray:
        """Every step as one row of FIELDS: what travels."""
        if not self._tail:
            return self._rows
        return np.concatenate((self._rows, _rows_of(self._tail)))

    def __reduce__(self):
        return TrainingHistory, (self.rows(),)

    # -- a list's verbs ------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._rows) + len(self._tail)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self._at(i) for i in range(len(self))[index]]
        n = len(self)
        i = index + n if index < 0 else index
        if not 0 <= i < n:
            raise IndexError("history index out of range")
        return self._at(i)

    def __iter__(self) -> Iterator[MergeRecord]:
        rows, read = self._rows, self._read
        for start in range(0, len(rows), _BATCH):
            made = None  # this batch's rows as records, once one of them has not been read
            for i in range(start, min(start + _BATCH, len(rows))):
                record = read.get(i)
                if record is None:
                    if made is None:
                        made = records(rows[start : start + _BATCH])
                    record = made[i - start]
                yield record
        yield from self._tail

    def __eq__(self, other) -> bool:
        if not isinstance(other, (TrainingHistory, list)):
            return NotImplemented
        return len(self) == len(other) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]  (it changes, as a list does)

    def __repr__(self) -> str:
        return f"TrainingHistory({len(self)} steps)"

    def append(self, record: MergeRecord) -> None:
        """Every _BATCH records appended become rows as well (kept as the records read), so a
        state packed at the end of a long run has few left to turn into rows: 48k of them took
        the training child 25 ms, between its stop and the session's state back."""
        tail = self._tail
        tail.append(record)
        if len(tail) >= _BATCH:
            first = len(self._rows)
            self._rows = np.concatenate((self._rows, _rows_of(tail)))
            self._read.update(enumerate(tail, first))
            tail.clear()

    def pop(self) -> MergeRecord:
        if self._tail:
            return self._tail.pop()
        last = len(self._rows) - 1
        if last < 0:
            raise IndexError("pop from an empty history")
        record = self._at(last)
        del self._read[last]
        self._rows = self._rows[:last]
        return record

    def _at(self, i: int) -> MergeRecord:
        k = i - len(self._rows)
        if k >= 0:
            return self._tail[k]
        record = self._read.get(i)
        if record is None:
            record = self._read[i] = records(self._rows[i : i + 1])[0]
        return record


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
