"""Counts given on the command line (--show, --width): a negative one is refused in one line, and
`diff --show 0` still says which kind of change each count is."""

import pytest

from tokworkbench.cli import main
from tokworkbench.core import TrainConfig, Trainer
from tokworkbench.core.inspection.diff import diff_lines, diff_models
from tokworkbench.core.registry import modelfile
from tokworkbench.core.text.pretokenize import pre_tokenizer

CORPUS = ["the theme there then these theses thermal theory theatre thought the the the"] * 3


def trained(merges: int):
    t = Trainer(CORPUS, TrainConfig(pre_tokenizer=pre_tokenizer("gpt2")))
    list(t.run(merges=merges))
    return t.model()


def test_diff_show_0_labels_each_count():
    lines = diff_lines(diff_models(trained(3), trained(8), ("a", "b"), [], show=0))
    tokens = [x for x in lines if x.startswith("  ") and "more" not in x]
    assert any(x.split()[:2] == ["added", "5"] for x in tokens), lines
    assert not any("… and" in x for x in lines), lines


@pytest.mark.parametrize("argv", [["diff", "{m}", "{m}", "--show", "-1"], ["health", "{m}", "--show", "-3"],
                                  ["tree", "{m}", "#0", "--width", "-4"], ["health", "{m}", "--show", "x"]])
def test_negative_or_bad_counts_are_refused(argv, tmp_path, capsys):
    path = tmp_path / "m.json"
    modelfile.save(trained(3), path)
    with pytest.raises(SystemExit) as exc:
        main([a.format(m=path) for a in argv])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and ("negative" in err or "not a whole number" in err), err
