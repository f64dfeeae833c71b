"""Exports load in the real libraries and encode exactly as we do; imports encode as their source."""

import base64
import json

import pytest
import tiktoken  # noqa: F401  (a test dependency: the real library)
from tokenizers import Regex, decoders, models, pre_tokenizers, trainers
from tokenizers import Tokenizer as HFTokenizer

from tokworkbench.core import TrainConfig, Trainer, load_corpus, pre_tokenizer, sample_paths
from tokworkbench.core.bpe.model import Tokenizer
from tokworkbench.core.bpe.tiebreak import TIE_BREAKS
from tokworkbench.core.errors import ExportError, ForeignModelError
from tokworkbench.core.formats.hf_common import hf_pattern
from tokworkbench.core.formats.tiktoken import tiktoken_encoding
from tokworkbench.core.registry.export import check, export
from tokworkbench.core.registry.load import load_any

HELD_OUT = [
    "The quick brown fox jumps over the lazy dog; it's 3:45pm, isn't it? We'LL see.",
    "Numbers: 1 12 123 1234 12345 1234567890 3.14159 1,000,000 ١٢٣٤٥ ०१२३",
    "안녕하세요, 세계! 한국어 텍스트입니다.",
    "日本語の文章と中文的句子。カタカナ ｶﾀｶﾅ",
    "Привет, мир! Ελληνικά κείμενα. مرحبا بالعالم. नमस्ते दुनिया",
    "emoji 😀 👋🏽 👨‍👩‍👧‍👦 🏳️‍🌈 🇯🇵🇰🇷 ❤️‍🔥 1️⃣",
    "whitespace   runs\t\ttabs\n\n\n  leading and trailing   \r\n\u00a0nbsp\u3000ideographic\u2009thin",
    "ＡＩ ﬁ ① Ⅻ e\u0301 é Z\u0337a\u0338",
    "def f(x):\n    return x**2  # comment\n\tprint(f'{x!r}')\n",
    "<|endoftext|> is special; <|endoftext|><|endoftext|>",
    "\u200b\u200d\u200f\ufeff\x00\x07 control",
    "",
    " ",
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
]


@pytest.fixture(scope="module")
def corpus_texts():
    return [d.text for d in load_corpus(sample_paths()).documents]


def trained(texts, split, tie, units="byte", vocab=900, specials=("<|endoftext|>",), normalizer="none"):
    t = Trainer(texts, TrainConfig(units=units, normalizer=normalizer, pre_tokenizer=pre_tokenizer(split),
                                   tie_break=tie, special_tokens=specials))
    list(t.run(vocab_size=vocab))
    return t.model()


@pytest.mark.parametrize("split", ["gpt2", "gpt4", "o200k"])
@pytest.mark.parametrize("tie", TIE_BREAKS)
def test_hf_and_tiktoken_encode_identically(tmp_path, corpus_texts, split, tie):
    tok = trained(corpus_texts, split, tie)
    export(tok, "hf", tmp_path / "tokenizer.json")
    export(tok, "tiktoken", tmp_path / "model.tiktoken")
    hf = HFTokenizer.from_file(str(tmp_path / "tokenizer.json"))
    enc = tiktoken_encoding(tmp_path / "model.tiktoken")
    for text in HELD_OUT + [t[:5000] for t in corpus_texts]:
        ours = tok.encode(text, allowed_special="all")  # HF always matches added tokens
        assert hf.encode(text, add_special_tokens=False).ids == ours
        assert hf.decode(ours, skip_special_tokens=False) == tok.decode(ours, errors="replace")
        assert enc.encode(text, allowed_special="all") == ours
        assert enc.encode_ordinary(text) == tok.encode_ordinary(text)
        assert enc.decode(ours) == tok.decode(ours, errors="replace")


@pytest.mark.parametrize("fmt,suffix", [("hf", "tokenizer.json"), ("tiktoken", "m.tiktoken"), ("minbpe", "m.model")])
def test_import_export_import_is_the_identity(tmp_path, corpus_texts, fmt, suffix):
    tok = trained(corpus_texts, "gpt4", "lexmin")
    export(tok, fmt, tmp_path / suffix)
    once = load_any(tmp_path / suffix)
    assert (once.merges, once.special_tokens, once.pre_tokenizer, once.units) == (
        tok.merges, tok.special_tokens, tok.pre_tokenizer, tok.units)
    export(once, fmt, tmp_path / ("2-" + suffix))
    twice = load_any(tmp_path / ("2-" + suffix))
    assert (twice.merges, twice.special_tokens, twice.pre_tokenizer, twice.ids) == (
        once.merges, once.special_tokens, once.pre_tokenizer, once.ids)
    assert (tmp_path / suffix).read_bytes() == (tmp_path / ("2-" + suffix)).read_bytes()


def test_exported_gpt4_pattern_splits_like_python_regex():
    pattern = pre_tokenizer("gpt4").pattern
    assert "{1,3}+" in pattern and "{1,3}+" not in hf_pattern(pattern)
    for name in ("gpt2", "gpt4", "o200k"):
        ours = pre_tokenizer(name)
        split = pre_tokenizers.Split(Regex(hf_pattern(ours.pattern)), behavior="isolated")
        for text in HELD_OUT:
            assert [s for s, _ in split.pre_tokenize_str(text)] == ours.split(text), (name, text)
    # and the untranslated pattern really would differ in HF
    raw = pre_tokenizers.Split(Regex(pattern), behavior="isolated")
    assert [s for s, _ in raw.pre_tokenize_str("1234567")] != pre_tokenizer("gpt4").split("1234567")


def test_model_trained_by_hf_imports_and_encodes_as_hf(tmp_path, corpus_texts):
    pattern = hf_pattern(pre_tokenizer("gpt4").pattern)
    hf = HFTokenizer(models.BPE())
    hf.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(pattern), behavior="isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    hf.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=800, special_tokens=["<|endoftext|>"], show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    hf.train_from_iterator(corpus_texts, trainer=trainer)
    path = tmp_path / "hf.json"
    hf.save(str(path))
    ours = load_any(path)
    assert ours.units == "byte" and ours.pre_tokenizer.name == "gpt4" and ours.ids is not None
    assert ours.special_ids == {"<|endoftext|>": 0}
    for text in HELD_OUT + [t[:5000] for t in corpus_texts]:
        ids = ours.encode(text, allowed_special="all")
        assert ids == hf.encode(text, add_special_tokens=False).ids
        assert ours.decode(ids, errors="replace") == hf.decode(ids, skip_special_tokens=False)


def test_hf_trainer_merges_equal_ours_with_the_hf_tie_break(corpus_texts):
    """HF's trainer breaks ties by its own ids; our `hf` rule reproduces its merges."""
    pattern = hf_pattern(pre_tokenizer("gpt4").pattern)
    hf = HFTokenizer(models.BPE())
    hf.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(pattern), behavior="isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    trainer = trainers.BpeTrainer(vocab_size=256 + 400, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    hf.train_from_iterator(corpus_texts, trainer=trainer)
    hf_merges = [tuple(m) for m in json.loads(hf.to_str())["model"]["merges"]]
    tok = trained(corpus_texts, "gpt4", "hf", vocab=256 + 400, specials=())
    theirs = load_any_from_str(hf.to_str())
    assert [tok.rank_text(tok.base_size + r) for r in range(len(tok.merges))] == [
        theirs.rank_text(theirs.base_size + r) for r in range(len(theirs.merges))]
    assert len(hf_merges) == len(tok.merges)


def load_any_from_str(text):
    from tokworkbench.core.formats.hf import from_hf

    return from_hf(json.loads(text))


def test_char_unit_model_exports_to_hf_with_unk(tmp_path, corpus_texts):
    tok = trained(corpus_texts[:3], "gpt4", "first", units="char", vocab=400, specials=())
    notes = export(tok, "hf", tmp_path / "c.json")
    assert any("added <unk>" in n for n in notes)
    hf = HFTokenizer.from_file(str(tmp_path / "c.json"))
    for text in corpus_texts[:3]:
        ids = tok.encode(text[:3000])
        assert hf.encode(text[:3000]).ids == ids
        assert hf.decode(ids) == text[:3000]
    unseen = "漢"
    assert unseen not in tok.base
    assert hf.encode(unseen).tokens == ["<unk>"]


def test_what_formats_cannot_express(corpus_texts):
    char = trained(corpus_texts[:2], "gpt4", "first", units="char", vocab=300, specials=())
    for fmt in ("tiktoken", "minbpe"):
        with pytest.raises(ExportError, match="byte-level only"):
            check(char, fmt)
    nfkc = trained(corpus_texts[:2], "gpt4", "first", normalizer="nfkc", vocab=300)
    with pytest.raises(ExportError, match="no normalizer"):
        check(nfkc, "tiktoken")
    check(nfkc, "hf")  # HF has normalizers
    custom = trained(corpus_texts[:2], r"\w+", "first", vocab=300)
    with pytest.raises(ExportError, match="drops text"):
        check(custom, "tiktoken")
    none = trained([corpus_texts[0][:2000]], "none", "first", vocab=300)
    with pytest.raises(ExportError, match="needs a pre-tokenizer pattern"):
        check(none, "tiktoken")
    check(none, "minbpe")
    # two tokens with the same bytes: "abc" from (ab, c) and from (a, bc)
    a, b, c = ord("a"), ord("b"), ord("c")
    dup = Tokenizer("byte", "none", pre_tokenizer("gpt2"), "first", None,
                    ((a, b), (b, c), (256, c), (a, 257)))
    for fmt in ("hf", "tiktoken"):
        with pytest.raises(ExportError, match="two tokens with the same bytes"):
            check(dup, fmt)


def test_foreign_files_that_cannot_be_read(tmp_path):
    p = tmp_path / "wp.json"
    p.write_text(json.dumps({"model": {"type": "WordLevel", "vocab": {}}}), encoding="utf-8")
    with pytest.raises(ForeignModelError, match="model type .WordLevel. is not one this tool reads"):
        load_any(p)
    p.write_text(json.dumps({"model": {"type": "WordPiece", "vocab": {}}}), encoding="utf-8")
    with pytest.raises(ForeignModelError, match="a WordPiece model's 'vocab' must map tokens to ids"):
        load_any(p)
    t = tmp_path / "x.tiktoken"
    t.write_text("YQ== 0\n", encoding="ascii")
    with pytest.raises(ForeignModelError, match="names? one|carries no pattern"):
        load_any(t)
    with pytest.raises(ForeignModelError, match="has 1 rank and lacks 255 of the 256 single bytes"):
        load_any(t, "gpt2")
    t.write_text("".join(f"{base64.b64encode(bytes([255 - i])).decode()} {i}\n" for i in range(256)))
    assert load_any(t, "gpt2").encode("A") == [255 - ord("A")]  # single bytes may take any ranks
