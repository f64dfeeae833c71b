"""Metaspace against HF's, Unigram files (ours, HF tokenizer.json, SentencePiece .model), and the
exported model's ids checked with the real `tokenizers` library."""

import json
import struct
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokworkbench.cli import main
from tokworkbench.core.errors import ExportError, ForeignModelError, ModelFileError
from tokworkbench.core.registry import modelfile
from tokworkbench.core.registry.export import check, export
from tokworkbench.core.registry.load import load_any
from tokworkbench.core.text.pretokenize import parse_split
from tokworkbench.core.unigram import UnigramConfig, UnigramLearner, UnigramModel

tokenizers = pytest.importorskip("tokenizers")

SAMPLES = Path(__file__).resolve().parents[1] / "sample_texts"
META = parse_split("metaspace")
HF_META = tokenizers.pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always", split=True)
HF_DECODE = tokenizers.decoders.Metaspace(replacement="▁", prepend_scheme="always", split=True)
TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=60) | st.text(
    alphabet=" ▁a\t\nb", max_size=20)


def sample_texts() -> list[str]:
    return [p.read_text(encoding="utf-8") for p in sorted(SAMPLES.iterdir()) if p.is_file()]


@settings(max_examples=300, deadline=None)
@given(TEXT)
def test_metaspace_splits_as_hf(text):
    assert META.split(text) == [piece for piece, _ in HF_META.pre_tokenize_str(text)]
    assert "".join(META.split(text)) == META.surface(text)
    surface = META.surface(text)  # the split's plain-string path agrees with the pattern's spans
    assert META.split(text) == [surface[a:b] for a, b in META.spans(text)]


@settings(max_examples=300, deadline=None)
@given(TEXT)
def test_counts_are_the_splits_counted_in_first_appearance_order(text):
    from collections import Counter

    for pre in (META, parse_split("gpt4")):
        assert list(pre.counts(text).items()) == list(Counter(pre.split(text)).items())


def test_metaspace_on_the_sample_texts():
    for text in sample_texts():
        assert META.split(text) == [piece for piece, _ in HF_META.pre_tokenize_str(text)]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet="ab ▁c", min_size=1, max_size=4), max_size=6))
def test_metaspace_restore_is_hfs_decoder(pieces):
    assert META.restore(pieces) == HF_DECODE.decode(pieces)


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A course model on six sample texts, and the rest held out (other languages included)."""
    texts = sample_texts()
    learner = UnigramLearner(texts[:6], UnigramConfig(seed_size=1500))
    list(learner.run(vocab_size=learner.base_size + 300))
    folder = tmp_path_factory.mktemp("uni")
    path = folder / "m.json"
    modelfile.save(learner.model(), path, learner.corpus_summary())
    return learner.model(), path, texts[6:] + [texts[0][:3000]], folder


def test_model_file_round_trips(trained):
    model, path, _, _ = trained
    loaded = load_any(path)
    assert loaded.pieces == model.pieces and loaded.history == model.history
    assert loaded.start_cost == 1.0 and loaded.algorithm == "course"


def test_hf_export_gives_our_ids(trained):
    model, _, held, folder = trained
    out = folder / "tokenizer.json"
    export(model, "hf", out)
    hf = tokenizers.Tokenizer.from_file(str(out))
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert doc["model"]["type"] == "Unigram" and doc["model"]["unk_id"] == 0
    assert doc["pre_tokenizer"]["type"] == doc["decoder"]["type"] == "Metaspace"
    for text in held:
        ours = model.encode(text)
        assert ours == hf.encode(text).ids
        assert 0 in ours or model.decode(ours) == hf.decode(ours) == text
    again = load_any(out)
    assert again.pieces == model.pieces and again.encode(held[0]) == model.encode(held[0])


@settings(max_examples=150, deadline=None)
@given(text=TEXT)
def test_hf_ids_on_arbitrary_text(trained, text):
    model, _, _, folder = trained
    out = folder / "tokenizer.json"
    if not out.exists():
        export(model, "hf", out)
    hf = tokenizers.Tokenizer.from_file(str(out))
    assert model.encode(text) == hf.encode(text).ids


def test_bpe_formats_refuse_unigram(trained):
    model, _, _, folder = trained
    for fmt in ("tiktoken", "minbpe"):
        with pytest.raises(ExportError, match="Unigram model has scored pieces and no merges"):
            check(model, fmt)
        assert not (folder / f"x.{fmt}").exists()


def test_unknown_characters_become_unk(trained):
    model = trained[0]
    ids = model.encode("ok 🦜🦜 ok")
    assert ids.count(0) == 1  # consecutive unknown characters fuse into one <unk>, as in HF


def corrupt(doc: dict, **changes) -> dict:
    out = json.loads(json.dumps(doc))
    out.update(changes)
    return out


@pytest.mark.parametrize("change, message", [
    ({"pieces": [["<unk>", 0.0], ["a", "x"]]}, "score 'x'"),
    ({"pieces": [["<unk>", 0.0], ["a", 1e400]]}, "finite"),
    ({"pieces": [["<unk>", 0.0], ["a", -1.0], ["a", -2.0]]}, "both 'a'"),
    ({"pieces": [["a", -1.0]]}, "special token '<unk>' has the id 0, which is not that piece's id"),
    ({"unk_id": 1}, "'unk_id' 1 must be the id of one of the special tokens"),
    ({"user_defined": [0]}, "both user-defined and special"),
    ({"roles": {"bos": "<s>"}}, "the bos token '<s>' is not a special token"),
    ({"pieces": []}, "non-empty list"),
    ({"pieces": [["<unk>", 0.0], ["", -1.0]]}, "non-empty text"),
    ({"history": [{"round": 0}]}, "history round 0"),
    ({"pre_tokenizer": {"name": "metaspace", "pattern": "x"}}, "does not go with its pattern"),
])
def test_corrupt_unigram_files_are_one_line(trained, tmp_path, capsys, change, message):
    doc = json.loads(trained[1].read_text(encoding="utf-8"))
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(corrupt(doc, **change)).replace("Infinity", "1e400"), encoding="utf-8")
    with pytest.raises(ModelFileError, match=message):
        load_any(bad)
    assert main(["encode", "-m", str(bad), "hi"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("tokworkbench: error:") and err.count("\n") == 1


def test_nan_score_is_refused(trained, tmp_path):
    text = trained[1].read_text(encoding="utf-8").replace('["<unk>",0.0]', '["<unk>",NaN]', 1)
    assert "NaN" in text
    bad = tmp_path / "nan.json"
    bad.write_text(text, encoding="utf-8")
    with pytest.raises(ModelFileError, match="finite"):
        load_any(bad)


def test_hf_unigram_we_cannot_reproduce_is_refused(trained, tmp_path):
    doc = json.loads(json.dumps(__import__("tokworkbench.core.formats.hf_unigram", fromlist=["to_hf"]).to_hf(trained[0])))
    for key, value, message in [("unk_id", 10**6, "'unk_id' is 1000000"), ("unk_id", None, "'unk_id' is None"),
                                ("byte_fallback", True, "byte_fallback")]:
        bad = json.loads(json.dumps(doc))
        bad["model"][key] = value
        (tmp_path / "t.json").write_text(json.dumps(bad), encoding="utf-8")
        with pytest.raises(ForeignModelError, match=message):
            load_any(tmp_path / "t.json")


# -- SentencePiece .model, written by hand (the protobuf wire format) --------------------------
def _varint(n: int) -> bytes:
    out = b""
    while True:
        byte, n = n & 0x7F, n >> 7
        out += bytes([byte | (0x80 if n else 0)])
        if not n:
            return out


def _field(number: int, wire: int, payload: bytes) -> bytes:
    key = _varint(number << 3 | wire)
    return key + (_varint(len(payload)) + payload if wire == 2 else payload)


def sp_model(pieces, normalizer="identity", extra_ws=False, model_type=1) -> bytes:
    out = b""
    for text, score, kind in pieces:
        body = _field(1, 2, text.encode("utf-8")) + _field(2, 5, struct.pack("<f", score)) + _field(3, 0, _varint(kind))
        out += _field(1, 2, body)
    out += _field(2, 2, _field(3, 0, _varint(model_type)))
    out += _field(3, 2, _field(1, 2, normalizer.encode()) + _field(4, 0, _varint(int(extra_ws))))
    return out


def test_sentencepiece_model_is_read(tmp_path):
    path = tmp_path / "sp.model"
    path.write_bytes(sp_model([("<unk>", 0.0, 2), ("▁", -1.0, 1), ("a", -2.0, 1), ("▁ab", -1.5, 1), ("b", -3.0, 1)]))
    model = load_any(path)
    assert isinstance(model, UnigramModel)
    assert [t for t, _ in model.pieces] == ["<unk>", "▁", "a", "▁ab", "b"]
    assert [model.token(i) for i in model.encode("ab a")] == ["▁ab", "▁", "a"]


def test_sentencepiece_whitespace_rules_without_a_map(tmp_path):
    """A rule name without a compiled map (SentencePiece then maps nothing) and collapsed
    whitespace open: leading, repeated and trailing spaces go, as in SentencePiece."""
    path = tmp_path / "sp.model"
    path.write_bytes(sp_model([("<unk>", 0.0, 2), ("▁", -1.0, 1), ("a", -1.0, 1)], normalizer="nmt_nfkc", extra_ws=True))
    model = load_any(path)
    assert model.normalize_text("  a   a  ") == "a a"
    assert [model.token(i) for i in model.encode("  a   a  ")] == ["▁", "a", "▁", "a"]


@pytest.mark.parametrize("kwargs, message", [
    ({"model_type": 3}, "is WORD; this tool reads Unigram and BPE models"),
])
def test_sentencepiece_models_we_cannot_reproduce(tmp_path, kwargs, message):
    path = tmp_path / "sp.model"
    path.write_bytes(sp_model([("<unk>", 0.0, 2), ("a", -1.0, 1)], **kwargs))
    with pytest.raises(ForeignModelError, match=message):
        load_any(path)


def test_sentencepiece_control_pieces_are_special_and_never_match(tmp_path):
    path = tmp_path / "sp.model"
    path.write_bytes(sp_model([("<unk>", 0.0, 2), ("<s>", 0.0, 3), ("</s>", 0.0, 3), ("▁", -1.0, 1), ("a", -1.0, 1),
                               ("<", -2.0, 1), ("s", -2.0, 1), (">", -2.0, 1)]))
    model = load_any(path)
    assert model.special_ids == {"<unk>": 0, "<s>": 1, "</s>": 2}
    assert (model.roles.bos, model.roles.eos, model.roles.unk) == ("<s>", "</s>", "<unk>")  # SP's default ids
    assert model.encode_ordinary("a<s>") == [3, 4, 5, 6, 7]  # as text, never the control piece
    assert model.encode("a<s>", allowed_special="all") == [3, 4, 1]
    assert model.base_size == 5


@pytest.mark.parametrize("kind, message", [(5, "an unused piece"), (6, "a byte piece")])
def test_sentencepiece_unused_and_byte_pieces_are_refused(tmp_path, kind, message):
    path = tmp_path / "sp.model"
    path.write_bytes(sp_model([("<unk>", 0.0, 2), ("<0x41>", 0.0, kind), ("a", -1.0, 1)]))
    with pytest.raises(ForeignModelError, match=f"piece 1 .* is {message}"):
        load_any(path)


def test_real_sentencepiece_model_gives_its_ids(tmp_path):
    spm = pytest.importorskip("sentencepiece")
    corpus = tmp_path / "c.txt"
    corpus.write_text((SAMPLES / "01_en_genesis_kjv.txt").read_text(encoding="utf-8"), encoding="utf-8")
    spm.SentencePieceTrainer.train(input=str(corpus), model_prefix=str(tmp_path / "sp"), vocab_size=300,
                                   model_type="unigram", normalization_rule_name="identity",
                                   remove_extra_whitespaces=False, bos_id=-1, eos_id=-1, unk_id=0, minloglevel=2)
    sp = spm.SentencePieceProcessor(model_file=str(tmp_path / "sp.model"))
    model = load_any(tmp_path / "sp.model")
    text = (SAMPLES / "02_en_devils_dictionary.txt").read_text(encoding="utf-8")
    for line in text.splitlines()[:300]:  # a leading space too: the dummy prefix goes before it
        assert model.encode(line) == sp.encode(line), line
        assert model.decode(sp.encode(line)) == sp.decode(sp.encode(line)), line


@pytest.mark.parametrize("units", ["byte", "char"])
def test_bpe_trains_and_decodes_with_metaspace(tmp_path, units, capsys):
    from tokworkbench.core.bpe.trainer import TrainConfig, train

    text = (SAMPLES / "03_udhr_article1.txt").read_text(encoding="utf-8")
    trainer = train([text], TrainConfig(units=units, pre_tokenizer=META), merges=50)
    tok = trainer.model()
    assert tok.decode(tok.encode("All human beings")) == "All human beings"
    assert tok.decode(tok.encode(text)) == (text.removeprefix(" "))
    with pytest.raises(ExportError, match="metaspace"):
        check(tok, "hf")
