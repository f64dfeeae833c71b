"""The incremental trainer against the recount-everything reference, and undo's exactness."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reference import reference_train

from tokworkbench.core import TrainConfig, Trainer, pre_tokenizer
from tokworkbench.core.bpe.tiebreak import TIE_BREAKS

# Small alphabets make ties, repeats and overlapping pairs ("aaa") common: the hard cases.
small_text = st.text(alphabet="ab c\nдé😀", max_size=40)
corpora = st.lists(small_text, min_size=1, max_size=4)
SPLITS = ["none", "gpt2", "gpt4", "o200k", r"\w+|\s+"]


def _state(t: Trainer):
    return (
        list(t.history),
        list(t.vocab),
        t.total_tokens,
        t.pair_counts(),
        [t.chunk_tokens(c) for c in range(len(t.chunk_strings))],
        # the flat store itself, links included (the sentinel's `prev` takes junk by design)
        t._flat.ids.tolist(), t._flat.next.tolist(), t._flat.prev[:-1].tolist(),
        [(r.left, r.right, r.count) for r in t.top_pairs(10)],
    )


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts=corpora, units=st.sampled_from(["byte", "char"]), tie=st.sampled_from(TIE_BREAKS),
       split=st.sampled_from(SPLITS), merges=st.integers(0, 25))
def test_matches_reference(texts, units, tie, split, merges):
    pre = pre_tokenizer(split)
    t = Trainer(texts, TrainConfig(units=units, tie_break=tie, pre_tokenizer=pre))
    records = list(t.run(merges=merges))
    ref, ref_vocab = reference_train(texts, units, tie, pre.split, merges)
    assert [(r.pair, r.new_id, r.count, r.replacements, r.length) for r in records] == ref
    assert t.vocab == ref_vocab


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts=corpora, units=st.sampled_from(["byte", "char"]), tie=st.sampled_from(TIE_BREAKS),
       split=st.sampled_from(SPLITS), k=st.integers(1, 20))
def test_undo_after_k_equals_k_minus_1_from_scratch(texts, units, tie, split, k):
    config = TrainConfig(units=units, tie_break=tie, pre_tokenizer=pre_tokenizer(split))
    a = Trainer(texts, config)
    done = len(list(a.run(merges=k)))
    if done == 0:
        assert a.undo() is None
        return
    a.undo()
    b = Trainer(texts, config)
    list(b.run(merges=done - 1))
    assert _state(a) == _state(b)
    # and training on after the undo follows the same path as never having undone
    assert [r.pair for r in a.run(merges=3)] == [r.pair for r in b.run(merges=3)]


@pytest.mark.parametrize("tie", TIE_BREAKS)
def test_undo_all_the_way_back(tie):
    texts = ["low lower lowest newer wider", "the quick brown fox 123 4567"]
    t = Trainer(texts, TrainConfig(tie_break=tie, pre_tokenizer=pre_tokenizer("gpt2")))
    start = _state(t)
    n = len(list(t.run(merges=40)))
    for _ in range(n):
        assert t.undo() is not None
    assert t.undo() is None
    assert _state(t) == start


def test_top_pairs_first_row_is_next_merge():
    t = Trainer(["abababcabcabcd xyzxyz"], TrainConfig(tie_break="first"))
    for _ in range(6):
        rows = t.top_pairs(5)
        counts = [r.count for r in rows]
        assert counts == sorted(counts, reverse=True)
        rec = t.step()
        assert (rows[0].left, rows[0].right) == rec.pair and rows[0].count == rec.count


def test_history_and_compression_follow_each_step():
    t = Trainer(["aaaa bbbb aaaa"], TrainConfig(units="char", tie_break="lexmin"))
    assert t.compression == 1.0
    rec = t.step()
    assert rec.pair == (1, 1) and rec.count == 6 and rec.replacements == 4  # "aaaa" -> [aa, aa] twice
    assert t.total_tokens == 14 - 4 and t.compression == pytest.approx(14 / 10)


def test_stops_when_nothing_is_left_to_merge():
    t = Trainer(["ab"], TrainConfig())
    assert len(list(t.run(merges=10))) == 1
    assert t.step() is None and t.top_pairs(5) == []


def _check_invariants(t: Trainer):
    """Counts, links, the pair -> positions index and first-occurrence keys equal a recount."""
    flat = t._flat
    counts, where, first, total = {}, {}, {}, 0
    for c in range(len(t.chunk_strings)):
        lo, hi = int(flat.starts[c]), int(flat.starts[c + 1])
        at = [i for i in range(lo, hi) if flat.ids[i] >= 0]
        ids = [int(flat.ids[i]) for i in at]
        assert ids == t.chunk_tokens(c)
        assert [int(flat.next[i]) for i in at] == at[1:] + [flat.size]
        assert [int(flat.prev[i]) for i in at] == [flat.size] + at[:-1]
        weight = int(flat.weight[lo])
        total += weight * len(ids)
        for i, (x, y) in enumerate(zip(ids, ids[1:])):
            p = (x << 32) | y  # the trainer's key for pair (x, y)
            counts[p] = counts.get(p, 0) + weight
            where.setdefault(p, set()).add(at[i])
            first.setdefault(p, at[i])  # positions grow with (chunk, offset)
    assert t.pair_counts() == counts
    # the index may keep positions a pair has left, never miss one where it stands
    index, firsts = t.pair_tables()
    assert set(index) == set(where)
    assert all(where[p] <= set(index[p]) for p in where)
    if t.config.tie_break == "first":
        assert firsts == first
    assert t.total_tokens == total


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts=st.lists(st.text(alphabet="ab c\n", max_size=60), min_size=1, max_size=4),
       tie=st.sampled_from(TIE_BREAKS), split=st.sampled_from(SPLITS), k=st.integers(1, 30))
def test_internal_index_stays_exact_through_steps_and_undos(texts, tie, split, k):
    t = Trainer(texts, TrainConfig(units="char", tie_break=tie, pre_tokenizer=pre_tokenizer(split)))
    _check_invariants(t)
    for _ in range(k):
        if t.step() is None:
            break
        _check_invariants(t)
    while t.undo() is not None:
        _check_invariants(t)


@pytest.mark.parametrize("tie", TIE_BREAKS)
def test_training_state_carried_through_pickle_restores_exactly(tie):
    """The app trains in a forked process and carries the state back: the restored trainer must
    be the same trainer, undo history included."""
    import pickle

    texts = ["low lower lowest newer wider aaaa", "the quick brown fox 123 4567 ааа"]
    config = TrainConfig(tie_break=tie, pre_tokenizer=pre_tokenizer("gpt2"))
    worked, fresh = Trainer(texts, config), Trainer(texts, config)
    list(worked.run(merges=40))
    fresh.restore_state(pickle.loads(pickle.dumps(worked.training_state())))
    assert _state(fresh) == _state(worked)
    while worked.history:
        assert fresh.undo() == worked.undo()
        assert _state(fresh) == _state(worked)
