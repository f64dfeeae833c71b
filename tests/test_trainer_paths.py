"""A merge or undo with few occurrences takes a Python path, one with many a numpy path: both
must leave exactly the same trainer, and undo must be exact on either."""

import pickle

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reference import reference_train
from test_trainer_properties import SPLITS, _check_invariants, _state

from tokworkbench.core import TrainConfig, Trainer, pre_tokenizer
from tokworkbench.core.bpe import flatchunks
from tokworkbench.core.bpe.tiebreak import TIE_BREAKS

pytestmark = pytest.mark.usefixtures("numpy_path")  # the numpy path's own machinery; the compiled loop has test_merge_kernel.py


texts_with_runs = st.lists(st.text(alphabet="aab c\nд😀", max_size=80), min_size=1, max_size=4)


def _trainer(texts, units, tie, split, small, monkeypatch):
    monkeypatch.setattr(flatchunks, "SMALL", small)
    return Trainer(texts, TrainConfig(units=units, tie_break=tie, pre_tokenizer=pre_tokenizer(split)))


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(texts=texts_with_runs, units=st.sampled_from(["byte", "char"]), tie=st.sampled_from(TIE_BREAKS),
       split=st.sampled_from(SPLITS), k=st.integers(1, 30))
def test_the_numpy_path_equals_the_reference_and_undoes_exactly(texts, units, tie, split, k, monkeypatch):
    t = _trainer(texts, units, tie, split, -1, monkeypatch)  # every merge and undo in numpy
    records = list(t.run(merges=k))
    pre = pre_tokenizer(split)
    ref, ref_vocab = reference_train(texts, units, tie, pre.split, k)
    assert [(r.pair, r.new_id, r.count, r.replacements, r.length) for r in records] == ref
    assert t.vocab == ref_vocab
    _check_invariants(t)
    fresh = _trainer(texts, units, tie, split, -1, monkeypatch)
    start = _state(fresh)
    while t.undo() is not None:
        _check_invariants(t)
    assert _state(t) == start


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(texts=texts_with_runs, units=st.sampled_from(["byte", "char"]), tie=st.sampled_from(TIE_BREAKS),
       split=st.sampled_from(SPLITS), k=st.integers(1, 30), undos=st.integers(0, 30), data=st.data())
def test_the_two_paths_leave_the_same_trainer_whichever_mix_runs(texts, units, tie, split, k, undos, data,
                                                                 monkeypatch):
    """Steps and undos alternate between the paths at random in one trainer; a trainer that
    runs on the Python path alone must agree at every point."""
    mixed = _trainer(texts, units, tie, split, 10**9, monkeypatch)
    plain = _trainer(texts, units, tie, split, 10**9, monkeypatch)
    for op in ["step"] * k + ["undo"] * undos + ["step"] * 5:
        monkeypatch.setattr(flatchunks, "SMALL", data.draw(st.sampled_from([-1, 2, 10**9])))
        got = getattr(mixed, op)()
        monkeypatch.setattr(flatchunks, "SMALL", 10**9)
        assert got == getattr(plain, op)()
        assert _state(mixed) == _state(plain)
    _check_invariants(mixed)


@pytest.mark.parametrize("small", [-1, 10**9])
def test_a_long_run_of_one_token_merges_left_to_right_on_both_paths(small, monkeypatch):
    t = _trainer(["a" * 9 + " " + "a" * 4], "char", "lexmin", "none", small, monkeypatch)
    rec = t.step()  # (a, a): 4 + 2 replacements, the odd a of the 9 left alone
    assert rec.replacements == 6 and t.chunk_tokens(0) == [2, 2, 2, 2, 1, 0, 2, 2]
    t.undo()
    assert t.chunk_tokens(0) == [1] * 9 + [0] + [1] * 4
    _check_invariants(t)


def test_the_store_is_int32_and_an_undo_record_is_its_positions():
    t = Trainer(["low lower lowest newer wider"] * 3, TrainConfig(pre_tokenizer=pre_tokenizer("gpt2")))
    assert t._flat.ids.dtype == t._flat.next.dtype == t._flat.weight.dtype == np.int32
    rec = t.step()
    (positions,) = t._applied
    assert positions.dtype == np.int32 and len(positions) == rec.replacements // 3


@pytest.mark.parametrize("small", [-1, 10**9])
def test_a_pickled_state_undoes_as_the_original_on_both_paths(small, monkeypatch):
    texts = ["low lower lowest newer wider aaaa", "the quick brown fox 123 4567 ааа"]
    worked = _trainer(texts, "byte", "first", "gpt2", small, monkeypatch)
    fresh = _trainer(texts, "byte", "first", "gpt2", small, monkeypatch)
    list(worked.run(merges=40))
    fresh.restore_state(pickle.loads(pickle.dumps(worked.training_state())))
    assert _state(fresh) == _state(worked)
    while worked.history:
        assert fresh.undo() == worked.undo()
        assert _state(fresh) == _state(worked)
        _check_invariants(fresh)


@given(chunks=st.lists(st.text(max_size=8), max_size=12))
def test_utf8_units_are_each_chunk_encoded_on_its_own(chunks):
    from tokworkbench.core.bpe.trainer import utf8_units

    chunks = [c.encode("utf-8", "replace").decode("utf-8") for c in chunks]  # no lone surrogates
    units, lengths = utf8_units(chunks)
    assert units.tobytes() == b"".join(c.encode("utf-8") for c in chunks)
    assert lengths.tolist() == [len(c.encode("utf-8")) for c in chunks]
