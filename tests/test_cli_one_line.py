"""Arguments that used to end in a traceback are one line (issue 28): a padded batch of 1e11
ids, and --alpha 1e308 for Unigram sampling."""

from pathlib import Path

import pytest

from tokworkbench.cli import main
from tokworkbench.core.batching.batch import MAX_CELLS

SAMPLE = Path(__file__).resolve().parents[1] / "sample_texts" / "03_udhr_article1.txt"


def _one_line(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    return err[0]


def test_a_batch_too_large_to_build_is_refused_before_any_allocation(tmp_path, capsys):
    model = tmp_path / "m.json"
    assert main(["train", "-o", str(model), "--vocab-size", "270", "--special", "<pad>", "--pad", "<pad>",
                 str(SAMPLE)]) == 0
    capsys.readouterr()
    assert main(["batches", "-m", str(model), "-T", str(10**11), "--pad-documents", str(SAMPLE)]) == 1
    # as text (the default format) a batch holds fewer ids than as NPZ: the limit named is that one
    assert "more than the 4,194,304 one batch may hold written as JSON or text" in (line := _one_line(capsys))
    assert "; the longest document has" in line
    assert main(["batches", "-m", str(model), "-T", "20000", "--stride", "1", str(SAMPLE.parent)]) == 1
    assert "larger stride" in _one_line(capsys)
    assert MAX_CELLS == 1 << 27


@pytest.mark.parametrize("alpha", ["1e308", "1e7"])
def test_a_sampling_alpha_that_overflows_is_one_line(alpha, tmp_path, capsys):
    model = tmp_path / "u.json"
    assert main(["train", "--model", "unigram", "-o", str(model), "--vocab-size", "400", "--seed-size", "600",
                 str(SAMPLE)]) == 0
    capsys.readouterr()
    assert main(["encode", "-m", str(model), "--sample", "--alpha", alpha, "hello there"]) == 1
    assert "must be a positive number of at most 1e+06" in _one_line(capsys)
    assert main(["encode", "-m", str(model), "--sample", "--alpha", "1e6", "hello there"]) == 0
