"""Batches too large to make, or to write as JSON or text, are refused before the memory goes:
`--batch 100000000000` asked numpy for 745 GiB of random starts, and `--batch 10000000` as JSON
went past 11 GB of Python numbers."""

import pytest

from tokworkbench.core import TrainConfig, Trainer, pre_tokenizer
from tokworkbench.core.batching import BatchSpec, make_batch, to_json
from tokworkbench.core.batching import batch as batch_module
from tokworkbench.core.errors import BatchError

TEXTS = ["the cat sat on the mat and the dog sat on the log " * 20]


@pytest.fixture(scope="module")
def model():
    trainer = Trainer(TEXTS, TrainConfig(units="byte", pre_tokenizer=pre_tokenizer("gpt4")))
    list(trainer.run(vocab_size=300))
    return trainer.model()


def test_random_rows_past_the_limit_are_refused_before_they_are_drawn(model):
    with pytest.raises(BatchError, match="more than the .* one batch may hold; ask for fewer rows"):
        make_batch(model, TEXTS, BatchSpec(8, "random", batch=100_000_000_000, seed=0))


def test_a_batch_too_large_for_json_says_to_write_npz(model, monkeypatch):
    monkeypatch.setattr(batch_module, "MAX_TEXT_CELLS", 16)
    batch = make_batch(model, TEXTS, BatchSpec(8, "random", batch=3, seed=0))
    with pytest.raises(BatchError, match="to write as JSON or text; write it as NPZ"):
        to_json(batch)
    assert to_json(make_batch(model, TEXTS, BatchSpec(8, "random", batch=2, seed=0)))["inputs"]


def test_the_command_refuses_a_json_batch_too_large_before_making_it(tmp_path, capsys):
    from tokworkbench.cli import main

    corpus = tmp_path / "c.txt"
    corpus.write_text(TEXTS[0], encoding="utf-8")
    code = main(["batches", "-m", "cl100k_base", str(corpus), "--context", "8", "--batch", "10000000",
                 "--format", "json", "-o", str(tmp_path / "b.json")])
    assert code != 0 and "written as JSON or text" in capsys.readouterr().err
    assert not (tmp_path / "b.json").exists()
