"""A trainer's history (bpe/history.py) behaves as the list of records it stands for, whether its
steps arrived as rows or were appended, through any mix of reads, steps, undos and transfers."""

import pickle
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokworkbench.core.bpe import history as history_module
from tokworkbench.core.bpe.history import MergeRecord, TrainingHistory
from tokworkbench.core.curve import compression_curve


def record(step: int, made: int = 0) -> MergeRecord:
    """Step `step`'s record; `made` tells apart two records made for the same step (one undone)."""
    return MergeRecord(step, (step % 7, step % 5 + 300), 256 + step, 1000 - step + made, step % 11, 90_000 - step)


ops = st.lists(st.one_of(
    st.tuples(st.just("append"), st.integers(0, 3)),
    st.tuples(st.just("pop"), st.integers(0, 3)),
    st.tuples(st.just("travel"), st.just(0)),
    st.tuples(st.just("read"), st.integers(-40, 40)),
    st.tuples(st.just("slice"), st.tuples(st.integers(-40, 40) | st.none(), st.integers(-40, 40) | st.none(),
                                          st.sampled_from([None, 1, 2, 3, -1]))),
), max_size=60)


@settings(max_examples=300, deadline=None)
@given(first=st.integers(0, 30), ops=ops, batch=st.sampled_from([1, 2, 3, 5, history_module._BATCH]))
def test_the_history_is_the_list_it_stands_for(first, ops, batch):
    """`batch`: appends before they also become rows (small here, so a run of a few steps crosses it)."""
    with mock.patch.object(history_module, "_BATCH", batch):
        _check(first, ops)


def _check(first, ops):
    model = [record(s) for s in range(1, first + 1)]
    arrived = _filled(model).rows()  # steps that arrived as rows: maybe shared memory, never written
    before = arrived.copy()
    history = TrainingHistory(arrived)
    made = 0
    for op, arg in ops:
        if op == "append":
            for _ in range(arg):
                made += 1
                model.append(record(len(model) + 1, made))
                history.append(model[-1])
        elif op == "pop":
            for _ in range(arg):
                if model:
                    assert history.pop() == model.pop()
                else:
                    with pytest.raises(IndexError):
                        history.pop()
        elif op == "travel":  # through pickle, as a training state does: the rows out of band
            history = pickle.loads(pickle.dumps(history, protocol=5))
        elif op == "read":
            if -len(model) <= arg < len(model):
                assert history[arg] == model[arg]
                assert history[arg] is history[arg]  # read twice, one record
            else:
                with pytest.raises(IndexError):
                    history[arg]
        else:
            assert history[slice(*arg)] == model[slice(*arg)]
        assert len(history) == len(model) and bool(history) == bool(model)
        assert list(history) == model and history == model
    assert list(reversed(history)) == model[::-1]
    assert np.array_equal(arrived, before)
    assert compression_curve(history, 100_000, lambda r: r.length, 7) == \
        compression_curve(model, 100_000, lambda r: r.length, 7)


def _filled(records: list[MergeRecord]) -> TrainingHistory:
    history = TrainingHistory()
    for r in records:
        history.append(r)
    return history


def test_the_curve_keeps_the_last_step_once():
    """Read by index (no `is` between two reads of a row-backed history)."""
    model = [record(s) for s in range(1, 11)]
    history = pickle.loads(pickle.dumps(_filled(model)))
    for points in range(1, 13):
        curve = compression_curve(history, 100_000, lambda r: r.length, points)
        assert curve == compression_curve(model, 100_000, lambda r: r.length, points)
        assert len(curve) <= points and curve[-1] == 100_000 / model[-1].length
