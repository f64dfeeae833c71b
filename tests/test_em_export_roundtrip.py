"""Issue 25 item 7: a Unigram model trained here with `--algorithm em` keeps SentencePiece's
conventions (dummy ▁ even before a leading space, whitespace kept), and both its exports say
them: sentencepiece loading our `.model` and tokenizers loading our `tokenizer.json` give our ids
and decode as sp.decode does; our reader reads the tokenizer.json back into a model with the
same ids."""

from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from tokworkbench.core.errors import ExportError, ForeignModelError
from tokworkbench.core.formats.hf_unigram import METASPACE_HF, from_hf, to_hf
from tokworkbench.core.registry.export import export
from tokworkbench.core.registry.load import load_any
from tokworkbench.core.unigram import UnigramConfig, UnigramLearner

spm = pytest.importorskip("sentencepiece", reason="sentencepiece is in the test extra; not installed here")
tokenizers = pytest.importorskip("tokenizers")

SAMPLES = Path(__file__).resolve().parents[1] / "sample_texts"
TRAIN = ["01_en_genesis_kjv.txt", "03_udhr_article1.txt", "08_ru_fortunes.txt"]
ABSENT = list("☃日本語한국어😀👋🏽\u200dÆøÅ€")  # in no training text
SPACES = [" ", "  ", "   ", "\t", "\n", "\n\n", "\r\n", "\xa0", "\u3000", "\u2581", " \u2581"]
TRICKY = ["", " ", "  ", " ABC ", "  lead", "trail   ", "a    b", "\n", "\n a\n\n b \t", "▁", "▁▁a", " ▁x",
          "x ▁", "tab\there", "☃", " ☃ ☃☃ a", "日本 語", "😀 a 😀", "e\u0301", "\x01"]


def _alphabet() -> list[str]:
    text = "".join((SAMPLES / name).read_text(encoding="utf-8") for name in TRAIN[1:])
    return sorted(set(text) - set("<>")) + ABSENT + [s for s in SPACES if len(s) == 1] * 3


texts = st.one_of(
    st.text(alphabet=st.sampled_from(_alphabet()), max_size=40),
    st.lists(st.sampled_from(TRICKY + SPACES + ["the", " of", "Лев", "and", "LORD", "1234"]), max_size=8).map("".join))


@pytest.fixture(scope="module")
def judged(tmp_path_factory):
    """(our EM model, sentencepiece on its .model, tokenizers on its tokenizer.json, our reader's
    model of that tokenizer.json, the export's notes)."""
    folder = tmp_path_factory.mktemp("em_rt")
    learner = UnigramLearner([(SAMPLES / n).read_text(encoding="utf-8") for n in TRAIN],
                             UnigramConfig(algorithm="em", seed_size=20_000))
    list(learner.run(vocab_size=600))
    model = learner.model()
    assert model.sp_conventions is not None and not model.sp_conventions.collapse and model.float32
    export(model, "sentencepiece", folder / "em.model")
    notes = export(model, "hf", folder / "em.json")
    return (model, spm.SentencePieceProcessor(model_file=str(folder / "em.model")),
            tokenizers.Tokenizer.from_file(str(folder / "em.json")), load_any(folder / "em.json"), notes)


def _same(judged, text: str) -> None:
    model, sp, hf, again, _ = judged
    ids = sp.encode(text)
    assert model.encode_ordinary(text) == ids, ascii(text)
    assert hf.encode(text, add_special_tokens=False).ids == ids, ascii(text)
    assert again.encode_ordinary(text) == ids, ascii(text)
    shown = sp.decode(ids)
    assert model.decode(ids) == shown, ascii(text)
    assert hf.decode(ids, skip_special_tokens=False) == shown, ascii(text)
    assert again.decode(ids) == shown, ascii(text)
    if model.unk_id not in ids:  # whitespace kept and no normalizer: the text comes back, ▁ as a space
        assert shown == text.replace("\u2581", " "), ascii(text)


def test_tricky_and_sample_lines(judged):
    model = judged[0]
    lines = TRICKY + [line for n in sorted(SAMPLES.glob("*.txt"))
                      for line in n.read_text(encoding="utf-8").split("\n")[:60] if "<unk>" not in line]
    for text in lines:
        _same(judged, text)
    assert any(model.unk_id in model.encode_ordinary(t) for t in lines)  # unknowns are exercised
    space = model.encode_ordinary(" ")
    assert len(space) == 2 and model.encode_ordinary(" ABC")[0] == space[0]  # the dummy ▁ alone, then "▁A..."


def test_a_whole_document(judged):
    """One long sentence: SentencePiece's float32 running sum grows, so near-ties may go the
    other way in HF (the export's note); our reader of the tokenizer.json still gives HF's ids."""
    model, sp, hf, again, _ = judged
    text = (SAMPLES / TRAIN[0]).read_text(encoding="utf-8")
    assert model.encode_ordinary(text) == sp.encode(text)
    assert again.encode_ordinary(text) == hf.encode(text, add_special_tokens=False).ids


@settings(max_examples=200, deadline=None)
@given(texts)
def test_hypothesis_text_gives_the_same_ids_in_all_three(judged, text):
    assume("<unk>" not in text)
    _same(judged, text)


def test_the_export_writes_sentencepieces_prefix_and_reads_back_as_itself(judged):
    model, _, _, again, notes = judged
    doc = to_hf(model)
    assert [s["type"] for s in doc["normalizer"]["normalizers"]] == ["Prepend", "Replace"]
    assert doc["pre_tokenizer"]["prepend_scheme"] == "never"
    assert again.sp_conventions == model.sp_conventions and again.pieces == model.pieces
    assert again.hf_floats and not again.float32  # HF's Viterbi: each word alone, in float64
    assert to_hf(again) == doc
    assert not any("leading space" in n for n in notes)
    assert any("skip_special_tokens" in n and "control pieces ('<s>', '</s>')" in n for n in notes) and any("float64" in n for n in notes)


def test_a_course_model_keeps_the_metaspace_export():
    texts = [(SAMPLES / n).read_text(encoding="utf-8") for n in TRAIN[1:]]
    learner = UnigramLearner(texts, UnigramConfig(seed_size=400))
    list(learner.run(vocab_size=learner.base_size + 50))
    doc = to_hf(learner.model())
    assert doc["pre_tokenizer"] == METASPACE_HF == doc["decoder"] and doc["normalizer"] is None


def test_another_decoder_with_the_prefix_normalizer_is_refused(judged):
    doc = to_hf(judged[0])
    doc["decoder"] = {"type": "Fuse"}
    with pytest.raises(ForeignModelError, match="needs the Metaspace decoder"):
        from_hf(doc)
    doc["decoder"] = {"type": "Sequence", "decoders": [
        {"type": "Replace", "pattern": {"String": "x"}, "content": "y"}, to_hf(judged[0])["decoder"]["decoders"][1]]}
    with pytest.raises(ForeignModelError, match="only as the one that shows the unknown piece"):
        from_hf(doc)


def test_a_map_that_erases_text_is_refused(tmp_path):
    """SentencePiece puts its dummy ▁ before any non-empty input, HF's Prepend before a non-empty
    normalized text: a map turning \\x01 into nothing tells them apart, so neither way is written."""
    (tmp_path / "rule.tsv").write_text("1\t\n7\t20\n", encoding="utf-8")
    (tmp_path / "c.txt").write_text((SAMPLES / TRAIN[0]).read_text(encoding="utf-8")[:3000], encoding="utf-8")
    spm.SentencePieceTrainer.train(input=str(tmp_path / "c.txt"), model_prefix=str(tmp_path / "cm"), vocab_size=120,
                                   model_type="unigram", normalization_rule_tsv=str(tmp_path / "rule.tsv"),
                                   remove_extra_whitespaces=False, minloglevel=2)
    model = load_any(tmp_path / "cm.model")
    assert model.encode_ordinary("\x01") == spm.SentencePieceProcessor(model_file=str(tmp_path / "cm.model")).encode("\x01") != []
    with pytest.raises(ExportError, match="turns some text into nothing"):
        export(model, "hf", tmp_path / "cm.json")
    assert not (tmp_path / "cm.json").exists()
    doc = to_hf(model)  # what the export would have written: the reader refuses it too
    with pytest.raises(ForeignModelError, match="may turn a text into nothing"):
        from_hf(doc)
