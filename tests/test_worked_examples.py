"""DESIGN.md's worked examples are contracts: through the Python API and through the CLI."""

import json
import unicodedata

from tokworkbench.cli import main
from tokworkbench.core import TrainConfig, Trainer, pre_tokenizer
from tokworkbench.core.registry import modelfile
from tokworkbench.core.text.normalize import normalize

EX1 = "the theme of the theory is the thesis the theatre theme"
EX2 = "我喜欢AI，AI也喜欢猫。"


def test_example1_char_lexmax():
    t = Trainer([EX1], TrainConfig(units="char", tie_break="lexmax"))
    assert t.total_tokens == 55 and len(t.vocab) == 12
    records = list(t.run(merges=8))
    assert [t.token_text(r.new_id) for r in records] == [
        "th", "the", " the", " the the", "s the the", "me", "is the the", " theme"]
    assert [r.count for r in records] == [9, 9, 8, 3, 2, 2, 2, 2]
    assert t.total_tokens == 18 and t.vocab_size == 20
    tok = t.model()
    assert len(tok.encode(EX1)) == 18
    for text in (EX1, "the theory theme"):
        assert tok.decode(tok.encode(text)) == text


def test_example2_bytes_lexmin():
    assert (len(EX2), len(EX2.encode())) == (13, 31)
    t = Trainer([EX2], TrainConfig(units="byte", tie_break="lexmin"))
    r1, r2 = t.run(merges=2)
    assert (r1.pair, r1.new_id, r1.replacements, r1.length) == ((0x41, 0x49), 256, 2, 29)
    assert (r2.pair, r2.new_id, r2.replacements, r2.length) == ((0x96, 0x9C), 257, 2, 27)
    tok = t.model()
    ids = tok.encode(EX2)
    assert len(ids) == 27 and tok.decode(ids) == EX2


def test_example3_normalizers():
    assert normalize("e\u0301", "nfc") == "\u00e9"
    assert normalize("e\u0301", "nfc").encode() == b"\xc3\xa9"
    assert normalize("ＡＩ", "nfkc") == "AI"
    assert normalize("ＡＩ", "nfc") == "ＡＩ"
    t = Trainer(["e\u0301e\u0301 ＡＩ"], TrainConfig(units="char", normalizer="nfkc"))
    assert t.base == tuple(sorted(set(unicodedata.normalize("NFKC", "e\u0301e\u0301 ＡＩ"))))
    assert "\u00e9" in t.base and "A" in t.base


def test_examples_through_cli(tmp_path, capsys):
    c1 = tmp_path / "ex1.txt"
    c1.write_text(EX1, encoding="utf-8")
    m1 = tmp_path / "m1.json"
    assert main(["train", str(c1), "--units", "char", "--split", "none", "--tie-break", "lexmax",
                 "--merges", "8", "-o", str(m1)]) == 0
    doc = json.loads(m1.read_text(encoding="utf-8"))
    tok = modelfile.load(m1)
    assert [tok.token_text(tok.base_size + r) for r in range(8)][-1] == " theme"
    assert [h["count"] for h in doc["history"]] == [9, 9, 8, 3, 2, 2, 2, 2]
    capsys.readouterr()
    assert main(["encode", "-m", str(m1), EX1]) == 0
    ids = capsys.readouterr().out.split()
    assert len(ids) == 18
    assert main(["decode", "-m", str(m1), *ids]) == 0
    assert capsys.readouterr().out == EX1 + "\n"

    c2 = tmp_path / "ex2.txt"
    c2.write_text(EX2, encoding="utf-8")
    m2 = tmp_path / "m2.json"
    assert main(["train", str(c2), "--split", "none", "--tie-break", "lexmin", "--merges", "2", "-o", str(m2)]) == 0
    doc = json.loads(m2.read_text(encoding="utf-8"))
    assert doc["merges"] == [[0x41, 0x49], [0x96, 0x9C]]
    assert [(h["replacements"], h["length"]) for h in doc["history"]] == [(2, 29), (2, 27)]
    capsys.readouterr()
    assert main(["encode", "-m", str(m2), EX2, "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert len(out["ids"]) == 27 and "AI" in out["tokens"]
    assert main(["decode", "-m", str(m2), *map(str, out["ids"])]) == 0
    assert capsys.readouterr().out == EX2 + "\n"


def test_cli_normalize_nfkc(tmp_path, capsys):
    c = tmp_path / "c.txt"
    c.write_text("ＡＩ ＡＩ", encoding="utf-8")
    m = tmp_path / "m.json"
    assert main(["train", str(c), "--normalize", "nfkc", "--units", "char", "--merges", "1", "-o", str(m)]) == 0
    tok = modelfile.load(m)
    assert tok.base == (" ", "A", "I") and tok.pre_tokenizer == pre_tokenizer("gpt4")
