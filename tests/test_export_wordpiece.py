"""Issue 24/25 item 7: a WordPiece model exported to HF tokenizer.json (BertNormalizer,
BertPreTokenizer, WordPiece, [CLS] $A [SEP], WordPiece decoder) and to BERT's vocab.txt gives the
same ids in `tokenizers` as the model it came from, with and without the special tokens. The
models are BERT-like ones trained here with `tokenizers.trainers.WordPieceTrainer`."""

import json
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from tokworkbench.cli import main
from tokworkbench.core.errors import ExportError
from tokworkbench.core.registry.export import export
from tokworkbench.core.registry.load import load_any

tokenizers = pytest.importorskip("tokenizers")
from tokenizers import decoders, models, normalizers, pre_tokenizers, processors, trainers

SAMPLES = Path(__file__).resolve().parents[1] / "sample_texts"
SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
TRICKY = ["", " ", "Hello, World!", "naïve café Ünïcödé", "日本語のテキスト", "x" * 120 + " short", "don't", "a\tb\nc",
          "\x00\x07 ctrl", "e\u0301", "ＡＢＣ", "😀👋🏽", "1,234.56", "THE Beginning"]


def sample_lines() -> list[str]:
    out = []
    for path in sorted(SAMPLES.glob("*")):
        if path.suffix in (".txt", ".py"):
            out += path.read_text(encoding="utf-8").split("\n")[:200]
    return [line for line in out if not any(s in line for s in SPECIALS)]


def _alphabet() -> list[str]:
    text = "".join(p.read_text(encoding="utf-8") for p in sorted(SAMPLES.glob("*.txt")))
    return sorted(set(text) - set("[]"))


texts = st.one_of(st.text(alphabet=st.sampled_from(_alphabet()), max_size=50), st.text(max_size=20),
                  st.lists(st.sampled_from(TRICKY + ["the", " of", "Лев", "and", "ing", "##"]), max_size=8)
                  .map(" ".join))


def _train(path: Path, lowercase: bool) -> Path:
    tok = tokenizers.Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=lowercase)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.train_from_iterator([p.read_text(encoding="utf-8") for p in sorted(SAMPLES.glob("*.txt"))],
                            trainers.WordPieceTrainer(vocab_size=1500, special_tokens=SPECIALS, show_progress=False))
    cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    tok.post_processor = processors.TemplateProcessing(single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
                                                       special_tokens=[("[CLS]", cls), ("[SEP]", sep)])
    tok.decoder = decoders.WordPiece()
    tok.save(str(path))
    return path


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """name -> (the trained HF tokenizer, our model of it, HF on our tokenizer.json, HF on our vocab.txt)."""
    folder = tmp_path_factory.mktemp("wp")
    out = {}
    for name, lowercase in (("uncased", True), ("cased", False)):
        original = _train(folder / f"{name}.json", lowercase)
        ours = load_any(original)
        exported, vocab = folder / f"{name}-out.json", folder / f"{name}-vocab.txt"
        assert export(ours, "hf", exported)[-1] == f"wrote {exported}"
        notes = export(ours, "vocab.txt", vocab)
        assert notes == [(f"vocab.txt holds the tokens only: load it with lowercase={lowercase}, strip_accents=None "
                          "(BERT's do_lower_case and strip_accents)"), f"wrote {vocab}"]
        out[name] = (tokenizers.Tokenizer.from_file(str(original)), ours,
                     tokenizers.Tokenizer.from_file(str(exported)),
                     tokenizers.BertWordPieceTokenizer(str(vocab), lowercase=lowercase))
    return out


def _same(entry, text: str) -> None:
    original, ours, hf, bert = entry
    want = original.encode(text, add_special_tokens=False).ids
    assert ours.encode_ordinary(text) == want, ascii(text[:100])
    assert hf.encode(text, add_special_tokens=False).ids == want, ascii(text[:100])
    assert bert.encode(text, add_special_tokens=False).ids == want, ascii(text[:100])
    with_specials = original.encode(text).ids
    assert with_specials == [original.token_to_id("[CLS]")] + want + [original.token_to_id("[SEP]")]
    assert hf.encode(text).ids == with_specials and bert.encode(text).ids == with_specials


@pytest.mark.parametrize("name", ["uncased", "cased"])
def test_sample_texts_give_the_same_ids(trained, name):
    lines = sample_lines() + TRICKY
    for text in lines:
        _same(trained[name], text)
    _same(trained[name], "\n".join(lines[:300]))
    assert len(lines) > 1000


@settings(max_examples=200, deadline=None)
@given(texts)
def test_hypothesis_text_gives_the_same_ids(trained, text):
    assume(not any(s in text for s in SPECIALS))  # HF matches these in text as special tokens
    for entry in trained.values():
        _same(entry, text)


def test_the_files_read_back_as_the_model(trained, tmp_path):
    ours = trained["cased"][1]
    vocab = tmp_path / "vocab.txt"
    export(ours, "vocab.txt", vocab)
    assert vocab.read_text(encoding="utf-8").split("\n")[:5] == SPECIALS
    assert load_any(vocab, lowercase=False) == ours
    out = tmp_path / "t.json"
    export(ours, "hf", out)
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert doc["normalizer"]["type"] == "BertNormalizer" and doc["pre_tokenizer"]["type"] == "BertPreTokenizer"
    assert doc["model"]["type"] == "WordPiece" and doc["decoder"]["type"] == "WordPiece"
    assert [s["SpecialToken"]["id"] for s in doc["post_processor"]["single"] if "SpecialToken" in s] == ["[CLS]", "[SEP]"]
    assert load_any(out) == ours


def test_what_vocab_txt_cannot_hold_is_one_line(tmp_path, capsys):
    tok = tokenizers.Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.Sequence([normalizers.NFD(), normalizers.Lowercase()])
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.train_from_iterator([(SAMPLES / "01_en_genesis_kjv.txt").read_text(encoding="utf-8")],
                            trainers.WordPieceTrainer(vocab_size=300, special_tokens=SPECIALS, show_progress=False))
    path = tmp_path / "nfd.json"
    tok.save(str(path))
    ours = load_any(path)
    with pytest.raises(ExportError, match="normalizer is BertNormalizer"):
        export(ours, "vocab.txt", tmp_path / "v.txt")
    assert main(["export", "-m", str(path), "--format", "vocab.txt", "-o", str(tmp_path / "v.txt")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "text_normalizer differs (export it to hf)" in err, err
    assert not (tmp_path / "v.txt").exists()
    assert main(["export", "-m", str(path), "--format", "hf", "-o", str(tmp_path / "t.json")]) == 0
    hf = tokenizers.Tokenizer.from_file(str(tmp_path / "t.json"))
    text = "Naïve CAFÉ in the Beginning"
    assert hf.encode(text).ids == tok.encode(text).ids
