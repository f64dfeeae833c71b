"""The pipeline view's core against HF's own stage inspectors: on tokenizer.json files built
with the tokenizers library, `normalizer.normalize_str` gives our normalized text and
`pre_tokenizer.pre_tokenize_str` our chunks and offsets; the ids per chunk are HF's encoding and
the post-processor's are HF's with special tokens. Plus the character diff, for any text."""

import json
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer as HFTokenizer
from tokenizers import decoders, models, normalizers, pre_tokenizers, processors, trainers

from tokworkbench.core import TrainConfig, Trainer, load_corpus, pre_tokenizer, sample_paths
from tokworkbench.core.bytelevel import bytes_to_unicode
from tokworkbench.core.formats.hf import from_hf
from tokworkbench.core.inspection.pipeline import char_edits, pipeline
from tokworkbench.core.models.roles import with_roles
from tokworkbench.core.registry.load import load_any

TEXTS = [
    "Héllo,  WORLD!! ﬁ naïve  café ① 日本語 👋🏽 x",
    "The quick brown fox; it's 3:45pm, isn't it? We'LL see.   ",
    "  leading and trailing  \t\n\n spaces \u00a0nbsp\u3000ideographic",
    "ＡＩ ﬁ ① Ⅻ e\u0301 é Z\u0337a\u0338 Straße ÅNGSTRÖM İstanbul ΑΣ ΌΣΟΣ",
    "Привет, мир! مرحبا بالعالم. नमस्ते दुनिया 안녕하세요 $5.00 #tag @me",
    "x",
]
BYTE_LEVEL = bytes_to_unicode()


@pytest.fixture(scope="module")
def corpus_texts():
    return [d.text for d in load_corpus(sample_paths()).documents]


def _byte_level(chunk: str) -> str:
    return "".join(BYTE_LEVEL[b] for b in chunk.encode("utf-8"))


def _bpe(texts) -> HFTokenizer:
    hf = HFTokenizer(models.BPE())
    hf.normalizer = normalizers.NFKC()
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    hf.decoder = decoders.ByteLevel()
    hf.train_from_iterator(texts, trainers.BpeTrainer(vocab_size=700, show_progress=False, special_tokens=["<s>"],
                                                      initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    hf.post_processor = processors.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", 0)])
    return hf


def _wordpiece(texts) -> HFTokenizer:
    hf = HFTokenizer(models.WordPiece(unk_token="[UNK]"))
    hf.normalizer = normalizers.BertNormalizer()
    hf.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    hf.decoder = decoders.WordPiece()
    hf.train_from_iterator(texts, trainers.WordPieceTrainer(vocab_size=2000, show_progress=False,
                                                            special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]"]))
    hf.post_processor = processors.TemplateProcessing(single="[CLS] $A [SEP]",
                                                      special_tokens=[("[CLS]", 2), ("[SEP]", 3)])
    return hf


def _unigram(texts) -> HFTokenizer:
    hf = HFTokenizer(models.Unigram())
    hf.normalizer = normalizers.NFKC()
    hf.pre_tokenizer = pre_tokenizers.Metaspace()
    hf.decoder = decoders.Metaspace()
    hf.train_from_iterator(texts, trainers.UnigramTrainer(vocab_size=3000, show_progress=False, unk_token="<unk>",
                                                          special_tokens=["<unk>", "<s>", "</s>"]))
    hf.post_processor = processors.TemplateProcessing(single="<s> $A </s>",
                                                      special_tokens=[("<s>", 1), ("</s>", 2)])
    return hf


@pytest.mark.parametrize("build, chunk_text", [(_bpe, _byte_level), (_wordpiece, str), (_unigram, str)],
                         ids=["bytelevel-bpe", "bert-wordpiece", "metaspace-unigram"])
def test_each_stage_is_what_hfs_inspectors_give(corpus_texts, build, chunk_text):
    hf = build(corpus_texts)
    model = from_hf(json.loads(hf.to_str()))
    checked = 0
    for text in TEXTS + [t[:2000] for t in corpus_texts[:4]]:
        p = pipeline(model, text)
        normalized = hf.normalizer.normalize_str(text)
        assert p.normalized == normalized, text[:40]
        assert p.offsets_in_normalized
        ours = [(chunk_text(c.text), (c.start, c.end)) for c in p.chunks if c.ids]  # BERT's spaces: no chunk
        assert ours == hf.pre_tokenizer.pre_tokenize_str(normalized), text[:40]
        assert p.ids == hf.encode(text, add_special_tokens=False).ids, text[:40]
        assert list(p.post.ids) == hf.encode(text).ids, text[:40]
        assert all(len(c.tokens) == len(c.ids) for c in p.chunks)
        checked += len(p.chunks)
    assert checked > 1000


def test_the_post_processor_names_its_template_and_what_it_adds(corpus_texts):
    model = from_hf(json.loads(_wordpiece(corpus_texts).to_str()))
    p = pipeline(model, "hello world")
    cls, sep = model.special_ids["[CLS]"], model.special_ids["[SEP]"]
    assert p.post.template == "[CLS] $A [SEP]"
    assert (p.post.before, p.post.after) == ((cls,), (sep,))
    assert p.post.ids == (cls, *p.ids, sep)
    plain = with_roles(model, {"unk": "[UNK]"})
    assert pipeline(plain, "hello").post.template == "$A" and pipeline(plain, "hello").post.before == ()


def test_a_trained_model_shows_its_normalizer_and_where_the_decode_differs(corpus_texts):
    trainer = Trainer(corpus_texts[:3], TrainConfig(normalizer="nfkc", pre_tokenizer=pre_tokenizer("gpt4")))
    list(trainer.run(merges=50))
    model = trainer.model()
    text = "ﬁne ① done"
    p = pipeline(model, text)
    assert p.normalizer == "nfkc" and p.normalized == unicodedata.normalize("NFKC", text)
    assert [e.op for e in p.edits] == ["changed", "changed"]
    assert [(e.before, e.after) for e in p.edits] == [("ﬁ", "fi"), ("①", "1")]
    assert [c.text for c in p.chunks] == model.pre_tokenizer.split(p.normalized)
    assert p.decoded == p.normalized and p.difference == 0 and p.why_differs == "normalizer"
    same = pipeline(model, "plain text")
    assert same.lossless and same.edits == () and same.why_differs == ""


def test_what_cannot_be_encoded_is_an_error_after_the_normalizer(corpus_texts):
    trainer = Trainer(corpus_texts[:1], TrainConfig(units="char", pre_tokenizer=pre_tokenizer("gpt4")))
    model = trainer.model()
    p = pipeline(model, "a \U0001f600")
    assert p.error and "U+1F600" in p.error and p.chunks == () and p.normalized == "a \U0001f600"


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=60), st.sampled_from(["NFC", "NFKC", "NFD", "NFKD"]))
def test_applying_the_edits_to_the_input_gives_the_normalized_text(text, form):
    after = unicodedata.normalize(form, text).replace(" ", "\u2581")
    edits, complete = char_edits(text, after)
    assert complete
    out, pos = [], 0
    for e in edits:
        assert text[e.start:e.end] == e.before and after[e.out_start:e.out_end] == e.after
        out += [text[pos:e.start], e.after]
        pos = e.end
    out.append(text[pos:])
    assert "".join(out) == after


def test_a_long_changed_middle_is_aligned_up_to_the_limit():
    text = " ".join(["word"] * 3000)
    edits, complete = char_edits(text, text.replace(" ", "\u2581"), limit=1000)
    assert not complete and edits and all(e.out_end <= len(text) for e in edits)


@pytest.fixture(scope="module")
def sentencepiece_bpe(tmp_path_factory):
    spm = pytest.importorskip("sentencepiece")
    prefix = tmp_path_factory.mktemp("sp") / "bpe"
    samples = [str(p) for p in sample_paths()[:3]]
    spm.SentencePieceTrainer.train(input=",".join(samples), model_prefix=str(prefix), model_type="bpe",
                                   vocab_size=600, minloglevel=2, byte_fallback=True,
                                   normalization_rule_name="nmt_nfkc")
    path = f"{prefix}.model"
    return spm.SentencePieceProcessor(model_file=path), load_any(path)


def test_a_sentencepiece_model_shows_sentencepieces_normalizer_and_pieces(sentencepiece_bpe, corpus_texts):
    sp, model = sentencepiece_bpe
    for text in TEXTS + [t[:1000] for t in corpus_texts[:4]]:
        p = pipeline(model, text)
        assert p.normalized == sp.normalize(text), text[:40]
        assert "".join(c.text for c in p.chunks) == p.normalized and p.offsets_in_normalized
        assert p.ids == sp.encode(text), text[:40]
        assert [t for c in p.chunks for t in c.tokens] == [sp.id_to_piece(i) for i in p.ids]
        assert p.decoded == sp.decode(p.ids)


def test_the_command_line_shows_each_stage_with_tiktokens_ids(capsys):
    from test_arena import _tiktoken

    from tokworkbench.cli import main

    text = "Héllo  ﬁne world!"
    assert main(["pipeline", "-m", "cl100k_base", text]) == 0
    out = capsys.readouterr().out.splitlines()
    assert [line.split()[1] for line in out if line[:1].isdigit()] == \
        ["normalizer", "pre-tokenizer", "model", "post-processor", "decode"]
    listed = [int(w) for line in out if line.startswith("  ") and "–" in line
              for w in line.split(":", 1)[1].split() if w.isdigit()]
    assert listed == _tiktoken("cl100k_base").encode(text)
    assert out[-1].endswith("✓ the ids decode to the input")


def test_the_command_line_json_holds_every_stage_and_reads_standard_input(tmp_path, monkeypatch, capsys):
    import io

    from tokworkbench.cli import main

    hf = _wordpiece([d.text for d in load_corpus(sample_paths()).documents])
    path = tmp_path / "tokenizer.json"
    path.write_text(hf.to_str(), encoding="utf-8")
    text = "Héllo,  WORLD!! ﬁ naïve"
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(text.encode("utf-8"))))
    assert main(["pipeline", "-m", str(path), "-f", "-", "--format", "json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["normalized"] == hf.normalizer.normalize_str(text)
    chunks = [(c["text"], (c["start"], c["end"])) for c in got["chunks"] if c["ids"]]  # BERT's spaces: no token
    assert chunks == hf.pre_tokenizer.pre_tokenize_str(got["normalized"])
    assert got["post"]["ids"] == hf.encode(text).ids and got["ids"] == hf.encode(text, add_special_tokens=False).ids
    assert got["lossless"] is False and got["why_differs"] == "normalizer"  # lowercased and accents stripped


def test_the_command_line_shows_the_stages_before_a_text_it_cannot_encode_and_exits_1(tmp_path, capsys):
    from tokworkbench.cli import main
    from tokworkbench.core.fixed.model import FixedVocab
    from tokworkbench.core.registry import modelfile

    path = tmp_path / "v.json"
    modelfile.save(FixedVocab(("a", "b", "ab", " ")), path)
    code = main(["pipeline", "-m", str(path), "ab c"])
    out = capsys.readouterr().out.splitlines()
    assert code == 1 and out[0].startswith("1 normalizer")
    assert out[-1].startswith("✗ cannot encode: ") and "offset 3" in out[-1]


def test_an_error_in_a_later_chunk_names_its_offset_in_the_text(corpus_texts, tmp_path, capsys):
    """An HF byte-level BPE refuses a lone surrogate, as HF does. (gpt2's ranks file reads it as
    tiktoken does, through UTF-16: U+FFFD, and ids.)"""
    from tokworkbench.cli import main

    path = tmp_path / "tokenizer.json"
    _bpe(corpus_texts).save(str(path))
    assert main(["pipeline", "-m", str(path), "--format", "json", "hello world x\ud800"]) == 1
    got = json.loads(capsys.readouterr().out)
    assert got["error"].endswith("at offset 13") and got["difference"] is None and got["lossless"] is False
    assert main(["pipeline", "-m", "gpt2", "--format", "json", "hello world x\ud800"]) == 0
