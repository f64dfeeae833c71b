"""The command line of issue 12: train with roles, encode --add-special, decode --skip-special,
batches in every mode and format, and bad input as one line that writes nothing."""

import json
import math

import numpy as np
import pytest

from tokworkbench.cli import main
from tokworkbench.core.compat import fingerprint
from tokworkbench.core.registry.load import load_any
from tokworkbench.core.text.samples import sample_paths

TOKENS = "<s>\n</s>\n<pad>\n<unk>\n我\n喜欢\n学习\n机器\n机器学习\n。\n"


@pytest.fixture
def fixed(tmp_path, capsys):
    (tmp_path / "tokens.txt").write_text(TOKENS, encoding="utf-8")
    (tmp_path / "docs.txt").write_text("我喜欢机器学习。\n我喜欢学习。\n", encoding="utf-8")
    assert main(["vocab", str(tmp_path / "tokens.txt"), "--bos", "<s>", "--eos", "</s>", "--pad", "<pad>",
                 "--unk", "<unk>", "-o", str(tmp_path / "m.json")]) == 0
    capsys.readouterr()
    return tmp_path


def run(argv, capsys):
    status = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


def one_line_error(argv, capsys, match):
    status, _, err = run(argv, capsys)
    lines = err.strip().splitlines()
    assert status == 1 and len(lines) == 1 and lines[0].startswith("tokworkbench: error: "), err
    assert match in lines[0], lines[0]


def test_train_with_roles_encode_and_decode(tmp_path, capsys):
    corpus = tmp_path / "c.txt"
    corpus.write_text("low lower lowest newer wider " * 20, encoding="utf-8")
    model = tmp_path / "m.json"
    status, _, _ = run(["train", corpus, "--merges", "10", "--special", "<|x|>", "--bos", "<s>", "--eos", "</s>",
                        "--pad", "<pad>", "-o", model], capsys)
    assert status == 0
    tok = load_any(model)
    assert tok.special_tokens == ("<|x|>", "<s>", "</s>", "<pad>")
    assert tok.roles.to_dict() == {"bos": "<s>", "eos": "</s>", "pad": "<pad>"}
    bos, eos, pad = (tok.special_ids[s] for s in ("<s>", "</s>", "<pad>"))
    _, out, _ = run(["encode", "-m", model, "lower", "--add-special"], capsys)
    ids = [int(i) for i in out.split()]
    assert ids[0] == bos and ids[-1] == eos and ids[1:-1] == tok.encode("lower")
    _, out, _ = run(["encode", "-m", model, "<s>lower</s>", "--add-special"], capsys)
    assert [int(i) for i in out.split()] == ids  # never doubled
    _, out, _ = run(["decode", "-m", model, *ids, pad, "--skip-special"], capsys)
    assert out == "lower\n"
    _, out, _ = run(["decode", "-m", model, *ids], capsys)
    assert out == "<s>lower</s>\n"
    one_line_error(["decode", "-m", model, bos, 9999, "--skip-special"], capsys,
                   f"id 9999 at position 1 is out of range: this vocabulary has ids 0..{tok.vocab_size - 1}")
    status, out, _ = run(["inspect", model], capsys)
    assert "<s>  (bos)" in out and f"fingerprint  {fingerprint(tok)}" in out


def test_train_refuses_two_roles_on_one_token_before_any_work(tmp_path, capsys):
    (tmp_path / "c.txt").write_text("abc", encoding="utf-8")
    one_line_error(["train", tmp_path / "c.txt", "--merges", "1", "--bos", "<s>", "--eos", "<s>", "-o",
                    tmp_path / "m.json"], capsys, "cannot be both bos and eos")
    assert not (tmp_path / "m.json").exists()


def test_batches_json_windows(fixed, capsys):
    status, out, _ = run(["batches", "-m", fixed / "m.json", fixed / "docs.txt", "--lines", "--context", 4,
                          "--starts", "0,5"], capsys)
    assert status == 0
    doc = json.loads(out)
    assert doc["inputs"] == [[0, 4, 5, 8], [1, 0, 4, 5]] and doc["targets"] == [[4, 5, 8, 9], [0, 4, 5, 6]]
    assert doc["starts"] == [0, 5] and doc["fingerprint"] == fingerprint(load_any(fixed / "m.json"))
    assert "attention_mask" not in doc


def test_batches_random_is_reproduced_by_seed(fixed, capsys):
    argv = ["batches", "-m", fixed / "m.json", fixed / "docs.txt", "--lines", "-T", 3, "--batch", 4, "--seed", 9]
    first = json.loads(run(argv, capsys)[1])
    assert json.loads(run(argv, capsys)[1]) == first
    assert first["starts"] == np.random.default_rng(9).integers(0, 12 - 3, size=4).tolist()


def test_batches_padded_npz(fixed, capsys):
    out = fixed / "b.npz"
    status, said, _ = run(["batches", "-m", fixed / "m.json", fixed / "docs.txt", "--lines", "-T", 6,
                           "--pad-documents", "--format", "npz", "-o", out], capsys)
    assert status == 0 and "2×6 pad batch, 10 valid targets" in said
    with np.load(out) as z:
        assert z["inputs"].tolist() == [[0, 4, 5, 8, 9, 1], [0, 4, 5, 6, 9, 1]]
        assert z["targets"].tolist() == [[4, 5, 8, 9, 1, -100], [4, 5, 6, 9, 1, -100]]
        assert z["attention_mask"].all() and float(z["uniform_loss"]) == pytest.approx(math.log(10))


def test_batches_text_listing(fixed, capsys):
    status, out, _ = run(["batches", "-m", fixed / "m.json", fixed / "docs.txt", "--lines", "-T", 7,
                          "--pad-documents", "--format", "text", "--stream"], capsys)
    assert status == 0
    assert "doc 1 @6: 0:<s> 4:我 5:喜欢 6:学习 9:。 1:</s>" in out
    assert "pad batch 2×7, 10 valid targets" in out
    assert "    6  2 <pad>  -100     0" in out


@pytest.mark.parametrize("flags, match", [
    (["-T", 0, "--stride", 2], "the context T must be a whole number of at least 1"),
    (["-T", 3, "--batch", 0], "the batch size B must be"),
    (["-T", 3, "--starts", "0,99"], "start 99 is out of range: with 12 ids and a context of 3, starts go from 0 to 8"),
    (["-T", 3, "--starts", "a"], "is not a list of whole numbers"),
    (["-T", 12, "--stride", 1], "the stream has 12 ids; a context of 12 needs at least 13 ids"),
    (["-T", 3], "choose the rows"),
    (["-T", 3, "--stride", 1, "--format", "npz"], "give -o OUT.npz"),
])
def test_batches_bad_input(fixed, capsys, flags, match):
    one_line_error(["batches", "-m", fixed / "m.json", fixed / "docs.txt", "--lines", *flags], capsys, match)


def test_pad_documents_without_pad_writes_nothing(fixed, capsys):
    assert main(["vocab", str(fixed / "tokens.txt"), "--bos", "<s>", "-o", str(fixed / "nopad.json")]) == 0
    capsys.readouterr()
    out = fixed / "b.json"
    one_line_error(["batches", "-m", fixed / "nopad.json", fixed / "docs.txt", "-T", 4, "--pad-documents",
                    "-o", out], capsys, "padded batches need a PAD token")
    assert not out.exists()


def test_batches_refuses_to_write_over_an_input(fixed, capsys):
    one_line_error(["batches", "-m", fixed / "m.json", fixed / "docs.txt", "-T", 2, "--stride", 1,
                    "-o", fixed / "docs.txt"], capsys, "it is one of the inputs")
    assert (fixed / "docs.txt").read_text(encoding="utf-8").startswith("我喜欢")


def test_add_special_keeps_encodes_rule_for_special_strings_inside_the_text(fixed, capsys):
    """With or without --add-special, a special token's string inside the text is an error unless
    --allow-special; only the document's own leading BOS / trailing EOS count as its boundaries."""
    model = fixed / "m.json"
    for extra in ([], ["--add-special"]):
        one_line_error(["encode", "-m", model, "我<pad>", *extra], capsys, "special token '<pad>' at offset 1")
    _, out, _ = run(["encode", "-m", model, "<s>我</s>", "--add-special"], capsys)
    assert out.split() == ["0", "4", "1"]
    _, out, _ = run(["encode", "-m", model, "我<pad>", "--add-special", "--allow-special"], capsys)
    assert out.split() == ["0", "4", "2", "1"]


def test_batches_text_prints_the_batch_and_the_stream_only_when_asked(capsys):
    """On the sample texts the stream was 517 KB before a 2×8 batch; now it is one line."""
    status, out, _ = run(["batches", "-m", "gpt2", *sample_paths(), "-T", 8, "--batch", 2, "--format", "text"], capsys)
    assert status == 0 and "random batch 2×8" in out and "(--stream lists them)" in out
    assert "doc 0 @" not in out and len(out) < 4000
    status, out, _ = run(["batches", "-m", "gpt2", *sample_paths(), "-T", 8, "--batch", 2, "--format", "text",
                          "--stream"], capsys)
    assert status == 0 and "doc 0 @0:" in out and len(out) > 100_000
