"""SentencePiece Unigram models with byte_fallback: read from the `.model` SentencePiece trained,
encoded and decoded as `SentencePieceProcessor` does (an unknown character as its UTF-8 bytes'
`<0xNN>` pieces, byte runs decoded back), written back as a `.model` SentencePiece loads with the
same ids, round-tripped through our model file, and exported to tokenizer.json, where HF's
Unigram byte_fallback gives the same ids and decode."""

from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from tokworkbench.cli import main
from tokworkbench.core.errors import ExportError, ForeignModelError, ModelFileError, SettingError
from tokworkbench.core.formats.sentencepiece import from_sentencepiece
from tokworkbench.core.formats.sentencepiece_write import encode_spec, unigram_spec
from tokworkbench.core.models.tokenkinds import TokenKind
from tokworkbench.core.registry import modelfile
from tokworkbench.core.registry.export import export
from tokworkbench.core.registry.load import load_any
from tokworkbench.core.session.settings import Settings
from tokworkbench.core.text.bytepieces import byte_piece
from tokworkbench.core.unigram.config import UnigramConfig
from tokworkbench.core.unigram.model import UnigramModel
from tokworkbench.core.unigram.sampling import unigram_nbest, unigram_sample

spm = pytest.importorskip("sentencepiece", reason="sentencepiece is in the test extra; not installed here")

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_texts"
OTHERS = ["05_zh_debian_installer.txt", "07_ko_debian_installer.txt", "08_ru_fortunes.txt",
          "09_ar_debian_handbook.txt", "04_emoji_symbols_numbers.txt"]
SPECIAL = ("<s>", "</s>", "<unk>", "<0x")
OUTSIDE = list("日本語한국어ÆøÅ€😀👋🏽\u200d\u0301\u0308\u20dd") + ["\U0001f1ef\U0001f1f5", "ア", "ㄱ", "ß", "ʘ"]
TRICKY = ["", " ", "  lead", "trail   ", "a    b", "▁", "▁▁a", " ▁x", "tab\there", "日本", "😀 a 😀", "e\u0301",
          "\u0301", "\u0301\u0302 x", "\x01", "ﬁ ① ㎏ Ⅻ", "ＡＢＣ", "𝔘𝔫𝔦", "繁體中文字", "🧑‍🤝‍🧑"]


def _lines(name: str, take=slice(None)) -> list[str]:
    return (SAMPLES / name).read_text(encoding="utf-8").split("\n")[take]


def _held_out() -> list[str]:
    out = []
    for name in OTHERS + ["06_ja_debian_installer.txt", "11_el_debian_installer.txt", "10_hi_tokenization_notes.txt"]:
        out += _lines(name, slice(40, 160))
    return [t for t in out if not any(s in t for s in SPECIAL)] + TRICKY


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """name -> the .model SentencePiece trained: botchan plus non-Latin lines, byte_fallback."""
    folder = tmp_path_factory.mktemp("ubf")
    corpus = folder / "corpus.txt"
    extra = [line for name in OTHERS for line in _lines(name, slice(0, 40))]
    corpus.write_text((ROOT / "tests/data/botchan.txt").read_text(encoding="utf-8") + "\n".join(extra),
                      encoding="utf-8")

    def train(name: str, **kwargs) -> Path:
        args = {"input": str(corpus), "model_prefix": str(folder / name), "model_type": "unigram",
                "byte_fallback": True, "vocab_size": 800, "character_coverage": 0.98, "minloglevel": 2}
        spm.SentencePieceTrainer.train(**(args | kwargs))
        return folder / f"{name}.model"

    return {"nfkc": train("nfkc"),
            "identity": train("identity", normalization_rule_name="identity", remove_extra_whitespaces=False),
            "collapse": train("collapse", normalization_rule_name="identity"),
            "user": train("user", user_defined_symbols=["the", "@@"], control_symbols=["<sep>"])}


@pytest.fixture(scope="module")
def models(trained, tmp_path_factory):
    """name -> (SentencePiece on its own file, our model of it, SentencePiece on the file we write,
    our model read back from our model file)."""
    folder = tmp_path_factory.mktemp("ubf_out")
    out = {}
    for name, path in trained.items():
        model = from_sentencepiece(path.read_bytes())
        written = folder / f"{name}.model"
        assert export(model, "sentencepiece", written) == [f"wrote {written}"]
        ours = modelfile.save(model, folder / f"{name}.json")
        out[name] = (spm.SentencePieceProcessor(model_file=str(path)), model,
                     spm.SentencePieceProcessor(model_file=str(written)), modelfile.load(ours))
    return out


NAMES = ["nfkc", "identity", "collapse", "user"]
HF_NAMES = ["identity", "collapse"]  # nfkc: its charsmap differs in HF; user: HF has no user-defined piece


@pytest.fixture(scope="module")
def hf(models, tmp_path_factory):
    """name -> HF's tokenizer on the tokenizer.json we export."""
    tokenizers = pytest.importorskip("tokenizers")
    folder = tmp_path_factory.mktemp("ubf_hf")
    out = {}
    for name in HF_NAMES:
        path = folder / f"{name}.json"
        assert export(models[name][1], "hf", path)[-1] == f"wrote {path}"
        out[name] = tokenizers.Tokenizer.from_file(str(path))
    return out


def _hf_same(hf, models, text: str) -> None:
    for name in HF_NAMES:
        sp = models[name][0]
        want = sp.encode(text)
        got = hf[name].encode(text, add_special_tokens=False).ids
        assert got == want, (name, ascii(text[:200]))
        if "\u2581" not in text:  # HF's Metaspace decoder keeps a ▁ the text holds where sp.decode drops it
            assert hf[name].decode(got, skip_special_tokens=False) == sp.decode(want), (name, ascii(text[:200]))


def _same(entry, text: str) -> None:
    sp, model, again, reread = entry
    want = sp.encode(text)
    assert model.encode_ordinary(text) == want, ascii(text[:200])
    assert again.encode(text) == want, ascii(text[:200])
    assert reread.encode_ordinary(text) == want, ascii(text[:200])
    assert model.decode(want) == sp.decode(want), ascii(text[:200])


def test_the_models_fall_back_to_bytes(models):
    """What the other tests lean on: each model has its 256 byte pieces, and held-out text uses them."""
    for name in NAMES:
        sp, model, _, reread = models[name]
        assert isinstance(model, UnigramModel) and model.byte_fallback and reread.byte_pieces == model.byte_pieces
        assert [model.pieces[t][0] for t in model.byte_pieces] == [byte_piece(b) for b in range(256)]
        assert all(sp.is_byte(t) for t in model.byte_pieces)
        used = {t for text in _held_out() for t in sp.encode(text)}
        assert len(used & set(model.byte_pieces)) > 30, name
        assert not set(model.byte_pieces) & set(model._ids.values())  # never matched in text
        kinds = [model.piece_kind(t) for t in range(model.vocab_size)]  # what the vocabulary view and arena read
        assert [t for t, k in enumerate(kinds) if k is TokenKind.BYTE] == list(model.byte_pieces)
        assert kinds[model.unk_id] is TokenKind.UNKNOWN
        assert [t for t, k in enumerate(kinds) if k is TokenKind.USER_DEFINED] == list(model.user_defined)


@pytest.mark.parametrize("name", NAMES)
def test_held_out_text_gives_sentencepiece_ids(models, name):
    for text in _held_out():
        _same(models[name], text)


def test_hf_gives_sentencepiece_ids_and_text(hf, models):
    lines = _held_out()
    for text in lines:
        _hf_same(hf, models, text)
    sp, model = models["collapse"][:2]
    assert sum(t in model.byte_pieces for text in lines for t in sp.encode(text)) > 100


def test_what_hf_cannot_carry_is_refused(models, tmp_path):
    with pytest.raises(ExportError, match="user-defined"):
        export(models["user"][1], "hf", tmp_path / "user.json")


@pytest.mark.parametrize("name", NAMES)
def test_one_long_sentence_gives_sentencepiece_ids(models, name):
    """Every held-out line as one sentence: SentencePiece's float32 path runs over all of it."""
    text = "\n".join(_held_out())
    _same(models[name], text)


ALPHABET = sorted(set("".join(_lines("01_en_genesis_kjv.txt", slice(0, 200))) + "".join(_held_out()[:400]))
                  - set("<>")) + [c for c in OUTSIDE if len(c) == 1] + list(" \t\n\xa0\u3000\u2581") * 3
texts = st.one_of(st.text(alphabet=st.sampled_from(ALPHABET), max_size=40),
                  st.lists(st.sampled_from(TRICKY + OUTSIDE + ["the", " of", "Лев", "and"]), max_size=8).map("".join),
                  st.text(max_size=20))


@settings(max_examples=200, deadline=None)
@given(texts)
def test_hypothesis_text_gives_sentencepiece_ids(models, hf, text):
    assume(not any(s in text for s in SPECIAL + ("<sep>",)) and "\x00" not in text)
    for name in NAMES:
        _same(models[name], text)
    _hf_same(hf, models, text)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.integers(0, 799), st.integers(0, 5), st.integers(3, 40)), max_size=30))
def test_decode_of_any_ids_is_sentencepiece_decode(models, ids):
    """Byte pieces in any order (lone continuation bytes, cut sequences, overlong leads) next to
    normal, unknown and control pieces decode as `sp.decode` shows them."""
    for name in NAMES:
        sp, model, _, reread = models[name]
        assert model.decode(ids) == sp.decode(ids), ids
        assert reread.decode(ids) == sp.decode(ids), ids


def test_byte_runs_decode_as_sentencepiece(models):
    sp, model, _, _ = models["nfkc"]
    b = model.byte_pieces
    for raw in [b"\xe6\x97\xa5", b"\xe6\x97", b"\x97\xa5", b"\xff\xfe", b"\xc0\xaf", b"\xed\xa0\x80", b"a\xf0\x9f\x98",
                b"\xf4\x90\x80\x80", b"\xe2\x96\x81x", b"\xf0\x9f\x98\x80\xf0"]:
        ids = [b[x] for x in raw]
        for around in ([], [sp.piece_to_id("▁the")]):
            got = around + ids + around
            assert model.decode(got) == sp.decode(got), raw


def test_the_written_file_reads_back_as_itself(trained, models):
    for name in NAMES:
        model = models[name][1]
        again = from_sentencepiece(encode_spec(unigram_spec(model)))
        assert again == model, name


def test_byte_pieces_are_checked_when_read(trained, tmp_path):
    model = from_sentencepiece(trained["nfkc"].read_bytes())
    doc = modelfile.to_json(model)
    doc["byte_pieces"] = doc["byte_pieces"][:255]
    with pytest.raises(ModelFileError, match="byte_pieces"):
        modelfile.from_json(doc)
    doc["byte_pieces"] = doc["byte_pieces"][1:] + doc["byte_pieces"][:2]
    with pytest.raises(ModelFileError, match="not the byte piece"):
        modelfile.from_json(doc)
    spec = unigram_spec(model)
    first = model.byte_pieces[0]
    pieces = [p if i != first else (p[0], p[1], 1) for i, p in enumerate(spec.pieces)]
    with pytest.raises(ForeignModelError, match="<0x00> is missing"):
        from_sentencepiece(encode_spec(spec.__class__(**{**spec.__dict__, "pieces": tuple(pieces)})))
    no_flag = spec.__class__(**{**spec.__dict__, "byte_fallback": False})
    with pytest.raises(ForeignModelError, match="without byte_fallback"):
        from_sentencepiece(encode_spec(no_flag))


# -- training with byte_fallback (--algorithm em), judged by spm_train --------------------------
@pytest.fixture(scope="module")
def em_trained(tmp_path_factory):
    """(spm_train's processor, our em model, sentencepiece on our .model, tokenizers on our
    tokenizer.json, held-out lines): both trained with byte_fallback at coverage 0.98 on botchan
    and the first part of each non-Latin sample text."""
    tokenizers = pytest.importorskip("tokenizers")
    folder = tmp_path_factory.mktemp("ubf_em")
    train = (ROOT / "tests/data/botchan.txt").read_text(encoding="utf-8").replace("\r\n", "\n").split("\n")
    held = []
    for name in OTHERS + ["06_ja_debian_installer.txt", "11_el_debian_installer.txt"]:
        lines = _lines(name)
        cut = 2 * len(lines) // 3
        train += lines[:cut]
        held += [line for line in lines[cut:] if line.strip() and not any(s in line for s in SPECIAL)]
    corpus = folder / "train.txt"
    corpus.write_text("\n".join(train) + "\n", encoding="utf-8", newline="\n")
    spm.SentencePieceTrainer.train(input=str(corpus), model_prefix=str(folder / "ref"), vocab_size=800,
                                   model_type="unigram", normalization_rule_name="identity", byte_fallback=True,
                                   character_coverage=0.98, minloglevel=2)
    ref = spm.SentencePieceProcessor(model_file=str(folder / "ref.model"))
    settings = Settings(kind="unigram", units="char", split="metaspace", algorithm="em", seed_size=1_000_000,
                        normalizer="none", character_coverage=0.98, byte_fallback=True)
    learner = settings.learner([corpus.read_text(encoding="utf-8")])
    list(learner.run(vocab_size=ref.get_piece_size() + ("\n" in learner.state.pieces)))  # ours spells the line break
    model = learner.model()
    export(model, "sentencepiece", folder / "ours.model")
    export(model, "hf", folder / "ours.json")
    again = modelfile.load(modelfile.save(model, folder / "ours.tokworkbench.json"))
    return (ref, model, spm.SentencePieceProcessor(model_file=str(folder / "ours.model")),
            tokenizers.Tokenizer.from_file(str(folder / "ours.json")), again, held)


def test_em_lays_out_spm_trains_meta_and_byte_pieces(em_trained):
    ref, model, *_ = em_trained
    head = [ref.id_to_piece(i) for i in range(259)]
    assert [p for p, _ in model.pieces[:259]] == head and head[3] == "<0x00>" and head[258] == "<0xFF>"
    assert model.byte_pieces == tuple(range(3, 259)) and model.specials == (0, 1, 2)
    assert model.vocab_size == ref.get_piece_size() + ("\n" in dict(model.pieces))


def test_em_spells_dropped_characters_in_spm_trains_bytes(em_trained):
    """The same characters fall outside the coverage, so every held-out line spells the same
    characters in the same byte ids as spm_train's model (the other pieces are ours)."""
    ref, model, ours_sp, hf, again, held = em_trained
    spelled = 0
    for text in held:
        ids = model.encode_ordinary(text)
        want = ref.encode(text)
        assert [i for i in ids if i in model.byte_pieces] == [i for i in want if ref.is_byte(i)], text
        assert model.unk_id not in ids
        spelled += sum(i in model.byte_pieces for i in ids)
        assert ours_sp.encode(text) == ids and again.encode_ordinary(text) == ids
        assert hf.encode(text, add_special_tokens=False).ids == ids
        assert model.decode(ids) == ours_sp.decode(ids) == text  # em keeps the whitespace spm_train collapses
    assert spelled > 500


def test_byte_fallback_is_ems(tmp_path, capsys):
    with pytest.raises(SettingError, match="needs algorithm em"):
        UnigramConfig(algorithm="course", byte_fallback=True)
    with pytest.raises(SettingError, match="byte pieces"):
        UnigramConfig(algorithm="em", byte_fallback=True, user_defined_symbols=("<0x41>",))
    corpus = tmp_path / "train.txt"
    corpus.write_text((ROOT / "tests/data/botchan.txt").read_text(encoding="utf-8")[:20000] + "\n日本語 ☃",
                      encoding="utf-8")
    out = tmp_path / "m.json"
    assert main(["train", str(corpus), "--model", "unigram", "--algorithm", "em", "--split", "metaspace",
                 "--character-coverage", "0.98", "--byte-fallback", "--vocab-size", "300", "-o", str(out)]) == 0
    model = load_any(out)
    assert model.byte_fallback and model.encode_ordinary("☃") == [model._ids["▁"]] + [
        model.byte_pieces[b] for b in "☃".encode("utf-8")]


def test_nbest_and_samples_spell_unknowns_in_bytes(models):
    """`--nbest 1` is encode, and every segmentation nbest or sampling gives decodes to the text."""
    _, model, _, _ = models["identity"]
    for text in ["日本語 ☃ the cat", "😀 a 😀", "e\u0301 ʘ ß"]:
        best = unigram_nbest(model, text, 3)
        assert best[0][0] == model.encode_ordinary(text) and any(t in model.byte_pieces for t in best[0][0])
        assert all(model.decode(ids) == model.decode(best[0][0]) for ids, _ in best)
        for seed in range(5):
            ids = unigram_sample(model, text, 0.2, seed)
            assert model.unk_id not in ids and model.decode(ids) == model.decode(best[0][0])
