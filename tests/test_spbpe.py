"""SentencePiece's BPE (Llama 2, Mistral, Gemma) read from its `.model` file gives sentencepiece's
own ids and decoded text: models trained here with byte_fallback and without, user-defined
pieces, the nmt_nfkc, nmt_nfkc_cf and identity rules, the dummy prefix on and off, pieces that
span words and whitespace-only pieces, compared on
held-out multilingual text and on arbitrary text (emoji, CJK, control characters, runs of
spaces); and Mistral's real tokenizer.model files (v1, v2, v3, v7) when they are on this machine:
set TOKWORKBENCH_REAL_SPBPE to a folder holding them (`pip download --no-deps mistral-common`
and unzip its mistral_common/data/)."""

import os
import struct
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tokworkbench.core.errors import ExportError, ForeignModelError, ModelFileError
from tokworkbench.core.formats.sentencepiece import from_sentencepiece
from tokworkbench.core.registry import modelfile
from tokworkbench.core.registry.export import check
from tokworkbench.core.registry.kinds import kind_of
from tokworkbench.core.registry.load import load_any
from tokworkbench.core.spbpe.model import SpBpeModel

spm = pytest.importorskip("sentencepiece", reason="sentencepiece is in the test extra; not installed here")

SAMPLES = Path(__file__).resolve().parents[1] / "sample_texts"
TRAIN = ["01_en_genesis_kjv.txt", "05_zh_debian_installer.txt", "08_ru_fortunes.txt", "11_el_debian_installer.txt"]
HELD_OUT = ["02_en_devils_dictionary.txt", "06_ja_debian_installer.txt", "07_ko_debian_installer.txt",
            "09_ar_debian_handbook.txt", "04_emoji_symbols_numbers.txt", "10_hi_tokenization_notes.txt",
            "12_code_sample.py"]
CONFIGS = {
    "byte_fallback": dict(byte_fallback=True),
    "unk": dict(byte_fallback=False),
    "user_defined": dict(byte_fallback=True, user_defined_symbols=["<sep>", "foo", "▁bar", "ab"]),
    "identity": dict(byte_fallback=False, normalization_rule_name="identity", user_defined_symbols=["xy"]),
    "no_dummy_prefix": dict(byte_fallback=True, add_dummy_prefix=False, remove_extra_whitespaces=False),
    "nfkc_cf": dict(byte_fallback=False, normalization_rule_name="nmt_nfkc_cf", add_dummy_prefix=False),
    # pieces with ▁ inside (no word cut is safe: whole segments are merged at once)
    "across_words": dict(byte_fallback=True, split_by_whitespace=False),
    "whitespace_pieces": dict(byte_fallback=False, allow_whitespace_only_pieces=True, remove_extra_whitespaces=False,
                              user_defined_symbols=["▁▁x", "q▁"]),
}
# what text is drawn from: spaces and ▁, tabs, NUL, a zero-width space (nmt_nfkc drops it),
# full-width and compatibility forms, the user-defined pieces, emoji, CJK, the unknown surface
ALPHABET = st.sampled_from(list("ab ▁\t\n\r\x00\x01\u200b\u3000\ufffdé😀中ｆｏｏﬁ⁇") + ["<sep>", "foo", "xy", "  "])
TEXT = st.one_of(st.text(), st.lists(ALPHABET, max_size=16).map("".join))


def _train(out: Path, name: str, **options) -> Path:
    spm.SentencePieceTrainer.train(input=",".join(str(SAMPLES / n) for n in TRAIN), model_prefix=str(out / name),
                                   model_type="bpe", vocab_size=800, character_coverage=0.98, minloglevel=2,
                                   **options)
    return out / f"{name}.model"


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """name -> (sentencepiece's processor, our model, the .model file)."""
    out = tmp_path_factory.mktemp("spbpe")
    models = {}
    for name, options in CONFIGS.items():
        path = _train(out, name, **options)
        models[name] = (spm.SentencePieceProcessor(model_file=str(path)), from_sentencepiece(path.read_bytes()), path)
    return models


def held_out_lines() -> list[str]:
    lines = []
    for name in HELD_OUT:
        lines += (SAMPLES / name).read_text(encoding="utf-8").splitlines()[:120]
    return lines + ["", " ", "   leading", "trailing   ", "a  b\t\tc", "▁", "▁▁x▁", " ▁x"]


def test_a_bpe_model_file_reads_as_this_kind(trained):
    sp, ours, path = trained["byte_fallback"]
    assert isinstance(ours, SpBpeModel) and kind_of(ours).name == "spbpe"
    assert isinstance(load_any(str(path)), SpBpeModel)
    assert ours.vocab_size == sp.get_piece_size()
    assert [ours.token(i) for i in range(ours.vocab_size)] == [sp.id_to_piece(i) for i in range(sp.get_piece_size())]
    assert ours.roles.bos == "<s>" and ours.roles.eos == "</s>" and ours.roles.unk == "<unk>"


@pytest.mark.parametrize("name", list(CONFIGS))
def test_held_out_text_gets_sentencepieces_ids(trained, name):
    sp, ours, _ = trained[name]
    for line in held_out_lines():
        assert ours.encode_ordinary(line) == sp.encode(line), line


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=TEXT)
def test_arbitrary_text_gets_sentencepieces_ids(trained, text):
    for name, (sp, ours, _) in trained.items():
        assert ours.encode_ordinary(text) == sp.encode(text), name


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_arbitrary_ids_decode_as_sentencepiece_decodes_them(trained, data):
    for name, (sp, ours, _) in trained.items():
        n = ours.vocab_size
        # byte pieces (3..258 with byte_fallback) and the first pieces most often: that is where decoding varies
        ids = data.draw(st.lists(st.one_of(st.integers(0, 300), st.integers(0, n - 1)), max_size=10))
        assert ours.decode(ids) == sp.decode(ids), (name, ids)


def test_pieces_with_meta_inside_turn_the_word_cut_off(trained):
    assert trained["byte_fallback"][1]._splits_at_meta
    assert not trained["across_words"][1]._splits_at_meta and not trained["whitespace_pieces"][1]._splits_at_meta


def test_unknown_characters_become_bytes_or_one_fused_unk(trained):
    sp, bf, _ = trained["byte_fallback"]
    text = "a \U0001f600\U0001f601 b"
    assert bf.encode_ordinary(text) == sp.encode(text)
    assert [bf.token(i) for i in bf.encode_ordinary("\U0001f600")][-4:] == ["<0xF0>", "<0x9F>", "<0x98>", "<0x80>"]
    sp, unk, _ = trained["unk"]
    ids = unk.encode_ordinary("\U0001f600\U0001f601\U0001f602")
    assert ids == sp.encode("\U0001f600\U0001f601\U0001f602") and ids.count(unk.unk_id) == 1


def test_our_file_round_trips(trained, tmp_path):
    for name, (sp, ours, _) in trained.items():
        path = modelfile.save(ours, tmp_path / f"{name}.json")
        again = modelfile.load(path)
        assert again == ours
        for line in held_out_lines()[::17]:
            assert again.encode_ordinary(line) == sp.encode(line)


def test_a_damaged_file_of_ours_is_one_error_naming_the_field(trained, tmp_path):
    doc = modelfile.to_json(trained["byte_fallback"][1])
    doc["pieces"][5][2] = "weird"
    with pytest.raises(ModelFileError, match="piece 5 is"):
        modelfile.from_json(doc)
    doc = modelfile.to_json(trained["byte_fallback"][1])
    doc["pieces"][300] = ["<0x07>", 0.0, "normal"]
    with pytest.raises(ModelFileError, match="both '<0x07>'"):
        modelfile.from_json(doc)
    doc = modelfile.to_json(trained["byte_fallback"][1])
    doc["byte_fallback"] = "yes"
    with pytest.raises(ModelFileError, match="'byte_fallback' must be true or false"):
        modelfile.from_json(doc)


def _with_piece(raw: bytes, text: str, kind: int) -> bytes:
    """The model with one more piece at the end (protobuf appends a repeated field)."""
    body = text.encode("utf-8")
    piece = b"\x0a" + bytes([len(body)]) + body + b"\x15" + struct.pack("<f", 0.0) + b"\x18" + bytes([kind])
    return raw + b"\x0a" + bytes([len(piece)]) + piece


def test_what_cannot_be_reproduced_is_refused_naming_it(trained, tmp_path):
    raw = trained["byte_fallback"][2].read_bytes()
    with pytest.raises(ForeignModelError, match="unused piece"):
        from_sentencepiece(_with_piece(raw, "zzqq", 5))
    suffix = _train(tmp_path, "suffix", treat_whitespace_as_suffix=True)
    with pytest.raises(ForeignModelError, match="treat_whitespace_as_suffix"):
        from_sentencepiece(suffix.read_bytes())
    raw = trained["unk"][2].read_bytes()
    with pytest.raises(ForeignModelError, match="byte piece in a model without byte_fallback"):
        from_sentencepiece(_with_piece(raw, "<0x41>", 6))


def test_only_hf_and_sentencepiece_claim_it(trained):
    """The rank-ordered formats refuse it; hf and sentencepiece carry it (tests/test_export_spbpe.py)."""
    for fmt in ("tiktoken", "minbpe"):
        with pytest.raises(ExportError, match=r"merge by score.*\(export it to hf, sentencepiece\)"):
            check(trained["byte_fallback"][1], fmt)
    assert check(trained["byte_fallback"][1], "sentencepiece") == []


# -- Mistral's real files ------------------------------------------------------------------------
REAL = Path(os.environ.get("TOKWORKBENCH_REAL_SPBPE", "/nonexistent"))
REAL_FILES = sorted(REAL.glob("*.model*")) if REAL.is_dir() else []


@pytest.mark.skipif(not REAL_FILES, reason="no real SentencePiece BPE files (set TOKWORKBENCH_REAL_SPBPE to a folder "
                                           "holding e.g. mistral-common's tokenizer.model.v1)")
@pytest.mark.parametrize("path", REAL_FILES, ids=[p.name for p in REAL_FILES])
def test_real_files_give_sentencepieces_ids(path):
    sp = spm.SentencePieceProcessor(model_file=str(path))
    ours = from_sentencepiece(path.read_bytes())
    assert ours.vocab_size == sp.get_piece_size()
    lines = held_out_lines() + ["[INST] hi [/INST]", "<s>[INST]", "\U0001f468\u200d\U0001f469\u200d\U0001f467"]
    for line in lines:
        assert ours.encode_ordinary(line) == sp.encode(line), line
    for start in range(0, ours.vocab_size, 997):
        ids = list(range(start, min(start + 12, ours.vocab_size))) + [3, 200, 140, 1, 0, 2]
        assert ours.decode(ids) == sp.decode(ids)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=TEXT)
def test_the_views_chunks_cover_the_shown_text_with_the_same_ids(trained, text):
    """What the corpus view draws: the shown (normalized) text cut into chunks whose ids are
    encode's and whose characters the ids cover exactly (a byte piece's character on its last
    byte, a fused unknown over its run)."""
    for name, (_, ours, _) in trained.items():
        shown = ours.display_text(text)
        chunks = ours.display_chunks(shown)
        assert "".join(c for c, _ in chunks) == shown
        assert [t for _, ids in chunks for t in ids] == ours.encode_ordinary(text)
        for chunk, ids in chunks:
            assert sum(ours.char_lengths(chunk, ids)) == len(chunk) or not ids, (name, chunk)


def test_it_pickles_without_its_cache_and_allows_specials_by_the_shared_rule(trained):
    import pickle

    sp, ours, _ = trained["byte_fallback"]
    ours.encode_ordinary("warm the cache")
    again = pickle.loads(pickle.dumps(ours))
    assert again == ours and again.encode_ordinary("the cache") == sp.encode("the cache")
    bos = ours.special_ids["<s>"]
    assert ours.encode("<s>hi", allowed_special="all") == [bos] + sp.encode("hi")
