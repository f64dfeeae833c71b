"""The selection heap ranks only the pairs at or above a floor (the HEAP_KEEP-th highest count);
with the floor forced low and high, training, undo and the pair table stay exactly the reference's."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reference import reference_train

import tokworkbench.core.bpe.trainer as trainer_module
from tokworkbench.core import TrainConfig, Trainer, pre_tokenizer
from tokworkbench.core.bpe.tiebreak import TIE_BREAKS

pytestmark = pytest.mark.usefixtures("numpy_path")  # the numpy path's own machinery; the compiled loop has test_merge_kernel.py


small_text = st.text(alphabet="ab c\nдé😀", max_size=60)
corpora = st.lists(small_text, min_size=1, max_size=4)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts=corpora, units=st.sampled_from(["byte", "char"]), tie=st.sampled_from(TIE_BREAKS),
       split=st.sampled_from(["none", "gpt4"]), merges=st.integers(0, 30), keep=st.integers(1, 4))
def test_a_heap_with_a_floor_merges_as_the_reference(texts, units, tie, split, merges, keep):
    pre = pre_tokenizer(split)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(trainer_module, "HEAP_KEEP", keep)  # the floor moves up and down all the time
        t = Trainer(texts, TrainConfig(units=units, tie_break=tie, pre_tokenizer=pre))
        records = list(t.run(merges=merges))
    ref, ref_vocab = reference_train(texts, units, tie, pre.split, merges)
    assert [(r.pair, r.new_id, r.count, r.replacements, r.length) for r in records] == ref
    assert t.vocab == ref_vocab


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts=corpora, tie=st.sampled_from(TIE_BREAKS), k=st.integers(1, 20), keep=st.integers(1, 3))
def test_undo_and_the_pair_table_with_a_floor(texts, tie, k, keep):
    config = TrainConfig(tie_break=tie, pre_tokenizer=pre_tokenizer("gpt4"))
    plain = Trainer(texts, config)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(trainer_module, "HEAP_KEEP", keep)
        t = Trainer(texts, config)
        done = len(list(t.run(merges=k)))
        if done:
            t.undo()
        list(plain.run(merges=max(0, done - 1)))
        assert [(r.left, r.right, r.count) for r in t.top_pairs(8)] == \
               [(r.left, r.right, r.count) for r in plain.top_pairs(8)]
        assert [r.pair for r in t.run(merges=5)] == [r.pair for r in plain.run(merges=5)]


def test_the_heap_stays_small_while_many_rare_pairs_are_counted():
    import random

    rng = random.Random(7)
    words = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(3, 12))) for _ in range(40000)]
    t = Trainer([" ".join(words)], TrainConfig(tie_break="hf", pre_tokenizer=pre_tokenizer("gpt4")))
    list(t.run(merges=2000))
    assert len(t._counts) > 8 * trainer_module.HEAP_KEEP  # many more pairs than the heap ranks
    assert len(t._heap) <= 8 * trainer_module.HEAP_KEEP
    assert len(t.top_pairs(20)) == 20
