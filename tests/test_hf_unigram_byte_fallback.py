"""A Hugging Face tokenizer.json Unigram model with byte_fallback, read as HF's `tokenizers` runs
it: an unknown run becomes the `<0xNN>` pieces of its bytes, the byte pieces are in HF's trie like
any piece (so the text `<0x41>` is that piece where its score wins, which SentencePiece never
does), and its ByteFallback decoder turns a run of byte tokens back into text (one U+FFFD a byte
where the run is not UTF-8). The models are built with `tokenizers` itself; what we cannot read
exactly is refused with the reason."""

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokworkbench.core.errors import ForeignModelError
from tokworkbench.core.models.tokenkinds import TokenKind
from tokworkbench.core.registry import modelfile
from tokworkbench.core.registry.load import load_any
from tokworkbench.core.text.bytepieces import BYTE_TEXT_NOTE, byte_piece

tokenizers = pytest.importorskip("tokenizers", reason="tokenizers is in the test extra; not installed here")
spm = pytest.importorskip("sentencepiece", reason="sentencepiece is in the test extra; not installed here")
from tokenizers import decoders, models, pre_tokenizers  # noqa: E402

SAMPLES = Path(__file__).resolve().parents[1] / "sample_texts"
LITERAL = ["<0x41>", "a<0x41>b", "<0xE2><0x96><0x81>", "x <0xFF> y", "<0x4", "<0x0A>\n", "<0xZZ>", "<0x41><0x42>"]
TRICKY = ["", " ", "  lead", "trail   ", "a    b", "▁", "▁▁a", "tab\there", "日本", "😀 a 😀", "e\u0301",
          "\u0301", "\x01", "繁體中文字", "🧑‍🤝‍🧑", "Ж", "ÆøÅ€", "\U0001f1ef\U0001f1f5"]


def _english() -> str:
    return "\n".join((SAMPLES / n).read_text(encoding="utf-8") for n in ("01_en_genesis_kjv.txt",
                                                                      "02_en_devils_dictionary.txt"))


def _vocab() -> list[tuple[str, float]]:
    """HF's trainer on English alone (so most other scripts are unknown), then the 256 byte
    pieces, some scored 0 as a SentencePiece export writes them, some low."""
    tok = tokenizers.Tokenizer(models.Unigram())
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    trainer = tokenizers.trainers.UnigramTrainer(vocab_size=600, special_tokens=["<unk>", "<s>", "</s>"],
                                                 unk_token="<unk>", show_progress=False)
    tok.train_from_iterator([_english()], trainer)
    vocab = json.loads(tok.to_str())["model"]["vocab"]
    return [tuple(v) for v in vocab] + [(byte_piece(b), 0.0 if b % 3 else -30.0) for b in range(256)]


def _tokenizer(decoder, pre=None, **model) -> "tokenizers.Tokenizer":
    tok = tokenizers.Tokenizer(models.Unigram(_vocab(), unk_id=0, byte_fallback=True, **model))
    tok.pre_tokenizer = pre or pre_tokenizers.Metaspace()
    tok.decoder = decoder
    return tok


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    """(HF's tokenizer, our model of its tokenizer.json, that model through our model file)."""
    folder = tmp_path_factory.mktemp("hfubf")
    tok = _tokenizer(decoders.Sequence([decoders.ByteFallback(), decoders.Metaspace()]))
    tok.save(str(folder / "tokenizer.json"))
    ours = load_any(folder / "tokenizer.json")
    return tok, ours, modelfile.load(modelfile.save(ours, folder / "ours.json"))


def _texts() -> list[str]:
    lines = []
    for name in ("03_udhr_article1.txt", "05_zh_debian_installer.txt", "08_ru_fortunes.txt",
                 "04_emoji_symbols_numbers.txt", "09_ar_debian_handbook.txt"):
        lines += (SAMPLES / name).read_text(encoding="utf-8").split("\n")[:60]
    return [t for t in lines if t.strip()] + TRICKY + LITERAL


def _same(pair, text: str) -> None:
    tok, ours, again = pair
    want = tok.encode(text, add_special_tokens=False).ids
    assert ours.encode_ordinary(text) == want, ascii(text[:200])
    assert again.encode_ordinary(text) == want, ascii(text[:200])
    assert ours.decode(want) == tok.decode(want), ascii(text[:200])


def test_the_model_reads_as_hf_byte_fallback(pair):
    tok, ours, again = pair
    assert ours.byte_fallback and ours.hf_byte_fallback and again.hf_byte_fallback
    assert [ours.pieces[t][0] for t in ours.byte_pieces] == [byte_piece(b) for b in range(256)]
    assert [t for t in range(ours.vocab_size) if ours.piece_kind(t) is TokenKind.BYTE] == list(ours.byte_pieces)
    used = {t for text in _texts() for t in tok.encode(text, add_special_tokens=False).ids}
    assert len(used & set(ours.byte_pieces)) > 40  # the test text does fall back


def test_held_out_text_gives_hf_ids_and_text(pair):
    for text in _texts():
        _same(pair, text)


def test_the_text_of_a_byte_piece_is_that_piece_as_in_hf(pair):
    tok, ours, _ = pair
    ids = ours.encode_ordinary("a<0x41>b")
    assert ours.byte_pieces[0x41] in ids and ids == tok.encode("a<0x41>b", add_special_tokens=False).ids


@settings(max_examples=150, deadline=None)
@given(st.text(st.characters(blacklist_categories=("Cs",)), max_size=40))
def test_hypothesis_text_gives_hf_ids(pair, text):
    _same(pair, text)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(0, 255), max_size=8), st.lists(st.integers(3, 40), max_size=3))
def test_decode_of_byte_runs_is_hf_decode(pair, run, others):
    """A run that is not UTF-8 is a U+FFFD a byte in HF's ByteFallback (sp.decode keeps its valid
    characters); between other pieces and at the start, where Metaspace drops a ▁."""
    tok, ours, _ = pair
    ids = [ours.byte_pieces[b] for b in run]
    for seq in (ids, others + ids, ids + others, others[:1] + ids + others[1:]):
        assert ours.decode(seq) == tok.decode(seq), seq


def test_sentencepieces_whitespace_layout_with_bytes_reads_back(tmp_path):
    """What `to_hf` writes for an em model with byte fallback: Replace(<unk>), ByteFallback, Metaspace."""
    from tokworkbench.core.registry.export import export
    from tokworkbench.core.session.settings import Settings

    settings_ = Settings(kind="unigram", units="char", split="metaspace", algorithm="em", seed_size=1_000_000,
                         normalizer="none", character_coverage=0.999, byte_fallback=True)
    learner = settings_.learner([_english()])
    list(learner.run(vocab_size=learner.base_size + 200))
    assert BYTE_TEXT_NOTE in export(learner.model(), "hf", tmp_path / "em.json")
    tok = tokenizers.Tokenizer.from_file(str(tmp_path / "em.json"))
    again = load_any(tmp_path / "em.json")
    assert again.hf_byte_fallback and again.sp_conventions is not None
    assert BYTE_TEXT_NOTE in export(again, "sentencepiece", tmp_path / "again.model")
    sp = spm.SentencePieceProcessor(model_file=str(tmp_path / "again.model"))
    for text in _texts():
        want = tok.encode(text, add_special_tokens=False).ids
        assert again.encode_ordinary(text) == want, ascii(text[:200])
        if "\u2581" not in text:
            assert again.decode(want) == tok.decode(want, skip_special_tokens=False), ascii(text[:200])
        if "<0x" not in text:  # the note's case: SentencePiece never matches a byte piece's text
            assert sp.encode(text) == want, ascii(text[:200])


@pytest.mark.parametrize("change, match", [
    (lambda doc: doc["decoder"].update(decoders=[{"type": "Metaspace", "replacement": "▁",
                                                  "prepend_scheme": "always", "split": True}]),
     "needs one ByteFallback step"),
    (lambda doc: doc["decoder"]["decoders"].reverse() or doc["decoder"]["decoders"].insert(0, {"type": "Fuse"}),
     "before its Metaspace or Fuse"),
    (lambda doc: doc["decoder"]["decoders"].reverse(), "before its Metaspace or Fuse"),
    (lambda doc: doc["model"]["vocab"].pop(), "1 of the 256 byte pieces missing"),
    (lambda doc: doc["model"].update(byte_fallback="yes"), "'byte_fallback' must be true or false"),
    (lambda doc: doc["model"].update(byte_fallback=False), "ByteFallback decoder on a model without"),
])
def test_what_we_cannot_read_exactly_is_refused(tmp_path, change, match):
    tok = _tokenizer(decoders.Sequence([decoders.ByteFallback(), decoders.Metaspace()]))
    doc = json.loads(tok.to_str())
    change(doc)
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(ForeignModelError, match=match):
        load_any(path)


def test_a_leading_byte_run_of_spaces_decodes_as_hf(tmp_path):
    """HF's Metaspace decoder drops the ▁s of its first token, the byte run, and makes the next
    piece's ▁ a space (the whitespace-kept layout an em export writes)."""
    from tokworkbench.core.registry.export import export
    from tokworkbench.core.session.settings import Settings

    learner = Settings(kind="unigram", units="char", split="metaspace", algorithm="em", seed_size=1_000_000,
                       normalizer="none", character_coverage=0.999, byte_fallback=True).learner([_english()])
    list(learner.run(vocab_size=learner.base_size + 100))
    export(learner.model(), "hf", tmp_path / "em.json")
    tok, again = tokenizers.Tokenizer.from_file(str(tmp_path / "em.json")), load_any(tmp_path / "em.json")
    meta = [again.byte_pieces[b] for b in "\u2581".encode()]
    word = tok.encode("and", add_special_tokens=False).ids
    for ids in (meta + meta + word, meta + word, meta, word + meta + word, meta + [again.unk_id] + word):
        assert again.decode(ids) == tok.decode(ids, skip_special_tokens=False), ids


def test_a_metaspace_decoder_that_keeps_the_prepended_space_is_refused(tmp_path):
    """HF decodes `hello world` to ` hello world` with it; ours would drop the space."""
    tok = tokenizers.Tokenizer(models.Unigram([("<unk>", 0.0), ("▁hello", -1.0), ("▁world", -1.0)], unk_id=0))
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tok.decoder = decoders.Metaspace(prepend_scheme="never")
    tok.save(str(tmp_path / "t.json"))
    with pytest.raises(ForeignModelError, match="prepend_scheme 'never'"):
        load_any(tmp_path / "t.json")
