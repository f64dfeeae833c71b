"""Added tokens of a tokenizer.json (special or not, normalized or raw, lstrip/rstrip,
single_word) cut out as HF's AddedVocabulary does: `encode(text, allowed_special="all")` must be
`tokenizers`' `encode(text, add_special_tokens=False)`."""

import json
from functools import cache

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tokenizers import AddedToken, decoders, models, normalizers, trainers
from tokenizers import Tokenizer as HFTokenizer
from tokenizers import pre_tokenizers as P

from tokworkbench.core import load_corpus, sample_paths
from tokworkbench.core.bpe.modelfile import from_json, to_json
from tokworkbench.core.errors import ModelFileError, SpecialTokenInTextError
from tokworkbench.core.formats.hf import from_hf
from tokworkbench.core.formats.hf_bpe import to_hf

SPECIALS = [AddedToken("<s>", special=True), AddedToken("</s>", special=True),
            AddedToken("<mask>", special=True, lstrip=True, rstrip=True),
            AddedToken("<sep>", special=True, normalized=True)]
ORDINARY = [AddedToken("world", single_word=True), AddedToken("ﬁx", normalized=True),
            AddedToken("ﬁne", normalized=False), AddedToken("[X]", rstrip=True, normalized=False),
            AddedToken("<<", lstrip=True, normalized=True), AddedToken("yes!", single_word=True, lstrip=True)]


@cache
def _texts() -> tuple[str, ...]:
    return tuple(d.text for d in load_corpus(sample_paths()).documents)


@cache
def _pair(kind: str):
    """A byte-level BPE (NFKC) or a char-level one with Metaspace, with every kind of added
    token, one of them a word of the trained vocabulary."""
    byte_level = kind == "byte"
    hf = HFTokenizer(models.BPE(unk_token=None if byte_level else "<unk>"))
    hf.normalizer = normalizers.NFKC()
    hf.pre_tokenizer = P.ByteLevel(add_prefix_space=False) if byte_level else P.Metaspace(prepend_scheme="first")
    hf.decoder = decoders.ByteLevel() if byte_level else decoders.Metaspace(prepend_scheme="first")
    trainer = trainers.BpeTrainer(vocab_size=600, show_progress=False, special_tokens=[] if byte_level else ["<unk>"],
                                  initial_alphabet=P.ByteLevel.alphabet() if byte_level else [])
    hf.train_from_iterator([t[:30_000] for t in _texts()], trainer)
    words = sorted((t for t in hf.get_vocab() if t.isascii() and t.isalpha()), key=lambda t: (-len(t), t))
    in_vocab = words[0] if len(words[0]) > 1 else "i"  # char-level: only letters are plain words, "i" the test of one
    hf.add_special_tokens(SPECIALS)
    hf.add_tokens(ORDINARY + [AddedToken(in_vocab, normalized=False)])
    return hf, from_hf(json.loads(hf.to_str())), in_vocab


def _check(kind: str, text: str) -> None:
    hf, ours, _ = _pair(kind)
    assert ours.encode(text, allowed_special="all") == hf.encode(text, add_special_tokens=False).ids, repr(text)


PIECES = ["<s>", "</s>", "<mask>", "<sep>", "world", "worlds", "ﬁx", "fix", "ﬁne", "fine", "[X]", "<<", "«",
          "yes!", "yes", " ", "  ", "\t", "\n", "a", "_", "1", "é", "日本"]
MIXED = st.lists(st.one_of(st.sampled_from(PIECES), st.text(max_size=4)), max_size=14).map("".join)


@pytest.mark.parametrize("kind", ["byte", "char"])
def test_hand_picked_texts(kind):
    _, _, in_vocab = _pair(kind)
    for text in ["<s>hello  <mask>  world</s>", "the world, worlds ﬁx fix <s><s>[X]   a", "  <mask>x",
                 "first<s> second", "yes! yes!yes! (yes!)", "a  <<  b", "ﬁne fine ﬁx", f"{in_vocab} x{in_vocab}",
                 "<sep> <sep>", "", " ", "<mask>"]:
        _check(kind, text)


@pytest.mark.parametrize("kind", ["byte", "char"])
def test_sample_lines(kind):
    hf, ours, _ = _pair(kind)
    lines = [line for t in _texts() for line in t.splitlines()[:80]]
    theirs = [e.ids for e in hf.encode_batch(lines, add_special_tokens=False)]
    assert [ours.encode(line, allowed_special="all") for line in lines] == theirs


@pytest.mark.parametrize("kind", ["byte", "char"])
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=MIXED)
def test_any_mix_of_added_tokens_and_text(kind, text):
    _check(kind, text)


def test_specials_keep_tiktokens_rule_and_ordinary_added_tokens_are_text():
    hf, ours, _ = _pair("byte")
    with pytest.raises(SpecialTokenInTextError):
        ours.encode("a <s> b")
    # a non-special added token is cut out whatever is allowed, as HF always does
    assert ours.encode("a world b") == hf.encode("a world b", add_special_tokens=False).ids
    ordinary = ours.encode_ordinary("<s> world")
    assert hf.token_to_id("world") in ordinary and hf.token_to_id("<s>") not in ordinary
    assert ours.encode("<s> world", allowed_special={"<s>"}) == hf.encode("<s> world", add_special_tokens=False).ids


def test_decode_gives_hfs_text():
    hf, ours, _ = _pair("byte")
    for text in ["<s>hello  <mask>  world</s>", "ﬁne [X]  ok"]:
        ids = ours.encode(text, allowed_special="all")
        assert ours.decode(ids) == hf.decode(ids, skip_special_tokens=False)


@pytest.mark.parametrize("kind", ["byte", "char"])
def test_model_file_and_hf_export_keep_the_flags(kind):
    hf, ours, _ = _pair(kind)
    back = from_json(json.loads(json.dumps(to_json(ours))))
    assert back == ours
    again = HFTokenizer.from_str(json.dumps(to_hf(ours)))
    for text in ["<s>hello  <mask>  world</s>", "yes! ﬁx [X]  <<"]:
        assert again.encode(text, add_special_tokens=False).ids == hf.encode(text, add_special_tokens=False).ids


def test_a_damaged_added_token_in_our_file_is_one_line():
    _, ours, _ = _pair("byte")
    doc = json.loads(json.dumps(to_json(ours)))
    doc["added_tokens"][0]["id"] = 10**6
    with pytest.raises(ModelFileError, match="lacks"):
        from_json(doc)
    doc["added_tokens"][0]["id"] = 0
    doc["added_tokens"][0]["lstrip"] = "yes"
    with pytest.raises(ModelFileError, match="true or false"):
        from_json(doc)
