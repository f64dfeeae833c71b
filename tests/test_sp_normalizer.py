"""SentencePiece models trained with their defaults (nmt_nfkc, whitespace collapsed, dummy prefix)
and with nfkc_cf open and give sp.encode's ids on text their normalizer changes; HF tokenizers
built as HF builds T5's (Precompiled + Replace + Metaspace) give HF's ids; a damaged charsmap is
refused in one line. The models are trained here from the sample texts (nothing is downloaded)."""

import base64
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from tokworkbench.core.errors import ModelFileError, TokWorkbenchError
from tokworkbench.core.files.envelope import dumps
from tokworkbench.core.formats.hf_unigram import write_hf
from tokworkbench.core.formats.sentencepiece import _message
from tokworkbench.core.registry.load import load_any
from tokworkbench.core.text.charsmap import read_charsmap
from tokworkbench.core.unigram.modelfile import from_json, to_json

spm = pytest.importorskip("sentencepiece", reason="sentencepiece is in the test extra; not installed here")

SAMPLES = Path(__file__).resolve().parents[1] / "sample_texts"
TRAIN = ["01_en_genesis_kjv.txt", "03_udhr_article1.txt", "05_zh_debian_installer.txt", "07_ko_debian_installer.txt",
         "08_ru_fortunes.txt", "11_el_debian_installer.txt", "04_emoji_symbols_numbers.txt"]
HELD_OUT = ["02_en_devils_dictionary.txt", "06_ja_debian_installer.txt", "09_ar_debian_handbook.txt",
            "10_hi_tokenization_notes.txt", "12_code_sample.py"]

# what the normalizer changes: ligatures, full-width, circled digits, NBSP, spaces of every kind
# and number, tabs, newlines, CR, combining marks, Hangul jamo, emoji with modifiers, controls
TRICKY = [
    "ﬁne ﬂow ﬃ", "Ｆｕｌｌ－ｗｉｄｔｈ　ＡＢＣ １２３", "①②③ ⑩ ㈱ ㍻ ℡ ™", "no\u00a0break\u2009thin\u3000ideo",
    "  lead", "trail   ", "a    b", "tab\there\tand\tthere", "new\nline\n\nparagraph", "cr\r\nlf",
    "cafe\u0301 e\u0301 n\u0303 A\u030a", "한국어 텍스트 \u1100\u1161\u11a8", "emoji 👍🏽 👨‍👩‍👧 🇫🇷 ok",
    "ctrl\x01\x02\x7fx", "zero\u200bwidth\ufeffbom", "▁lead meta", " ▁x", "x ▁", "▁", "\u2581\u2581a",
    "Ǆ ǅ ǆ ſt ẞ ß İ", "½ ¼ x² H₂O", "Ⅻ ⅻ", "ΑΒΓ αβγ ΣΑΣ", "", " ", "\t\n ", "\x00nul", "ｶﾞｷﾞ ﾊﾟ",
]


def held_out_lines() -> list[str]:
    lines = []
    for name in HELD_OUT:
        lines += (SAMPLES / name).read_text(encoding="utf-8").splitlines()[:120]
    return lines


def _train(out: Path, name: str, **kwargs) -> Path:
    spm.SentencePieceTrainer.train(input=",".join(str(SAMPLES / n) for n in TRAIN), model_prefix=str(out / name),
                                   vocab_size=1000, model_type="unigram", character_coverage=0.995,
                                   minloglevel=2, **kwargs)
    return out / f"{name}.model"


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """Path -> SentencePieceProcessor for the defaults, nfkc_cf, and nmt_nfkc with user-defined
    pieces and whitespace kept."""
    out = tmp_path_factory.mktemp("spn")
    paths = {"nmt_nfkc": _train(out, "nmt_nfkc"),
             "nfkc_cf": _train(out, "nfkc_cf", normalization_rule_name="nfkc_cf"),
             "user": _train(out, "user", user_defined_symbols=["<sep>", "ﬁ", "ing"], remove_extra_whitespaces=False)}
    return {k: (p, spm.SentencePieceProcessor(model_file=str(p))) for k, p in paths.items()}


def _ours(path, cache={}):
    if path not in cache:
        cache[path] = load_any(path)
    return cache[path]


@pytest.mark.parametrize("kind", ["nmt_nfkc", "nfkc_cf"])
def test_default_and_nfkc_cf_models_give_sentencepiece_ids(models, kind):
    path, sp = models[kind]
    model = _ours(path)
    assert model.text_normalizer is not None and model.text_normalizer.name == kind
    changed = 0
    for text in TRICKY + held_out_lines():
        assert model.encode(text) == sp.encode(text), repr(text)
        changed += model.normalize_text(text) != text
    assert changed > len(TRICKY) // 2  # the normalizer really was exercised


def test_user_defined_pieces_skip_the_map_and_whitespace_can_be_kept(models):
    """SentencePiece matches a user-defined piece before its map (so "ﬁ" stays ﬁ) and, with
    remove_extra_whitespaces off, keeps every space, and puts its dummy ▁ in front of a leading
    one too (metaspace, HF's, would not)."""
    path, sp = models["user"]
    model = _ours(path)
    assert model.normalize_text("ﬁx ﬂy") == "ﬁx fly"
    leading = 0
    for text in TRICKY + held_out_lines():
        leading += model.normalize_text(text)[:1] in (" ", "▁")
        assert model.encode(text) == sp.encode(text), repr(text)
        assert model.decode(sp.encode(text)) == sp.decode(sp.encode(text)), repr(text)
    assert leading  # the case metaspace gets wrong was among them


CHARS = st.sampled_from(list("abcinegt ABC ▁\t\n\r\x00\x01\u200b\u00a0\u3000,.!?Тест中文あ한국☃🦜👍🏽\u0301\u0303\u1100\u1161"
                             "ﬁﬂ①②Ａｂ１㈱½ǅẞİ") + ["ing", " the", "  ", "e\u0301", "<sep>"])


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(CHARS | st.characters(blacklist_categories=("Cs",)), max_size=30).map("".join))
def test_sentencepiece_ids_on_arbitrary_text(models, text):
    for kind in ("nmt_nfkc", "nfkc_cf"):
        path, sp = models[kind]
        assume(not any(s in text for s in ("<unk>", "<s>", "</s>")))
        assert _ours(path).encode(text) == sp.encode(text), kind


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(CHARS | st.characters(blacklist_categories=("Cs",)), max_size=30).map("".join))
@example("\ufb01\u0301 the  \ufb01\u0301")
def test_the_drawn_text_gives_the_encoding_without_normalizing_twice(models, text):
    """The app draws over the normalized document and segments what it draws without
    normalizing it again: SentencePiece's normalizer is not idempotent ('ﬁ' + U+0301 gives
    'fi' + U+0301, which gives 'fí'; sp.normalize does the same), so the drawn tokens are the
    encoding only because the drawn text is never normalized twice."""
    model = _ours(models["nmt_nfkc"][0])
    drawn = [i for _, ids in model.display_chunks(model.display_text(text)) for i in ids]
    assert drawn == model.encode(text)


def test_sentencepieces_normalizer_is_not_idempotent(models):
    path, sp = models["nmt_nfkc"]
    once = _ours(path).normalize_text("\ufb01\u0301")
    assert once == "fi\u0301" and _ours(path).normalize_text(once) == "f\u00ed"
    assert sp.normalize("\ufb01\u0301") == "\u2581fi\u0301" and sp.normalize("fi\u0301") == "\u2581f\u00ed"


def test_our_file_keeps_the_normalizer(models, tmp_path):
    path, sp = models["nmt_nfkc"]
    model = _ours(path)
    doc = json.loads(dumps(to_json(model)))
    assert doc["model_normalizer"]["type"] == "sentencepiece"
    again = from_json(doc)
    assert again.text_normalizer == model.text_normalizer
    for text in TRICKY:
        assert again.encode(text) == sp.encode(text), repr(text)
    doc["model_normalizer"]["precompiled_charsmap"] = base64.b64encode(b"\x08\x00\x00\x00abc").decode()
    with pytest.raises(ModelFileError, match="charsmap is damaged"):
        from_json(doc)


def _charsmap(path: Path) -> bytes:
    spec = next(v for n, v in _message(path.read_bytes()) if n == 3)
    return dict(_message(spec))[2]


@pytest.mark.parametrize("blob, message", [
    (b"\x01\x00", "shorter than its 4-byte header"),
    (b"\xff\x00\x00\x00" + b"\x00" * 16, "its trie claims"),
    (b"\x06\x00\x00\x00" + b"\x00" * 16, "its trie claims"),
    (b"\x08\x00\x00\x00" + b"\xff\xff\xff\xff" * 2 + b"a\x00", "points outside"),
])
def test_a_damaged_charsmap_is_refused_in_one_line(blob, message):
    with pytest.raises(ModelFileError, match=message) as info:
        read_charsmap(blob)
    assert "\n" not in str(info.value)


def test_a_charsmap_whose_strings_are_cut_is_refused(models):
    blob = _charsmap(models["nmt_nfkc"][0])
    size = int.from_bytes(blob[:4], "little")
    with pytest.raises(TokWorkbenchError, match="charsmap is damaged"):
        cm = read_charsmap(blob[: 4 + size + 10])  # the replacement strings cut short
        for c in "ﬁ①Ａ\t\u00a0ⅻ㍻":
            cm.longest_at(c, 0)


# -- Hugging Face ----------------------------------------------------------------------------------
def _hf_like_t5(path: Path, sp, out: Path) -> Path:
    """A tokenizer.json as HF's T5 files are: Unigram, Precompiled + Replace(" {2,}"), Metaspace."""
    tk = pytest.importorskip("tokenizers")
    from tokenizers import Regex, Tokenizer, decoders, normalizers, pre_tokenizers
    from tokenizers import models as hfm

    pieces = [(sp.id_to_piece(i), sp.get_score(i)) for i in range(sp.get_piece_size())]
    tok = Tokenizer(hfm.Unigram(pieces, unk_id=sp.unk_id(), byte_fallback=False))
    tok.normalizer = normalizers.Sequence([normalizers.Precompiled(_charsmap(path)),
                                           normalizers.Replace(Regex(" {2,}"), " ")])
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always", split=True)
    tok.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always", split=True)
    assert tk is not None
    tok.save(str(out))
    return out


@pytest.fixture(scope="module")
def hf_t5(models, tmp_path_factory):
    from tokenizers import Tokenizer

    path, sp = models["nmt_nfkc"]
    out = _hf_like_t5(path, sp, tmp_path_factory.mktemp("hf") / "tokenizer.json")
    return out, Tokenizer.from_file(str(out))


def test_hf_precompiled_tokenizer_gives_hf_ids(hf_t5):
    path, hf = hf_t5
    model = _ours(path)
    assert model.text_normalizer.kind == "hf"
    for text in TRICKY + held_out_lines():
        assert model.encode(text) == hf.encode(text, add_special_tokens=False).ids, repr(text)


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(CHARS | st.characters(blacklist_categories=("Cs",)), max_size=30).map("".join))
def test_hf_precompiled_ids_on_arbitrary_text(hf_t5, text):
    path, hf = hf_t5
    assume(not any(s in text for s in ("<unk>", "<s>", "</s>")))
    assert _ours(path).encode(text) == hf.encode(text, add_special_tokens=False).ids


def test_hf_tokenizer_json_round_trips_through_our_export(hf_t5, tmp_path):
    from tokenizers import Tokenizer

    path, hf = hf_t5
    write_hf(_ours(path), tmp_path / "again.json")
    again = Tokenizer.from_file(str(tmp_path / "again.json"))
    for text in TRICKY + held_out_lines():
        assert again.encode(text, add_special_tokens=False).ids == hf.encode(text, add_special_tokens=False).ids


def test_sentencepiece_model_with_a_letter_map_does_not_export_to_hf(models, tmp_path):
    """HF applies the map per grapheme cluster, SentencePiece by longest match: the ids differ on
    some text, so the export is refused (tests/test_sp_hf_export.py holds the exact cases)."""
    with pytest.raises(TokWorkbenchError, match="per grapheme cluster"):
        write_hf(_ours(models["nmt_nfkc"][0]), tmp_path / "t.json")
    assert not (tmp_path / "t.json").exists()


# -- a real tokenizer.json, when this machine holds one (never downloaded here) ----------------------
def _real_files() -> list[Path]:
    """TOKWORKBENCH_REAL_UNIGRAM: real Unigram tokenizer.json files (os.pathsep between them),
    e.g. Pegasus's from the public repository mmcquade11/autonlp-reuters-summarization."""
    import os

    return [Path(p) for p in os.environ.get("TOKWORKBENCH_REAL_UNIGRAM", "").split(os.pathsep) if p]


@pytest.mark.parametrize("source", _real_files() or [None])
def test_a_real_hf_unigram_file_gives_hf_ids(source, tmp_path):
    """A real file named by TOKWORKBENCH_REAL_UNIGRAM: Pegasus's, for one, has Precompiled +
    Replace, WhitespaceSplit + Metaspace and 106 added tokens."""
    if source is None:
        pytest.skip("no real Unigram tokenizer.json on this machine (set TOKWORKBENCH_REAL_UNIGRAM)")
    from tokenizers import Tokenizer

    path = source
    hf = Tokenizer.from_file(str(path))
    hf.no_truncation()
    model = load_any(path)
    assert model.text_normalizer is not None
    lines = TRICKY + held_out_lines() + ["Tiếng Việt: Hà Nội", " ▁x ▁y", "a\u3000b"]
    for text in lines:
        assert model.encode(text) == hf.encode(text, add_special_tokens=False).ids, repr(text)
    write_hf(model, tmp_path / "again.json")
    again = Tokenizer.from_file(str(tmp_path / "again.json"))
    for text in lines:
        assert again.encode(text, add_special_tokens=False).ids == hf.encode(text, add_special_tokens=False).ids


def test_inspect_names_the_models_own_normalizer(models, hf_t5, capsys):
    from tokworkbench.cli import main

    assert main(["inspect", str(models["nmt_nfkc"][0])]) == 0
    assert "normalizer   sentencepiece nmt_nfkc (whitespace collapsed)" in capsys.readouterr().out.splitlines()
    assert main(["inspect", str(hf_t5[0])]) == 0
    assert "normalizer   hf Precompiled+Replace" in capsys.readouterr().out.splitlines()


@pytest.fixture(scope="module")
def hf_albert(models, tmp_path_factory):
    """ALBERT's normalizer as HF's AlbertConverter writes it (keep_accents off, lowercase on)."""
    from tokenizers import Regex, Tokenizer, normalizers

    path, sp = models["nmt_nfkc"]
    out = _hf_like_t5(path, sp, tmp_path_factory.mktemp("albert") / "tokenizer.json")
    tok = Tokenizer.from_file(str(out))
    tok.normalizer = normalizers.Sequence([
        normalizers.Replace("``", '"'), normalizers.Replace("''", '"'), normalizers.NFKD(),
        normalizers.StripAccents(), normalizers.Lowercase(), normalizers.Precompiled(_charsmap(path)),
        normalizers.Replace(Regex(" {2,}"), " ")])
    tok.save(str(out))
    return out, Tokenizer.from_file(str(out))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(CHARS | st.sampled_from(["``", "''", "É", "Ǆ"]) | st.characters(blacklist_categories=("Cs",)),
                max_size=30).map("".join))
def test_albert_normalizer_gives_hf_ids(hf_albert, text):
    path, hf = hf_albert
    assume(not any(s in text for s in ("<unk>", "<s>", "</s>")))
    assert _ours(path).encode(text) == hf.encode(text, add_special_tokens=False).ids


def test_albert_normalizer_on_held_out_text(hf_albert):
    path, hf = hf_albert
    assert "StripAccents" in _ours(path).text_normalizer.label
    for text in TRICKY + held_out_lines() + ["``Quoted'' Crème Brûlée ÀÉÎÕÜ"]:
        assert _ours(path).encode(text) == hf.encode(text, add_special_tokens=False).ids, repr(text)


def test_our_file_keeps_an_hf_normalizer(hf_t5):
    path, hf = hf_t5
    model = _ours(path)
    again = from_json(json.loads(dumps(to_json(model))))
    assert again == model and hash(again) == hash(model)  # the model stays hashable with HF's spec in it
    for text in TRICKY:
        assert again.encode(text) == hf.encode(text, add_special_tokens=False).ids, repr(text)


def test_replay_of_a_model_with_its_own_normalizer_is_refused(models):
    """No session setting normalizes as nmt_nfkc does, so the replay would segment other text."""
    from tokworkbench.core.errors import TrainingError
    from tokworkbench.core.session.session import Session
    from tokworkbench.core.session.settings import Settings

    session = Session.open([str(SAMPLES / "01_en_genesis_kjv.txt")],
                           Settings(kind="unigram", split="metaspace", seed_size=600, target=300))
    with pytest.raises(TrainingError, match=r"its own normalizer \(sentencepiece nmt_nfkc"):
        session.replay(_ours(models["nmt_nfkc"][0]), "sp.model")


def test_lone_surrogates_pass_through(models, hf_t5):
    """A Python string may hold them (read with surrogateescape); they are no key of any map."""
    for path in (models["nmt_nfkc"][0], hf_t5[0]):
        assert _ours(path).normalize_text("ﬁ\ud800x ①\udfff") == "fi\ud800x 1\udfff"
