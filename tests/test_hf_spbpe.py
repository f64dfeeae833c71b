"""The Hub's tokenizer.json form of SentencePiece BPE (Llama 2, Mistral) opens as the spbpe kind
and gives `tokenizers`' ids and decoded text. The files are made the way transformers'
LlamaConverter makes them: a SentencePiece BPE trained with byte_fallback, its pieces as the
vocabulary, every split of a piece into two pieces as a merge, ordered by the piece's id."""

import io
import json
import os
from functools import cache
from pathlib import Path

import pytest
import sentencepiece as spm
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tokenizers import AddedToken, decoders, normalizers, pre_tokenizers, processors
from tokenizers import Tokenizer as HFTokenizer
from tokenizers.models import BPE

from tokworkbench.core import load_corpus, sample_paths
from tokworkbench.core.errors import ForeignModelError
from tokworkbench.core.formats.hf import from_hf
from tokworkbench.core.registry.kinds import kind_of
from tokworkbench.core.spbpe.modelfile import from_json, to_json


@cache
def _texts() -> tuple[str, ...]:
    return tuple(d.text for d in load_corpus(sample_paths()).documents)


@cache
def _sp() -> spm.SentencePieceProcessor:
    buf = io.BytesIO()
    lines = [line for t in _texts() for line in t.splitlines() if line.strip()]
    spm.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_writer=buf, model_type="bpe",
                                   vocab_size=2500, byte_fallback=True, character_coverage=0.98, minloglevel=2,
                                   normalization_rule_name="identity", remove_extra_whitespaces=False)
    return spm.SentencePieceProcessor(model_proto=buf.getvalue())


LAYOUTS = ["legacy", "metaspace-first", "metaspace-always-split", "replace-only"]


def _llama_doc(sp: spm.SentencePieceProcessor, layout: str = "legacy") -> dict:
    """What LlamaConverter writes, built with the tokenizers library: legacy (Prepend and
    Replace), non-legacy (Metaspace first, no split), and two other shapes it can write."""
    vocab = {sp.id_to_piece(i): i for i in range(sp.get_piece_size())}
    merges = [(piece[:k], piece[k:], pid) for piece, pid in vocab.items() for k in range(1, len(piece))
              if piece[:k] in vocab and piece[k:] in vocab]
    merges = [(a, b) for a, b, _ in sorted(merges, key=lambda m: (m[2], len(m[0]), len(m[1])))]
    hf = HFTokenizer(BPE(vocab=vocab, merges=merges, unk_token="<unk>", fuse_unk=True, byte_fallback=True))
    hf.add_special_tokens([AddedToken(t, normalized=False, special=True) for t in ("<unk>", "<s>", "</s>")])
    strip = [decoders.Strip(" ", 1, 0)] if layout != "replace-only" else []
    if layout == "legacy":
        hf.normalizer = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
    elif layout == "replace-only":
        hf.normalizer = normalizers.Sequence([normalizers.Replace(" ", "▁")])
    elif layout == "metaspace-first":
        hf.pre_tokenizer = pre_tokenizers.Metaspace(prepend_scheme="first", split=False)
    else:
        hf.pre_tokenizer = pre_tokenizers.Metaspace(prepend_scheme="always", split=True)
    hf.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse()] + strip)
    hf.post_processor = processors.TemplateProcessing(single="<s> $A", pair="<s> $A <s> $B",
                                                      special_tokens=[("<s>", 1)])
    return json.loads(hf.to_str())


@cache
def _pair(layout: str = "legacy"):
    doc = _llama_doc(_sp(), layout)
    return HFTokenizer.from_str(json.dumps(doc)), from_hf(doc)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_it_opens_as_sentencepiece_bpe(layout):
    _, ours = _pair(layout)
    assert kind_of(ours).name == "spbpe"
    assert ours.byte_fallback and ours.roles.bos == "<s>" and ours.roles.unk == "<unk>"


@pytest.mark.parametrize("layout", LAYOUTS)
def test_every_sample_line_gives_hfs_ids_and_text(layout):
    hf, ours = _pair(layout)
    lines = [line for t in _texts() for line in t.splitlines()]
    theirs = [e.ids for e in hf.encode_batch(lines, add_special_tokens=False)]
    assert [ours.encode(line, allowed_special="all") for line in lines] == theirs
    assert [ours.decode(ids) for ids in theirs] == hf.decode_batch(theirs, skip_special_tokens=False)
    assert any(ours.byte_fallback and ours.types[i] == 6 for ids in theirs for i in ids)  # bytes were used


@pytest.mark.parametrize("layout", LAYOUTS)
def test_whole_documents(layout):
    hf, ours = _pair(layout)
    for text in _texts():
        assert ours.encode(text, allowed_special="all") == hf.encode(text, add_special_tokens=False).ids


MULTILINGUAL = st.sampled_from(["日本語", "한국어", "Ελληνικά", "русский", "مرحبا", "नमस्ते", "😀👋🏽", "e\u0301",
                                "▁", "  ", "\t", "\n", " a", "aaaa", "<s>", "</s>", "<unk>", "1234"])
MIXED = st.lists(st.one_of(MULTILINGUAL, st.text(max_size=6)), max_size=10).map("".join)


@pytest.mark.parametrize("layout", LAYOUTS)
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.one_of(st.text(max_size=80), MIXED))
def test_any_text_gives_hfs_ids_and_decode(layout, text):
    hf, ours = _pair(layout)
    theirs = hf.encode(text, add_special_tokens=False).ids
    assert ours.encode(text, allowed_special="all") == theirs
    # control pieces are invisible in SentencePiece's decode, HF shows them unless told to skip
    # them (and then skips <unk> too): compare where neither rule applies
    skip = bool({1, 2} & set(theirs))
    if not (skip and 0 in theirs):
        assert ours.decode(theirs) == hf.decode(theirs, skip_special_tokens=skip)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_model_file_keeps_the_merges_and_layout(layout):
    _, ours = _pair(layout)
    back = from_json(json.loads(json.dumps(to_json(ours))))
    assert back == ours and back.merges == ours.merges and back.metaspace == ours.metaspace


def test_hfs_merge_order_decides_not_scores():
    """Two files that differ only in the order of two merges give different ids, each HF's."""
    pieces = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)] + ["▁", "a", "b", "c", "ab", "bc"]
    vocab = {p: i for i, p in enumerate(pieces)}
    for merges in ([("a", "b"), ("b", "c")], [("b", "c"), ("a", "b")]):
        hf = HFTokenizer(BPE(vocab=vocab, merges=merges, unk_token="<unk>", fuse_unk=True, byte_fallback=True))
        hf.normalizer = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
        hf.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse(),
                                        decoders.Strip(" ", 1, 0)])
        ours = from_hf(json.loads(hf.to_str()))
        for text in ["abc", "abcabc x", "cab"]:
            assert ours.encode(text) == hf.encode(text, add_special_tokens=False).ids


def _damaged(change) -> dict:
    doc = _llama_doc(_sp())
    change(doc)
    return doc


@pytest.mark.parametrize("change, words", [
    (lambda d: d["model"].update(byte_fallback=False, fuse_unk=False), "fuse"),
    (lambda d: d.update(normalizer={"type": "NFKC"}), "normalizer"),
    (lambda d: d.update(decoder={"type": "Fuse"}), "decoder"),
    (lambda d: d["added_tokens"].append({"id": 2500, "content": "<x>", "special": False, "normalized": False,
                                         "lstrip": False, "rstrip": False, "single_word": False}), "not special"),
    (lambda d: d["model"].update(unk_token="<nope>"), "unk_token"),
    (lambda d: d["model"]["merges"].append(["▁", "zzzz"]), "zzzz"),
    (lambda d: d.update(normalizer=None, pre_tokenizer={"type": "Metaspace", "replacement": "_",
                                                         "prepend_scheme": "never", "split": False}), "Metaspace"),
    (lambda d: d["decoder"]["decoders"].pop(), "strips it"),
    (lambda d: d.update(pre_tokenizer={"type": "Whitespace"}), "no pre-tokenizer"),
])
def test_what_is_not_read_is_one_line(change, words):
    with pytest.raises(ForeignModelError) as info:
        from_hf(_damaged(change))
    assert words in str(info.value) and "\n" not in str(info.value)


# -- real vocabularies: Mistral's .model files written in the Hub's form -----------------------------
REAL = Path(os.environ.get("TOKWORKBENCH_REAL_SPBPE", "/nonexistent"))
REAL_FILES = sorted(REAL.glob("*.model*")) if REAL.is_dir() else []


@pytest.mark.skipif(not REAL_FILES, reason="no real SentencePiece BPE files (set TOKWORKBENCH_REAL_SPBPE to a folder "
                                           "holding e.g. mistral-common's tokenizer.model.v1)")
@pytest.mark.parametrize("path", REAL_FILES, ids=[p.name for p in REAL_FILES])
@pytest.mark.parametrize("layout", ["legacy", "metaspace-first"])
def test_real_vocabularies_in_the_hubs_form_give_hfs_ids(path, layout):
    """A real vocabulary (Mistral's, 32k pieces, ~59k merges) written as LlamaConverter writes
    it: every sample line gives HF's ids and decoded text (sentencepiece itself differs on
    some: its rule is the score, HF's the list)."""
    doc = _llama_doc(spm.SentencePieceProcessor(model_file=str(path)), layout)
    hf, ours = HFTokenizer.from_str(json.dumps(doc)), from_hf(doc)
    lines = [line for t in _texts() for line in t.splitlines()] + ["[INST] hi [/INST]", "<s>[INST] a</s>"]
    theirs = [e.ids for e in hf.encode_batch(lines, add_special_tokens=False)]
    assert [ours.encode(line, allowed_special="all") for line in lines] == theirs
    assert [ours.decode(ids) for ids in theirs] == hf.decode_batch(theirs)


@pytest.mark.parametrize("layout", LAYOUTS)
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(run=st.lists(st.integers(0, 255), min_size=1, max_size=8), around=st.lists(st.integers(3, 40), max_size=2))
def test_a_byte_run_that_is_not_utf8_decodes_as_hfs_bytefallback(layout, run, around):
    """HF's ByteFallback makes such a run a U+FFFD a byte, where sp.decode keeps its valid
    characters: a model read from tokenizer.json decodes as HF."""
    try:
        bytes(run).decode("utf-8")
        return  # valid: both libraries show its text
    except UnicodeDecodeError:
        pass
    hf, ours = _pair(layout)
    byte_ids = [i for i, kind in enumerate(ours.types) if kind == 6]
    ids = [byte_ids[b] for b in run]
    for seq in (ids, around + ids, ids + around):
        assert ours.decode(seq) == hf.decode(seq), seq
