"""BPE on a corpus where nearly every pair occurs once (issue 28, item 11): the heap was rebuilt
over every pair at every merge (quadratic; 180 s where HF takes 1). Now it is rebuilt a bounded
number of times, and the merges are the reference trainer's."""

import random

import pytest
from reference import reference_train

from tokworkbench.core import TrainConfig, Trainer, pre_tokenizer
from tokworkbench.core.bpe import trainer as trainer_module

pytestmark = pytest.mark.usefixtures("numpy_path")  # the numpy path's own machinery; the compiled loop has test_merge_kernel.py


@pytest.mark.parametrize("tie", ["first", "lexmin", "hf"])
def test_distinct_pairs_rebuild_the_heap_a_bounded_number_of_times(tie, monkeypatch):
    rng = random.Random(5)
    text = "".join(chr(0x4E00 + rng.randrange(3000)) for _ in range(40_000))  # > 8 × HEAP_KEEP pairs
    text += "ab" * 40  # a few pairs that occur more than once, merged first
    rebuilds = []
    original = trainer_module.Trainer._rebuild_heap

    def counted(self, *args, **kwargs):
        rebuilds.append(len(self.merges))
        return original(self, *args, **kwargs)

    monkeypatch.setattr(trainer_module.Trainer, "_rebuild_heap", counted)
    config = TrainConfig(units="char" if tie != "hf" else "byte", tie_break=tie, pre_tokenizer=pre_tokenizer("none"))
    t = Trainer([text], config)
    records = list(t.run(merges=60))
    assert len(rebuilds) <= 6, rebuilds  # was one per merge
    ref, _ = reference_train([text], config.units.value if hasattr(config.units, "value") else config.units, tie,
                             pre_tokenizer("none").split, 60)
    assert [(r.pair, r.new_id, r.count, r.replacements, r.length) for r in records] == ref
