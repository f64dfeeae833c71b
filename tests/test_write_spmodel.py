"""Issue 24/25 item 7: SentencePiece `.model` files written by hand (no protobuf library) that
`sentencepiece.SentencePieceProcessor` loads with our ids, for Unigram models (trained here or
opened) and SentencePiece BPE models; our reader reads each file back as the same model; what
SentencePiece cannot express is refused in one line."""

import struct
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from tokworkbench.cli import main
from tokworkbench.core.errors import ExportError
from tokworkbench.core.formats.sentencepiece import from_sentencepiece
from tokworkbench.core.formats.sentencepiece_write import encode_spec, spbpe_spec, unigram_spec
from tokworkbench.core.registry.export import export
from tokworkbench.core.registry.load import load_any
from tokworkbench.core.text.pretokenize import pre_tokenizer
from tokworkbench.core.unigram import UnigramConfig, UnigramLearner

spm = pytest.importorskip("sentencepiece", reason="sentencepiece is in the test extra; not installed here")

SAMPLES = Path(__file__).resolve().parents[1] / "sample_texts"
TRAIN = ["01_en_genesis_kjv.txt", "03_udhr_article1.txt", "08_ru_fortunes.txt", "04_emoji_symbols_numbers.txt"]
SPECIAL = ("<s>", "</s>", "<unk>", "<pad>")
OUTSIDE = list("日本語한국어ÆøÅ€😀👋🏽\u200d")
SPACES = list(" \t\n\r\xa0\u3000\u2581") * 3
TRICKY = ["", " ", "  lead", "trail   ", "a    b", "▁", "▁▁a", " ▁x", "x ▁", "tab\there", "日本", "😀 a 😀",
          "e\u0301", "\x01", "ﬁ ① ㎏ Ⅻ", "ＡＢＣ"]


def sample_lines() -> list[str]:
    out = []
    for path in sorted(SAMPLES.glob("*.txt")):
        out += path.read_text(encoding="utf-8").split("\n")[:200]
    return [line for line in out if not any(s in line for s in SPECIAL)]


def _alphabet() -> list[str]:
    text = "".join((SAMPLES / name).read_text(encoding="utf-8") for name in TRAIN)
    return sorted(set(text) - set("<>")) + OUTSIDE + SPACES + list("ﬁ①㎏ＡＢ")


texts = st.one_of(st.text(alphabet=st.sampled_from(_alphabet()), max_size=40),
                  st.lists(st.sampled_from(TRICKY + ["the", " of", "Лев", "and", "1234"]), max_size=8).map("".join))


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """Models sentencepiece trained: the files to open, and the processors that judge."""
    out = tmp_path_factory.mktemp("spw")

    def train(name: str, **kwargs) -> Path:
        args = {"input": ",".join(str(SAMPLES / n) for n in TRAIN), "model_prefix": str(out / name),
                "vocab_size": 1000, "character_coverage": 0.995, "minloglevel": 2}
        spm.SentencePieceTrainer.train(**(args | kwargs))
        return out / f"{name}.model"

    return {"uni_nfkc": train("uni_nfkc", model_type="unigram"),
            "uni_identity": train("uni_identity", model_type="unigram", normalization_rule_name="identity",
                                  remove_extra_whitespaces=False),
            "uni_user": train("uni_user", model_type="unigram", user_defined_symbols=["the", "@@"],
                              control_symbols=["<sep>"], pad_id=3),
            "bpe_fallback": train("bpe_fallback", model_type="bpe", byte_fallback=True),
            "bpe_identity": train("bpe_identity", model_type="bpe", normalization_rule_name="identity",
                                  add_dummy_prefix=False),
            "bpe_user": train("bpe_user", model_type="bpe", user_defined_symbols=["the"], byte_fallback=True)}


@pytest.fixture(scope="module")
def ours_trained():
    """A Unigram model trained here (course, metaspace, no normalizer)."""
    texts = [(SAMPLES / n).read_text(encoding="utf-8") for n in TRAIN]
    learner = UnigramLearner(texts, UnigramConfig(seed_size=1500))
    list(learner.run(vocab_size=learner.base_size + 300))
    return learner.model()


@pytest.fixture(scope="module")
def written(trained, ours_trained, tmp_path_factory):
    """name -> (SentencePiece on our file, our model, the model our reader makes of our file)."""
    folder = tmp_path_factory.mktemp("spw_out")
    models = {name: load_any(path) for name, path in trained.items()}
    out = {}
    for name, model in models.items():
        path = folder / f"{name}.model"
        notes = export(model, "sentencepiece", path)
        assert notes == [f"wrote {path}"], notes
        out[name] = (spm.SentencePieceProcessor(model_file=str(path)), model, from_sentencepiece(path.read_bytes()))
    return out


NAMES = ["uni_nfkc", "uni_identity", "uni_user", "bpe_fallback", "bpe_identity", "bpe_user"]
# Unigram without whitespace collapsing: the export's note on a leading space. For the opened one it is the
# reader's model that differs from SentencePiece's own file there (our file encodes as the original)
LEADS = ()


def _same(entry, text: str, lead: bool = False) -> None:
    """`lead`: the export's note, SentencePiece's dummy ▁ in front even of a leading space."""
    sp, model, again = entry
    want = sp.encode(text)
    if lead and text.startswith((" ", "\u2581")):
        text = " " + text
    assert model.encode_ordinary(text) == want, ascii(text[:200])
    assert again.encode_ordinary(text) == want, ascii(text[:200])


@pytest.mark.parametrize("name", NAMES)
def test_sample_texts_give_our_ids(written, name):
    lines = sample_lines() + TRICKY
    for text in lines:
        _same(written[name], text, name in LEADS)
    assert len(lines) > 1000


@pytest.mark.parametrize("name", NAMES)
def test_our_file_encodes_as_the_original(written, trained, name):
    """SentencePiece on our file and on its own, over all the samples as one sentence (where its
    float32 path sums run over the whole text)."""
    original = spm.SentencePieceProcessor(model_file=str(trained[name]))
    text = "\n".join(sample_lines())
    assert written[name][0].encode(text) == original.encode(text)


@settings(max_examples=150, deadline=None)
@given(texts)
def test_hypothesis_text_gives_our_ids(written, text):
    assume(not any(s in text for s in SPECIAL + ("<sep>",)))
    for name in NAMES:
        _same(written[name], text, name in LEADS)


@pytest.mark.parametrize("name", NAMES)
def test_an_opened_model_reads_back_as_itself(written, trained, name):
    sp, model, again = written[name]
    assert again == model
    original = spm.SentencePieceProcessor(model_file=str(trained[name]))
    assert sp.get_piece_size() == original.get_piece_size()
    for i in range(sp.get_piece_size()):
        assert (sp.id_to_piece(i), sp.get_score(i), sp.is_control(i), sp.is_unknown(i), sp.is_byte(i)) == \
            (original.id_to_piece(i), original.get_score(i), original.is_control(i), original.is_unknown(i),
             original.is_byte(i))
    assert (sp.unk_id(), sp.bos_id(), sp.eos_id(), sp.pad_id()) == \
        (original.unk_id(), original.bos_id(), original.eos_id(), original.pad_id())


def test_a_model_trained_here_is_refused_with_the_reason(ours_trained, tmp_path):
    """Its metaspace is HF's (no dummy ▁ before a leading space), which no SentencePiece setting
    says: a file would give other ids on such text, so none is written."""
    with pytest.raises(ExportError, match="dummy ▁ in front even of text that starts with a space"):
        export(ours_trained, "sentencepiece", tmp_path / "ours.model")
    assert not list(tmp_path.iterdir())
    spec = unigram_spec(ours_trained)  # everything else it could carry, in float32 as the file holds it
    again = from_sentencepiece(encode_spec(spec))
    assert [p for p, _ in again.pieces] == [p for p, _ in ours_trained.pieces]
    assert [s for _, s in again.pieces] == [struct.unpack("<f", struct.pack("<f", s))[0] for _, s in ours_trained.pieces]


def test_piece_types_are_written(written):
    sp = written["uni_user"][0]
    the, sep = sp.piece_to_id("the"), sp.piece_to_id("<sep>")
    assert sp.is_control(sep) and not sp.is_control(the) and sp.pad_id() == 3
    assert the in sp.encode("bathe the")
    fallback = written["bpe_fallback"][0]
    assert fallback.encode("ᚠ")[-3:] == [fallback.piece_to_id(f"<0x{b:02X}>") for b in "ᚠ".encode()]


def test_what_sentencepiece_cannot_express_is_refused(ours_trained, tmp_path, capsys):
    texts = [(SAMPLES / "01_en_genesis_kjv.txt").read_text(encoding="utf-8")[:20000]]
    nfkc = UnigramLearner(texts, UnigramConfig(normalizer="nfkc", seed_size=400))
    list(nfkc.run(vocab_size=nfkc.base_size + 20))
    with pytest.raises(ExportError, match="charsmap"):
        export(nfkc.model(), "sentencepiece", tmp_path / "n.model")
    split = UnigramLearner(texts, UnigramConfig(pre_tokenizer=pre_tokenizer("gpt4"), seed_size=400))
    list(split.run(vocab_size=split.base_size + 20))
    with pytest.raises(ExportError, match="only at ▁"):
        unigram_spec(split.model())
    assert not list(tmp_path.iterdir())


def test_the_cli_writes_and_refuses_in_one_line(trained, tmp_path, capsys):
    out = tmp_path / "m.model"
    assert main(["export", "-m", str(trained["bpe_fallback"]), "--format", "sentencepiece", "-o", str(out)]) == 0
    assert out.read_bytes() == encode_spec(spbpe_spec(load_any(trained["bpe_fallback"])))
    capsys.readouterr()
    vocab = tmp_path / "vocab.tiktoken"
    assert main(["export", "-m", str(trained["uni_nfkc"]), "--format", "tiktoken", "-o", str(vocab)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "export it to hf, sentencepiece" in err, err


def test_the_app_offers_the_formats_the_cli_does():
    from tokworkbench.app.dialogs.export import DEFAULT_NAMES, FORMAT_CHOICES
    from tokworkbench.core.registry.export import FORMATS

    assert list(FORMAT_CHOICES)[: len(FORMATS)] == list(FORMATS) and "sentencepiece" in FORMATS
    assert DEFAULT_NAMES["sentencepiece"] == "tokenizer.model" and DEFAULT_NAMES["vocab.txt"] == "vocab.txt"


def test_an_hf_normalizer_is_refused(tmp_path):
    tokenizers = pytest.importorskip("tokenizers")
    from tokenizers import decoders, models, normalizers, pre_tokenizers

    hf = tokenizers.Tokenizer(models.Unigram([("<unk>", 0.0), ("▁a", -1.0), ("a", -2.0), ("▁", -3.0), ("b", -2.5)],
                                             unk_id=0))
    hf.normalizer = normalizers.Lowercase()
    hf.pre_tokenizer = pre_tokenizers.Metaspace()
    hf.decoder = decoders.Metaspace()
    path = tmp_path / "lower.json"
    hf.save(str(path))
    with pytest.raises(ExportError, match="HF's steps"):
        export(load_any(path), "sentencepiece", tmp_path / "lower.model")
    hf.normalizer = None
    hf.save(str(path))
    with pytest.raises(ExportError, match="dummy ▁ in front even of text that starts with a space"):
        export(load_any(path), "sentencepiece", tmp_path / "plain.model")  # HF's Metaspace: " a" differs
    assert not (tmp_path / "plain.model").exists()


def test_an_em_model_trained_here_loads_in_sentencepiece_with_our_ids(tmp_path):
    """EM models keep SentencePiece's dummy prefix and float32 sentence Viterbi (issue 25 item 7)."""
    texts = [(SAMPLES / n).read_text(encoding="utf-8") for n in TRAIN]
    learner = UnigramLearner(texts, UnigramConfig(algorithm="em", seed_size=100_000))
    list(learner.run(vocab_size=1200))
    model = learner.model()
    path = tmp_path / "em.model"
    export(model, "sentencepiece", path)
    sp = spm.SentencePieceProcessor(model_file=str(path))
    for line in sample_lines()[::7] + TRICKY:
        assert sp.encode(line) == model.encode_ordinary(line), repr(line)
